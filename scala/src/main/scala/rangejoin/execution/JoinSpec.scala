package rangejoin.execution

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, BindReferences, BoundReference, Expression, Predicate, UnsafeProjection}

/**
 * What a task needs to run its part of a piecewise merge join, and nothing of the plan: it is
 * shipped to executors in task closures.
 *
 * @param semantics      the join type, from the streamed and buffered points of view
 * @param op             the range predicate read as `streamed op buffered`
 * @param streamedKey    the streamed side's key, over the streamed output
 * @param streamedKeyFirst whether the streamed key is the comparison's first operand as written
 * @param residual       the other conjuncts of the condition, over `left ++ right`
 * @param condition      the whole condition, for a buffer left unsorted (see [[SortedBuffer]])
 * @param exists         the flag attribute of an existence join
 */
final case class JoinSpec(
    semantics: JoinSemantics,
    op: RangeOp,
    streamedKey: Expression,
    streamedKeyFirst: Boolean,
    residual: Option[Expression],
    condition: Expression,
    left: Seq[Attribute],
    right: Seq[Attribute],
    output: Seq[Attribute],
    exists: Option[Attribute],
    streamedIsLeft: Boolean) {

  private def streamedOutput: Seq[Attribute] = if (streamedIsLeft) left else right

  /**
   * Joins one partition of streamed rows with the broadcast buffer. With `marks`, records which
   * buffered rows matched instead of emitting anything (the marking pass).
   */
  def streamedPass(
      rows: Iterator[InternalRow],
      buffer: SortedBuffer,
      partitionIndex: Int,
      marks: Option[Matches]): Iterator[InternalRow] = {
    val (finder, filter) = if (buffer.isSorted) {
      val keys = KeyCodec(streamedKey.dataType).sortedKeys(buffer.storedKeys)
      // A key that is a column is read in place; any other is projected first.
      val (keyOf, keyOrdinal) = BindReferences.bindReference(streamedKey, streamedOutput) match {
        case BoundReference(ordinal, _, _) => (identity[InternalRow] _, ordinal)
        case bound => (UnsafeProjection.create(Seq(bound)), 0)
      }
      // Spark evaluates a comparison on every pair, its second operand only when the first is not
      // NULL. So a streamed key is evaluated when some buffered row exists (first operand) or has
      // a key (second operand), and an expression that could fail on this row fails exactly then.
      val probe = if (streamedKeyFirst) buffer.numRows > 0 else keys.size > 0
      (new SortedRunFinder(keys, op, keyOf, keyOrdinal, probe), residual)
    } else {
      (new EveryRowFinder(buffer.numRows), Some(condition))
    }
    val passes = filter.map { e =>
      val predicate = Predicate.create(e, left ++ right)
      predicate.initialize(partitionIndex)
      predicate.eval _
    }
    val emitting = marks.isEmpty
    new StreamedJoinIterator(
      rows, finder, buffer, passes, newOutput(), streamedIsLeft,
      emitPairs = emitting && semantics.emitsPairs,
      streamedEmit = if (emitting) semantics.streamed else RowEmit.Never,
      marks)
  }

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

  private def newOutput(): JoinOutput = new JoinOutput(output, left, right, exists, streamedIsLeft)
}
