package rangejoin

import org.apache.spark.sql.types.DataType

/** Spark 3.5 and 4.0: no TIME type. */
object TestFeatureShims {
  def time(): DataType = TestShims.Unavailable
  def time(precision: Int): DataType = TestShims.Unavailable
}
