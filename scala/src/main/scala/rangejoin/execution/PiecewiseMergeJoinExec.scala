package rangejoin.execution

import org.apache.spark.broadcast.Broadcast
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Expression, SortOrder}
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext
import org.apache.spark.sql.catalyst.optimizer.{BuildLeft, BuildRight, BuildSide}
import org.apache.spark.sql.catalyst.plans._
import org.apache.spark.sql.catalyst.plans.physical._
import org.apache.spark.sql.execution.{ExplainUtils, SparkPlan}
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}

import rangejoin.condition.{CannotFail, Extreme, RangeCondition}
import rangejoin.execution.broadcast.{BufferSummary, SortedBroadcastExec, SortedBroadcastMode}
import rangejoin.execution.driver.{BroadcastJoinTasks, JoinSpec, Matches, RowEmit}
import rangejoin.execution.filter.DynamicFilter
import rangejoin.execution.index.{SortedBuffer, SortedPartitions}

/**
 * A join whose condition holds an inequality between the two sides (or two, bounding the buffered
 * side from below and above: a band) and any residual conjuncts ([[RangeCondition]]). It replaces
 * BroadcastNestedLoopJoin's O(N x M) comparisons with a sort of the buffered (broadcast) side,
 * once per broadcast, and a search per streamed row in the index the bounds call for
 * ([[IndexSpec]]: a sorted run, a band's run, or an interval index). With one bound:
 * {{{
 *   buffered, sorted on the driver:   b.key  1   3   3   5   8  | NULL NULL
 *                                                                 (never match)
 *   streamed row s, s.key = 4, condition s.key > b.key:
 *     search for the first key >= 4  ->  run [1, 3, 3]           (prefix, 3 candidates)
 *     residual on each candidate     ->  pairs; s's own output (outer, semi, anti, existence)
 * }}}
 * The buffered side is collected, sorted and broadcast by the [[SortedBroadcastExec]] below the
 * join (see `planned`), and its extreme key filters the streamed side ([[DynamicFilter]]).
 * Streamed partitions are joined where they are, with no shuffle, each by one lazy
 * [[StreamedJoinIterator]]. Where the buffered side's rows are output on their own (the preserved
 * side of an outer join; semi, anti and existence joins that buffer the left side), a first job
 * marks which buffered rows matched, merged through Spark across every partition and executor,
 * and the buffered rows are then emitted once, in a separate set of partitions.
 *
 * Cost: O(M log M) to sort the buffered side, O(log M) per streamed row (plus k for a band's k
 * matches), plus the candidate pairs (the output, when there is no residual). The buffered side
 * must fit in a broadcast; the planner leaves the join to Spark when it does not.
 *
 * @param range     the comparisons that drive the join (one, or a band's two) and the residual
 * @param condition the whole join condition: what the join means, whatever the strategy
 * @param bufferedExtreme for a semi, anti or existence join with no residual, the one buffered
 *                  row that decides every streamed row ([[Extreme]]); None buffers every row
 * @param dynamicFilter the filter of the streamed rows by the buffered side's extreme key,
 *                  resolved once the broadcast is built ([[DynamicFilter]]); the planner allows it
 *                  only for a streamed key that cannot fail
 */
private[rangejoin] case class PiecewiseMergeJoinExec(
    range: RangeCondition,
    condition: Expression,
    joinType: JoinType,
    buildSide: BuildSide,
    left: SparkPlan,
    right: SparkPlan,
    bufferedExtreme: Option[Extreme] = None,
    dynamicFilter: Option[DynamicFilter.Spec] = None) extends PiecewiseMergeJoinLike with JoinCodegen {

  /**
   * Whether the join runs in generated code ([[JoinCodegen]]); where it does not, the stage ends
   * below it and the interpreted driver runs it. On the existence fast path with its filter, the
   * filter is the join, and is generated.
   */
  override def supportCodegen: Boolean = decidedByFilter || JoinCodegen.supports(
    semantics,
    bufferedExtreme = bufferedExtreme.isDefined,
    streamedOutput = streamed.output)

  override lazy val metrics: Map[String, SQLMetric] = baseMetrics ++ (if (dynamicFilter.isEmpty) Map.empty else Map(
    "numStreamedRowsSkipped" -> SQLMetrics.createMetric(sparkContext, "streamed rows skipped by the dynamic filter")))

  /**
   * The dynamic filter's part in this join, from the join type alone. Where a streamed row with
   * no match outputs nothing, the filter drops rows that cannot match: Some(false), the join loop
   * still runs. On the existence fast path the one buffered key decides each row, so the filter
   * is the whole answer: a semi join keeps what it passes, an anti join what it rejects
   * (Some(true)). None where unmatched streamed rows are output: no filter is planned.
   */
  private def filterDecides: Option[Boolean] = semantics.streamed match {
    case RowEmit.Never => Some(false)
    case RowEmit.IfMatched => Some(bufferedExtreme.isDefined)
    case RowEmit.IfUnmatched if bufferedExtreme.isDefined => Some(true)
    case _ => None
  }

  /** The broadcast the buffered side needs: sorted by its key, keeping the tree's key if any. */
  private def bufferedMode: SortedBroadcastMode =
    SortedBroadcastMode.of(index.sortKey, index.secondKey, index.groupKeys, buffered.output, bufferedExtreme,
      joinSpec.replaysInSparkOrder)

  override def requiredChildDistribution: Seq[Distribution] = buildSide match {
    case BuildLeft => BroadcastDistribution(bufferedMode) :: UnspecifiedDistribution :: Nil
    case BuildRight => UnspecifiedDistribution :: BroadcastDistribution(bufferedMode) :: Nil
  }

  // Pairs and streamed rows keep the streamed partitioning. Buffered rows output on their own come
  // in partitions of their own, how many known only at run time: 0 is Spark's "unknown" (a count
  // of 1 would claim a single partition, and a global aggregate above would skip its exchange).
  override protected def describedPlacement: String =
    ExplainUtils.generateFieldString("Dynamic filter", dynamicFilter.map(_.toString).getOrElse("none")) + "\n"

  override protected def describedFilter: String = dynamicFilter.map(f => s", dynamic filter: $f").getOrElse("")

  override def outputPartitioning: Partitioning =
    if (semantics.needsBufferedMatches) UnknownPartitioning(0)
    else joinType match {
      case _: InnerLike if range.isKeyed => PiecewiseMergeJoinExec.withBufferedKeys(
        streamed.outputPartitioning, range.orientedKeys(streamedIsLeft), conf.broadcastHashJoinOutputPartitioningExpandLimit)
      case _ => streamed.outputPartitioning
    }

  // Each streamed row's output follows it, in the streamed order; buffered rows output on their
  // own come after, in no order.
  override def outputOrdering: Seq[SortOrder] =
    if (semantics.needsBufferedMatches) Nil else streamed.outputOrdering

  /**
   * Where the existence fast path's filter is the whole answer: a semi join keeps the streamed
   * rows it passes, an anti join those it rejects. Its buffer is always sorted: the fast path
   * takes only keys that cannot fail.
   */
  private def decidedByFilter: Boolean = dynamicFilter.isDefined && filterDecides.contains(true)

  protected override def doExecute(): RDD[InternalRow] = {
    val payload = buffered.executeBroadcast[SortedBuffer]()
    val summary = bufferSummary
    val streamedRows = dynamicFilter match {
      case None => streamed.execute()
      case Some(spec) => DynamicFilter.filtered(streamed, runFilter, spec.streamedKey, longMetric("numStreamedRowsSkipped"))
    }
    if (decidedByFilter && summary.isSorted) counted(streamedRows)
    else joined(payload, summary, streamedRows)
  }

  /**
   * This run's dynamic filter, from the buffered side's extreme key: known once the broadcast is
   * built, before the streamed side runs or its code is generated (which, as for Spark's
   * BroadcastHashJoin, waits for the broadcast).
   */
  @transient private lazy val runFilter: DynamicFilter.Resolved = dynamicFilter match {
    case None => DynamicFilter.KeepAll
    case Some(spec) =>
      val summary = bufferSummary
      DynamicFilter.resolve(spec, summary.isSorted, summary.extremeKey(spec.op.deciding, bufferedMode.key))
  }

  override protected def streamedSource: SparkPlan =
    dynamicFilter.fold(streamed)(spec => DynamicFilter.source(streamed, runFilter, spec.streamedKey))

  override protected def streamedFilter: Option[Expression] = dynamicFilter.flatMap { _ =>
    val predicate = runFilter.predicate
    if (decidedByFilter && predicate.isEmpty) {
      throw new IllegalStateException(s"$nodeName: the existence fast path's buffer is not sorted")
    }
    predicate
  }

  override protected def joinedByFilter: Boolean = decidedByFilter

  /** What the driver reads of the sorted broadcast, without its value ([[BufferSummary]]). */
  private def bufferSummary: BufferSummary = sortedBroadcast.map(_.summary).getOrElse(
    throw new IllegalStateException(s"$nodeName reads no sorted broadcast"))

  override protected def codegenTasks(ctx: CodegenContext): String =
    ctx.addReferenceObj("joinTasks", new BroadcastJoinTasks(joinSpec, buffered.executeBroadcast[SortedBuffer]())) +
      ".create()"

  /** The join loop over each streamed partition, and the buffered rows' own output if any. */
  private def joined(
      payload: Broadcast[SortedBuffer],
      summary: BufferSummary,
      streamedRows: RDD[InternalRow]): RDD[InternalRow] = {
    val spec = joinSpec
    val examined = longMetric("numCandidates")

    val streamedOutput = if (semantics.streamedPassEmits) {
      Some(streamedRows.mapPartitionsWithIndex { (index, rows) =>
        spec.streamedPass(rows, payload.value, index, marks = None, examined)
      })
    } else None

    val bufferedOutput = if (semantics.needsBufferedMatches) {
      val matches = streamedRows.mapPartitionsWithIndex { (index, rows) =>
        val marks = new Matches
        spec.streamedPass(rows, payload.value, index, Some(marks), examined).foreach(_ => ())
        Iterator.single(marks)
      }.treeAggregate(new Matches)((a, b) => a.merge(b), (a, b) => a.merge(b))
      Some(emitBuffered(spec, payload, summary.numRows, matches))
    } else None

    val parts = streamedOutput.toSeq ++ bufferedOutput
    counted(if (parts.size == 1) parts.head else sparkContext.union(parts))
  }

  /** The buffered rows' own output, in slices of the buffer read from the broadcast. */
  private def emitBuffered(
      spec: JoinSpec,
      payload: Broadcast[SortedBuffer],
      numRows: Int,
      matches: Matches): RDD[InternalRow] = {
    val slices = math.max(1, math.min(sparkContext.defaultParallelism,
      (numRows + PiecewiseMergeJoinExec.RowsPerBufferedSlice - 1) / PiecewiseMergeJoinExec.RowsPerBufferedSlice))
    val bounds = (0 to slices).map(i => (numRows.toLong * i / slices).toInt)
    sparkContext.parallelize(bounds.zip(bounds.tail), slices).mapPartitions { ranges =>
      ranges.flatMap { case (from, until) => spec.bufferedPass(payload.value, from, until, matches) }
    }
  }

  /**
   * This join as the planner finishes it: with its dynamic filter where `withFilter` and its join
   * type and keys allow one, and its buffered side under the [[SortedBroadcastExec]] that sorts
   * and broadcasts it (an exchange would not do under adaptive execution; see there), built only
   * when the side switch asks for it if `onDemand`.
   */
  def planned(withFilter: Boolean, onDemand: Boolean = false): PiecewiseMergeJoinExec = {
    val filtered = filterDecides match {
      // Not with equality keys (the buffer is sorted within each key, so its ends are no
      // extreme), nor with a streamed key that may fail: the filter evaluates it on rows Spark
      // might never pair.
      case Some(_) if withFilter && !range.isKeyed && CannotFail(sortPredicate.streamedKey) =>
        copy(dynamicFilter = Some(DynamicFilter.Spec(sortPredicate.op, sortPredicate.streamedKey,
          keepRejected = semantics.streamed == RowEmit.IfUnmatched)))
      case _ => this
    }
    val sorted = SortedBroadcastExec(index.sortKey, index.secondKey, buffered, bufferedExtreme, index.groupKeys,
      onDemand, keepOrigins = joinSpec.replaysInSparkOrder)
    if (streamedIsLeft) filtered.copy(right = sorted) else filtered.copy(left = sorted)
  }

  /**
   * Builds this join's broadcast now from the buffered rows `keep` passes (over `keepKey`), if
   * at most `maxRows` do, and says whether it did: the side switch's choice.
   */
  def bufferIfAtMost(maxRows: Long, keep: DynamicFilter.Resolved, keepKey: Expression): Boolean =
    sortedBroadcast.getOrElse(throw new IllegalStateException(s"$nodeName has no sorted broadcast"))
      .buildIfAtMost(maxRows, keep, keepKey)

  /** The sorted broadcast this join reads, as planned or executed (under an input adapter). */
  private[rangejoin] def sortedBroadcast: Option[SortedBroadcastExec] =
    buffered.collectFirst { case s: SortedBroadcastExec => s }

  /** Whether its sorted broadcast is built where the rows are ([[SortedPartitions]]). */
  def sortsPartitions: Boolean =
    bufferedExtreme.isEmpty && SortedPartitions.supports(index.sortKey, index.groupKeys)

  override protected def withNewChildrenInternal(
      newLeft: SparkPlan, newRight: SparkPlan): PiecewiseMergeJoinExec =
    copy(left = newLeft, right = newRight)
}

private[rangejoin] object PiecewiseMergeJoinExec {

  /**
   * An inner join's output partitioned by the streamed equality keys is also partitioned by the
   * buffered ones, which equal them in every output row: as BroadcastHashJoin does, the streamed
   * partitioning is offered with buffered keys in place of streamed ones (up to `limit`
   * alternatives), so an aggregate or join above on the buffered keys needs no exchange of its
   * own that the hash join it replaces would not have needed.
   */
  def withBufferedKeys(partitioning: Partitioning, keys: (Seq[Expression], Seq[Expression]), limit: Int): Partitioning = {
    val (streamedKeys, bufferedKeys) = keys
    val alternatives = streamedKeys.zip(bufferedKeys).groupBy(_._1.canonicalized).map {
      case (key, pairs) => key -> pairs.map(_._2)
    }
    def expand(p: Partitioning): Seq[Partitioning] = p match {
      case c: PartitioningCollection => c.partitionings.flatMap(expand)
      case e: Partitioning with Expression =>
        e.multiTransformDown {
          case k: Expression if alternatives.contains(k.canonicalized) => k +: alternatives(k.canonicalized)
        }.take(limit).map(_.asInstanceOf[Partitioning]).toList // a Stream on Scala 2.12, LazyList on 2.13
      case other => Seq(other)
    }
    if (limit <= 0) partitioning
    else expand(partitioning) match {
      case Seq(one) => one
      case many => PartitioningCollection(many)
    }
  }

  /** Buffered rows per partition of the buffered side's own output. */
  private val RowsPerBufferedSlice = 65536
}
