package rangejoin.spark

import java.nio.file.{Files, Paths}

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

/**
 * Keeps [[KnownTests]] and the table in docs/semantics.md ("Spark's own join suites") equal, and
 * every entry pointing at a test that its suite really has.
 */
class SparkJoinSuitesDocSuite extends AnyFunSuite {

  private val Heading = "## Spark's own join suites"
  private val Header = Seq("Suite", "Test", "Category", "Reason")

  /** The rows of the section's table of tests, cells unescaped. */
  private def documented: Seq[Seq[String]] = {
    val lines = Files.readAllLines(Paths.get("docs", "semantics.md")).asScala.toSeq
    val section = lines.dropWhile(_.trim != Heading).drop(1).takeWhile(!_.startsWith("## "))
    assert(section.nonEmpty, s"docs/semantics.md has no section '$Heading'")
    def cells(line: String): Seq[String] =
      line.trim.stripPrefix("|").stripSuffix("|").split("""(?<!\\)\|""").toSeq
        .map(_.trim.replace("""\|""", "|"))
    val table = section.map(_.trim).dropWhile(l => !l.startsWith("|") || cells(l) != Header)
      .takeWhile(_.startsWith("|"))
    assert(table.nonEmpty, s"no table with columns ${Header.mkString(" | ")} under '$Heading'")
    table.drop(2).map(cells) // the header and its separator
  }

  test("docs/semantics.md lists exactly the known tests of KnownTests") {
    val inCode = KnownTests.all.map(k => Seq(k.suite, k.test, k.category.id, k.reason))
    val inDocs = documented
    assert(inDocs.forall(_.size == Header.size), "rows with a wrong number of cells")
    if (inDocs.diff(inCode).nonEmpty || inCode.diff(inDocs).nonEmpty) {
      fail(s"only in docs/semantics.md:\n${inDocs.diff(inCode).mkString("\n")}" +
        s"\nonly in KnownTests:\n${inCode.diff(inDocs).mkString("\n")}")
    }
  }

  test("every known test names a suite that runs here and a test that suite has") {
    KnownTests.all.groupBy(_.suite).foreach { case (suite, entries) =>
      val suiteClass: Class[_] = try Class.forName(s"rangejoin.spark.$suite") catch {
        case _: ClassNotFoundException => fail(s"no suite rangejoin.spark.$suite")
      }
      // Constructing a Spark suite only registers its tests; its session starts when it runs.
      val names = suiteClass.getDeclaredConstructor().newInstance()
        .asInstanceOf[org.scalatest.Suite].testNames
      // SparkFunSuite registers an excluded test as ignored, named "<test> (excluded)".
      entries.foreach { k =>
        assert(names.contains(k.test) || names.contains(s"${k.test} (excluded)"),
          s"$suite has no test '${k.test}'")
      }
    }
  }
}
