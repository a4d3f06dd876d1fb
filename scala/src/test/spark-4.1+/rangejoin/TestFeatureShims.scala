package rangejoin

import org.apache.spark.sql.types.{DataType, TimeType}

/** Spark 4.1 and later: the TIME type, and Parquet 1.16's row count limit per row group. */
object TestFeatureShims {
  def time(): DataType = TimeType()
  def time(precision: Int): DataType = TimeType(precision)

  /** Whether a key under `COLLATE` is planned: a cast to the collated type, which cannot fail. */
  val collateKeysPlanned: Boolean = true

  /** Whether Parquet row groups can be limited by rows, apart from their pages (Parquet 1.16). */
  val parquetRowGroupRowLimit: Boolean = true

  /** Parquet writer options for row groups of `rows` rows. */
  def parquetRowGroupOptions(rows: Int): Map[String, String] =
    Map("parquet.block.row.count.limit" -> rows.toString)
}
