package rangejoin.execution.driver

import org.apache.spark.broadcast.Broadcast
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, BindReferences, BoundReference, Expression, GenericInternalRow, JoinedRow, UnsafeProjection}
import org.apache.spark.sql.catalyst.util.TypeUtils
import org.apache.spark.sql.execution.metric.SQLMetric

import rangejoin.condition.{AsOfDirection, AsOfMatch, AsOfPick, KeyTypes}
import rangejoin.execution.index.{AsOfSearch, DistanceRange, KeyGroups, SortedBuffer}

/**
 * One task of an as-of join: each left row of a partition, in order, with the one right row the
 * as-of match picks ([[AsOfSearch]] over the sorted buffer, within the row's key segment), or
 * with NULLs (left outer) or not at all (inner) when none does.
 *
 * The search picks by time. That is stock Spark's pick whenever the distances Spark computes
 * are exact ([[DistanceRange]], checked on the farthest candidate, so on all): otherwise the task
 * evaluates Spark's own distance expression over the candidates as the stock path would
 * ([[AsOfPick]]), wrapping or raising as it does. (SQL's backward match reads no distance: the
 * last candidate in time order is its pick, whatever the distances.)
 *
 * The tolerance's bounds are Spark's own expressions of the left row, evaluated only when the
 * row has a candidate without them (stock Spark evaluates them after the as-of comparison).
 *
 * The interpreted placements call [[join]]; generated code ([[rangejoin.execution.AsOfJoinCodegen]])
 * calls [[find]] with a row of the left columns the match reads, and outputs the pair itself.
 */
private[rangejoin] final class AsOfJoinTask(spec: AsOfJoinTask.Spec, buffer: SortedBuffer) {
  import spec._

  require(buffer.isSorted, "an as-of join's times and keys cannot fail, so its buffer is always sorted")

  private[this] val keys = buffer.longKeys
  private[this] val search = new AsOfSearch(keys, m.direction, m.inclusive)
  private[this] val keyed = keys.length
  private[this] val segmentOf = buffer.groups.map(KeyGroups.lookup(_, m.leftKeys.map(bind(_, leftOutput))))

  private def bind(e: Expression, output: Seq[Attribute]): Expression = BindReferences.bindReference(e, output)

  /**
   * Evaluates an expression of the left row into the right time's long encoding: a column (the
   * usual left time) is read where it is, anything else through a projection.
   */
  private final class Encoded(e: Expression) {
    private[this] val encode = KeyTypes.longEncoder(e.dataType).get
    private[this] val (project, ordinal) = bind(e, leftOutput) match {
      case BoundReference(o, _, _) => (null, o)
      case bound => (UnsafeProjection.create(Seq(bound)), 0)
    }
    var isNull = false
    def apply(row: InternalRow): Long = {
      val r = if (project == null) row else project(row)
      isNull = r.isNullAt(ordinal)
      if (isNull) 0L else encode(r, ordinal)
    }
  }

  private[this] val time = new Encoded(m.leftTime)
  private[this] val lower = m.lowerBound.map(new Encoded(_))
  private[this] val upper = m.upperBound.map(new Encoded(_))

  private[this] val joined = new JoinedRow
  private[this] lazy val distance = bind(m.distance, leftOutput ++ rightOutput)
  private[this] lazy val distanceOrder = TypeUtils.getInterpretedOrdering(m.distance.dataType)

  /**
   * Each left row (of `leftOutput`) with its match's columns, or NULLs (left outer), as rows of
   * `output`.
   */
  def join(rows: Iterator[InternalRow], output: Seq[Attribute], numOutputRows: SQLMetric): Iterator[InternalRow] = {
    // Bound to the output itself: a left outer join's right columns are nullable there, whatever
    // the right side says (NULLs padded in for a row with no match).
    val project = UnsafeProjection.create(output, output)
    val nulls = new GenericInternalRow(rightOutput.length)
    val pair = new JoinedRow
    rows.flatMap { row =>
      val matched = find(row)
      if (matched < 0 && innerOnly) None
      else {
        numOutputRows += 1
        Some(project(pair(row, if (matched < 0) nulls else buffer.row(matched))))
      }
    }
  }

  /** Buffered row `i`, the right row at a position [[find]] returned. */
  def row(i: Int): InternalRow = buffer.row(i)

  /** Right column `ordinal` as an array of `javaType`: see [[rangejoin.execution.index.BufferedColumns]]. */
  def values(ordinal: Int, javaType: String): AnyRef = buffer.columns.values(ordinal, javaType)

  /** Whether each right row's column `ordinal` is NULL; null when none is. */
  def nulls(ordinal: Int): Array[Boolean] = buffer.columns.nulls(ordinal)

  /** The position in the buffer of the match of `row` (of `leftOutput`), or -1. */
  def find(row: InternalRow): Int = {
    val l = time(row)
    if (time.isNull) return -1
    val segment = segmentOf match {
      case Some(lookup) => lookup(row)
      case None => KeyGroups.segment(0, keyed)
    }
    val from = KeyGroups.from(segment)
    val until = KeyGroups.until(segment)
    if (from >= until) return -1
    search.locate(from, until, l, hasLower = false, 0L, hasUpper = false, 0L, m.boundsInclusive)
    if (search.best < 0) return -1
    if (lower.nonEmpty || upper.nonEmpty) {
      val lo = lower.map(_(row))
      val hi = upper.map(_(row))
      // A NULL bound makes the comparison NULL: no right row passes.
      if (lower.exists(_.isNull) || upper.exists(_.isNull)) return -1
      search.locate(from, until, l, lo.isDefined, lo.getOrElse(0L), hi.isDefined, hi.getOrElse(0L), m.boundsInclusive)
      if (search.best < 0) return -1
    }
    if (decidedByTime || exact(l)) search.best else evaluated(row, l)
  }

  private[this] val decidedByTime = m.decidedByTime

  /** Whether Spark's distance is exact for every candidate: checked on the farthest one or two. */
  private def exact(l: Long): Boolean = m.direction match {
    case AsOfDirection.Backward => distanceRange.exact(l, search.key(search.lo))
    case AsOfDirection.Forward => distanceRange.exact(search.key(search.hi - 1), l)
    case AsOfDirection.Nearest =>
      val first = search.key(search.lo)
      val last = search.key(search.hi - 1)
      (first > l || distanceRange.exact(l, first)) && (last < l || distanceRange.exact(last, l))
  }

  /** The candidate stock Spark picks by evaluating its distance expression, as [[AsOfPick]] says. */
  private def evaluated(row: InternalRow, l: Long): Int = {
    var best = -1
    var bestDistance: Any = null
    def better(i: Int): Boolean = {
      val d = distance.eval(joined(row, buffer.row(i)))
      val wins = d != null && (best < 0 || distanceOrder.lt(d, bestDistance))
      if (wins) {
        best = i
        bestDistance = d
      }
      wins
    }
    m.pick match {
      case AsOfPick.MinBy =>
        var i = search.lo
        while (i < search.hi) {
          if (search.isCandidate(i, l)) better(i)
          i += 1
        }
      case AsOfPick.SortMergeScan =>
        // From the nearest candidate outward, stopping at the first that is not nearer.
        val step = if (m.direction == AsOfDirection.Backward) -1 else 1
        var i = search.best
        var going = true
        while (going && i >= search.lo && i < search.hi) {
          going = better(i) || best < 0
          i += step
        }
    }
    best
  }
}

private[rangejoin] object AsOfJoinTask {

  /**
   * What a task needs besides its buffer, made on the driver: the match, whether the join is
   * inner, the left columns its rows carry (every left column, or those the match reads), the
   * right side's, and how far Spark's distance stays exact.
   */
  final case class Spec(
      m: AsOfMatch,
      innerOnly: Boolean,
      leftOutput: Seq[Attribute],
      rightOutput: Seq[Attribute],
      distanceRange: DistanceRange) {

    def create(buffer: SortedBuffer): AsOfJoinTask = new AsOfJoinTask(this, buffer)
  }
}

/** Creates each task's [[AsOfJoinTask]]: shipped to executors in the generated code's references. */
private[rangejoin] sealed trait AsOfJoinTasks extends Serializable {
  def create(): AsOfJoinTask
}

/** Over the sorted broadcast, which every task reads. */
private[rangejoin] final class BroadcastAsOfJoinTasks(spec: AsOfJoinTask.Spec, payload: Broadcast[SortedBuffer])
  extends AsOfJoinTasks {

  def create(): AsOfJoinTask = spec.create(payload.value)
}

/** Over the task's own right rows, sorted when the task opened its input ([[TaskBuffers]]). */
private[rangejoin] final class ShuffledAsOfJoinTasks(spec: AsOfJoinTask.Spec, bufferId: String) extends AsOfJoinTasks {

  def create(): AsOfJoinTask = spec.create(TaskBuffers.get(bufferId))
}
