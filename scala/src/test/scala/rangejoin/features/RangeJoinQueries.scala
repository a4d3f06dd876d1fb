package rangejoin.features

import scala.util.Try

import org.apache.spark.sql.{DataFrame, QueryTest}
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanHelper

import rangejoin.{RangeJoinConf, RangeJoinSharedSession}
import rangejoin.execution.PiecewiseMergeJoinExec
import rangejoin.execution.broadcast.SortedBroadcastExec

/** What the feature suites ask of a query: its range joins, and its answer against stock Spark's. */
trait RangeJoinQueries extends QueryTest with RangeJoinSharedSession with AdaptiveSparkPlanHelper {

  protected def rangeJoins(df: DataFrame): Seq[PiecewiseMergeJoinExec] =
    collect(df.queryExecution.executedPlan) { case j: PiecewiseMergeJoinExec => j }

  /** The range joins of the query that have a dynamic filter (its metrics are the join's). */
  protected def dynamicFilters(df: DataFrame): Seq[PiecewiseMergeJoinExec] =
    rangeJoins(df).filter(_.dynamicFilter.isDefined)

  protected def sortedBroadcasts(df: DataFrame): Seq[SortedBroadcastExec] =
    collect(df.queryExecution.executedPlan) { case b: SortedBroadcastExec => b }

  protected def stock[T](body: => T): T = withConf(RangeJoinConf.Enabled -> "false")(body)

  private def rows(query: String): Seq[String] = sql(query).collect().toSeq.map(_.toString).sorted

  /** The query's answer equals stock Spark's; returns the rangejoin run's DataFrame. */
  protected def assertAsStock(query: String): DataFrame = assertAnswer(query, stockAnswer(query))

  /** Stock Spark's answer to `query`, as [[assertAnswer]] compares it. */
  protected def stockAnswer(query: String): Seq[String] = stock(rows(query))

  /**
   * The query's answer equals `expected`, stock Spark's answer to it or to a query that differs
   * only in a hint; returns the rangejoin run's DataFrame.
   */
  protected def assertAnswer(query: String, expected: Seq[String]): DataFrame = {
    val df = sql(query)
    val actual = df.collect().toSeq.map(_.toString).sorted
    assert(actual == expected, s"\n$query\nrangejoin: ${actual.take(10)}\nstock:     ${expected.take(10)}")
    df
  }

  /** The error message of running `query`, which must fail. */
  protected def failure(query: String): String =
    Try(sql(query).collect()).failed.map(e => Iterator.iterate(e)(_.getCause)
      .takeWhile(_ != null).map(_.getMessage).mkString(" / ")).getOrElse(fail(s"no error from $query"))
}
