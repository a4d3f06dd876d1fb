package rangejoin.differential

import scala.util.Random

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.execution.joins.{BroadcastNestedLoopJoinExec, CartesianProductExec, ShuffledHashJoinExec, SortMergeJoinExec}
import org.apache.spark.sql.internal.SQLConf

import rangejoin.RangeJoinConf
import rangejoin.execution.ShuffledPiecewiseMergeJoinExec
import rangejoin.OptionWhen

/**
 * Generated band and interval joins too large to broadcast (here: broadcasting switched off), for
 * the binned rewrite: each case is a key type, a band shape, equality keys or not, a hint's bin
 * size or none, and one generated pair of tables, `p` (points, and intervals `[lo2, hi2]`) and
 * `i` (intervals `[lo, hi]`), named after the case.
 *
 * The data holds what binning could get wrong: NULL keys and bounds, duplicate rows, empty,
 * inverted and zero-length intervals, intervals spanning many bins and one spanning the whole
 * type (bigint: Long.MinValue to Long.MaxValue), negative keys, keys at the type's extremes, most
 * points in one bin (skew), and sides with no row or one row.
 */
final case class BinnedCase(index: Int, keyType: String, shape: String, condition: String,
    equality: String, hint: String, settings: Seq[(String, String)], seed: Long, sizes: (Int, Int),
    how: String = "JOIN") extends DifferentialCase {

  def p: String = s"bp_$index"
  def i: String = s"bi_$index"

  def sql: String = {
    val on = (if (equality.isEmpty) "" else s"$equality AND ") + condition
    s"SELECT $hint * FROM $p p $how $i i ON $on".replace("  ", " ")
  }

  override def toString: String =
    f"case $index%03d: $how $keyType $shape${if (equality.nonEmpty) s" with $equality" else ""}" +
      s"${if (hint.nonEmpty) s" $hint" else ""} sizes $sizes seed $seed"

  /** Broadcasting off, in Spark and in rangejoin: no side can be buffered. */
  override def conf: Seq[(String, String)] = Seq(
    SQLConf.AUTO_BROADCASTJOIN_THRESHOLD.key -> "-1", RangeJoinConf.BroadcastThreshold -> "-1") ++ settings

  /**
   * Where both sides have rows, a shuffled equi-join with `RangeJoin` in the plan (rangejoin's
   * ShuffledPiecewiseMergeJoin, or with `spark.rangejoin.shuffle.maxPartitionSize` -1, Spark's
   * own), and no cartesian product or nested loop join.
   */
  override def planProblems(plans: Plans): Seq[String] = {
    val joins = plans.ours.collect {
      case j: SortMergeJoinExec => j
      case j: ShuffledHashJoinExec => j
      case j: ShuffledPiecewiseMergeJoinExec => j
    }
    val nestedLoops = plans.ours.collect { case j: CartesianProductExec => j; case j: BroadcastNestedLoopJoinExec => j }
    val binned = joins.nonEmpty && nestedLoops.isEmpty && plans.ours.toString.contains("RangeJoin")
    OptionWhen(sizes._1 > 0 && sizes._2 > 0 && !binned)("not an equi-join on bins").toSeq
  }

  /** Creates this case's two views. */
  override def register(spark: SparkSession): Unit = {
    val rnd = new Random(seed)
    val (points, intervals) = sizes
    val t = BinnedCases.types(keyType)
    def value(): String = {
      val v: Option[Long] = rnd.nextInt(20) match {
        case 0 => None
        case 1 | 2 => Some(t.extremes(rnd.nextInt(t.extremes.size)))
        case 3 | 4 | 5 | 6 => Some(7L * t.unit) // the skewed bin
        case _ => Some((rnd.nextInt(201) - 100).toLong * t.unit)
      }
      v.map(t.literal).getOrElse("NULL")
    }
    def bounds(): (String, String) = rnd.nextInt(12) match {
      case 0 => ("NULL", value())
      case 1 => (value(), "NULL")
      case 2 => val v = value(); (v, v) // zero-length
      case 3 => (value(), value()) // often inverted
      case 4 => (t.literal(t.extremes.head), t.literal(t.extremes.last)) // the whole type
      case 5 => val lo = (rnd.nextInt(201) - 100).toLong * t.unit; (t.literal(lo), t.literal(lo + rnd.nextInt(60) * t.unit))
      case _ =>
        val lo = (rnd.nextInt(201) - 100).toLong * t.unit
        (t.literal(lo), t.literal(lo + rnd.nextInt(6) * t.unit))
    }
    def key(): String = if (rnd.nextInt(8) == 0) "NULL" else rnd.nextInt(3).toString
    val pRows = (0 until points).map { n =>
      val (lo2, hi2) = bounds()
      s"($n, ${key()}, ${value()}, $lo2, $hi2)"
    }
    val iRows = (0 until intervals).map { n =>
      val (lo, hi) = bounds()
      s"($n, ${key()}, $lo, $hi)"
    }
    // Duplicates: some rows twice.
    def withDuplicates(rows: Seq[String]) = rows ++ rows.filter(_ => rnd.nextInt(6) == 0)
    // Typed by casts: a column of NULLs alone would otherwise have no type.
    def view(name: String, columns: Seq[String], rows: Seq[String]): Unit = {
      val typed = columns.zipWithIndex.map { case (c, n) => s"CAST($c AS ${if (n < 2) "int" else keyType}) AS $c" }
      val from =
        if (rows.isEmpty) s"(SELECT ${columns.map(c => s"NULL AS $c").mkString(", ")} FROM range(0))"
        else s"VALUES ${rows.mkString(", ")} AS t(${columns.mkString(", ")})"
      spark.sql(s"CREATE OR REPLACE TEMP VIEW $name AS SELECT ${typed.mkString(", ")} FROM $from")
    }
    view(p, Seq("pid", "k", "x", "lo2", "hi2"), withDuplicates(pRows))
    view(i, Seq("iid", "k", "lo", "hi"), withDuplicates(iRows))
  }
}

object BinnedCases {

  /** A key type: how a long becomes a literal of it, its unit step, and its extreme values. */
  final case class KeyType(literal: Long => String, unit: Long, extremes: Seq[Long])

  val types: Map[String, KeyType] = Map(
    "bigint" -> KeyType(v => s"${v}L", 1L, Seq(Long.MinValue, Long.MinValue + 1, Long.MaxValue - 1, Long.MaxValue)),
    "int" -> KeyType(v => s"${v.toInt}", 1L, Seq(Int.MinValue.toLong, Int.MinValue + 1L, Int.MaxValue - 1L, Int.MaxValue.toLong)),
    "date" -> KeyType(v => s"DATE'1970-01-01' + ${v.toInt}", 1L, Seq(-700000L, -699999L, 2900000L, 2900001L)),
    "timestamp" -> KeyType(v => s"timestamp_micros(${v}L)", 1000000L,
      Seq(-62135596800000000L, -62135596799999999L, 253402300799000000L, 253402300799999999L)))

  val shapes: Seq[(String, String)] = Seq(
    "BETWEEN" -> "p.x BETWEEN i.lo AND i.hi",
    "half-open" -> "p.x >= i.lo AND p.x < i.hi",
    "strict, flipped" -> "i.lo < p.x AND i.hi > p.x",
    "bounds on the point side" -> "i.lo BETWEEN p.lo2 AND p.hi2",
    "overlap" -> "p.lo2 < i.hi AND i.lo < p.hi2",
    "overlap, closed" -> "p.lo2 <= i.hi AND p.hi2 >= i.lo",
    "with a residual" -> "p.x BETWEEN i.lo AND i.hi AND (p.pid + i.iid) % 3 <> 0")

  private val equalities = Seq("", "p.k = i.k", "p.k <=> i.k")
  private val hints = Seq("", "/*+ RANGE_JOIN(i, 1) */", "/*+ RANGE_JOIN(p, 7) */", "/*+ RANGE_JOIN(i, 1000000000) */")
  private val hows = Seq("JOIN", "LEFT JOIN", "JOIN", "RIGHT JOIN", "JOIN", "FULL JOIN")
  private val sizes = Seq((40, 30), (120, 60), (0, 20), (25, 0), (1, 30), (60, 1), (200, 100), (120, 60), (200, 100))

  def generate(seed: Long = 12L): Seq[BinnedCase] = {
    val rnd = new Random(seed)
    // Every key type meets every shape; the equality (none, =, <=>) rotates.
    val combos = for {
      (keyType, t) <- types.keys.toSeq.sorted.zipWithIndex
      ((shape, condition), s) <- shapes.zipWithIndex
    } yield (keyType, shape, condition, equalities((t + s) % equalities.size))
    combos.zipWithIndex.map { case ((keyType, shape, condition, equality), n) =>
      BinnedCase(n, keyType, shape, condition, equality, hints(rnd.nextInt(hints.size)), Nil,
        rnd.nextLong(), sizes(rnd.nextInt(sizes.size)), hows(n % hows.size))
    } ++ toleranceBands(combos.size)
  }

  /** Integer tolerance bands, which wrap without ANSI (and may not fail): bins of wrapped bounds. */
  private def toleranceBands(from: Int): Seq[BinnedCase] = {
    val ansiOff = Seq("spark.sql.ansi.enabled" -> "false")
    for {
      ((keyType, condition), n) <- Seq(
        "bigint" -> "p.x BETWEEN i.lo - 5 AND i.lo + 5",
        "int" -> "p.x BETWEEN i.lo - 5 AND i.lo + 5",
        "bigint" -> "i.lo BETWEEN p.x - 3 AND p.x + 3",
        "int" -> "p.x >= i.lo - 2 AND p.x <= i.hi + 2").zipWithIndex
    } yield BinnedCase(from + n, keyType, "tolerance band", condition,
      if (n % 2 == 0) "" else "p.k = i.k", "", ansiOff, 1000L + n, (120, 60))
  }
}
