// The Spark lines rangejoin builds for (issue 25): one source tree, a jar per line.
//
// `build/sbt -Drangejoin.spark=3.5 package` (or RANGEJOIN_SPARK=3.5) picks a line; with neither,
// the line is 4.3 and the build is the one it always was. Each line compiles and tests against the
// Spark jars of its own pyspark wheel (its pyspark/jars folder), never against Maven's spark-sql:
// that is the Spark a pip user runs.

import java.io.File

/**
 * One Spark line.
 *
 * @param line           the Spark feature release, "4.3"; also the artifact's infix
 *                       (`rangejoin-spark-4.3_2.13`) and the target folder (`target/spark-4.3`)
 * @param sparkVersion   the Spark (and pyspark) release compiled and tested against
 * @param scalaVersion   the Scala that Spark release is built with
 * @param testJars       the Spark test-jars (QueryTest, SharedSparkSession) for the line, the
 *                       newest Maven Central has (4.3 has none yet: it uses 4.2's)
 * @param shimDirs       the line's extra source folders, under scala/src/{main,test}/
 */
final case class SparkLine(
    line: String,
    sparkVersion: String,
    scalaVersion: String,
    testJars: String,
    shimDirs: Seq[String]) {

  def scalaBinary: String = scalaVersion.split('.').take(2).mkString(".")

  /** Where `build/pyspark-home <version>` installs this line's pyspark (unless it is .venv's). */
  def cachedPysparkHome: File =
    new File(sys.props("user.home"), s".cache/rangejoin/pyspark/$sparkVersion/pyspark")
}

object SparkLines {
  val Scala212 = "2.12.18"
  val Scala213 = "2.13.18"

  // Shim folders, each named for the lines it serves: `spark-3.5` and `spark-4.x` split what
  // Spark 4 changed (the classic session, collations, hint rules, Spark 3.5's Scala 2.12);
  // `spark-3.5-4.0` and `spark-4.1+` what 4.1 added (the TIME type, a configurable broadcast
  // limit); `spark-4.0-4.2` and `spark-4.3` FileSourceScanExec's constructor (3.5's is in spark-3.5);
  // `spark-3.5-4.2` and `spark-4.3` SQL's ASOF JOIN (4.3 only).
  val all: Seq[SparkLine] = Seq(
    SparkLine("3.5", "3.5.9", Scala212, "3.5.9", Seq("spark-3.5", "spark-3.5-4.0", "spark-3.5-4.2")),
    SparkLine("4.0", "4.0.5", Scala213, "4.0.4", Seq("spark-4.x", "spark-3.5-4.0", "spark-4.0-4.2", "spark-3.5-4.2")),
    SparkLine("4.1", "4.1.4", Scala213, "4.1.3", Seq("spark-4.x", "spark-4.1+", "spark-4.0-4.2", "spark-3.5-4.2")),
    SparkLine("4.2", "4.2.1", Scala213, "4.2.0", Seq("spark-4.x", "spark-4.1+", "spark-4.0-4.2", "spark-3.5-4.2")),
    SparkLine("4.3", "4.3.0", Scala213, "4.2.0", Seq("spark-4.x", "spark-4.1+", "spark-4.3")))

  val default: String = "4.3"

  /** The line this sbt run builds: -Drangejoin.spark, else RANGEJOIN_SPARK, else 4.3. */
  lazy val current: SparkLine = {
    val asked = sys.props.get("rangejoin.spark").orElse(sys.env.get("RANGEJOIN_SPARK"))
      .map(_.trim).filter(_.nonEmpty).getOrElse(default)
    all.find(_.line == asked).getOrElse(sys.error(
      s"rangejoin.spark=$asked is not a Spark line rangejoin builds for: ${all.map(_.line).mkString(", ")}"))
  }
}
