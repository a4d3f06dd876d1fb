package rangejoin

import org.apache.spark.sql.types.{DataType, TimeType}

/** Spark 4.1 and later: the TIME type. */
object TestFeatureShims {
  def time(): DataType = TimeType()
  def time(precision: Int): DataType = TimeType(precision)
}
