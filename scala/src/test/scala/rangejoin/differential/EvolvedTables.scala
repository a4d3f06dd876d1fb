package rangejoin.differential

import org.apache.spark.sql.internal.SQLConf

/**
 * One file of an evolved table: the SQL that yields its rows `(id, k)` (with whatever types this
 * file stores), and the session settings it is written with.
 */
final case class EvolvedFile(select: String, writeConf: Seq[(String, String)] = Nil)

/**
 * A table read through one schema (`schema`, DDL) from files written with others: the shapes of
 * schema evolution a scan meets, where a pushed literal converted to one file's types can differ
 * from the table's comparison. `bounds` are literals of k's table type, the buffered keys the
 * dynamic filter takes its bound from; `partitionedBy`, when set, makes each file a partition
 * `p=<index>` of the table, `p` a column of it.
 *
 * `mayRaise`: stock Spark may fail reading the table (a file it cannot read as the table's
 * types); rangejoin must then raise the same error, not skip the file's row groups.
 */
final case class EvolvedTable(
    name: String,
    schema: String,
    files: Seq[EvolvedFile],
    bounds: Seq[String],
    mergeSchema: Boolean = false,
    partitioned: Boolean = false,
    mayRaise: Boolean = false)

object EvolvedTables {

  private val legacy = Seq(SQLConf.PARQUET_WRITE_LEGACY_FORMAT.key -> "true")

  /** Every 7th row's key NULL; each key value twice. */
  private def keys(expr: String, sqlType: String, from: Int, until: Int): EvolvedFile = EvolvedFile(
    s"SELECT id, CASE WHEN id % 7 = 3 THEN NULL ELSE CAST(${expr.replace("x", "(id DIV 2)")} AS $sqlType) END AS k " +
      s"FROM range($from, $until)")

  private def dec(p: Int, s: Int) = s"DECIMAL($p,$s)"

  /**
   * The reported cases and their neighbours: decimals narrower than the table's in each Parquet
   * physical type (INT32, INT64, FIXED_LEN_BYTE_ARRAY, and the legacy format's fixed bytes for
   * every precision), the bounds just past what a narrower physical type holds; integers and
   * floats read wider; merged schemas where files lack the key; a partitioned table whose
   * partitions differ in type; and a file holding a column Spark cannot read as the table's type.
   */
  val tables: Seq[EvolvedTable] = Seq(
    // The report: one INT32 DECIMAL(5,2) file read as DECIMAL(12,2), bounds past Int range.
    EvolvedTable("decimal(5,2) as (12,2)", s"id BIGINT, k ${dec(12, 2)}",
      Seq(keys("x / 10 - 40", dec(5, 2), 0, 1000)),
      Seq("21474836.48", "-21474836.49", "21474836.47", "0.00", "-1.05", "9999999999.99")),
    EvolvedTable("decimal(5,2) and (12,2) files as (12,2)", s"id BIGINT, k ${dec(12, 2)}",
      Seq(keys("x / 10 - 40", dec(5, 2), 0, 1000), keys("(x - 500) * 1000000.01", dec(12, 2), 1000, 2000)),
      Seq("21474836.48", "-21474836.49", "5.00", "-400000000.00", "2147483648.00")),
    EvolvedTable("INT64 decimal(15,2) as (25,2)", s"id BIGINT, k ${dec(25, 2)}",
      Seq(keys("x * 1000000000.5 - 100000000000", dec(15, 2), 0, 1000),
        keys("x * 1000000000000000.01", dec(25, 2), 1000, 2000)),
      Seq("92233720368547758.08", "-92233720368547758.09", "92233720368547758.07", "0.00",
        "123456789012345678901.00")),
    EvolvedTable("FIXED_LEN_BYTE_ARRAY decimal(20,2) as (30,2)", s"id BIGINT, k ${dec(30, 2)}",
      Seq(keys("x * 1000000000000000.25 - 100000000000000000", dec(20, 2), 0, 1000)),
      Seq("1000000000000000000000.00", "-1000000000000000000000.00", "10000000000000000.00",
        "1180591620717411303424.00")),
    EvolvedTable("legacy decimal(5,2) as (12,2)", s"id BIGINT, k ${dec(12, 2)}",
      Seq(keys("x / 10 - 40", dec(5, 2), 0, 1000).copy(writeConf = legacy),
        keys("x * 3 - 500", dec(12, 2), 1000, 2000).copy(writeConf = legacy)),
      Seq("21474836.48", "-21474836.49", "83886.08", "-83886.09", "3.00", "1000.00")),
    EvolvedTable("int as bigint", "id BIGINT, k BIGINT",
      Seq(keys("x - 200", "INT", 0, 1000), keys("(x - 500) * 10000000", "BIGINT", 1000, 2000)),
      Seq("2147483648", "-2147483649", "2147483647", "0", "-100", "300")),
    EvolvedTable("float as double", "id BIGINT, k DOUBLE",
      Seq(keys("(x - 200) / 3", "FLOAT", 0, 1000), keys("(x - 500) * 1e10", "DOUBLE", 1000, 2000),
        EvolvedFile("SELECT id, CAST('-0.0' AS FLOAT) AS k FROM range(2000, 2100)")),
      Seq("0.0", "-0.0", "16777217.0", "3.4028235677973366E38", "1e300", "-33.3")),
    EvolvedTable("merged schemas, files without k", "id BIGINT, k BIGINT",
      Seq(keys("x - 200", "BIGINT", 0, 1000), EvolvedFile("SELECT id FROM range(1000, 2000)"),
        EvolvedFile("SELECT id, CAST(id AS BIGINT) AS k, 'x' AS extra FROM range(2000, 3000)")),
      Seq("0", "-50", "1500", "2500", "5000"), mergeSchema = true),
    EvolvedTable("partitions of decimal(5,2) and (12,2)", s"id BIGINT, k ${dec(12, 2)}, p INT",
      Seq(keys("x / 10 - 40", dec(5, 2), 0, 1000), keys("(x - 500) * 1000000.01", dec(12, 2), 1000, 2000)),
      Seq("21474836.48", "-21474836.49", "5.00", "-300000000.00"), partitioned = true),
    // One file holds id as a string: Parquet cannot read it as BIGINT, ORC converts it. A bound
    // below 100000 excludes every row group of that file.
    EvolvedTable("a file holding id as a string", "id BIGINT, k BIGINT",
      Seq(keys("x - 200", "BIGINT", 0, 1000),
        EvolvedFile("SELECT CAST(id AS STRING) AS id, CAST(id + 100000 AS BIGINT) AS k FROM range(0, 1000)")),
      Seq("50", "-1", "0", "200000"), mayRaise = true),
    // Types Spark may or may not widen on read, by line and reader: whatever stock does, so must
    // rangejoin.
    EvolvedTable("date as timestamp_ntz", "id BIGINT, k TIMESTAMP_NTZ",
      Seq(keys("DATE'2020-01-01' + CAST(x AS INT)", "DATE", 0, 1000),
        keys("TIMESTAMP_NTZ'2021-01-01 00:00:00' + make_interval(0, 0, 0, 0, x, 0, 0.5)", "TIMESTAMP_NTZ", 1000, 2000)),
      Seq("2020-01-10 00:00:00", "2020-06-01 12:00:00", "2021-01-05 00:00:00.5"), mayRaise = true),
    EvolvedTable("int as decimal(12,2)", s"id BIGINT, k ${dec(12, 2)}",
      Seq(keys("x - 200", "INT", 0, 1000), keys("x / 4 - 10", dec(12, 2), 1000, 2000)),
      Seq("2147483648.00", "-1.50", "100.25"), mayRaise = true))
}
