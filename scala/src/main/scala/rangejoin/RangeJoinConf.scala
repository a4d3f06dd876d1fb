package rangejoin

import java.util.Locale

import scala.collection.mutable.ArrayBuffer
import scala.util.Try

import org.apache.spark.network.util.JavaUtils
import org.apache.spark.sql.internal.SQLConf

/**
 * rangejoin's configuration keys: one table ([[RangeJoinConf.keys]]) of every key, its default,
 * the kind of value it takes and what it means. They are plain SQL configuration strings, read
 * from the session each time a query is planned, so `SET spark.rangejoin.enabled = false` or
 * `spark.conf.set(...)` takes effect for the next query. (Spark's typed ConfigBuilder is private
 * to Spark, so Spark cannot check them when they are set.) A value that cannot be read fails the
 * query being planned with an error naming the key and the values it accepts: a bad setting is
 * never silently ignored.
 *
 * The table is what the other descriptions are checked against: the Python package's options
 * (tests/test_config.py reads [[RangeJoinConf.describe]] through py4j) and the rows of
 * docs/configuration.md and the README.
 */
object RangeJoinConf {

  /** The kinds of value a key takes; each reads a string or fails with what it accepts. */
  sealed abstract class Kind(val name: String, val accepts: String)
  object Kind {
    case object Boolean extends Kind("boolean", "true or false")
    /** A size in bytes; negative switches the feature off. */
    case object SignedSize extends Kind("signed-size",
      "a size in bytes, with an optional unit (10485760, 10m, 64MB, 1g), or a negative number (-1)")
    case object Size extends Kind("size", "a size in bytes of 0 or more, with an optional unit (0, 8m, 64MB)")
    case object Ratio extends Kind("ratio", "a number of 0 or more (0.25, 1, 10)")
  }

  /**
   * One key: `default` is its value when unset (None: unset means another setting applies, named
   * in `doc`).
   */
  final case class Key(name: String, default: Option[String], kind: Kind, doc: String)

  private val table = ArrayBuffer.empty[Key]

  private def key(name: String, default: Option[String], kind: Kind, doc: String): String = {
    table += Key(name, default, kind, doc)
    name
  }

  val Enabled: String = key("spark.rangejoin.enabled", Some("true"), Kind.Boolean,
    "plans eligible range joins with rangejoin; false leaves every join to Spark")

  val BroadcastThreshold: String = key("spark.rangejoin.broadcastThreshold", None, Kind.SignedSize,
    "the largest side, in bytes of estimated size, buffered without a hint; unset: Spark's " +
      "spark.sql.autoBroadcastJoinThreshold; negative: hinted sides only")

  val ExistenceFastPath: String = key("spark.rangejoin.existenceFastPath.enabled", Some("true"), Kind.Boolean,
    "semi, anti and existence joins with no residual read only the other side's extreme key " +
      "(with equality keys, each key's, by Spark's own aggregate: planning.KeyedExistence)")

  val DynamicFilter: String = key("spark.rangejoin.dynamicFilter.enabled", Some("true"), Kind.Boolean,
    "streamed rows no buffered key can match are dropped before the join, down to Parquet and ORC scans")

  val EqualityKeys: String = key("spark.rangejoin.equalityKeys.enabled", Some("true"), Kind.Boolean,
    "joins with equality keys and a range use an index per key")

  val Binning: String = key("spark.rangejoin.binning.enabled", Some("true"), Kind.Boolean,
    "band and interval joins with no side to buffer run as Spark's equi-join on bins")

  val SideSwitch: String = key("spark.rangejoin.sideSwitch.enabled", Some("true"), Kind.Boolean,
    "an inner join over a large buffered side buffers the other side's rows that can match " +
      "instead, when few enough pass")

  val SideSwitchMinSize: String = key("spark.rangejoin.sideSwitch.minBufferedSize", Some("8m"), Kind.Size,
    "the smallest buffered side, in bytes of estimated size, whose join gets the side switch")

  // The side switch buffers the other side when at most this many of its rows pass per row of
  // the buffered side: building a broadcast costs far more a row than streaming one, so swapping
  // pays up to nearly one row per row; the margin covers wider rows and bounds the rows read to
  // rule a side out, which grow with the ratio (docs/design.md, the side switch).
  val SideSwitchMaxRatio: String = key("spark.rangejoin.sideSwitch.maxRowsRatio", Some("0.25"), Kind.Ratio,
    "the side switch buffers the other side when at most this many of its rows pass per buffered row")

  val ShuffleMaxPartitionSize: String = key("spark.rangejoin.shuffle.maxPartitionSize", Some("64m"),
    Kind.SignedSize,
    "a join with equality keys and no side to broadcast sorts the smaller side per shuffle " +
      "partition when its estimated size per partition is at most this (an as-of join: its right " +
      "side); negative: Spark's sort-merge join")

  val AsOf: String = key("spark.rangejoin.asof.enabled", Some("true"), Kind.Boolean,
    "as-of joins (SQL ASOF JOIN, DataFrame._joinAsOf, pandas merge_asof) with a right side to " +
      "broadcast, or keys to shuffle by, search it sorted by (keys, time), O(log M) per left row")

  /** Every key, in the order above. */
  val keys: Seq[Key] = table.toList

  /** The table as rows of (key, default or "", kind, doc), for Python's check through py4j. */
  def describe(): java.util.List[java.util.List[String]] = {
    val rows = new java.util.ArrayList[java.util.List[String]]()
    keys.foreach(k => rows.add(java.util.Arrays.asList(k.name, k.default.getOrElse(""), k.kind.name, k.doc)))
    rows
  }

  def enabled(conf: SQLConf): Boolean = boolean(conf, Enabled)

  def existenceFastPath(conf: SQLConf): Boolean = boolean(conf, ExistenceFastPath)

  def dynamicFilter(conf: SQLConf): Boolean = boolean(conf, DynamicFilter)

  def equalityKeys(conf: SQLConf): Boolean = boolean(conf, EqualityKeys)

  def asOfEnabled(conf: SQLConf): Boolean = boolean(conf, AsOf)

  def binning(conf: SQLConf): Boolean = boolean(conf, Binning)

  def sideSwitch(conf: SQLConf): Boolean = boolean(conf, SideSwitch)

  def sideSwitchMinSize(conf: SQLConf): Long = read(conf, SideSwitchMinSize)(bytes(_).filter(_ >= 0))

  def sideSwitchMaxRatio(conf: SQLConf): Double =
    read(conf, SideSwitchMaxRatio)(v => Try(v.trim.toDouble).toOption.filter(r => r >= 0 && !r.isInfinite))

  /** [[BroadcastThreshold]] in bytes; None when it is not set (Spark's threshold applies). */
  def broadcastThreshold(conf: SQLConf): Option[Long] =
    Option(conf.getConfString(BroadcastThreshold, null)).map(_ => read(conf, BroadcastThreshold)(bytes))

  /** [[ShuffleMaxPartitionSize]] in bytes; None when negative. */
  def shuffleMaxPartitionSize(conf: SQLConf): Option[Long] =
    Some(read(conf, ShuffleMaxPartitionSize)(bytes)).filter(_ >= 0)

  private def entry(name: String): Key = keys.find(_.name == name).get

  /** The key's value read by `parse`, its default when unset; an error naming what it accepts. */
  private def read[T](conf: SQLConf, name: String)(parse: String => Option[T]): T = {
    val k = entry(name)
    val value = conf.getConfString(name, k.default.orNull)
    Option(value).flatMap(parse).getOrElse(throw invalid(name, value, k.kind.accepts))
  }

  private def bytes(value: String): Option[Long] =
    Try(JavaUtils.byteStringAsBytes(value.trim)).orElse(Try(value.trim.toLong)).toOption

  private def boolean(conf: SQLConf, name: String): Boolean =
    read(conf, name)(_.trim.toLowerCase(Locale.ROOT) match {
      case "true" => Some(true)
      case "false" => Some(false)
      case _ => None
    })

  private def invalid(key: String, value: String, accepted: String) =
    new IllegalArgumentException(s"Invalid value for $key: '$value'. Accepted values: $accepted.")
}
