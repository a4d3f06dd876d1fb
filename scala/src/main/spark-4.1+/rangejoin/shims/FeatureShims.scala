package rangejoin.shims

import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.{DataType, TimeType}

/** Spark 4.1 and later: a configurable broadcast limit, and the TIME type. */
private[rangejoin] object FeatureShims {

  /** The largest broadcast Spark builds (spark.sql.maxBroadcastTableSize). */
  def maxBroadcastTableBytes(conf: SQLConf): Long = conf.maxBroadcastTableSizeInBytes

  /** TIME: nanoseconds of the day, a long. */
  def isTimeType(dataType: DataType): Boolean = dataType.isInstanceOf[TimeType]
}
