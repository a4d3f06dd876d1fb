package rangejoin.execution.driver

import scala.util.control.NonFatal

import org.apache.spark.TaskContext
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.JoinedRow

import rangejoin.execution.index.{CandidateFinder, EveryRowFinder, SortedBuffer}
/**
 * What the join's generated code calls for one task: the search over the broadcast buffer. The
 * loop over candidates, the residual and the output are generated; the search is not (it is
 * the same few calls per streamed row whatever the query).
 * {{{
 *   generated, per streamed row:        this task:
 *     keys = probes ? project(s) : null
 *     find(keys)                   ->     finder.find: a binary search, a band, a tree walk
 *     while ((i = next()) >= 0)    ->     finder.next
 *       b = buffered row i (its columns' arrays, or rows); residual(s, b) ...
 * }}}
 * When the buffer is unsorted (a buffered key raised an error on the driver), every buffered row
 * is a candidate, in stock Spark's order, and the generated code tests the whole condition
 * instead of the residual (`sorted` says which), as the interpreted driver does.
 */
private[rangejoin] final class CodegenJoinTask(spec: JoinSpec, buffer: SortedBuffer) {

  val sorted: Boolean = buffer.isSorted

  /** Whether the streamed keys are evaluated: see [[JoinSpec.probes]]; never when unsorted. */
  val probes: Boolean = sorted && spec.probes(buffer)

  private[this] val finder: CandidateFinder =
    if (sorted) spec.keyFinder(buffer) else new EveryRowFinder(buffer.numRows)

  /** Positions the search for the streamed row whose keys are `keys` (null when not `probes`). */
  def find(keys: InternalRow): Unit = finder.find(keys)

  def next(): Int = finder.next()

  def isRun: Boolean = finder.isRun

  def runFrom: Int = finder.runFrom

  def runUntil: Int = finder.runUntil

  private[this] lazy val pairPasses: InternalRow => Boolean =
    spec.pairPredicate(sorted, TaskContext.getPartitionId()).getOrElse((_: InternalRow) => true)

  private[this] val joined = new JoinedRow

  /**
   * Whether the streamed row (`streamed`, its probe keys `keys`) has a passing pair, its
   * candidates tried in stock Spark's order ([[SparkOrder]]): called by generated code once the
   * residual raised `error` on a candidate met in the finder's order. The search starts again.
   */
  def passesInSparkOrder(keys: InternalRow, streamed: InternalRow, error: Throwable): Boolean = {
    if (!NonFatal(error)) throw error
    finder.find(keys)
    SparkOrder.anyPasses(finder, buffer, i => pairPasses(spec.arrange(joined, streamed, buffer.row(i))), error)
  }

  /** The buffered rows by position, for columns generated code does not read from arrays. */
  def rows: Array[InternalRow] = buffer.rows

  // The sort key's column, when its sorted keys are its values and every row has one (so that
  // the keys line up with the rows); -1 otherwise.
  private[this] val keyColumn: Int =
    if (sorted && buffer.numKeys == buffer.numRows) spec.keyColumn.getOrElse(-1) else -1

  /**
   * Buffered column `ordinal` as an array of `javaType`: see [[rangejoin.execution.index.BufferedColumns]].
   * The sort key's column is the sorted keys themselves: a candidate's key is then read from the
   * cache line its search has just loaded, where a copy of the column costs a miss of its own
   * (docs/design.md, "Buffered columns from arrays").
   */
  def values(ordinal: Int, javaType: String): AnyRef =
    if (ordinal != keyColumn) buffer.columns.values(ordinal, javaType)
    else javaType match {
      case "long" => buffer.longKeys
      case "int" => buffer.intKeys
      case other => throw new IllegalArgumentException(s"the sort key's column read as $other")
    }

  /**
   * Whether each buffered row's column `ordinal` is NULL; null when none is, as for the sort key's
   * column when every row has a key (no pass over the rows, which [[rangejoin.execution.index.KeyRows]] would build first).
   */
  def nulls(ordinal: Int): Array[Boolean] = if (ordinal == keyColumn) null else buffer.columns.nulls(ordinal)
}

/** Creates each task's [[CodegenJoinTask]]: shipped to executors in the generated code's references. */
private[rangejoin] sealed trait CodegenJoinTasks extends Serializable

/** Over the broadcast buffer, which every task reads. */
private[rangejoin] final class BroadcastJoinTasks(spec: JoinSpec, payload: Broadcast[SortedBuffer])
  extends CodegenJoinTasks {

  def create(): CodegenJoinTask = new CodegenJoinTask(spec, payload.value)
}

/**
 * Over the task's own partition of the buffered side, sorted when the task read its input
 * ([[TaskBuffers]], under `bufferId`).
 */
private[rangejoin] final class ShuffledJoinTasks(spec: JoinSpec, bufferId: String) extends CodegenJoinTasks {

  def create(): CodegenJoinTask = new CodegenJoinTask(spec, TaskBuffers.get(bufferId))
}

/**
 * The buffers shuffled joins sort in their tasks, handed from the input a task reads to the
 * join's generated code in that task. The stage's one input is the streamed rows: the buffered
 * partition is read, and sorted, when the task opens that input (`zip`), and the generated code
 * takes the buffer by the join's id once rows reach it. A second input would be simpler, but
 * Spark fuses a union's children only if each has one input. A task's buffers go with it.
 */
private[rangejoin] object TaskBuffers {

  private val buffers = new java.util.concurrent.ConcurrentHashMap[(Long, String), SortedBuffer]()

  /**
   * The streamed rows of each partition, in the order `order` puts them in for the buffer, the
   * buffered partition sorted by `build` on the way.
   */
  def zip(
      streamed: org.apache.spark.rdd.RDD[InternalRow],
      buffered: org.apache.spark.rdd.RDD[InternalRow],
      bufferId: String,
      build: Iterator[InternalRow] => SortedBuffer,
      order: (Iterator[InternalRow], SortedBuffer) => Iterator[InternalRow] = (rows, _) => rows)
      : org.apache.spark.rdd.RDD[InternalRow] =
    streamed.zipPartitions(buffered) { (streamedRows, bufferedRows) =>
      val task = org.apache.spark.TaskContext.get()
      val key = (task.taskAttemptId(), bufferId)
      val buffer = build(bufferedRows)
      buffers.put(key, buffer)
      task.addTaskCompletionListener[Unit](_ => buffers.remove(key))
      order(streamedRows, buffer)
    }

  def get(bufferId: String): SortedBuffer = {
    val buffer = buffers.get((org.apache.spark.TaskContext.get().taskAttemptId(), bufferId))
    if (buffer == null) throw new IllegalStateException(s"no buffer $bufferId in this task")
    buffer
  }
}
