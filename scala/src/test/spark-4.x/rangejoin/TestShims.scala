package rangejoin

import org.apache.spark.SparkThrowable
import org.apache.spark.sql.catalyst.plans.{JoinType, LeftSingle}
import org.apache.spark.sql.types.{DataType, NullType, StringType, VariantType}

/** What the tests use of Spark 4 that Spark 3.5 lacks (spark-3.5/rangejoin/TestShims.scala). */
object TestShims {

  /** The session class that has a sessionState (Spark 4: the classic one). */
  /** The Dataset class whose package-private methods (`joinAsOf`) the tests call. */
  type ClassicDataset[T] = org.apache.spark.sql.classic.Dataset[T]

  type ClassicSession = org.apache.spark.sql.classic.SparkSession
  val ClassicSession: org.apache.spark.sql.classic.SparkSession.type = org.apache.spark.sql.classic.SparkSession

  /** Whether this Spark has collations (COLLATE, StringType(name)). */
  val hasCollations: Boolean = true

  /** A stand-in for a type this Spark line lacks: test lists drop entries of it. */
  val Unavailable: DataType = NullType

  /** The string type under `collation`. */
  def collated(collation: String): DataType = StringType(collation)

  /** An error's condition (its error class). */
  def condition(t: SparkThrowable): String = t.getCondition

  /** Join types of this line that rangejoin's driver does not handle, beyond Spark 3.5's. */
  val newerJoinTypes: Seq[JoinType] = Seq(LeftSingle)

  /** Whether Parquet columns read as wider types (type widening, Spark 4.0). */
  val parquetTypeWidening: Boolean = true

  /** Settings the test sessions need on this line: none (see Spark 3.5's). */
  val sessionConf: Seq[(String, String)] = Nil

  /** Types of this line no range join sorts on, beyond Spark 3.5's. */
  val newerUnsortableTypes: Seq[DataType] = Seq(VariantType)
}
