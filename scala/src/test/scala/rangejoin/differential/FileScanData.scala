package rangejoin.differential

import java.io.File

import scala.jdk.CollectionConverters._
import scala.util.hashing.MurmurHash3

import org.apache.hadoop.fs.Path
import org.apache.orc.OrcFile
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.util.HadoopInputFile
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.internal.SQLConf

import rangejoin.{TestFeatureShims, TestShims}

/**
 * A key type's values for the file-scan differential suite, as SQL literals, edge values included
 * (block layouts refer to them by index); and the buffered sides to join them with, each a set of
 * 1-3 literals, chosen so that the extreme key the dynamic filter uses as its bound is an edge
 * value, or falls between what file statistics can tell apart (a sub-millisecond timestamp against
 * millisecond statistics, -0.0 against 0.0, NaN, 'a' against 'A', a date in the days the Julian
 * calendar skipped in 1582).
 */
final case class KeyDomain(name: String, sqlType: String, values: Seq[String], bounds: Seq[Seq[String]]) {
  /** A literal of exactly the key's type: rangejoin drives only when both keys' types are equal. */
  def typed(literal: String): String = s"CAST($literal AS $sqlType)"
}

/** How a table's rows are ordered in its file, which decides what each row group's statistics say. */
sealed trait Layout
object Layout {
  /** Values drawn at random (about 15% NULL, many duplicates), written sorted by key. */
  case object Clustered extends Layout
  /**
   * Blocks of exactly one row group each, in this order, written in row order: each block maps
   * a row's position in the block (and the block's size) to a value index, or None for NULL.
   */
  final case class Blocks(blocks: Seq[(Int, Int) => Option[Int]]) extends Layout
}

/**
 * One way Spark writes a key type: file format, the session settings of the write, the layout,
 * and whether its test joins on every bound with every comparison operator (where statistics are
 * the lossiest) rather than with one of `<`, `<=` and one of `>`, `>=`.
 */
final case class Encoding(
    format: String,
    domain: KeyDomain,
    label: String = "",
    writeConf: Seq[(String, String)] = Nil,
    layout: Layout = Layout.Clustered,
    everyOperator: Boolean = false) {
  def name: String = s"$format ${domain.name}${if (label.isEmpty) "" else s" $label"}"
}

object FileScanData {

  // Row groups are small so that a few thousand rows make many of them, each with statistics of
  // its own (and, in Parquet, a column index of several pages). ORC's row index stride cannot be
  // below 1000 and its writer checks the stripe's row count once per 1024-row batch.
  val ParquetRowGroup = 100
  val OrcRowGroup = 1024
  private val parquetOptions = Map(
    "parquet.page.row.count.limit" -> "25",
    "parquet.page.size.row.check.min" -> "5",
    "parquet.page.size.row.check.max" -> "25",
    "parquet.page.size" -> "1024",
    "parquet.block.size" -> "65536") ++ TestFeatureShims.parquetRowGroupOptions(ParquetRowGroup)
  private val orcOptions = Map(
    "orc.row.index.stride" -> OrcRowGroup.toString,
    "orc.stripe.row.count" -> (2 * OrcRowGroup).toString,
    "orc.rows.between.memory.checks" -> OrcRowGroup.toString)

  def rowGroup(format: String): Int = if (format == "parquet") ParquetRowGroup else OrcRowGroup

  private def ts(s: String) = s"TIMESTAMP'$s'"
  private def ntz(s: String) = s"TIMESTAMP_NTZ'$s'"

  // Three values that truncate to the same millisecond (.001), one that rounds differently
  // (.0019), and a bound between milliseconds (.0015); pre-1970 and pre-1582 values, whose
  // sub-millisecond parts truncate the other way on the number line.
  private val instants = Seq(
    "0001-01-01 00:00:00", "1500-06-30 12:00:00.000500", "1969-12-31 23:59:59.999000",
    "1969-12-31 23:59:59.999500", "1969-12-31 23:59:59.999999", "1970-01-01 00:00:00",
    "2020-01-01 00:00:00", "2020-01-01 00:00:00.001", "2020-01-01 00:00:00.001100",
    "2020-01-01 00:00:00.001999", "2020-01-01 00:00:00.002", "9999-12-31 23:59:59.999999")
  private val instantBounds = Seq(
    Seq("2020-01-01 00:00:00.0015"), Seq("2020-01-01 00:00:00.001"),
    Seq("2020-01-01 00:00:00.0011", "2020-01-01 00:00:00.0019"), Seq("1969-12-31 23:59:59.9995"),
    Seq("2020-01-01 00:00:00.0005"), Seq("1969-12-31 23:59:59.9991", "2020-01-01 00:00:00.0021"),
    Seq("1500-06-30 12:00:00.0001"), Seq("9999-12-31 23:59:59.9995"))

  val timestamp: KeyDomain = KeyDomain("timestamp", "TIMESTAMP", instants.map(ts), instantBounds.map(_.map(ts)))
  val timestampNtz: KeyDomain =
    KeyDomain("timestamp_ntz", "TIMESTAMP_NTZ", instants.map(ntz), instantBounds.map(_.map(ntz)))

  val int: KeyDomain = KeyDomain("int", "INT",
    Seq("-2147483648", "-1000", "-1", "0", "1", "7", "1000", "2147483647"),
    Seq(Seq("0"), Seq("-2147483648"), Seq("2147483647"), Seq("1", "7"), Seq("-1", "1000", "0"), Seq("8"),
      Seq("-2147483648", "2147483647")))
  val bigint: KeyDomain = KeyDomain("bigint", "BIGINT",
    Seq("-9223372036854775808", "-4294967296", "-1", "0", "1", "2147483648", "9223372036854775807"),
    Seq(Seq("0"), Seq("-9223372036854775808"), Seq("9223372036854775807"), Seq("-1", "1"),
      Seq("2147483647"), Seq("-4294967296", "2147483648", "0")))
  val date: KeyDomain = KeyDomain("date", "DATE",
    Seq("0001-01-01", "1000-03-01", "1582-10-04", "1582-10-15", "1969-12-31", "1970-01-01", "2020-02-29",
      "9999-12-31").map(d => s"DATE'$d'"),
    Seq(Seq("1582-10-10"), Seq("0001-01-01"), Seq("9999-12-31"), Seq("1970-01-01", "1969-12-31"),
      Seq("1582-10-04", "2020-03-01"), Seq("1000-02-28")).map(_.map(d => s"DATE'$d'")))

  /** Decimals of `precision` and `scale`: both extremes, values near zero, one mid value. */
  private def decimal(precision: Int, scale: Int): KeyDomain = {
    val digits = "9" * (precision - scale)
    val fraction = "9" * scale
    def num(intPart: String, frac: String) = if (scale == 0) intPart else s"$intPart.$frac"
    val max = num(if (digits.isEmpty) "0" else digits, fraction)
    val unit = num("0", "0" * (scale - 1) + "1")
    val zero = num("0", "0" * scale)
    val mid = num("1", "5" + "0" * (scale - 1))
    val nearMax = num(if (digits.isEmpty) "0" else digits, "9" * (scale - 1) + "8")
    val values = Seq(s"-$max", s"-$unit", zero, unit, if (digits.isEmpty) num("0", "5" * scale) else mid, max)
    KeyDomain(s"decimal($precision,$scale)", s"DECIMAL($precision,$scale)", values.map(v => s"'$v'"),
      Seq(Seq(zero), Seq(s"-$unit"), Seq(max), Seq(s"-$max"), Seq(unit, nearMax), Seq(nearMax),
        Seq(s"-$max", max)).map(_.map(v => s"'$v'")))
  }
  val decimal9: KeyDomain = decimal(9, 2) // Parquet INT32
  val decimal18: KeyDomain = decimal(18, 18) // Parquet INT64, every digit a fraction digit
  val decimal38: KeyDomain = decimal(38, 18) // Parquet FIXED_LEN_BYTE_ARRAY

  // Index order: -Inf, -Max, -1.5, -MinPositive, -0.0, 0.0, MinPositive, 1.5, Max, +Inf, NaN.
  private def floating(sqlType: String, min: String, max: String): KeyDomain = {
    val values = Seq("'-Infinity'", s"'-$max'", "'-1.5'", s"'-$min'", "'-0.0'", "'0.0'", s"'$min'", "'1.5'",
      s"'$max'", "'Infinity'", "'NaN'")
    val v = values
    KeyDomain(sqlType.toLowerCase, sqlType, values,
      Seq(Seq(v(4)), Seq(v(5)), Seq(v(10)), Seq(v(9)), Seq(v(0)), Seq(v(6)), Seq(v(3), v(7)), Seq(v(5), v(10)),
        Seq(v(0), v(4), v(9)), Seq(v(8))))
  }
  val double: KeyDomain = floating("DOUBLE", "4.9E-324", "1.7976931348623157E308")
  val float: KeyDomain = floating("FLOAT", "1.4E-45", "3.4028235E38")

  // Blocks of one row group each, so that statistics are as lossy as they get: groups holding
  // only -0.0, only 0.0, only NaN, NaN first and NaN last among numbers, NULLs among them.
  private val floatBlocks: Seq[(Int, Int) => Option[Int]] = {
    def cycle(values: Int*)(i: Int, n: Int): Option[Int] = Some(values(i * values.size / n))
    def withNulls(every: Int, values: Int*)(i: Int, n: Int): Option[Int] =
      if (i % every == 0) None else Some(values((i / every) % values.size))
    Seq(
      withNulls(3, 0, 1, 2), // NULLs, -Inf, -Max, -1.5
      cycle(4), // only -0.0
      cycle(5), // only 0.0
      withNulls(2, 4), // only -0.0 and NULLs
      (i, _) => Some(if (i % 2 == 0) 4 else 5), // -0.0 and 0.0 interleaved
      cycle(10), // only NaN
      cycle(10, 2, 3, 4, 6, 7), // NaN first, then numbers
      cycle(4, 5, 6, 7, 8, 10), // numbers, then NaN last
      withNulls(3, 10, 7), // NaN, 1.5 and NULLs
      (i, n) => if (i == 0) Some(4) else if (i == n - 1) Some(9) else if (i % 4 == 0) None else Some(7),
      cycle(3, 5, 6), // -MinPositive, 0.0, MinPositive
      withNulls(4, 9, 8, 10)) // +Inf, Max, NaN, NULLs
  }

  /** Strings under a collation: case and accent variants, the empty string, a longer value. */
  private def strings(collation: String): KeyDomain = {
    val q = Seq("", "A", "B", "a", "b", "ab", "\u00e0", "\u00c1", "z").map(s => s"'$s'")
    // Spark 3.5 has no COLLATE: its strings are UTF8_BINARY's.
    KeyDomain(s"string $collation", if (TestShims.hasCollations) s"STRING COLLATE $collation" else "STRING", q,
      Seq(Seq("'a'"), Seq("'A'"), Seq("'b'"), Seq("'B'"), Seq("''"), Seq("'\u00e0'"), Seq("'a'", "'B'"),
        Seq("'\u00c1'", "'z'")))
  }

  private val millis = SQLConf.PARQUET_OUTPUT_TIMESTAMP_TYPE.key -> "TIMESTAMP_MILLIS"
  private val micros = SQLConf.PARQUET_OUTPUT_TIMESTAMP_TYPE.key -> "TIMESTAMP_MICROS"
  private val int96 = SQLConf.PARQUET_OUTPUT_TIMESTAMP_TYPE.key -> "INT96"
  private val legacy = SQLConf.PARQUET_WRITE_LEGACY_FORMAT.key -> "true"
  private val collations =
    if (TestShims.hasCollations) Seq("UTF8_BINARY", "UTF8_LCASE", "UNICODE_CI") else Seq("UTF8_BINARY")

  /**
   * Every encoding Spark writes for the key types rangejoin handles, Parquet then ORC. Those whose
   * statistics are the lossiest (milliseconds for microsecond values, -0.0 and NaN, dates and
   * timestamps across the 1582 calendar change) run every operator with every bound.
   *
   * Spark cannot read an ORC column as a collated string (its ORC reader fails to parse the type
   * `string collate UTF8_LCASE`), so ORC's collated keys are casts in a projection over the scan:
   * the bound cannot reach the scan there, and those tables check the filter in generated code
   * and the fast path on collated keys.
   */
  val encodings: Seq[Encoding] = Seq(
    Encoding("parquet", timestamp, "TIMESTAMP_MILLIS", Seq(millis), everyOperator = true),
    Encoding("parquet", timestamp, "TIMESTAMP_MICROS", Seq(micros)),
    Encoding("parquet", timestamp, "INT96", Seq(int96)),
    // Parquet writes TIMESTAMP_NTZ as INT64 microseconds whatever outputTimestampType says.
    Encoding("parquet", timestampNtz, "", Seq(millis)),
    Encoding("parquet", decimal9, "INT32"),
    Encoding("parquet", decimal18, "INT64"),
    Encoding("parquet", decimal38, "FIXED_LEN_BYTE_ARRAY"),
    Encoding("parquet", decimal9, "legacy", Seq(legacy)),
    Encoding("parquet", decimal18, "legacy", Seq(legacy)),
    Encoding("parquet", double, layout = Layout.Blocks(floatBlocks), everyOperator = true),
    Encoding("parquet", float, layout = Layout.Blocks(floatBlocks), everyOperator = true),
    Encoding("parquet", int),
    Encoding("parquet", bigint),
    Encoding("parquet", date, everyOperator = true)) ++
    collations.map(c => Encoding("parquet", strings(c))) ++ Seq(
    Encoding("orc", timestamp, everyOperator = true),
    Encoding("orc", timestampNtz),
    Encoding("orc", decimal9),
    Encoding("orc", decimal18),
    Encoding("orc", decimal38),
    Encoding("orc", double, layout = Layout.Blocks(floatBlocks), everyOperator = true),
    Encoding("orc", float, layout = Layout.Blocks(floatBlocks), everyOperator = true),
    Encoding("orc", int),
    Encoding("orc", bigint),
    Encoding("orc", date, everyOperator = true)) ++
    collations.map(c => Encoding("orc", strings(c)))

  /** Each row's value index (None for NULL), in the order the rows are written. */
  def layoutOf(e: Encoding): Seq[Option[Int]] = e.layout match {
    case Layout.Clustered =>
      // Twelve row groups' worth of rows; about 15% NULL, every value many times.
      val n = e.domain.values.size
      (0 until 12 * rowGroup(e.format)).map { i =>
        val h = MurmurHash3.finalizeHash(MurmurHash3.mix(0x5eed, i), 1) & Int.MaxValue
        if (h % 100 < 15) None else Some((h / 100) % n)
      }
    case Layout.Blocks(blocks) =>
      val g = rowGroup(e.format)
      blocks.flatMap(block => (0 until g).map(block(_, g)))
  }

  /**
   * The rows `(id, k)` of an encoding as a DataFrame in one partition, in the order they are to be
   * written: clustered layouts sorted by key (NULLs first), block layouts in row order.
   */
  def rows(spark: SparkSession, e: Encoding): DataFrame = {
    import spark.implicits._
    val indices = layoutOf(e).zipWithIndex.map { case (idx, i) => (i.toLong, idx.map(_ + 1)) }
    val values = e.domain.values.map(e.domain.typed).mkString("array(", ", ", ")")
    val df = indices.toDF("id", "idx").repartition(1)
      .selectExpr("id", s"element_at($values, idx) AS k")
    e.layout match {
      case Layout.Clustered => df.sortWithinPartitions("k", "id")
      case _: Layout.Blocks => df.sortWithinPartitions("id")
    }
  }

  /** Writes `df` (one partition, in its order) as one file of small row groups or stripes. */
  def write(df: DataFrame, format: String, path: String): Unit =
    df.write.options(if (format == "parquet") parquetOptions else orcOptions).format(format).save(path)

  /**
   * What the file under `dir` holds: the row count of each row group (Parquet) or of each row
   * index group within the stripes (ORC), the statistics of column `k` for each row group
   * (Parquet) or stripe (ORC), and the most column index pages a Parquet row group has for `k`.
   */
  final case class FileLayout(rowGroups: Seq[Long], statistics: Seq[String], pages: Int)

  def layoutOnDisk(spark: SparkSession, dir: String, format: String, column: String = "k"): FileLayout = {
    val conf = spark.sessionState.newHadoopConf()
    val files = new File(dir).listFiles().filter(_.getName.startsWith("part-")).toSeq
    assert(files.size == 1, s"$dir: ${files.size} data files, not one")
    val path = new Path(files.head.getCanonicalPath)
    if (format == "parquet") {
      val reader = ParquetFileReader.open(HadoopInputFile.fromPath(path, conf))
      try {
        val ks = reader.getRowGroups.asScala.toSeq.map { block =>
          (block.getRowCount, block.getColumns.asScala.find(_.getPath.toDotString == column).get)
        }
        FileLayout(ks.map(_._1), ks.map(_._2.getStatistics.toString),
          ks.map(k => Option(reader.readColumnIndex(k._2)).map(_.getMinValues.size).getOrElse(0)).max)
      } finally reader.close()
    } else {
      val reader = OrcFile.createReader(path, OrcFile.readerOptions(conf))
      try {
        val stride = reader.getRowIndexStride.toLong
        val groups = reader.getStripes.asScala.toSeq.flatMap { stripe =>
          val n = stripe.getNumberOfRows
          (0L until (n + stride - 1) / stride).map(g => math.min(stride, n - g * stride))
        }
        // Column 0 is the row struct, then the columns in order.
        val c = reader.getSchema.getFieldNames.indexOf(column) + 1
        FileLayout(groups, reader.getStripeStatistics.asScala.toSeq.map(_.getColumnStatistics()(c).toString), 0)
      } finally reader.close()
    }
  }
}
