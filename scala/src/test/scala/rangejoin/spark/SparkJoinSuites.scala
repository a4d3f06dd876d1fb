package rangejoin.spark

import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.atomic.AtomicInteger

import scala.util.Try

import org.apache.logging.log4j.{Level, LogManager}
import org.apache.logging.log4j.core.config.Configurator
import org.scalactic.source.Position
import org.scalatest.Tag

import org.apache.spark.rangejoin.SparkInternals
import org.apache.spark.sql
import org.apache.spark.sql.execution.{joins, QueryExecution}
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanHelper
import org.apache.spark.sql.util.QueryExecutionListener

import rangejoin.{RangeJoinConf, RangeJoinSharedSession}
import rangejoin.differential.Tier
import rangejoin.execution.{PiecewiseMergeAsOfJoinExec, PiecewiseMergeJoinExec}
/**
 * Spark's own join suites, from the spark-sql test-jar, run with rangejoin installed: each class
 * at the end is Spark's suite, unchanged, plus [[WithRangeJoin]]. The tests that do not simply
 * pass with rangejoin are listed, each with its category and reason, in [[KnownTests]] and in
 * docs/semantics.md ("Spark's own join suites"); SparkJoinSuitesDocSuite keeps the two equal.
 */
sealed abstract class Category(val id: String)

object Category {
  /** (a) Fails without rangejoin too: excluded (reported as ignored). */
  case object FailsWithoutRangeJoin extends Category("a")
  /** (b) Asserts Spark's own operator or plan shape, which rangejoin replaces: run with it off. */
  case object AssertsSparkPlan extends Category("b")
  /** (c) A rangejoin bug: still runs with rangejoin, expected to fail until fixed. */
  case object RangeJoinBug extends Category("c")
  /**
   * (d) Slow, and plans no join rangejoin takes: `make test-all` runs it with rangejoin, and fails
   * it if one of its executed plans has a rangejoin operator; the full tier excludes it (reported
   * as ignored), for the time `make test` has.
   */
  case object SlowWithoutRangeJoin extends Category("d")
}

final case class KnownTest(suite: String, test: String, category: Category, reason: String)

object KnownTests {
  import Category._

  private val pythonUdf = "version skew: the 4.2.0 test-jar's TestPythonUDF calls a " +
    "UserDefinedPythonFunction constructor that Spark 4.3.0 no longer has"
  private val subqueryPythonUdf = Seq("in WHERE clause (Filter)", "in SELECT clause (Project)",
    "in HAVING clause (Filter)", "in Aggregate", "negative examples", "in nested subquery",
    "with nasty predicate expr", "with attribute ref in subquery input and output")
    .map(t => KnownTest("SubquerySuite", s"SPARK-28441: COUNT bug $t with PythonUDF",
      FailsWithoutRangeJoin, pythonUdf))
  private val hintedRangeJoin = "asserts BroadcastNestedLoopJoinExec (and its build side) for " +
    "hinted `t1.key > t2.key` joins, which rangejoin plans as PiecewiseMergeJoinExec"

  val all: Seq[KnownTest] = Seq(
    KnownTest("JoinSuite", "SPARK-28323: PythonUDF should be able to use in join condition",
      FailsWithoutRangeJoin, pythonUdf),
    KnownTest("JoinSuite", "SPARK-28345: PythonUDF predicate should be able to pushdown to join",
      FailsWithoutRangeJoin, pythonUdf),
    KnownTest("JoinSuite",
      "SPARK-36082: only use SingleColumn Null Aware Anti Join when right side can broadcast",
      FailsWithoutRangeJoin, "version skew: Spark 4.3.0 plans `key NOT IN (SELECT b FROM " +
        "testData3)` as a null-aware anti BroadcastHashJoin where the 4.2.0 test expects " +
        "BroadcastNestedLoopJoinExec"),
    KnownTest("JoinSuite", "cross join with broadcast", AssertsSparkPlan,
      "asserts BroadcastNestedLoopJoinExec for `key > a` joins with a broadcastable side, " +
        "which rangejoin plans as PiecewiseMergeJoinExec"),
    KnownTest("JoinHintSuite", "join strategy hint - broadcast", AssertsSparkPlan, hintedRangeJoin),
    KnownTest("JoinHintSuite", "join strategy hint - shuffle-merge", AssertsSparkPlan,
      hintedRangeJoin),
    KnownTest("JoinHintSuite", "join strategy hint - shuffle-hash", AssertsSparkPlan,
      hintedRangeJoin),
    KnownTest("JoinHintSuite", "join strategy hint - shuffle-replicate-nl", AssertsSparkPlan,
      hintedRangeJoin)
  ) ++ subqueryPythonUdf ++ slow

  // Each took 3 s or more in the full tier on 2 cores (40 s the slowest), and none of its
  // executed plans has a rangejoin operator (the suites' listener, below): in the all tier, where
  // they run, a test of this category fails if one does.
  private def slow: Seq[KnownTest] = Seq(
    "JoinSuite" -> "NaN and -0.0 in join keys",
    "JoinSuite" -> "SPARK-26352: join reordering should not change the order of columns",
    "JoinSuite" -> "SPARK-32399: Full outer shuffled hash join",
    "JoinSuite" -> "SPARK-32649: Optimize BHJ/SHJ inner/semi join with empty hashed relation",
    "JoinSuite" -> "SPARK-34593: Preserve broadcast nested loop join partitioning and ordering",
    "JoinSuite" -> ("SPARK-36612: Support left outer join build left or right outer join build " +
      "right in shuffled hash join"),
    "JoinSuite" -> "SPARK-36794: Ignore duplicated key when building relation for semi/anti hash join",
    "JoinSuite" -> "SPARK-49386: test SortMergeJoin (with spill by size threshold)",
    "JoinSuite" -> "full outer join",
    "SubquerySuite" -> "NOT IN predicate subquery",
    "SubquerySuite" -> "SPARK-14791: scalar subquery inside broadcast join",
    "SubquerySuite" -> "SPARK-15370: COUNT bug in WHERE clause (Filter)",
    "SubquerySuite" -> "SPARK-15370: COUNT bug negative examples",
    "SubquerySuite" -> "SPARK-15677: Queries against local relations with scalar subquery in Select list",
    "SubquerySuite" -> "SPARK-15832: Test embedded existential predicate sub-queries",
    "SubquerySuite" -> "SPARK-26078: deduplicate fake self joins for IN subqueries",
    "SubquerySuite" -> "SPARK-28379: non-aggregated single row correlated scalar subquery",
    "SubquerySuite" -> "SPARK-28441: COUNT bug in nested subquery with non-foldable expr",
    "SubquerySuite" -> "SPARK-28441: COUNT bug with non-foldable expression",
    "SubquerySuite" -> "SPARK-32290: SingleColumn Null Aware Anti Join Optimize",
    "SubquerySuite" -> "SPARK-34269: correlated subquery with view in aggregate's grouping expression",
    "SubquerySuite" -> "SPARK-36124: Correlated subqueries with union",
    "SubquerySuite" -> "SPARK-38132: Not IN subquery correctness checks",
    "SubquerySuite" -> ("SPARK-38180, SPARK-36114: allow safe cast expressions in correlated " +
      "equality conditions"),
    "SubquerySuite" -> "SPARK-40615: Check unsupported data type when decorrelating subqueries",
    "SubquerySuite" -> "SPARK-45580: Handle case where a nested subquery becomes an existence join",
    "SubquerySuite" -> "SPARK-49819: Do not collapse projects with exist subqueries",
    "SubquerySuite" -> "SPARK-50091: Handle aggregates in left-hand operand of IN-subquery",
    "DataFrameSelfJoinSuite" -> "SPARK-28344: don't fail if there is no ambiguous self join",
    "DataFrameSelfJoinSuite" -> "SPARK-53143: self join edge-case when Join is not returned by the analyzer",
    "DataFrameSelfJoinSuite" -> "[SPARK-6231] join - self join auto resolve ambiguity",
    "DataFrameSelfJoinSuite" -> "join - using aliases after self join"
  ).map { case (suite, test) => KnownTest(suite, test, SlowWithoutRangeJoin, slowReason) }

  private def slowReason = "slow (3 to 40 s on 2 cores), and none of its executed plans uses " +
    "rangejoin: `make test-all` runs it, and fails if one does"

  def of(suite: String): Map[String, KnownTest] =
    all.filter(_.suite == suite).map(k => k.test -> k).toMap
}

/**
 * Runs a Spark suite on a shared session with rangejoin installed ([[RangeJoinSharedSession]]).
 * Of the suite's [[KnownTests]], category (a) is excluded, (b) runs with
 * `spark.rangejoin.enabled=false`, (c) runs with rangejoin and must fail (ScalaTest's
 * pendingUntilFixed: reported as pending; the suite fails once the test passes), (d) is excluded
 * but in `make test-all` (RANGEJOIN_TESTS=all).
 *
 * A query execution listener counts the executed plans that contain a PiecewiseMergeJoinExec:
 * the suite fails unless there is at least one. Run with `-Dspark.rangejoin.enabled=false`, the
 * suite runs on stock Spark (which is how category (a) is established) and skips that check.
 */
trait WithRangeJoin extends RangeJoinSharedSession {
  import Category._

  /** This suite's KnownTests; a def, since `test` is called from Spark's constructors. */
  private def known: Map[String, KnownTest] = KnownTests.of(getClass.getSimpleName)

  override def excluded: Seq[String] = super.excluded ++ known.values.collect {
    case k if k.category == FailsWithoutRangeJoin || (k.category == SlowWithoutRangeJoin && !Tier.all) => k.test
  }

  override protected def test(testName: String, testTags: Tag*)(testFun: => Any)(
      implicit pos: Position): Unit = super.test(testName, testTags: _*)(counted(testName) {
    known.get(testName).map(_.category) match {
      case Some(AssertsSparkPlan) => withSQLConf(RangeJoinConf.Enabled -> "false")(testFun)
      case Some(RangeJoinBug) if rangeJoinOn => pendingUntilFixed { testFun; () }
      case _ => testFun
    }
  })

  private def rangeJoinOn: Boolean = RangeJoinConf.enabled(spark.sessionState.conf)

  private val executed = new AtomicInteger
  private val usedRangeJoin = new AtomicInteger
  private val testsUsingRangeJoin = new ConcurrentLinkedQueue[String]

  private val counter = new QueryExecutionListener {
    override def onSuccess(funcName: String, qe: QueryExecution, durationNs: Long): Unit = count(qe)
    override def onFailure(funcName: String, qe: QueryExecution, exception: Exception): Unit =
      count(qe)
    private def count(qe: QueryExecution): Unit = {
      executed.incrementAndGet()
      val used = Try(PlanSearch.collectWithSubqueries(qe.executedPlan) {
        case j: PiecewiseMergeJoinExec => j
        case j: PiecewiseMergeAsOfJoinExec => j
      }.nonEmpty).getOrElse(false)
      if (used) usedRangeJoin.incrementAndGet()
    }
  }

  /**
   * Runs a test body, noting how many of its executed plans used rangejoin; a test of category
   * (d), which `make test` leaves out because none does, fails if one did.
   */
  private def counted(testName: String)(body: => Any): Any = {
    val before = usedRangeJoin.get
    var n = 0
    val result = try body finally {
      // Counting must not mask the test's own outcome (a test may have stopped the context).
      Try(SparkInternals.waitForListenerBus(spark.sparkContext))
      n = usedRangeJoin.get - before
      if (n > 0) testsUsingRangeJoin.add(s"$testName: $n")
    }
    if (n > 0 && known.get(testName).exists(_.category == SlowWithoutRangeJoin)) {
      fail(s"$n of its executed plans used rangejoin: it is in category (d), which `make test` " +
        "does not run; take it out of KnownTests.slow and docs/semantics.md")
    }
    result
  }

  override def beforeAll(): Unit = {
    super.beforeAll()
    spark.listenerManager.register(counter)
  }

  /**
   * Whether the suite's queries go through Spark's planner, where rangejoin can take them. Suites
   * that build Spark's join operators directly (InnerJoinSuite, OuterJoinSuite, ...) still run with
   * rangejoin installed, and show it leaves those operators alone, but cannot engage it.
   */
  protected def plansThroughTheStrategy: Boolean = true

  override def afterAll(): Unit = {
    SparkInternals.waitForListenerBus(spark.sparkContext)
    val enabled = rangeJoinOn
    val suite = getClass.getSimpleName
    // scalastyle:off println
    println(s"rangejoin: $suite: ${usedRangeJoin.get} of ${executed.get} executed plans used " +
      s"a rangejoin operator (spark.rangejoin.enabled=$enabled)")
    testsUsingRangeJoin.forEach(t => println(s"rangejoin: $suite: used by: $t"))
    // scalastyle:on println
    super.afterAll()
    if (enabled && plansThroughTheStrategy) {
      assert(usedRangeJoin.get > 0, s"rangejoin planned none of the ${executed.get} queries run")
    }
  }
}

private object PlanSearch extends AdaptiveSparkPlanHelper

class JoinSuite extends sql.JoinSuite with WithRangeJoin
class JoinHintSuite extends sql.JoinHintSuite with WithRangeJoin {
  // Its tests read Spark's hint warnings (HintErrorLogger) from the log; the test log
  // configuration (org.apache.spark at error) drops them: let that logger warn during the suite.
  private val hintLogger = "org.apache.spark.sql.catalyst.analysis.HintErrorLogger"
  private var hintLoggerLevel: Level = _

  override def beforeAll(): Unit = {
    hintLoggerLevel = LogManager.getLogger(hintLogger).getLevel
    Configurator.setLevel(hintLogger, Level.WARN)
    super.beforeAll()
  }

  override def afterAll(): Unit = try super.afterAll() finally {
    Configurator.setLevel(hintLogger, hintLoggerLevel)
  }
}
class DataFrameSelfJoinSuite extends sql.DataFrameSelfJoinSuite with WithRangeJoin
// As-of joins: rangejoin's own operator where the right side can be broadcast.
class DataFrameAsOfJoinSuite extends sql.DataFrameAsOfJoinSuite with WithRangeJoin {
  // Spark's test sessions also run the single-pass analyzer and fail on any difference from the
  // fixed-point one; the single-pass one runs no extension's resolution rules (planning.AsOfJoinRule).
  override protected def sparkConf: org.apache.spark.SparkConf =
    super.sparkConf.set("spark.sql.analyzer.singlePassResolver.dualRunWithLegacy", "false")
}
// Correlated subqueries with an inequality become semi, anti and existence joins with no equi-keys.
class SubquerySuite extends sql.SubquerySuite with WithRangeJoin

/**
 * Spark's suites of its join operators themselves: they build the operators without the planner.
 * Only `make test-all` runs them (build.sbt's `allTierOnly`).
 */
trait BuildsSparkOperatorsDirectly extends WithRangeJoin {
  override protected def plansThroughTheStrategy: Boolean = false
}
class InnerJoinSuite extends joins.InnerJoinSuite with BuildsSparkOperatorsDirectly
class OuterJoinSuite extends joins.OuterJoinSuite with BuildsSparkOperatorsDirectly
class ExistenceJoinSuite extends joins.ExistenceJoinSuite with BuildsSparkOperatorsDirectly
