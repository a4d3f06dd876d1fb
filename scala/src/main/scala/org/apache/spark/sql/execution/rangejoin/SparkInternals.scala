package org.apache.spark.sql.execution.rangejoin

import java.util.concurrent.TimeoutException

import scala.concurrent.ExecutionContextExecutorService

import org.apache.spark.sql.catalyst.{InternalRow, TableIdentifier}
import org.apache.spark.sql.errors.QueryExecutionErrors
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.datasources.DataSourceStrategy
import org.apache.spark.sql.execution.exchange.BroadcastExchangeExec
import org.apache.spark.sql.sources.Filter

/**
 * The Spark internals rangejoin uses, in one place. Each is private to Spark's own packages,
 * which is why this object lives in one; rangejoin's sorted broadcast uses them to behave, and
 * fail, exactly as Spark's broadcast exchange does.
 */
object SparkInternals {

  /** The thread pool Spark's broadcast exchanges run on (`spark.sql.broadcastExchange.maxThreadThreshold`). */
  def broadcastExecutionContext: ExecutionContextExecutorService = BroadcastExchangeExec.executionContext

  /** The plan's rows on the driver, counted before any is decoded (as a broadcast collects them). */
  def collectIterator(plan: SparkPlan): (Long, Iterator[InternalRow]) = plan.executeCollectIterator()

  def tooManyRowsToBroadcast(maxRows: Long, numRows: Long): Throwable =
    QueryExecutionErrors.cannotBroadcastTableOverMaxTableRowsError(maxRows, numRows)

  def tooManyBytesToBroadcast(maxBytes: Long, dataSize: Long): Throwable =
    QueryExecutionErrors.cannotBroadcastTableOverMaxTableBytesError(maxBytes, dataSize)

  def broadcastTimeout(timeoutSeconds: Long, e: TimeoutException): Throwable =
    QueryExecutionErrors.executeBroadcastTimeoutError(timeoutSeconds, Some(e))

  /**
   * Broadcasts `value` keeping only its serialized pieces on the driver, as BroadcastExchangeExec
   * does (`serializedOnly`): the driver then holds no deserialized copy of a large value.
   */
  def broadcastSerializedOnly[T: scala.reflect.ClassTag](sc: org.apache.spark.SparkContext, value: T)
      : org.apache.spark.broadcast.Broadcast[T] = sc.broadcastInternal(value, serializedOnly = true)

  /** A Catalyst predicate as the data source filter a file format is given (None: none). */
  def toSourceFilter(predicate: Expression): Option[Filter] =
    DataSourceStrategy.translateFilter(predicate, supportNestedPredicatePushdown = true)

  def notEnoughMemoryToBroadcast(e: OutOfMemoryError, tables: Seq[TableIdentifier]): Throwable =
    QueryExecutionErrors.notEnoughMemoryToBuildAndBroadcastTableError(e, tables)
}

/**
 * A payload that tells Spark its size in memory (`estimatedSize`, bytes). Spark's block manager
 * otherwise estimates a broadcast value's size by sampling its object graph (`SizeEstimator`),
 * which counts a large array shared by many sampled rows once per sample: rows packed into a
 * few arrays read as hundreds of gigabytes, and the broadcast goes to disk, read back by
 * deserialization. Spark's own HashedRelations tell their size the same way.
 */
trait KnownSize extends org.apache.spark.util.KnownSizeEstimation
