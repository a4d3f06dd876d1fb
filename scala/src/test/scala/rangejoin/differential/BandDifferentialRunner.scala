package rangejoin.differential

import scala.collection.mutable

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanHelper
import org.apache.spark.sql.execution.joins.{BroadcastNestedLoopJoinExec, CartesianProductExec}
import org.apache.spark.sql.internal.SQLConf

import rangejoin.RangeJoinConf
import rangejoin.execution.PiecewiseMergeJoinExec
/**
 * Runs a [[BandCase]] twice on one session, with rangejoin off (stock Spark) and on, and checks:
 *  - both give the same rows as multisets, or both raise an error of the same condition;
 *  - stock Spark's plan has no PiecewiseMergeJoin, and rangejoin's plan has one exactly when the
 *    case expects it and stock Spark planned a nested loop join (the optimizer removes a join
 *    with an empty side altogether);
 *  - the index rangejoin chose, as its simpleString names it, is the one the case expects
 *    ([[BandCase.indexExpectation]]): a band where the band's conjuncts can pair, a SortedRun
 *    where they cannot.
 * Plans are read before adaptive execution (`sparkPlan`), which is deterministic; whether the
 * operator survived adaptive re-planning is counted from the executed plan.
 *
 * The same checks as [[DifferentialRunner]], over the band cases' tables and expectations.
 */
final class BandDifferentialRunner(spark: SparkSession) extends AdaptiveSparkPlanHelper {

  var cases = 0
  var plannedRangeJoin = 0
  var executedRangeJoin = 0
  val switches = new SwitchCount
  var bothRaised = 0
  /** Planned joins by the index their simpleString names. */
  val byIndex: mutable.Map[String, Int] = mutable.TreeMap.empty[String, Int].withDefaultValue(0)
  /** Planned joins whose index the case asserted (a band, or a SortedRun). */
  var indexAsserted = 0

  private val IndexName = """, (SortedRun|BandRun|IntervalIndex) \(""".r

  def check(c: BandCase, conf: Seq[(String, String)]): Unit = {
    register(c)
    val (stockPlan, stock, _) = run(c, conf :+ (RangeJoinConf.Enabled -> "false"))
    val (ourPlan, ours, ourFinal) = run(c, conf :+ (RangeJoinConf.Enabled -> "true"))
    def describe = s"$c\n  query: ${c.sql}\n  L: ${data(c, Side.Left)}\n  R: ${data(c, Side.Right)}\n" +
      s"  stock plan:\n$stockPlan\n  rangejoin plan:\n$ourPlan"

    // Every check runs, and a failure names all that failed: a plan the case did not expect must
    // not hide a different answer.
    val problems = mutable.Buffer.empty[String]
    def expect(ok: Boolean, problem: => String): Unit = if (!ok) problems += problem

    val stockNestedLoop = stockPlan.exists {
      case _: BroadcastNestedLoopJoinExec | _: CartesianProductExec => true
      case _ => false
    }
    val joins = ourPlan.collect { case j: PiecewiseMergeJoinExec => j }
    val planned = joins.nonEmpty
    expect(!stockPlan.exists(_.isInstanceOf[PiecewiseMergeJoinExec]), "rangejoin off but used")
    val ansi = withConf(conf)(spark.conf.get(SQLConf.ANSI_ENABLED.key).toBoolean)
    val expected = stockNestedLoop && c.rangeJoinExpected(ansi)
    expect(planned == expected, s"expected ${if (expected) "a" else "no"} PiecewiseMergeJoin")

    val index = joins.headOption.flatMap { join =>
      val described = join.simpleString(Int.MaxValue)
      val index = IndexName.findFirstMatchIn(described).map(_.group(1))
      expect(index.isDefined, s"no index named in '$described'")
      index.foreach { name =>
        c.indexExpectation(ansi, join.buildSide) match {
          case IndexExpectation.Band(exact) =>
            expect(name == "BandRun" || name == "IntervalIndex", s"expected a band, got $name")
            exact.foreach { e =>
              expect(name == e, s"expected $e with ${join.buildSide}, got $name")
            }
          case IndexExpectation.SortedRun =>
            expect(name == "SortedRun", s"expected a SortedRun, got $name")
          case IndexExpectation.Unchecked =>
        }
      }
      index
    }

    (stock, ours) match {
      case (Rows(a), Rows(b)) =>
        expect(a == b, s"answers differ\n${Differential.diff(a, b)}")
      case (Raised(a, _), Raised(b, _)) =>
        expect(a == b, s"errors differ: stock $a, rangejoin $b")
      case (Raised(a, _), Rows(b)) if c.stockAloneRaises =>
        expect(a == "ARITHMETIC_OVERFLOW", s"stock raised $a, not the overflow")
        run(c, conf ++ Seq(RangeJoinConf.Enabled -> "false", SQLConf.ANSI_ENABLED.key -> "false"))._2 match {
          case Rows(withoutAnsi) => expect(b == withoutAnsi, s"answers differ from stock without ANSI\n${Differential.diff(withoutAnsi, b)}")
          case other => expect(ok = false, s"stock without ANSI gave ${brief(other)}")
        }
      case (a, b) => expect(ok = false, s"stock gave ${brief(a)}, rangejoin gave ${brief(b)}")
    }
    if (problems.nonEmpty) throw new AssertionError(s"${problems.mkString("; ")}: $describe")
    cases += 1
    if (stock.isInstanceOf[Raised]) bothRaised += 1
    if (planned) plannedRangeJoin += 1
    index.foreach(byIndex(_) += 1)
    if (joins.headOption.exists(j => c.indexExpectation(ansi, j.buildSide) != IndexExpectation.Unchecked)) {
      indexAsserted += 1
    }
    if (ourFinal.exists(find(_)(_.isInstanceOf[PiecewiseMergeJoinExec]).isDefined)) executedRangeJoin += 1
    ourFinal.foreach(switches.record)
  }

  def summary(name: String): String = {
    val indexes = byIndex.map { case (k, v) => s"$v $k" }.mkString(", ")
    s"$name: $cases cases, $plannedRangeJoin planned PiecewiseMergeJoin ($indexes; $indexAsserted " +
      s"asserted), $executedRangeJoin executed it, $bothRaised raised the same error in both$switches"
  }

  /** A side's rows, (id, x, lo, hi, v) each, to reproduce a failure from its message. */
  private def data(c: BandCase, side: Side): String = BandTables.rows(c, side).map(Differential.render).mkString(" ")

  private def register(c: BandCase): Unit = {
    def table(side: Side, name: String): Unit = {
      val rows = BandTables.rows(c, side)
      val df = spark.createDataFrame(java.util.Arrays.asList(rows: _*), BandTables.schema(c.keyType.dataType))
      val parts = if (side == Side.Left) c.partitions._1 else c.partitions._2
      (if (parts > 1) df.repartition(parts) else df).createOrReplaceTempView(name)
    }
    table(Side.Left, "L")
    table(Side.Right, "R")
  }

  private def run(c: BandCase, conf: Seq[(String, String)]): (SparkPlan, Outcome, Option[SparkPlan]) =
    Differential.run(spark, c.sql, conf)

  private def brief(o: Outcome): String = o match {
    case Rows(rows) => s"${rows.size} rows: ${rows.take(10).mkString(" ")}"
    case Raised(condition, message) => s"$condition (${message.linesIterator.take(2).mkString(" ")})"
  }

  private def withConf[T](conf: Seq[(String, String)])(body: => T): T = Differential.withConf(spark, conf)(body)
}
