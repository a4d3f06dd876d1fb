package rangejoin

import org.apache.spark.SparkThrowable
import org.apache.spark.sql.catalyst.plans.JoinType
import org.apache.spark.sql.types.{DataType, NullType, StringType}

/** Spark 3.5's side of spark-4.x/rangejoin/TestShims.scala. */
object TestShims {

  /** Spark 3.5 has one session class. */
  /** The Dataset class whose package-private methods (`joinAsOf`) the tests call. */
  type ClassicDataset[T] = org.apache.spark.sql.Dataset[T]

  type ClassicSession = org.apache.spark.sql.SparkSession
  val ClassicSession: org.apache.spark.sql.SparkSession.type = org.apache.spark.sql.SparkSession

  /** Spark 3.5 has no collations: every string compares by its UTF-8 bytes (UTF8_BINARY). */
  val hasCollations: Boolean = false

  val Unavailable: DataType = NullType

  /** UTF8_BINARY is Spark 3.5's only string order; any other collation is Unavailable. */
  def collated(collation: String): DataType = if (collation == "UTF8_BINARY") StringType else Unavailable

  def condition(t: SparkThrowable): String = t.getErrorClass

  val newerJoinTypes: Seq[JoinType] = Nil

  val newerUnsortableTypes: Seq[DataType] = Nil

  /**
   * Spark 3.5's Parquet readers cannot read INT32 decimal(5,2) as decimal(12,2), nor FLOAT as
   * double (type widening came in Spark 4.0): stock Spark fails those schema-evolution cases.
   */
  val parquetTypeWidening: Boolean = false

  /**
   * Spark 4's defaults that the suites assume. Spark 3.5 refuses to write (and read) Parquet
   * dates and timestamps before 1582 unless told how to rebase them (EXCEPTION by default);
   * Spark 4 writes them as they are (CORRECTED), which the file-scan suite's ancient values need.
   */
  val sessionConf: Seq[(String, String)] = Seq(
    "datetimeRebaseModeInWrite", "datetimeRebaseModeInRead", "int96RebaseModeInWrite",
    "int96RebaseModeInRead").map(k => s"spark.sql.parquet.$k" -> "CORRECTED") :+
    // ANSI mode, Spark 4's default, which the suites' expectations (what can fail) assume; the
    // differential suites' AnsiOff variants still run without it.
    ("spark.sql.ansi.enabled" -> "true")
}
