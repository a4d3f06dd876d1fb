package rangejoin.differential

import org.apache.spark.{SparkConf, SparkFunSuite}
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.internal.SQLConf
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import rangejoin.{RangeJoinExtensions, RangeJoinSharedSession, TestShims}
/**
 * The session of a differential suite that runs on the shared local test session, and the line
 * it reports once its cases ran ([[summary]]).
 */
trait LocalDifferentialSession extends RangeJoinSharedSession { this: SparkFunSuite =>

  /** What the suite's cases came to, reported after the last of them. */
  protected def summary: String

  /**
   * Spark's tests validate the plan after every optimizer rule; hundreds of small generated plans
   * have nothing for it that other suites do not check. A suite may keep it on.
   */
  protected def validatePlanChanges: Boolean = false

  override protected def sparkConf: SparkConf =
    if (validatePlanChanges) super.sparkConf
    else super.sparkConf.set(SQLConf.PLAN_CHANGE_VALIDATION.key, "false")

  override def afterAll(): Unit = {
    try info(summary) finally super.afterAll()
  }
}

/**
 * The session of a differential suite on `local-cluster[2,1,1024]`: two executor JVMs, so
 * broadcasts, task closures, shuffles and the merged marks of a buffered side really cross
 * processes. Executors load rangejoin's classes from the driver's class path (Spark's tests set
 * `spark.testing`). The cluster is the suite's own, stopped after its tests: a JVM holds one
 * SparkContext, and the other suites' local sessions need it gone.
 */
trait ClusterDifferentialSession extends BeforeAndAfterAll { this: AnyFunSuite =>

  protected var spark: SparkSession = _

  /** What the suite's cases came to, reported after the last of them; None reports nothing. */
  protected def summary: Option[String] = None

  /** Settings beyond rangejoin, 4 shuffle partitions and no UI. */
  protected def clusterConf(conf: SparkConf): SparkConf = conf

  /** Runs once the session has started, before the first test: views, files. */
  protected def setUp(): Unit = ()

  override def beforeAll(): Unit = {
    super.beforeAll()
    val conf = clusterConf(new SparkConf()
      .set("spark.sql.extensions", classOf[RangeJoinExtensions].getName)
      .set(SQLConf.SHUFFLE_PARTITIONS.key, "4")
      .set("spark.ui.enabled", "false")
      .setAll(TestShims.sessionConf))
    // Executors run the JIT the test JVM runs (build.sbt's Test / javaOptions): short tasks.
    jitOptions.foreach(conf.set("spark.executor.extraJavaOptions", _))
    spark = SparkSession.builder().master("local-cluster[2,1,1024]").appName(getClass.getSimpleName)
      .config(conf).getOrCreate()
    setUp()
  }

  private def jitOptions: Option[String] = {
    val args = java.lang.management.ManagementFactory.getRuntimeMXBean.getInputArguments
    Option(args.toArray.collect { case a: String if a.startsWith("-XX:TieredStopAtLevel") => a }
      .mkString(" ")).filter(_.nonEmpty)
  }

  override def afterAll(): Unit = {
    try {
      summary.foreach(info(_))
      if (spark != null) spark.stop()
      SparkSession.clearActiveSession()
      SparkSession.clearDefaultSession()
    } finally super.afterAll()
  }
}
