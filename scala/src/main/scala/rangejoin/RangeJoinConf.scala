package rangejoin

import java.util.Locale

import scala.util.Try

import org.apache.spark.network.util.JavaUtils
import org.apache.spark.sql.internal.SQLConf

/**
 * rangejoin's configuration keys. They are plain SQL configuration strings, read from the session
 * each time a query is planned, so `SET spark.rangejoin.enabled = false` or
 * `spark.conf.set(...)` takes effect for the next query. (Spark's typed ConfigBuilder is private
 * to Spark, so Spark cannot check them when they are set.) A value that cannot be read fails the
 * query being planned with an error naming the key and the values it accepts: a bad setting is
 * never silently ignored. Every key is documented in docs/configuration.md.
 */
object RangeJoinConf {

  /** Plans eligible range joins as PiecewiseMergeJoinExec; false leaves every join to Spark. */
  val Enabled = "spark.rangejoin.enabled"
  val EnabledDefault = true

  /**
   * The largest buffered side, in bytes of estimated size, that rangejoin broadcasts without a
   * hint. Unset, it is Spark's own `spark.sql.autoBroadcastJoinThreshold`; negative, only hinted
   * sides (`BROADCAST`, `RANGE_JOIN`) are buffered.
   */
  val BroadcastThreshold = "spark.rangejoin.broadcastThreshold"

  /**
   * Semi, anti and existence joins with no residual compare each streamed row with the other
   * side's minimum or maximum key alone, computed by an aggregate instead of a sorted broadcast.
   * With equality keys as well (`i.chr = p.chr AND i.lo > p.x`), with the maximum or minimum per
   * key, by Spark's own aggregate and join (planning.KeyedExistence).
   */
  val ExistenceFastPath = "spark.rangejoin.existenceFastPath.enabled"
  val ExistenceFastPathDefault = true

  /**
   * Drops streamed rows outside the buffered keys' range before the join looks at them, in the
   * streamed side's own generated code and, where it reads files, in its scan.
   */
  val DynamicFilter = "spark.rangejoin.dynamicFilter.enabled"
  val DynamicFilterDefault = true

  /**
   * Joins with equi-join keys and a range (`a.k = b.k AND a.x BETWEEN b.lo AND b.hi`) are planned
   * with a per-key index over a broadcast side; false leaves them to Spark's hash and sort-merge
   * joins.
   */
  val EqualityKeys = "spark.rangejoin.equalityKeys.enabled"
  val EqualityKeysDefault = true

  def equalityKeys(conf: SQLConf): Boolean = boolean(conf, EqualityKeys, EqualityKeysDefault)

  /**
   * Band and interval joins (inner and outer) with no side to buffer run as Spark's own equi-join
   * on bins of their keys (BinnedRangeJoin) rather than as a cartesian product or nested loop.
   */
  val Binning = "spark.rangejoin.binning.enabled"
  val BinningDefault = true

  /**
   * An inner range join whose buffered side is large measures that side's extreme key and rows
   * when it runs, and buffers the other side's rows that can match instead when few enough pass
   * ([[SideSwitchMaxRatio]]): a selective join then broadcasts a few rows rather than the large side.
   */
  val SideSwitch = "spark.rangejoin.sideSwitch.enabled"
  val SideSwitchDefault = true

  /**
   * The smallest buffered side, in bytes of estimated size, whose join gets the side switch
   * ([[SideSwitch]]); a smaller side costs too little to broadcast for a pass over its keys to pay.
   */
  val SideSwitchMinSize = "spark.rangejoin.sideSwitch.minBufferedSize"
  val SideSwitchMinSizeDefault = "8m"

  /**
   * The side switch ([[SideSwitch]]) buffers the other side when at most this many of its rows
   * pass the filter for each row of the buffered side: 0.25, a quarter as many. Building a
   * broadcast costs far more a row than streaming one (W3: about 600 ns against 30), so swapping
   * pays up to nearly one row per row; the margin covers wider rows and bounds the rows read to
   * rule a side out, which grow with the ratio.
   */
  val SideSwitchMaxRatio = "spark.rangejoin.sideSwitch.maxRowsRatio"
  val SideSwitchMaxRatioDefault = 0.25

  /**
   * A join with equality keys and a range whose sides are both too large to broadcast is
   * shuffled by its keys and buffers, in each task, its partition of the smaller side, sorted per
   * key (ShuffledPiecewiseMergeJoin), where that side's estimated size per shuffle partition is at
   * most this; negative leaves such joins to Spark's sort-merge join. Adaptive execution re-plans
   * the join with the shuffled sides' measured sizes.
   */
  val ShuffleMaxPartitionSize = "spark.rangejoin.shuffle.maxPartitionSize"
  val ShuffleMaxPartitionSizeDefault = "64m"

  /** [[ShuffleMaxPartitionSize]] in bytes; None when negative. */
  def shuffleMaxPartitionSize(conf: SQLConf): Option[Long] = {
    val value = conf.getConfString(ShuffleMaxPartitionSize, ShuffleMaxPartitionSizeDefault)
    bytes(value).getOrElse(throw invalid(ShuffleMaxPartitionSize, value,
      "a size in bytes with an optional unit (64m, 256MB), or -1 to leave such joins to Spark")) match {
      case b if b < 0 => None
      case b => Some(b)
    }
  }

  def sideSwitch(conf: SQLConf): Boolean = boolean(conf, SideSwitch, SideSwitchDefault)

  def sideSwitchMaxRatio(conf: SQLConf): Double = {
    val value = conf.getConfString(SideSwitchMaxRatio, SideSwitchMaxRatioDefault.toString)
    Try(value.trim.toDouble).toOption.filter(r => r >= 0 && !r.isInfinite).getOrElse(
      throw invalid(SideSwitchMaxRatio, value, "a number of 0 or more (0.25, 1, 10)"))
  }

  def sideSwitchMinSize(conf: SQLConf): Long = {
    val value = conf.getConfString(SideSwitchMinSize, SideSwitchMinSizeDefault)
    bytes(value).filter(_ >= 0).getOrElse(
      throw invalid(SideSwitchMinSize, value, "a size in bytes of 0 or more, with an optional unit (0, 8m, 64MB)"))
  }

  def enabled(conf: SQLConf): Boolean = boolean(conf, Enabled, EnabledDefault)

  def binning(conf: SQLConf): Boolean = boolean(conf, Binning, BinningDefault)

  def existenceFastPath(conf: SQLConf): Boolean =
    boolean(conf, ExistenceFastPath, ExistenceFastPathDefault)

  def dynamicFilter(conf: SQLConf): Boolean = boolean(conf, DynamicFilter, DynamicFilterDefault)

  /** [[BroadcastThreshold]] in bytes; None when it is not set (Spark's threshold applies). */
  def broadcastThreshold(conf: SQLConf): Option[Long] =
    Option(conf.getConfString(BroadcastThreshold, null)).map { value =>
      bytes(value).getOrElse(
        throw invalid(BroadcastThreshold, value,
          "a size in bytes, with an optional unit (10485760, 10m, 64MB, 1g), or -1 to buffer " +
            "hinted sides only"))
    }

  private def bytes(value: String): Option[Long] =
    Try(JavaUtils.byteStringAsBytes(value.trim)).orElse(Try(value.trim.toLong)).toOption

  private def boolean(conf: SQLConf, key: String, default: Boolean): Boolean =
    conf.getConfString(key, default.toString).trim.toLowerCase(Locale.ROOT) match {
      case "true" => true
      case "false" => false
      case _ => throw invalid(key, conf.getConfString(key), "true or false")
    }

  private def invalid(key: String, value: String, accepted: String) =
    new IllegalArgumentException(s"Invalid value for $key: '$value'. Accepted values: $accepted.")
}
