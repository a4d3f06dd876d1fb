package rangejoin.execution.driver

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, BindReferences, BoundReference, Expression, JoinedRow, Predicate, UnsafeProjection}
import org.apache.spark.sql.execution.metric.SQLMetric

import rangejoin.condition.{CannotFail, IndexSpec, KeyTypes, OrientedPredicate}
import rangejoin.execution.index.{BandRunFinder, CandidateFinder, EveryRowFinder, FixedEndFirstFinder, IntervalFinder, KeyCodec, KeyGroups, PerKeyFinder, SegmentOf, SortedBuffer, SortedKeys, SortedRunFinder}
/**
 * What a task needs to run its part of a piecewise merge join, and nothing of the plan: it is
 * shipped to executors in task closures.
 *
 * @param semantics      the join type, from the streamed and buffered points of view
 * @param index          the buffered side's index and the bounds it searches by
 * @param residual       the other conjuncts of the condition, over `left ++ right`
 * @param condition      the whole condition, for a buffer left unsorted (see [[SortedBuffer]])
 * @param exists         the flag attribute of an existence join
 */
private[rangejoin] final case class JoinSpec(
    semantics: JoinSemantics,
    index: IndexSpec,
    residual: Option[Expression],
    condition: Expression,
    left: Seq[Attribute],
    right: Seq[Attribute],
    output: Seq[Attribute],
    exists: Option[Attribute],
    streamedIsLeft: Boolean) {

  private def streamedOutput: Seq[Attribute] = if (streamedIsLeft) left else right

  private def bufferedOutput: Seq[Attribute] = if (streamedIsLeft) right else left

  /**
   * The buffered column that is the sort key itself, of a type whose sorted keys are its own
   * values as longs ([[KeyTypes.ownLong]], [[SortedBuffer.longKeys]]) or as ints widened
   * ([[KeyTypes.ownInt]], [[SortedBuffer.intKeys]]), if there is one: generated code reads it
   * from those keys (see [[CodegenJoinTask.values]]).
   */
  def keyColumn: Option[Int] = BindReferences.bindReference(index.sortPredicate.bufferedKey, bufferedOutput) match {
    case BoundReference(ordinal, keyType, _) if KeyTypes.ownLong(keyType) || KeyTypes.ownInt(keyType) => Some(ordinal)
    case _ => None
  }

  /**
   * Joins one partition of streamed rows with the buffer. With `marks`, records which buffered
   * rows matched, and emits nothing unless `emitting` (the broadcast join's marking pass emits
   * nothing; a shuffled join, whose partition holds every row a buffered row can meet, marks and
   * emits in one pass). Candidates examined are added to `examined`.
   */
  def streamedPass(
      rows: Iterator[InternalRow],
      buffer: SortedBuffer,
      partitionIndex: Int,
      marks: Option[Matches],
      examined: SQLMetric,
      emitting: Boolean = false): Iterator[InternalRow] = {
    val finder = if (buffer.isSorted) finderFor(buffer) else new EveryRowFinder(buffer.numRows)
    val passes = pairPredicate(buffer.isSorted, partitionIndex)
    val emits = emitting || marks.isEmpty
    new StreamedJoinIterator(
      rows, finder, buffer, passes, newOutput(), streamedIsLeft,
      emitPairs = emits && semantics.emitsPairs,
      streamedEmit = if (emits) semantics.streamed else RowEmit.Never,
      marks,
      examined)
  }

  /**
   * What a pair (laid out left then right) must pass: the residual over a sorted buffer (None:
   * every candidate passes), the whole condition over an unsorted one.
   */
  def pairPredicate(sorted: Boolean, partitionIndex: Int): Option[InternalRow => Boolean] =
    (if (sorted) residual else Some(condition)).map { e =>
      val predicate = Predicate.create(e, left ++ right)
      predicate.initialize(partitionIndex)
      predicate.eval _
    }

  /** The pair (streamed, buffered) laid out left then right, in `joined`. */
  def arrange(joined: JoinedRow, streamed: InternalRow, buffered: InternalRow): InternalRow =
    if (streamedIsLeft) joined(streamed, buffered) else joined(buffered, streamed)

  /**
   * Emits the buffered rows [from, until) on their own, as the join type says given `matches`,
   * the merged marks of every streamed partition.
   */
  def bufferedPass(
      buffer: SortedBuffer,
      from: Int,
      until: Int,
      matches: Matches): Iterator[InternalRow] = {
    val out = newOutput()
    val bufferedIsLeft = !streamedIsLeft
    (from until math.min(until, buffer.numRows)).iterator
      .map(i => out.alone(buffer.row(i), bufferedIsLeft, semantics.buffered, matches.isMarked(i)))
      .filter(_ != null)
  }

  /** The finder over a sorted buffer, for this join's index, probing streamed rows. */
  private def finderFor(buffer: SortedBuffer): CandidateFinder = {
    // Probes: a key that is a column is read in place; any other is projected first.
    def probes(bounds: Seq[OrientedPredicate]): (InternalRow => InternalRow, Int) =
      bounds.map(b => BindReferences.bindReference(b.streamedKey, streamedOutput)) match {
        case Seq(BoundReference(ordinal, _, _)) => (identity[InternalRow] _, ordinal)
        case bound => (UnsafeProjection.create(bound), 0)
      }
    finderOver(buffer, probes, KeyGroups.lookup(_, equalityKeys.map(BindReferences.bindReference(_, streamedOutput))))
  }

  /** The streamed row's equality keys, under a per-key index; none otherwise. */
  private def equalityKeys: Seq[Expression] = index match {
    case IndexSpec.PerKey(streamedKeys, _, _) => streamedKeys
    case _ => Nil
  }

  /**
   * The streamed keys a finder probes with, in the order of the fields of [[keyFinder]]'s key
   * rows: the one bound's, or a band's lower then upper; then any equality keys.
   */
  def probedKeys: Seq[Expression] = (index.base match {
    case IndexSpec.SortedRun(bound) => Seq(bound.streamedKey)
    case IndexSpec.BandRun(lower, upper) => Seq(lower.streamedKey, upper.streamedKey)
    case IndexSpec.IntervalIndex(lower, upper) => Seq(lower.streamedKey, upper.streamedKey)
    case other => throw new IllegalStateException(s"no probes for $other")
  }) ++ equalityKeys

  /**
   * The finder over a sorted buffer whose `find` takes the streamed keys already projected (a row
   * of [[probedKeys]]), as generated code passes them; it is given null when [[probes]] is false.
   */
  def keyFinder(buffer: SortedBuffer): CandidateFinder = {
    val first = probedKeys.size - equalityKeys.size
    val equalityFields = equalityKeys.zipWithIndex.map { case (k, i) =>
      BoundReference(first + i, k.dataType, nullable = true)
    }
    finderOver(buffer, _ => (identity[InternalRow] _, 0), KeyGroups.lookup(_, equalityFields))
  }

  /**
   * Whether the streamed key is evaluated at all. Spark evaluates a comparison on every pair, its
   * second operand only when the first is not NULL. So a streamed key is evaluated when some
   * buffered row exists (first operand) or has a key (second operand), and an expression that
   * could fail on this row fails exactly then. (A band's other bound has a streamed key that
   * cannot fail: the planner allows no other.)
   */
  def probes(buffer: SortedBuffer): Boolean =
    if (index.sortPredicate.streamedKeyFirst) buffer.numRows > 0 else buffer.numKeys > 0

  /**
   * Whether any one passing candidate decides a streamed row, whichever it is: a semi, anti or
   * existence join of the streamed rows, with a residual. The order candidates are tried in then
   * shows only where the residual raises an error, and there the row is replayed in stock Spark's
   * order ([[SparkOrder]]) whatever the finder's.
   */
  private def anyPassDecides: Boolean =
    !semantics.emitsPairs && !semantics.needsBufferedMatches && residual.nonEmpty

  /**
   * Whether a streamed row may be replayed in stock Spark's order ([[SparkOrder]]): where any
   * passing candidate decides it and the residual can raise an error. Only then does the buffer
   * keep its rows' origins ([[SortedBuffer]]), 4 bytes a row in every copy of the broadcast.
   */
  def replaysInSparkOrder: Boolean = anyPassDecides && !residual.forall(CannotFail(_))

  /**
   * Whether every search of this join's finder finds one run of positions
   * ([[CandidateFinder.isRun]]), which generated code can walk as a counted loop: the index's
   * runs, unless the join tries the run's fixed end first.
   */
  def findsRuns: Boolean = index.findsRuns && !anyPassDecides

  private def finderOver(
      buffer: SortedBuffer,
      probesOf: Seq[OrientedPredicate] => (InternalRow => InternalRow, Int),
      segmentOf: KeyGroups => SegmentOf): CandidateFinder = {
    val sortBound = index.sortPredicate
    val codec = KeyCodec(sortBound.bufferedKey.dataType)
    val windows = ArrayBuffer.empty[SortedKeys]
    def keys = {
      val k = codec.sortedKeys(buffer)
      windows += k
      k
    }
    val probe = probes(buffer)
    val within = index.base match {
      case IndexSpec.SortedRun(bound) =>
        val (keyOf, ordinal) = probesOf(Seq(bound))
        val run = new SortedRunFinder(keys, bound.op, keyOf, ordinal, probe)
        if (anyPassDecides) new FixedEndFirstFinder(run) else run
      case IndexSpec.BandRun(lower, upper) =>
        new BandRunFinder(keys, lower.op, keys, upper.op, probesOf(Seq(lower, upper))._1, probe)
      case IndexSpec.IntervalIndex(lower, upper) =>
        val encodeLower = KeyTypes.longEncoder(lower.bufferedKey.dataType).getOrElse(
          throw new IllegalStateException(s"an interval index on ${lower.bufferedKey.dataType}"))
        new IntervalFinder(keys, upper.op, lower.op, encodeLower, buffer.tree,
          probesOf(Seq(lower, upper))._1, probe)
      case other => throw new IllegalStateException(s"no finder for $other")
    }
    buffer.groups match {
      case Some(groups) => new PerKeyFinder(segmentOf(groups), windows.toArray, within, probe)
      case None => within
    }
  }

  private def newOutput(): JoinOutput = new JoinOutput(output, left, right, exists, streamedIsLeft)
}
