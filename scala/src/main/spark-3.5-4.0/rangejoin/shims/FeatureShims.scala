package rangejoin.shims

import org.apache.spark.sql.execution.exchange.BroadcastExchangeExec
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.DataType

/** Spark 3.5 and 4.0: a fixed broadcast limit, and no TIME type. */
private[rangejoin] object FeatureShims {

  /** The largest broadcast Spark builds: fixed (8 GB) before 4.1. */
  def maxBroadcastTableBytes(conf: SQLConf): Long = BroadcastExchangeExec.MAX_BROADCAST_TABLE_BYTES

  def isTimeType(dataType: DataType): Boolean = false
}
