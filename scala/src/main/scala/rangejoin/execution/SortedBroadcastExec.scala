package rangejoin.execution

import java.util.concurrent.TimeUnit.NANOSECONDS

import org.apache.spark.broadcast.Broadcast
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.catalyst.plans.physical.{BroadcastPartitioning, Partitioning}
import org.apache.spark.sql.execution.{SparkPlan, SQLExecution, UnaryExecNode}
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}

/**
 * Collects the buffered side on the driver, sorts it once by `key` into a [[SortedBuffer]] payload
 * ([[SortedBroadcastMode]]) and broadcasts that: the broadcast a [[PiecewiseMergeJoinExec]] reads.
 *
 * It is deliberately not an Exchange. Adaptive execution turns every exchange into a query stage,
 * and accepts a materialized broadcast stage only as the build side of Spark's own broadcast joins
 * (`ValidateSparkPlan`): under any other operator it rejects every later re-plan of the query,
 * losing adaptive optimizations elsewhere in it. This node reports the broadcast partitioning the
 * join requires, so no exchange is inserted, and it runs when the join does.
 *
 * With `extreme` it broadcasts only the child's row with the extreme key ([[Extreme]]), found by
 * one pass over the child's partitions where they are: nothing else is collected or sorted.
 */
case class SortedBroadcastExec(key: Expression, child: SparkPlan, extreme: Option[Extreme] = None)
  extends UnaryExecNode {

  override def output: Seq[Attribute] = child.output

  // Bound against the child as it is now, exactly as the join above binds its requirement.
  def mode: SortedBroadcastMode = SortedBroadcastMode.of(key, child.output, extreme)

  override def outputPartitioning: Partitioning = BroadcastPartitioning(mode)

  override lazy val metrics: Map[String, SQLMetric] = Map(
    "numRows" -> SQLMetrics.createMetric(sparkContext, "number of rows"),
    "dataSize" -> SQLMetrics.createSizeMetric(sparkContext, "data size"),
    "collectTime" -> SQLMetrics.createTimingMetric(sparkContext, "time to collect"),
    "sortTime" -> SQLMetrics.createTimingMetric(sparkContext, "time to sort"),
    "broadcastTime" -> SQLMetrics.createTimingMetric(sparkContext, "time to broadcast"))

  // Built once per execution of this plan: every task of the join reads the same broadcast.
  @transient private lazy val relation: Broadcast[BroadcastRows] = {
    val start = System.nanoTime()
    val rows = extreme match {
      case None => child.executeCollect()
      case Some(e) =>
        val (boundKey, schema) = (mode.key, child.schema)
        // One candidate per partition, made unsafe: the payload is serialized as UnsafeRows.
        val candidates = child.execute().mapPartitions { rows =>
          e.of(rows, boundKey).map(UnsafeProjection.create(schema)(_).copy()).iterator
        }.collect()
        e.of(candidates.iterator, boundKey).toArray
    }
    val collected = System.nanoTime()
    val payload = mode.transform(rows)
    val sorted = System.nanoTime()
    val broadcast = sparkContext.broadcast(new BroadcastRows(payload))
    longMetric("numRows") += rows.length
    longMetric("dataSize") += payload.map(_.asInstanceOf[UnsafeRow].getSizeInBytes.toLong).sum
    longMetric("collectTime") += NANOSECONDS.toMillis(collected - start)
    longMetric("sortTime") += NANOSECONDS.toMillis(sorted - collected)
    longMetric("broadcastTime") += NANOSECONDS.toMillis(System.nanoTime() - sorted)
    SQLMetrics.postDriverMetricUpdates(sparkContext,
      sparkContext.getLocalProperty(SQLExecution.EXECUTION_ID_KEY), metrics.values.toSeq)
    broadcast
  }

  override def simpleString(maxFields: Int): String =
    s"$nodeName ${extreme.map(e => s"$e($key)").getOrElse(key.toString)}"

  override def doExecuteBroadcast[T](): Broadcast[T] = relation.asInstanceOf[Broadcast[T]]

  override protected def doExecute(): RDD[InternalRow] = throw new UnsupportedOperationException(
    s"$nodeName is read as a broadcast, by the PiecewiseMergeJoin above it")

  override protected def withNewChildInternal(newChild: SparkPlan): SortedBroadcastExec =
    copy(child = newChild)
}
