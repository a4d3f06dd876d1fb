package rangejoin.differential

import org.apache.spark.{SparkConf, SparkFunSuite}
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.internal.SQLConf
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import rangejoin.{RangeJoinExtensions, RangeJoinSharedSession}

/**
 * Differential tests: every generated case ([[Cases]]) runs with rangejoin off and on, and must
 * give the same answer ([[DifferentialRunner]]). The full set runs on a local session; subsets
 * run with adaptive execution off, with code generation off (whole-stage and expressions), with
 * ANSI mode off, and across executor JVMs.
 */
object DifferentialSuites {
  /** 11 join forms x 4 operators x 2 orientations x 7 variants. */
  val all: Seq[Case] = Cases.generate(variants = 7)
  def every(n: Int, offset: Int): Seq[Case] = all.filter(_.index % n == offset)
}

abstract class LocalDifferentialSuite(cases: Seq[Case], conf: (String, String)*)
  extends SparkFunSuite with RangeJoinSharedSession {

  private lazy val runner = new DifferentialRunner(spark)

  cases.foreach { c => test(c.toString)(runner.check(c, conf)) }

  override def afterAll(): Unit = {
    try info(runner.summary(getClass.getSimpleName)) finally super.afterAll()
  }
}

class DifferentialSuite extends LocalDifferentialSuite(DifferentialSuites.all)

class DifferentialAqeOffSuite extends LocalDifferentialSuite(
  DifferentialSuites.every(3, 0), SQLConf.ADAPTIVE_EXECUTION_ENABLED.key -> "false")

class DifferentialCodegenOffSuite extends LocalDifferentialSuite(
  DifferentialSuites.every(3, 1),
  SQLConf.WHOLESTAGE_CODEGEN_ENABLED.key -> "false",
  SQLConf.CODEGEN_FACTORY_MODE.key -> "NO_CODEGEN")

class DifferentialAnsiOffSuite extends LocalDifferentialSuite(
  DifferentialSuites.every(5, 2), SQLConf.ANSI_ENABLED.key -> "false")

/**
 * The same cases on `local-cluster[2,1,1024]`: two executor JVMs, so broadcasts, task closures and
 * the merged marks of the buffered side really cross processes. AQE on and off.
 */
class DistributedDifferentialSuite extends AnyFunSuite with BeforeAndAfterAll {

  private var spark: SparkSession = _
  private lazy val runner = new DifferentialRunner(spark)

  override def beforeAll(): Unit = {
    super.beforeAll()
    val conf = new SparkConf()
      .set("spark.sql.extensions", classOf[RangeJoinExtensions].getName)
      .set(SQLConf.SHUFFLE_PARTITIONS.key, "4")
      .set("spark.ui.enabled", "false")
    spark = SparkSession.builder().master("local-cluster[2,1,1024]").appName(getClass.getSimpleName)
      .config(conf).getOrCreate()
  }

  override def afterAll(): Unit = {
    try {
      info(runner.summary(getClass.getSimpleName))
      if (spark != null) spark.stop()
      SparkSession.clearActiveSession()
      SparkSession.clearDefaultSession()
    } finally super.afterAll()
  }

  for ((aqe, offset) <- Seq("true" -> 0, "false" -> 3); c <- DifferentialSuites.every(6, offset)) {
    test(s"AQE $aqe: $c")(runner.check(c, Seq(SQLConf.ADAPTIVE_EXECUTION_ENABLED.key -> aqe)))
  }
}
