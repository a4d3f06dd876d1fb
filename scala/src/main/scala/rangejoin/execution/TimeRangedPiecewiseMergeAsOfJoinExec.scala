package rangejoin.execution

import org.apache.spark.Partitioner
import org.apache.spark.rdd.{RDD, ShuffledRDD}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, BindReferences, BoundReference, Expression, SortOrder,
  UnsafeProjection}
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext
import org.apache.spark.sql.catalyst.plans.JoinType
import org.apache.spark.sql.catalyst.plans.physical.{Partitioning, UnknownPartitioning}
import org.apache.spark.sql.execution.{SparkPlan, UnsafeRowSerializer}
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}

import rangejoin.condition.{AsOfDirection, AsOfMatch, KeyTypes}
import rangejoin.execution.driver.{AsOfJoinTask, ShuffledAsOfJoinTasks, TaskBuffers}
import rangejoin.execution.index.TimeRanges

/**
 * An as-of join with no equality keys and no side small enough to broadcast: both sides are
 * shuffled by ranges of time, and each task joins its range's left rows with its range's right
 * rows plus the one or two right rows nearest the range from outside it, which are all a left
 * row of the range can need. Stock Spark's sort-merge as-of operator runs such a join in one
 * task; its DataFrame rewrite compares every pair.
 * {{{
 *   ranges (quantiles of both sides' times)   0: < 10  |  1: [10, 20)  |  2: >= 20
 *   right rows                                2  7     |  11  15       |  23
 *   task 1, backward: its right rows 11 15, and the latest time of ranges before it: 7
 *           forward:  11 15, and the earliest time of ranges after it: 23
 *   left row 12 backward -> 11; left row 10 backward -> 7 (carried in)
 * }}}
 * Before the shuffles, one job samples both sides' times for the ranges (as Spark's range
 * partitioner does) and another finds each range's earliest and latest right rows, the rows
 * carried into the other ranges. Each task sorts its right rows and searches them per left row
 * ([[PiecewiseMergeAsOfJoinLike]]), as the other placements do, in generated code as the per-key
 * shuffled placement is (each side in a stage of its own below: [[StageInputExec]]).
 *
 * Exactness: a left row's candidates outside its range are never nearer than the carried row, so
 * its pick is the one the whole right side gives. Where stock Spark reads distances (every pick
 * but SQL's backward one) and the two sides' times span more than the distance's type holds
 * exactly, the pick may need every candidate (Spark's own overflowing distance): the join then
 * runs in one range, every right row in one task, as Spark's operator would.
 */
private[rangejoin] case class TimeRangedPiecewiseMergeAsOfJoinExec(
    asOf: AsOfMatch,
    joinType: JoinType,
    numRanges: Int,
    left: SparkPlan,
    right: SparkPlan) extends PiecewiseMergeAsOfJoinLike with AsOfJoinCodegen {

  require(asOf.leftKeys.isEmpty, s"$nodeName joins without equality keys")
  require(numRanges >= 1, s"$nodeName needs at least one range")

  override lazy val metrics: Map[String, SQLMetric] = Map(
    "numOutputRows" -> SQLMetrics.createMetric(sparkContext, "number of output rows"),
    "numRanges" -> SQLMetrics.createMetric(sparkContext, "time ranges")) ++ perTaskBufferMetrics

  override def outputPartitioning: Partitioning = UnknownPartitioning(numRanges)

  override def outputOrdering: Seq[SortOrder] = Nil

  /**
   * Both sides' rows by range, the right ones with the rows carried into each range: made once
   * for the plan (the sample's job and the edges' job run once), as an exchange's shuffle is.
   */
  @transient private lazy val byRange: (RDD[InternalRow], RDD[InternalRow]) = {
    val leftRows = left.execute()
    val rightRows = right.execute()
    val leftTime = TimeRangedPiecewiseMergeAsOfJoinExec.Time(asOf.leftTime, left.output)
    val rightTime = TimeRangedPiecewiseMergeAsOfJoinExec.Time(asOf.rightTime, right.output)
    val ranges = timeRanges(leftRows, rightRows, leftTime, rightTime)
    longMetric("numRanges") += ranges.count
    val carried = sparkContext.broadcast(carriedRows(rightRows, rightTime, ranges))

    val partitioner = TimeRangedPiecewiseMergeAsOfJoinExec.RangePartitioner(numRanges)
    def shuffled(rows: RDD[InternalRow], time: TimeRangedPiecewiseMergeAsOfJoinExec.Time, keepNull: Boolean,
        fields: Int): RDD[InternalRow] = {
      val keyed = rows.mapPartitions { it =>
        val t = time.evaluator()
        // A NULL time matches nothing: a left row goes anywhere (range 0), a right row nowhere.
        it.flatMap { row =>
          if (t.read(row)) Some((ranges.of(t.value), row.copy())) else if (keepNull) Some((0, row.copy())) else None
        }
      }
      new ShuffledRDD[Int, InternalRow, InternalRow](keyed, partitioner)
        .setSerializer(new UnsafeRowSerializer(fields)).map(_._2)
    }
    (shuffled(leftRows, leftTime, keepNull = true, left.output.size),
      shuffled(rightRows, rightTime, keepNull = false, right.output.size)
        .mapPartitionsWithIndex((range, rows) => rows ++ carried.value(range).iterator))
  }

  protected override def doExecute(): RDD[InternalRow] = {
    val (build, join) = (perTaskBuffer, joinTask)
    val (leftByRange, rightByRange) = byRange
    leftByRange.zipPartitions(rightByRange)((ls, rs) => join(ls, build(rs)))
  }

  /**
   * Generated code over the left rows of each range as the stage's one input, with the range's
   * right rows sorted into its buffer when the task opens it ([[TaskBuffers]]), as the per-key
   * shuffled placement is; the planner puts each side in a stage of its own ([[StageInputExec]]).
   */
  override def supportCodegen: Boolean = JoinCodegen.readsAsInput(left) && JoinCodegen.readsAsInput(right)

  /** Names this join's buffer in each task ([[TaskBuffers]]). */
  @transient private lazy val bufferId = java.util.UUID.randomUUID().toString

  override def inputRDDs(): Seq[RDD[InternalRow]] = {
    val (leftByRange, rightByRange) = byRange
    TaskBuffers.zip(leftByRange, rightByRange, bufferId, perTaskBuffer) :: Nil
  }

  override protected def codegenTasks(ctx: CodegenContext, spec: AsOfJoinTask.Spec): String =
    ctx.addReferenceObj("asOfTasks", new ShuffledAsOfJoinTasks(spec, bufferId)) + ".create()"

  override protected def createsTaskLazily: Boolean = true

  /**
   * The ranges, from a sample of both sides' times; one range where the pick reads distances
   * that may not be exact across the times' span.
   */
  private def timeRanges(leftRows: RDD[InternalRow], rightRows: RDD[InternalRow],
      leftTime: TimeRangedPiecewiseMergeAsOfJoinExec.Time, rightTime: TimeRangedPiecewiseMergeAsOfJoinExec.Time)
      : TimeRanges = {
    if (numRanges == 1) return TimeRanges.single
    // As Spark's range partitioner: about 20 sampled times a range, drawn evenly over the partitions.
    val partitions = leftRows.getNumPartitions + rightRows.getNumPartitions
    val perPartition = math.max(1, math.ceil(60.0 * numRanges / math.max(1, partitions)).toInt)
    def sampled(rows: RDD[InternalRow], time: TimeRangedPiecewiseMergeAsOfJoinExec.Time, salt: Int) =
      rows.mapPartitionsWithIndex { (i, it) =>
        val t = time.evaluator()
        val sampler = new TimeRanges.Sampler(perPartition, 31L * i + salt)
        it.foreach(row => if (t.read(row)) sampler.add(t.value))
        Iterator(sampler.result)
      }
    val samples = sampled(leftRows, leftTime, 0).union(sampled(rightRows, rightTime, 1)).collect()
    val (lo, hi) = (samples.map(_._2).min, samples.map(_._3).max)
    val range = PiecewiseMergeAsOfJoinExec.distanceRange(asOf).getOrElse(
      throw new IllegalStateException(s"$nodeName: no distance range for ${asOf.distance.dataType}"))
    val exactEverywhere = asOf.decidedByTime || lo > hi || range.exact(hi, lo)
    if (exactEverywhere) TimeRanges.fromSample(samples.flatMap(_._1), numRanges) else TimeRanges.single
  }

  /**
   * For each range, the right rows nearest it from outside: the latest of the ranges before it
   * (backward, nearest), the earliest of the ranges after it (forward, nearest).
   */
  private def carriedRows(rightRows: RDD[InternalRow], rightTime: TimeRangedPiecewiseMergeAsOfJoinExec.Time,
      ranges: TimeRanges): Array[Array[InternalRow]] = {
    import TimeRangedPiecewiseMergeAsOfJoinExec.Edges
    val edges: Map[Int, Edges] = if (ranges.count == 1) Map.empty else rightRows.mapPartitions { it =>
      val t = rightTime.evaluator()
      val found = scala.collection.mutable.HashMap.empty[Int, Edges]
      it.foreach { row =>
        if (t.read(row)) {
          val v = t.value
          val r = ranges.of(v)
          found.get(r) match {
            case None => found(r) = Edges(v, row.copy(), v, row.copy())
            case Some(e) =>
              if (v < e.first) found(r) = e.copy(first = v, firstRow = row.copy())
              else if (v > e.last) found(r) = e.copy(last = v, lastRow = row.copy())
          }
        }
      }
      found.iterator
    }.reduceByKey(Edges.merge _, math.min(ranges.count, 8)).collect().toMap

    val backward = asOf.direction != AsOfDirection.Forward
    val forward = asOf.direction != AsOfDirection.Backward
    Array.tabulate(numRanges) { p =>
      val before = if (backward) (0 until p).flatMap(edges.get).reduceOption(Edges.later).map(_.lastRow) else None
      val after = if (forward) (p + 1 until ranges.count).flatMap(edges.get).reduceOption(Edges.earlier).map(_.firstRow)
        else None
      (before ++ after).toArray
    }
  }

  override protected def placement: String = s"each of up to $numRanges ranges of time, both sides shuffled by time"

  override protected def withNewChildrenInternal(
      newLeft: SparkPlan, newRight: SparkPlan): TimeRangedPiecewiseMergeAsOfJoinExec =
    copy(left = newLeft, right = newRight)
}

private[rangejoin] object TimeRangedPiecewiseMergeAsOfJoinExec {

  /** A side's time as its order-preserving long, evaluated per task. */
  final case class Time(e: Expression, output: Seq[Attribute]) {
    def evaluator(): Evaluator = new Evaluator(BindReferences.bindReference(e, output))
  }

  final class Evaluator(bound: Expression) {
    private[this] val encode = KeyTypes.longEncoder(bound.dataType).get
    // A column is read where it is: a projection per row (an UnsafeRow written) only for an
    // expression.
    private[this] val (project, ordinal) = bound match {
      case b: BoundReference => ((row: InternalRow) => row, b.ordinal)
      case e => (UnsafeProjection.create(Seq(e)): InternalRow => InternalRow, 0)
    }
    /** The time read last. */
    var value = 0L
    /** Reads `row`'s time into [[value]]; false when it is NULL. */
    def read(row: InternalRow): Boolean = {
      val r = project(row)
      if (r.isNullAt(ordinal)) false else { value = encode(r, ordinal); true }
    }
  }

  /** A range's earliest and latest right rows (times as longs). */
  final case class Edges(first: Long, firstRow: InternalRow, last: Long, lastRow: InternalRow)

  object Edges {
    def merge(a: Edges, b: Edges): Edges = Edges(
      math.min(a.first, b.first), if (b.first < a.first) b.firstRow else a.firstRow,
      math.max(a.last, b.last), if (b.last > a.last) b.lastRow else a.lastRow)
    def later(a: Edges, b: Edges): Edges = if (b.last > a.last) b else a
    def earlier(a: Edges, b: Edges): Edges = if (b.first < a.first) b else a
  }

  /** Rows keyed by their range go to the task of that number. */
  final case class RangePartitioner(numPartitions: Int) extends Partitioner {
    override def getPartition(key: Any): Int = key.asInstanceOf[Int]
  }
}
