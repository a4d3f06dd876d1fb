package rangejoin.execution.broadcast

import java.util.UUID
import java.util.concurrent.{ExecutionException, Future, TimeoutException, TimeUnit}
import java.util.concurrent.TimeUnit.NANOSECONDS

import org.apache.spark.broadcast.Broadcast
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression}
import org.apache.spark.sql.catalyst.plans.physical.{BroadcastPartitioning, Partitioning}
import org.apache.spark.sql.execution.{FileSourceScanExec, SparkPlan, SQLExecution, UnaryExecNode}
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}
import org.apache.spark.sql.execution.rangejoin.SparkInternals

import rangejoin.condition.Extreme
import rangejoin.execution.filter.DynamicFilter
import rangejoin.execution.index.{SortedBuffer, SortedPartition, SortedPartitions}
import rangejoin.shims.FeatureShims

/**
 * Sorts the buffered side once by `key` (within each group of equal `groupKeys`, if any) into a
 * [[SortedBuffer]] payload ([[SortedBroadcastMode]]) and broadcasts that: the broadcast a
 * [[PiecewiseMergeJoinExec]] reads. Keys stored as longs, without equality keys, are sorted where
 * the rows are, each partition in its own task, and the driver merges the sorted partitions
 * ([[SortedPartitions]]); any other side is collected and sorted on the driver.
 * {{{
 *   long keys:  partitions --sort each, in parallel--> sorted --collect, merge--> payload --> broadcast
 *   others:     partitions --collect--> rows --sort on the driver--> payload --> broadcast
 * }}}
 *
 * It is deliberately not an Exchange. Adaptive execution turns every exchange into a query stage,
 * and accepts a materialized broadcast stage only as the build side of Spark's own broadcast joins
 * (`ValidateSparkPlan`): under any other operator it rejects every later re-plan of the query,
 * losing adaptive optimizations elsewhere in it. This node reports the broadcast partitioning the
 * join requires, so no exchange is inserted, and it runs when the join does.
 *
 * With `keepOrigins` the payload keeps each row's position before sorting ([[SortedBroadcastMode]]).
 *
 * With `extreme` it broadcasts only the child's row with the extreme key ([[Extreme]]), found by
 * one pass over the child's partitions where they are: nothing else is collected or sorted.
 *
 * Under a [[SideSwitchExec]] (`onDemand`), it builds nothing when the plan is prepared: only the
 * join the switch chooses runs, and reads its broadcast. The switch may build this one first,
 * only if the child turns out to be small enough (`buildIfAtMost`).
 */
private[rangejoin] case class SortedBroadcastExec(
    key: Expression,
    secondKey: Option[Expression],
    child: SparkPlan,
    extreme: Option[Extreme] = None,
    groupKeys: Seq[Expression] = Nil,
    onDemand: Boolean = false,
    keepOrigins: Boolean = false) extends UnaryExecNode {

  override def output: Seq[Attribute] = child.output

  // OrientedPredicate against the child as it is now, exactly as the join above binds its requirement.
  def mode: SortedBroadcastMode = SortedBroadcastMode.of(key, secondKey, groupKeys, child.output, extreme, keepOrigins)

  override def outputPartitioning: Partitioning = BroadcastPartitioning(mode)

  override lazy val metrics: Map[String, SQLMetric] = Map(
    "numRows" -> SQLMetrics.createMetric(sparkContext, "number of rows"),
    "dataSize" -> SQLMetrics.createSizeMetric(sparkContext, "data size"),
    "collectTime" -> SQLMetrics.createTimingMetric(sparkContext, "time to collect"),
    "sortTime" -> SQLMetrics.createTimingMetric(sparkContext, "time to sort"),
    "broadcastTime" -> SQLMetrics.createTimingMetric(sparkContext, "time to broadcast"),
    "numRowsFiltered" -> SQLMetrics.createMetric(sparkContext, "rows dropped by the side switch's filter"))

  @transient private lazy val jobTag = s"rangejoin sorted broadcast (${UUID.randomUUID()})"

  /**
   * What the driver reads of the broadcast ([[BufferSummary]]), set when it is built: the value
   * itself is broadcast serialized only, as Spark's own broadcast exchange does, so the driver
   * does not hold a deserialized copy of what every task reads.
   */
  @transient @volatile private var builtSummary: Option[BufferSummary] = None

  /** The summary of this execution's broadcast, once built: waits for it as `executeBroadcast` does. */
  def summary: BufferSummary = {
    executeBroadcast[SortedBuffer]()
    builtSummary.getOrElse(throw new IllegalStateException(s"$nodeName: broadcast built without its summary"))
  }

  /**
   * The broadcast, built once per execution of this plan (every task of the join reads it) on
   * Spark's broadcast threads, as BroadcastExchangeExec builds its own: started when the plan is
   * prepared, bounded by Spark's limits on a broadcast's rows and bytes, and cancelled after
   * `spark.sql.broadcastTimeout` where Spark's would be, each failing with Spark's own error.
   */
  @transient private lazy val relationFuture: Future[Broadcast[SortedBuffer]] =
    SQLExecution.withThreadLocalCaptured[Broadcast[SortedBuffer]](
        session, SparkInternals.broadcastExecutionContext) {
      sparkContext.addJobTag(jobTag)
      sparkContext.setInterruptOnCancel(true)
      try build() catch {
        case oe: OutOfMemoryError =>
          val tables = child.collect { case f: FileSourceScanExec => f.tableIdentifier }.flatten
          throw SparkInternals.notEnoughMemoryToBroadcast(oe, tables)
      }
    }

  private def build(): Broadcast[SortedBuffer] =
    if (extreme.isEmpty && SortedPartitions.supports(key, groupKeys)) buildFromPartitions() else buildOnDriver()

  /**
   * Every partition sorted where it is, in parallel ([[SortedPartitions]]); the driver merges them.
   * Spark's limits on a broadcast's rows and bytes apply to the sorted partitions as to collected rows.
   */
  private def buildFromPartitions(): Broadcast[SortedBuffer] = {
    val start = System.nanoTime()
    fromPartitions(sortedPartitions(child.execute(), Int.MaxValue).map(_.get), start)
  }

  /** Each partition's run where it is, or None for one of more than `maxRows` rows. */
  private def sortedPartitions(rows: RDD[InternalRow], maxRows: Int): Array[Option[SortedPartition]] = {
    val (boundKey, boundSecond, schema) = (mode.key, mode.secondKey, child.schema)
    rows.mapPartitions { partition =>
      Iterator(SortedPartitions.sortAtMost(maxRows, partition, schema, boundKey, boundSecond))
    }.collect()
  }

  /**
   * Builds the broadcast now, on the calling thread, from the child's rows that pass `filter`
   * (a [[DynamicFilter]] over the child's `key`), if at most `maxRows` pass, and says whether it
   * did; the join above then reads it. A partition stops reading once it has more than its share:
   * `maxRows`, or with many partitions four times an even share (a side skewed past that is left
   * unbuilt, which costs speed, never an answer). So a side too large costs at most about
   * `4 x maxRows` rows to rule out, however many partitions it has. Only for a side that sorts
   * where it is ([[SortedPartitions]]); nothing is built twice. The side switch calls it
   * ([[rangejoin.execution.sideswitch.SideSwitchExec]]).
   */
  def buildIfAtMost(maxRows: Long, filter: DynamicFilter.Resolved, filterKey: Expression): Boolean = synchronized {
    require(extreme.isEmpty && SortedPartitions.supports(key, groupKeys), s"$nodeName $key is not sorted by partition")
    if (prebuilt.isEmpty) {
      val start = System.nanoTime()
      val rows = DynamicFilter.filtered(child, filter, filterKey, longMetric("numRowsFiltered"))
      val share = math.max(4 * maxRows / math.max(1, rows.getNumPartitions), 4096L)
      val sorted = sortedPartitions(rows, math.min(math.min(maxRows, share), Int.MaxValue - 1L).toInt)
      if (sorted.forall(_.isDefined) && sorted.iterator.map(_.get.numRows.toLong).sum <= maxRows) {
        prebuilt = Some(fromPartitions(sorted.map(_.get), start))
      }
    }
    prebuilt.isDefined
  }

  @transient @volatile private var prebuilt: Option[Broadcast[SortedBuffer]] = None

  private def fromPartitions(sorted: Array[SortedPartition], start: Long): Broadcast[SortedBuffer] = {
    val numRows = sorted.iterator.map(_.numRows.toLong).sum
    val bytes = SortedPartitions.dataSize(sorted)
    BroadcastLimits.check(numRows, bytes, FeatureShims.maxBroadcastTableBytes(conf))
    val beforeMerge = System.nanoTime()
    broadcast(SortedPartitions.merge(sorted, mode.key, mode.secondKey, keepOrigins), numRows, bytes, start, beforeMerge)
  }

  private def buildOnDriver(): Broadcast[SortedBuffer] = {
    val start = System.nanoTime()
    val (numRows, rows) = extreme match {
      case None => SparkInternals.collectIterator(child)
      case Some(e) =>
        // The payload is serialized as UnsafeRows, which `across` gives.
        val (_, best) = ExtremeRows.across(e, child.execute(), mode.key, child.schema)
        (best.size.toLong, best.iterator)
    }
    val collected = BroadcastLimits.collect(numRows, rows, FeatureShims.maxBroadcastTableBytes(conf))
    val beforeSort = System.nanoTime()
    broadcast(mode.transform(collected.rows), numRows, collected.bytes, start, beforeSort)
  }

  /**
   * Broadcasts `payload`, and reports the times: collecting until `sortStart` (with the partitions'
   * sorts, when partitions sort themselves), then the driver's sort or merge, then the broadcast.
   */
  private def broadcast(payload: SortedBuffer, numRows: Long, bytes: Long, start: Long, sortStart: Long)
      : Broadcast[SortedBuffer] = {
    val sorted = System.nanoTime()
    builtSummary = Some(BufferSummary.of(payload))
    val broadcast = SparkInternals.broadcastSerializedOnly(sparkContext, payload)
    longMetric("numRows") += numRows
    longMetric("dataSize") += bytes
    longMetric("collectTime") += NANOSECONDS.toMillis(sortStart - start)
    longMetric("sortTime") += NANOSECONDS.toMillis(sorted - sortStart)
    longMetric("broadcastTime") += NANOSECONDS.toMillis(System.nanoTime() - sorted)
    SQLMetrics.postDriverMetricUpdates(sparkContext,
      sparkContext.getLocalProperty(SQLExecution.EXECUTION_ID_KEY), metrics.values.toSeq)
    broadcast
  }

  override protected def doPrepare(): Unit = if (!onDemand) relationFuture

  override def simpleString(maxFields: Int): String =
    s"$nodeName ${extreme.map(e => s"$e($key)").getOrElse(key.toString)}" +
      secondKey.map(k => s", tree: $k").getOrElse("") +
      (if (groupKeys.isEmpty) "" else groupKeys.mkString(", per key: [", ", ", "]")) +
      (if (onDemand) ", on demand" else "")

  override def doExecuteBroadcast[T](): Broadcast[T] = prebuilt match {
    case Some(built) => built.asInstanceOf[Broadcast[T]]
    case None => awaitBroadcast()
  }

  private def awaitBroadcast[T](): Broadcast[T] = {
    // Spark times out a broadcast only outside adaptive execution: its broadcast query stages
    // wait as long as it takes. The stock plan this join replaces would be one or the other.
    val timeout = if (conf.adaptiveExecutionEnabled) Long.MaxValue else conf.broadcastTimeout
    try relationFuture.get(timeout, TimeUnit.SECONDS).asInstanceOf[Broadcast[T]] catch {
      case e: TimeoutException =>
        logError(s"Could not build the sorted broadcast in $timeout secs.", e)
        if (!relationFuture.isDone) {
          sparkContext.cancelJobsWithTag(jobTag)
          relationFuture.cancel(true)
        }
        throw SparkInternals.broadcastTimeout(timeout, e)
      case e: ExecutionException if e.getCause != null => throw e.getCause
    }
  }

  override protected def doExecute(): RDD[InternalRow] = throw new UnsupportedOperationException(
    s"$nodeName is read as a broadcast, by the PiecewiseMergeJoin above it")

  override protected def withNewChildInternal(newChild: SparkPlan): SortedBroadcastExec =
    copy(child = newChild)
}
