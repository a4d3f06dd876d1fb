package rangejoin.differential

import scala.collection.mutable
import scala.util.{Failure, Success, Try}

import org.apache.spark.SparkThrowable
import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanHelper
import org.apache.spark.sql.execution.joins.{BroadcastHashJoinExec, BroadcastNestedLoopJoinExec, CartesianProductExec, ShuffledHashJoinExec, SortMergeJoinExec}
import org.apache.spark.sql.internal.SQLConf

import rangejoin.RangeJoinConf
import rangejoin.execution.{PiecewiseMergeJoinExec, PiecewiseMergeJoinLike}
import rangejoin.execution.sideswitch.SideSwitchExec
import rangejoin.{OptionWhen, TestShims}

/** What one run of a case's query gave: its rows, rendered and sorted, or its error condition. */
sealed trait Outcome
final case class Rows(rows: Seq[String]) extends Outcome
final case class Raised(condition: String, message: String) extends Outcome

/**
 * One generated query of a differential family, checked against stock Spark by
 * [[DifferentialRunner]]: what it runs, over which tables, and what rangejoin's plan must be.
 */
trait DifferentialCase {

  /** The query. */
  def sql: String

  /** Registers the tables the query reads on `spark` (views named in `sql`); some families register theirs once per suite. */
  def register(spark: SparkSession): Unit = ()

  /** Settings of the case's own, for both runs (the suite's variant comes first). */
  def conf: Seq[(String, String)] = Nil

  /** What is wrong with the plans (empty: as the case expects). Stock's is never rangejoin's: checked for every case. */
  def planProblems(plans: Plans): Seq[String]

  /**
   * The error condition with which stock Spark alone may fail, where rangejoin then answers
   * (docs/semantics.md#errors): the answer must be stock Spark's with ANSI off, the answer the
   * error hides.
   */
  def stockAloneMayRaise: Option[String] = None

  /** The case's data, to reproduce a failure from its message; empty when the query shows it. */
  def dataShown: String = ""
}

/** The plans a case ran with: stock Spark's and rangejoin's, before adaptive execution, and whether ANSI was on. */
final case class Plans(stock: SparkPlan, ours: SparkPlan, ansi: Boolean) {

  def stockNestedLoop: Boolean = stock.exists {
    case _: BroadcastNestedLoopJoinExec | _: CartesianProductExec => true
    case _ => false
  }

  def stockEquiJoin: Boolean = stock.exists {
    case _: BroadcastHashJoinExec | _: ShuffledHashJoinExec | _: SortMergeJoinExec => true
    case _ => false
  }

  /** rangejoin's joins, broadcast and shuffled. */
  def rangeJoins: Seq[PiecewiseMergeJoinLike] = ours.collect { case j: PiecewiseMergeJoinLike => j }

  def rangeJoinNames: Seq[String] = rangeJoins.map(_.simpleString(Int.MaxValue))

  /** The index of rangejoin's first join, as EXPLAIN names it. */
  def index: Option[String] = rangeJoinNames.headOption.flatMap(Plans.IndexName.findFirstMatchIn(_).map(_.group(1)))

  /** Whether a range join was planned exactly when expected, or why not. */
  def planned(expected: Boolean): Option[String] = {
    val planned = ours.exists(_.isInstanceOf[PiecewiseMergeJoinExec])
    OptionWhen(planned != expected)(s"expected ${if (expected) "a" else "no"} PiecewiseMergeJoin")
  }

  /** Under an equi-join, every range join must search within the keys. */
  def perKey: Option[String] =
    rangeJoinNames.find(!_.contains(" per key")).map(j => s"an equi-join planned without its keys: $j")
}

object Plans {
  val IndexName = """, (SortedRun|BandRun|IntervalIndex) \(""".r
}

/**
 * Runs each [[DifferentialCase]] twice on one session, with rangejoin off (stock Spark) and on,
 * and checks, naming every problem found:
 *  - both give the same rows as multisets, or both raise an error of the same condition (or stock
 *    alone raises as the case allows, and rangejoin gives the answer stock gives without ANSI);
 *  - stock Spark's plan has no rangejoin operator, and rangejoin's plan is what the case expects.
 * Plans are read before adaptive execution (`sparkPlan`), which is deterministic; whether the
 * operator survived adaptive re-planning is counted from the executed plan. One runner serves
 * every family (plain, band, keyed, keyed existence, binned) and every variant of a suite.
 */
final class DifferentialRunner(spark: SparkSession) extends AdaptiveSparkPlanHelper {

  private var cases = 0
  private var plannedRangeJoin = 0
  private var executedRangeJoin = 0
  private var bothRaised = 0
  private var stockAloneRaised = 0
  private var withRows = 0
  private val byIndex = mutable.TreeMap.empty[String, Int].withDefaultValue(0)
  val switches = new SwitchCount

  def check(c: DifferentialCase, variant: Seq[(String, String)]): Unit = {
    c.register(spark)
    val conf = variant ++ c.conf
    val (stockPlan, stock, _) = Differential.run(spark, c.sql, conf :+ (RangeJoinConf.Enabled -> "false"))
    val (ourPlan, ours, ourFinal) = Differential.run(spark, c.sql, conf :+ (RangeJoinConf.Enabled -> "true"))
    val ansi = Differential.withConf(spark, conf)(spark.conf.get(SQLConf.ANSI_ENABLED.key).toBoolean)
    val plans = Plans(stockPlan, ourPlan, ansi)
    def describe = s"$c\n  query: ${c.sql}\n" + (if (c.dataShown.isEmpty) "" else s"  data: ${c.dataShown}\n") +
      s"  stock plan:\n$stockPlan\n  rangejoin plan:\n$ourPlan"

    // Every check runs, and a failure names all that failed: a plan the case did not expect must
    // not hide a different answer.
    val problems = mutable.Buffer.empty[String]
    if (stockPlan.exists(_.isInstanceOf[PiecewiseMergeJoinLike])) problems += "rangejoin off but used"
    problems ++= c.planProblems(plans)
    (stock, ours) match {
      case (Rows(a), Rows(b)) => if (a != b) problems += s"answers differ\n${Differential.diff(a, b)}"
      case (Raised(a, _), Raised(b, _)) =>
        if (a != b) problems += s"errors differ: stock $a, rangejoin $b"
        bothRaised += 1
      case (Raised(a, _), Rows(b)) if c.stockAloneMayRaise.contains(a) =>
        stockAloneRaised += 1
        Differential.run(spark, c.sql, conf ++ Seq(RangeJoinConf.Enabled -> "false", SQLConf.ANSI_ENABLED.key -> "false"))._2 match {
          case Rows(withoutAnsi) => if (withoutAnsi != b) {
            problems += s"answers differ from stock without ANSI\n${Differential.diff(withoutAnsi, b)}"
          }
          case other => problems += s"stock raised $a, and without ANSI gave ${Differential.brief(other)}"
        }
      case (a, b) => problems += s"stock gave ${Differential.brief(a)}, rangejoin gave ${Differential.brief(b)}"
    }
    if (problems.nonEmpty) throw new AssertionError(s"${problems.mkString("; ")}: $describe")

    cases += 1
    stock match {
      case Rows(rows) if rows.nonEmpty => withRows += 1
      case _ =>
    }
    if (plans.rangeJoins.nonEmpty) plannedRangeJoin += 1
    plans.index.foreach(byIndex(_) += 1)
    if (ourFinal.exists(find(_)(_.isInstanceOf[PiecewiseMergeJoinLike]).isDefined)) executedRangeJoin += 1
    ourFinal.foreach(switches.record)
  }

  def summary(name: String): String = {
    val indexes = if (byIndex.isEmpty) "" else byIndex.map { case (k, v) => s"$v $k" }.mkString(" (", ", ", ")")
    s"$name: $cases cases ($withRows with rows), $plannedRangeJoin planned a range join$indexes, " +
      s"$executedRangeJoin executed it, $bothRaised raised the same error in both, " +
      s"$stockAloneRaised raised in stock Spark alone (documented)$switches"
  }
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

/** What the differential runner does with a query: run it under some settings, and render its rows or its error. */
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
      case t: SparkThrowable if TestShims.condition(t) != null => TestShims.condition(t)
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

  def brief(o: Outcome): String = o match {
    case Rows(rows) => s"${rows.size} rows: ${rows.take(10).mkString(" ")}"
    case Raised(condition, message) => s"$condition (${message.linesIterator.take(2).mkString(" ")})"
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
