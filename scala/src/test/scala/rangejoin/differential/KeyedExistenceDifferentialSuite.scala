package rangejoin.differential

import java.nio.file.Files

import org.apache.spark.SparkFunSuite
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.internal.SQLConf
import org.scalatest.funsuite.AnyFunSuite

import rangejoin.RangeJoinConf
/**
 * Runs a [[KeyedCase]] with rangejoin off (stock Spark) and on: both give the same rows as
 * multisets, or both raise an error of the same condition; stock Spark's plan never holds the
 * rewrite's aggregate, and rangejoin's holds it exactly when the case says.
 */
final class KeyedExistenceRunner(spark: SparkSession) {
  var cases = 0
  var rewritten = 0
  var bothRaised = 0

  def check(c: KeyedCase, extra: Seq[(String, String)] = Nil): Unit = {
    // Sides too large for rangejoin to buffer, unless a case says otherwise: small ones go to
    // the per-key index where it can take them (perKeyIndex's cases).
    val conf = Seq(RangeJoinConf.BroadcastThreshold -> "-1") ++ extra ++ c.conf
    val (stockPlan, stock, _) = Differential.run(spark, c.sql, conf :+ (RangeJoinConf.Enabled -> "false"))
    val (ourPlan, ours, _) = Differential.run(spark, c.sql, conf :+ (RangeJoinConf.Enabled -> "true"))
    def describe = s"$c\n  query: ${c.sql}\n  stock plan:\n$stockPlan\n  rangejoin plan:\n$ourPlan"
    assert(!KeyedExistenceCases.rewritten(stockPlan), s"rangejoin off but rewritten: $describe")
    val planned = KeyedExistenceCases.rewritten(ourPlan)
    assert(planned == c.rewrite, s"expected ${if (c.rewrite) "the" else "no"} rewrite: $describe")
    (stock, ours) match {
      case (Rows(a), Rows(b)) => assert(a == b, s"answers differ: $describe\n${Differential.diff(a, b)}")
      case (Raised(a, _), Raised(b, _)) =>
        assert(a == b, s"errors differ: stock $a, rangejoin $b: $describe")
        bothRaised += 1
      case (a, b) => throw new AssertionError(s"stock gave $a, rangejoin gave $b: $describe")
    }
    cases += 1
    if (planned) rewritten += 1
  }

  def summary(name: String): String =
    s"$name: $cases cases, $rewritten rewritten, $bothRaised raised the same error in both"
}

object KeyedExistenceSuites {
  lazy val dir: java.io.File = {
    val d = Files.createTempDirectory("keyed-existence").toFile
    d.deleteOnExit()
    d
  }
  val all: Seq[KeyedCase] = KeyedExistenceCases.main ++ KeyedExistenceCases.edges ++
    KeyedExistenceCases.overflow ++ KeyedExistenceCases.collated ++ KeyedExistenceCases.subqueries ++
    KeyedExistenceCases.perKeyIndex ++
    KeyedExistenceCases.declined
  def every(n: Int, offset: Int): Seq[KeyedCase] = all.indices.filter(_ % n == offset).map(all)
}

abstract class LocalKeyedExistenceSuite(cases: Seq[KeyedCase], conf: (String, String)*)
  extends SparkFunSuite with LocalDifferentialSession {

  private lazy val runner = new KeyedExistenceRunner(spark)

  override def beforeAll(): Unit = {
    super.beforeAll()
    KeyedExistenceCases.register(spark, KeyedExistenceSuites.dir)
  }

  override protected def summary: String = runner.summary(getClass.getSimpleName)

  cases.foreach { c => test(c.toString)(runner.check(c, conf)) }
}

/** Every case, on a local session with adaptive execution. */
class KeyedExistenceDifferentialSuite extends LocalKeyedExistenceSuite(KeyedExistenceSuites.all)

/** Every fourth case without adaptive execution: sort-merge and hash joins planned up front. */
class KeyedExistenceAqeOffSuite extends LocalKeyedExistenceSuite(
  KeyedExistenceSuites.every(4, 0),
  SQLConf.ADAPTIVE_EXECUTION_ENABLED.key -> "false")

/**
 * Every sixteenth case on `local-cluster[2,1,1024]`: the aggregate's shuffle and the join's broadcast
 * cross executor JVMs. AQE on and off.
 */
class KeyedExistenceDistributedSuite extends AnyFunSuite with ClusterDifferentialSession {

  private lazy val runner = new KeyedExistenceRunner(spark)

  override protected def summary: Option[String] = Some(runner.summary(getClass.getSimpleName))

  override protected def setUp(): Unit =
    KeyedExistenceCases.register(spark, Files.createTempDirectory("keyed-existence-cluster").toFile)

  for ((aqe, offset) <- Seq("true" -> 1, "false" -> 9); c <- KeyedExistenceSuites.every(16, offset)) {
    test(s"AQE $aqe: $c")(runner.check(c, Seq(SQLConf.ADAPTIVE_EXECUTION_ENABLED.key -> aqe)))
  }
}
