package rangejoin

import org.apache.spark.sql.Row
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanHelper
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import rangejoin.execution.PiecewiseMergeJoinExec
import rangejoin.planning.RangeJoinStrategy
import rangejoin.TestShims.{ClassicSession => SparkSession}
/**
 * A session built the way users build one, with rangejoin named twice in spark.sql.extensions
 * (and found a third time through META-INF/services, as the jar is on the classpath): the
 * strategy is registered once, every range join is planned as exactly one PiecewiseMergeJoin,
 * and answers are stock Spark's. The session is this suite's own and is stopped afterwards.
 */
class RangeJoinExtensionTwiceSuite extends AnyFunSuite with BeforeAndAfterAll with AdaptiveSparkPlanHelper {

  private var session: SparkSession = _

  override def beforeAll(): Unit = {
    super.beforeAll()
    SparkSession.clearActiveSession()
    SparkSession.clearDefaultSession()
    val extension = classOf[RangeJoinExtensions].getName
    session = SparkSession.builder()
      .master("local[2]")
      .appName(getClass.getSimpleName)
      .config("spark.sql.extensions", s"$extension,$extension")
      .config("spark.ui.enabled", "false")
      .config("spark.sql.shuffle.partitions", "4")
      .getOrCreate()
  }

  override def afterAll(): Unit = {
    try {
      if (session != null) session.stop()
    } finally {
      SparkSession.clearActiveSession()
      SparkSession.clearDefaultSession()
      super.afterAll()
    }
  }

  private def strategiesIn(s: SparkSession): Int =
    s.sessionState.planner.extraPlanningStrategies.count(_ eq RangeJoinStrategy)

  test("the strategy is registered once, in the session and in its new sessions") {
    assert(strategiesIn(session) == 1)
    assert(strategiesIn(session.newSession()) == 1)
  }

  test("each range join is planned once and answers as stock Spark does") {
    val query =
      """SELECT t.a, t.b, u.c FROM
        |  (SELECT l.id AS a, r.id AS b FROM range(0, 30) l JOIN range(0, 20) r ON l.id < r.id) t
        |  LEFT JOIN (SELECT id AS c FROM range(0, 10)) u ON t.b >= u.c AND (t.a + u.c) % 4 <> 0""".stripMargin
    def run(enabled: Boolean): (Seq[Row], Int) = {
      session.conf.set(RangeJoinConf.Enabled, enabled.toString)
      try {
        val df = session.sql(query)
        val rows = df.collect().toSeq
        (rows, collect(df.queryExecution.executedPlan) { case j: PiecewiseMergeJoinExec => j }.size)
      } finally session.conf.unset(RangeJoinConf.Enabled)
    }
    val (stockRows, stockJoins) = run(enabled = false)
    val (rows, joins) = run(enabled = true)
    assert(stockJoins == 0)
    assert(joins == 2)
    def sorted(rs: Seq[Row]) = rs.map(_.toSeq.mkString(",")).sorted
    assert(sorted(rows) == sorted(stockRows))
    assert(rows.nonEmpty)
  }
}
