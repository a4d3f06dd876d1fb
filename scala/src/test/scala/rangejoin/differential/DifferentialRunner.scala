package rangejoin.differential

import scala.util.{Failure, Success, Try}

import org.apache.spark.SparkThrowable
import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanHelper
import org.apache.spark.sql.execution.joins.{BroadcastHashJoinExec, BroadcastNestedLoopJoinExec, CartesianProductExec, ShuffledHashJoinExec, SortMergeJoinExec}
import org.apache.spark.sql.internal.SQLConf

import rangejoin.RangeJoinConf
import rangejoin.execution.PiecewiseMergeJoinExec
import rangejoin.execution.sideswitch.SideSwitchExec
/** What one run of a case's query gave: its rows, rendered and sorted, or its error condition. */
sealed trait Outcome
final case class Rows(rows: Seq[String]) extends Outcome
final case class Raised(condition: String, message: String) extends Outcome

/**
 * Runs a [[Case]] twice on one session, with rangejoin off (stock Spark) and on, and checks:
 *  - both give the same rows as multisets, or both raise an error of the same condition;
 *  - stock Spark's plan has no PiecewiseMergeJoin, and rangejoin's plan has one exactly when the
 *    case expects it and stock Spark planned a nested loop join (the optimizer may remove a join
 *    with an empty side altogether).
 * Plans are read before adaptive execution (`sparkPlan`), which is deterministic; whether the
 * operator survived adaptive re-planning is counted from the executed plan.
 */
final class DifferentialRunner(spark: SparkSession) extends AdaptiveSparkPlanHelper {

  var cases = 0
  var plannedRangeJoin = 0
  var executedRangeJoin = 0
  var bothRaised = 0
  val switches = new SwitchCount

  def check(c: Case, conf: Seq[(String, String)]): Unit = {
    register(c)
    val (stockPlan, stock, _) = run(c, conf :+ (RangeJoinConf.Enabled -> "false"))
    val (ourPlan, ours, ourFinal) = run(c, conf :+ (RangeJoinConf.Enabled -> "true"))
    def describe = s"$c\n  query: ${c.sql}\n  stock plan:\n$stockPlan\n  rangejoin plan:\n$ourPlan"

    val stockNestedLoop = stockPlan.exists {
      case _: BroadcastNestedLoopJoinExec | _: CartesianProductExec => true
      case _ => false
    }
    val planned = ourPlan.exists(_.isInstanceOf[PiecewiseMergeJoinExec])
    assert(!stockPlan.exists(_.isInstanceOf[PiecewiseMergeJoinExec]), s"rangejoin off but used: $describe")
    val ansi = withConf(conf)(spark.conf.get(SQLConf.ANSI_ENABLED.key).toBoolean)
    val expected = stockNestedLoop && c.rangeJoinExpected(ansi)
    val stockEquiJoin = stockPlan.exists {
      case _: BroadcastHashJoinExec | _: ShuffledHashJoinExec | _: SortMergeJoinExec => true
      case _ => false
    }
    if (stockEquiJoin) {
      // `IN` keeps its equality: a join rangejoin may take only with an index per key, whose
      // rules KeyedDifferentialSuite asserts case by case.
      ourPlan.collect { case j: PiecewiseMergeJoinExec => j.simpleString(Int.MaxValue) }.foreach { j =>
        assert(j.contains(" per key"), s"an equi-join planned without its keys: $j: $describe")
      }
    } else {
      assert(planned == expected,
        s"expected ${if (expected) "a" else "no"} PiecewiseMergeJoin: $describe")
    }

    (stock, ours) match {
      case (Rows(a), Rows(b)) =>
        assert(a == b, s"answers differ: $describe\n${Differential.diff(a, b)}")
      case (Raised(a, _), Raised(b, _)) =>
        assert(a == b, s"errors differ: stock $a, rangejoin $b: $describe")
        bothRaised += 1
      case (a, b) => throw new AssertionError(s"stock gave $a, rangejoin gave $b: $describe")
    }
    cases += 1
    if (planned) plannedRangeJoin += 1
    if (ourFinal.exists(find(_)(_.isInstanceOf[PiecewiseMergeJoinExec]).isDefined)) executedRangeJoin += 1
    ourFinal.foreach(switches.record)
  }

  def summary(name: String): String =
    s"$name: $cases cases, $plannedRangeJoin planned PiecewiseMergeJoin, $executedRangeJoin executed it, " +
      s"$bothRaised raised the same error in both$switches"

  private def register(c: Case): Unit = {
    def table(side: Side, name: String): Unit = {
      val keyType = if (side == Side.Left) c.keyType.left else c.keyType.right
      val rows = Tables.rows(c, side)
      val df = spark.createDataFrame(java.util.Arrays.asList(rows: _*), Tables.schema(keyType))
      val parts = if (side == Side.Left) c.partitions._1 else c.partitions._2
      (if (parts > 1) df.repartition(parts) else df).createOrReplaceTempView(name)
    }
    table(Side.Left, "L")
    table(Side.Right, "R")
  }

  private def run(c: Case, conf: Seq[(String, String)]): (SparkPlan, Outcome, Option[SparkPlan]) =
    Differential.run(spark, c.sql, conf)

  private def withConf[T](conf: Seq[(String, String)])(body: => T): T = Differential.withConf(spark, conf)(body)
}

/** How many executed plans held a side switch ([[SideSwitchExec]]), and how many of those swapped. */
final class SwitchCount extends AdaptiveSparkPlanHelper {
  var switched = 0
  var swapped = 0

  def record(executed: SparkPlan): Unit =
    collect(executed) { case s: SideSwitchExec => s }.foreach { s =>
      switched += 1
      if (s.metrics("swapped").value > 0) swapped += 1
    }

  override def toString: String = if (switched == 0) "" else s", $switched side switches ($swapped swapped)"
}

/**
 * What both differential runners do with a query: run it under some settings, and render its
 * rows or its error so that two runs compare as values.
 */
object Differential {

  /** The query's plan before adaptive execution, its outcome, and its executed plan. */
  def run(spark: SparkSession, query: String, conf: Seq[(String, String)]): (SparkPlan, Outcome, Option[SparkPlan]) =
    withConf(spark, conf) {
      val df: DataFrame = spark.sql(query)
      val plan = df.queryExecution.sparkPlan
      Try(df.collect().toSeq) match {
        case Success(rows) => (plan, Rows(rows.map(render).sorted), Some(df.queryExecution.executedPlan))
        case Failure(e) => (plan, raised(e), None)
      }
    }

  def raised(e: Throwable): Raised = {
    val chain = Iterator.iterate(e)(_.getCause).takeWhile(_ != null).toSeq
    val condition = chain.collectFirst {
      case t: SparkThrowable if t.getCondition != null => t.getCondition
    }.getOrElse(chain.last.getClass.getName)
    Raised(condition, e.getMessage)
  }

  def render(row: Row): String = row.toSeq.map {
    case null => "NULL"
    case b: Array[Byte] => b.map("%02x".format(_)).mkString("X'", "", "'")
    case v => v.toString // Double/Float print NaN and -0.0 as themselves
  }.mkString("[", ", ", "]")

  def diff(a: Seq[String], b: Seq[String]): String = {
    val onlyStock = a.diff(b)
    val onlyOurs = b.diff(a)
    s"  ${a.size} rows from stock, ${b.size} from rangejoin\n" +
      s"  only in stock: ${onlyStock.take(10).mkString(" ")}\n  only in rangejoin: ${onlyOurs.take(10).mkString(" ")}"
  }

  def withConf[T](spark: SparkSession, conf: Seq[(String, String)])(body: => T): T = {
    val before = conf.map { case (k, _) => k -> spark.conf.getOption(k) }
    conf.foreach { case (k, v) => spark.conf.set(k, v) }
    try body finally before.foreach {
      case (k, Some(v)) => spark.conf.set(k, v)
      case (k, None) => spark.conf.unset(k)
    }
  }
}
