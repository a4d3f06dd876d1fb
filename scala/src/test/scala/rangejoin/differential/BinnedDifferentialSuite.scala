package rangejoin.differential

import org.apache.spark.SparkFunSuite
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.joins.{BroadcastNestedLoopJoinExec, CartesianProductExec, ShuffledHashJoinExec, SortMergeJoinExec}
import org.apache.spark.sql.internal.SQLConf

import rangejoin.RangeJoinConf
import rangejoin.execution.ShuffledPiecewiseMergeJoinExec
/**
 * Differential tests of the binned rewrite (BinnedRangeJoin): every generated case
 * ([[BinnedCases]]) runs with broadcasting off, with rangejoin off (stock Spark: a cartesian
 * product) and on, and must give the same multiset of rows, or raise an error of the same
 * condition. Where both sides have rows, rangejoin's plan must be a shuffled equi-join with
 * `RangeJoin` in it (rangejoin's ShuffledPiecewiseMergeJoin, or with
 * `spark.rangejoin.shuffle.maxPartitionSize` -1, Spark's own) and no cartesian product or nested
 * loop join.
 */
class BinnedDifferentialRunner(spark: SparkSession) {

  /** Cases whose answer had rows: a differential test over empty answers proves little. */
  var withRows = 0

  private val noBroadcast = Seq(
    SQLConf.AUTO_BROADCASTJOIN_THRESHOLD.key -> "-1", RangeJoinConf.BroadcastThreshold -> "-1")

  def check(c: BinnedCase, conf: Seq[(String, String)]): Unit = {
    c.register(spark)
    val settings = noBroadcast ++ c.conf ++ conf
    val (_, expected, _) = Differential.run(spark, c.query, settings :+ (RangeJoinConf.Enabled -> "false"))
    val (plan, actual, _) = Differential.run(spark, c.query, settings)
    expected match {
      case Rows(rows) if rows.nonEmpty => withRows += 1
      case _ =>
    }
    val problems = Seq(
      Option.when(!same(expected, actual))(s"answers differ:\n${describe(expected, actual)}"),
      Option.when(c.sizes._1 > 0 && c.sizes._2 > 0 && !binned(plan))(s"not an equi-join on bins:\n$plan"))
      .flatten
    assert(problems.isEmpty, s"\n$c\n${c.query}\n${problems.mkString("\n")}")
  }

  private def binned(plan: SparkPlan): Boolean = {
    val joins = plan.collect {
      case j: SortMergeJoinExec => j
      case j: ShuffledHashJoinExec => j
      case j: ShuffledPiecewiseMergeJoinExec => j
    }
    val nestedLoops = plan.collect { case j: CartesianProductExec => j; case j: BroadcastNestedLoopJoinExec => j }
    joins.nonEmpty && nestedLoops.isEmpty && plan.toString.contains("RangeJoin")
  }

  private def same(expected: Outcome, actual: Outcome): Boolean = (expected, actual) match {
    case (Raised(a, _), Raised(b, _)) => a == b
    case _ => expected == actual
  }

  private def describe(expected: Outcome, actual: Outcome): String = (expected, actual) match {
    case (Rows(a), Rows(b)) => Differential.diff(a, b)
    case _ => s"  stock: $expected\n  rangejoin: $actual"
  }
}

object BinnedDifferentialSuites {
  val all: Seq[BinnedCase] = BinnedCases.generate()
}

abstract class LocalBinnedDifferentialSuite(cases: Seq[BinnedCase], conf: (String, String)*)
  extends SparkFunSuite with LocalDifferentialSession {

  private lazy val runner = new BinnedDifferentialRunner(spark)

  override protected def summary: String = s"${runner.withRows} of ${cases.size} cases had rows"

  cases.foreach { c => test(c.toString)(runner.check(c, conf)) }
}

class BinnedDifferentialSuite extends LocalBinnedDifferentialSuite(BinnedDifferentialSuites.all)

class BinnedDifferentialAqeOffSuite extends LocalBinnedDifferentialSuite(
  BinnedDifferentialSuites.all.filter(_.index % 4 == 1), SQLConf.ADAPTIVE_EXECUTION_ENABLED.key -> "false")

/** The bins on Spark's own shuffled joins (sort-merge): rangejoin's shuffled index switched off. */
class BinnedDifferentialSparkJoinSuite extends LocalBinnedDifferentialSuite(
  BinnedDifferentialSuites.all.filter(_.index % 4 == 2), RangeJoinConf.ShuffleMaxPartitionSize -> "-1")
