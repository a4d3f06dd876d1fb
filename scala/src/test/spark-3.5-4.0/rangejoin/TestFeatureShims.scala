package rangejoin

import org.apache.spark.sql.types.DataType

/** Spark 3.5 and 4.0: no TIME type, and Parquet before 1.16 (1.13, 1.15). */
object TestFeatureShims {
  def time(): DataType = TestShims.Unavailable
  def time(precision: Int): DataType = TestShims.Unavailable

  /**
   * Spark 3.5 has no COLLATE; Spark 4.0's is a `collate(s, name)` expression, which rangejoin does
   * not claim cannot fail: the join is left to Spark.
   */
  val collateKeysPlanned: Boolean = false

  /**
   * Parquet before 1.16 (Spark 3.5's 1.13, 4.0's 1.15) checks a row group's size and its pages'
   * row counts at the same rows (parquet.page.size.row.check.*): row groups of `rows` rows have
   * one page each.
   */
  val parquetRowGroupRowLimit: Boolean = false

  /**
   * Parquet before 1.16 has no row count limit per row group (parquet.block.row.count.limit). A
   * tiny row group size closes a row group at every size check instead, and the checks come
   * every `rows` rows.
   */
  def parquetRowGroupOptions(rows: Int): Map[String, String] = Map(
    "parquet.block.size" -> "1",
    "parquet.page.size.row.check.min" -> rows.toString,
    "parquet.page.size.row.check.max" -> rows.toString)
}
