package rangejoin.execution

import java.util.Locale

import org.apache.spark.{Partitioner, SparkEnv}
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
import rangejoin.execution.index.{RangeEdges, TimeRanges}

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
 * Before the shuffles, one job samples the right side's times for the ranges (as Spark's range
 * partitioner does; both sides' where the pick reads distances). The rows carried in travel in
 * the right side's own shuffle: each of its map tasks sends every range, beside that range's
 * rows, its own rows nearest the range from outside ([[RangeEdges]]), so a range's task holds
 * the nearest of each map task's and its search finds the nearest of all, with no job to gather
 * them first. Each task sorts its right rows and
 * searches them per left row ([[PiecewiseMergeAsOfJoinLike]]), as the other placements do, in
 * generated code as the per-key shuffled placement is (each side in a stage of its own below:
 * [[StageInputExec]]).
 *
 * Exactness: a left row's candidates outside its range are never nearer than the carried rows, so
 * its pick is the one the whole right side gives; the ranges themselves (the sample) decide only
 * how the rows are spread over the tasks. Where stock Spark reads distances (every pick
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
    "numRanges" -> SQLMetrics.createMetric(sparkContext, "time ranges"),
    "carriedRows" -> SQLMetrics.createMetric(sparkContext, "right rows carried into other ranges")) ++
    perTaskBufferMetrics

  override def outputPartitioning: Partitioning = UnknownPartitioning(numRanges)

  override def outputOrdering: Seq[SortOrder] = Nil

  /**
   * Both sides' rows by range, the right ones with the rows carried into each range: made once
   * for the plan (the sample's job runs once), as an exchange's shuffle is.
   */
  @transient private lazy val byRange: (RDD[InternalRow], RDD[InternalRow]) = {
    val leftRows = left.execute()
    val rightRows = right.execute()
    val leftTime = TimeRangedPiecewiseMergeAsOfJoinExec.Time(asOf.leftTime, left.output)
    val rightTime = TimeRangedPiecewiseMergeAsOfJoinExec.Time(asOf.rightTime, right.output)
    val ranges = timeRanges(leftRows, rightRows, leftTime, rightTime)
    longMetric("numRanges") += ranges.count
    val (backward, forward) = (asOf.direction != AsOfDirection.Forward, asOf.direction != AsOfDirection.Backward)
    val carriedRows = longMetric("carriedRows")

    val partitioner = TimeRangedPiecewiseMergeAsOfJoinExec.RangePartitioner(numRanges)
    // Each side's rows go through the shuffle in chunks of many rows, one record a chunk
    // ([[ChunkedRows]], each chunk row carrying its range's number): the shuffle's cost a record (a length written and read through
    // synchronized streams) is paid once a chunk, as the binned joins' chunks do.
    def shuffled(rows: RDD[InternalRow], keyed: Iterator[InternalRow] => Iterator[(Int, InternalRow)],
        output: Seq[Attribute]): RDD[InternalRow] = {
      val (n, fields) = (partitioner.numPartitions, output.size)
      val chunks = rows.mapPartitions { it =>
        new ChunkedRows.Chunker(keyed(it), ChunkedRows.directSink(n, ChunkedRows.chunkBytes(n)),
          () => UnsafeProjection.create(output, output), TimeRangedPiecewiseMergeAsOfJoinExec.copiesForShuffle(n))
          .map(chunk => (chunk.getInt(0), chunk))
      }
      new ShuffledRDD[Int, InternalRow, InternalRow](chunks, partitioner)
        .setSerializer(new UnsafeRowSerializer(2)).map(_._2)
        .mapPartitions(it => new ChunkedRows.Unchunker(it, fields))
    }
    // A NULL time matches nothing: a left row goes anywhere (range 0), a right row nowhere.
    // Function values, not methods: a task's closure then holds what they read, not this plan.
    // The rows are copied into their chunks as they come.
    val leftByRange: Iterator[InternalRow] => Iterator[(Int, InternalRow)] = { it =>
      val t = leftTime.evaluator()
      it.map(row => (if (t.read(row)) ranges.of(t.value) else 0, row))
    }
    // Each task's right rows, then the ones it carries into the other ranges ([[RangeEdges]]).
    val rightByRange: Iterator[InternalRow] => Iterator[(Int, InternalRow)] = { it =>
      val t = rightTime.evaluator()
      val edges = new RangeEdges[InternalRow](ranges.count, backward, forward, _.copy())
      it.flatMap { row =>
        if (!t.read(row)) None
        else {
          val range = ranges.of(t.value)
          if (ranges.count > 1) edges.add(range, t.value, row)
          Some((range, row))
        }
      } ++ {
        val carried = edges.carried
        carriedRows += carried.size
        carried
      }
    }
    (shuffled(leftRows, leftByRange, left.output), shuffled(rightRows, rightByRange, right.output))
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
   * The ranges, from a sample of the right side's times, or of both sides' where the pick reads
   * distances (their span decides whether those are exact); one range where they may not be.
   *
   * The right side's times alone spread its rows, the ones each task holds, evenly over the
   * ranges, and leave the left side, usually the larger, to be read once, by its shuffle: its
   * rows follow the right's times (a range's left rows take a task's time, never its memory).
   */
  private def timeRanges(leftRows: RDD[InternalRow], rightRows: RDD[InternalRow],
      leftTime: TimeRangedPiecewiseMergeAsOfJoinExec.Time, rightTime: TimeRangedPiecewiseMergeAsOfJoinExec.Time)
      : TimeRanges = {
    if (numRanges == 1) return TimeRanges.single
    val sides = (if (asOf.decidedByTime) Nil else Seq((leftRows, leftTime))) :+ ((rightRows, rightTime))
    // As Spark's range partitioner: about 20 sampled times a range, drawn evenly over the partitions.
    val partitions = sides.map(_._1.getNumPartitions).sum
    val perPartition = math.max(1, math.ceil(60.0 * numRanges / math.max(1, partitions)).toInt)
    def sampled(rows: RDD[InternalRow], time: TimeRangedPiecewiseMergeAsOfJoinExec.Time, salt: Int) =
      rows.mapPartitionsWithIndex { (i, it) =>
        val t = time.evaluator()
        val sampler = new TimeRanges.Sampler(perPartition, 31L * i + salt)
        it.foreach(row => if (t.read(row)) sampler.add(t.value))
        Iterator(sampler.result)
      }
    val samples = sides.zipWithIndex.map { case ((rows, time), salt) => sampled(rows, time, salt) }
      .reduce(_ union _).collect()
    val (lo, hi) = (samples.map(_._2).min, samples.map(_._3).max)
    val range = PiecewiseMergeAsOfJoinExec.distanceRange(asOf).getOrElse(
      throw new IllegalStateException(s"$nodeName: no distance range for ${asOf.distance.dataType}"))
    val exactEverywhere = asOf.decidedByTime || lo > hi || range.exact(hi, lo)
    if (exactEverywhere) TimeRanges.fromSample(samples.flatMap(_._1), numRanges) else TimeRanges.single
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

  /** Rows keyed by their range go to the task of that number. */
  final case class RangePartitioner(numPartitions: Int) extends Partitioner {
    override def getPartition(key: Any): Int = key.asInstanceOf[Int]
  }

  private val SortShuffleNames = Set("sort", "tungsten-sort", "org.apache.spark.shuffle.sort.sortshufflemanager")

  /**
   * Whether a row handed to a shuffle of `partitions` partitions must be a copy, a task's input
   * rows being reused: not under Spark's sort-based shuffle, whose writers serialize each record
   * as they take it, below the partitions its serialized mode takes; a copy under any other
   * shuffle manager, which may hold the records it is given. Spark's exchange decides the same
   * way (`ShuffleExchangeExec.needToCopyObjectsBeforeShuffle`, private to Spark). Read in the
   * task, from the executor's own configuration.
   */
  def copiesForShuffle(partitions: Int): Boolean = {
    val manager = SparkEnv.get.conf.get("spark.shuffle.manager", "sort").toLowerCase(Locale.ROOT)
    !SortShuffleNames.contains(manager) || partitions > (1 << 24)
  }
}
