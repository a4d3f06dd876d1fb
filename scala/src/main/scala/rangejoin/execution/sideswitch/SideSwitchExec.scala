package rangejoin.execution.sideswitch

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, BoundReference, Literal}
import org.apache.spark.sql.catalyst.plans.physical.{Partitioning, UnknownPartitioning}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode}
import org.apache.spark.sql.execution.{CodegenSupport, InputAdapter, SparkPlan, SQLExecution, WholeStageCodegenExec}
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}

import rangejoin.condition.Extreme
import rangejoin.execution.PiecewiseMergeJoinExec
import rangejoin.execution.broadcast.ExtremeRows
import rangejoin.execution.filter.DynamicFilter

/**
 * Chooses, when an inner range join runs, which of its sides to buffer. The planner buffers the
 * smaller side by its estimate, but a range join keeps only the rows of the other side that pass
 * the dynamic filter ([[DynamicFilter]]), and those may be far fewer: `s.k > b.k` keeps only the
 * rows of `s` above the smallest `b.k`. Buffering those instead, and streaming the large side
 * past them, spares collecting, sorting and broadcasting the large side.
 * {{{
 *   RangeJoinSideSwitch s.k > min(b.k)
 *   :- PiecewiseMergeJoin Inner, BuildRight (s.k > b.k)    b buffered, as without the switch
 *   :  :- s
 *   :  +- SortedBroadcast b.k, on demand
 *   :     +- b
 *   :- PiecewiseMergeJoin Inner, BuildLeft (s.k > b.k)     s buffered: only its rows that can match
 *   :  :- SortedBroadcast s.k, on demand                   built by the switch, from the rows of s
 *   :  :  +- s                                             with s.k > min(b.k)
 *   :  +- b
 *   +- RangeJoinKeyPass b.k                                one pass: b's extreme key and rows,
 *                                                          in generated code of its own
 *
 *   run:  min(b.k), b's rows  <-  b's Parquet footers, where they tell (FooterKeyPass),
 *                                 else one pass over b.k
 *         build s's broadcast from the rows of s that pass, stopping past maxRatio x b's rows
 *           fits:     run the second join (s buffered)
 *           too many: run the first join, as planned
 * }}}
 * Both joins give the same rows: the filter drops only rows of `s` that no row of `b` pairs
 * with (the bound is exact, as the dynamic filter's is), and an inner join's pairs do not depend
 * on which side is buffered. The planner switches only sides that are deterministic (each may
 * be read more than once) and keys that cannot fail (the pass over `b.k` evaluates every key).
 * A side that proves too large costs a pass over `b.k` and the rows of `s` read before it does
 * (`SortedBroadcastExec.buildIfAtMost`); nothing is broadcast that the chosen join does not read.
 *
 * @param default   the join as planned without the switch, buffering the estimated smaller side
 * @param swapped   the same join buffering the other side, whose rows it keeps by `filter`
 * @param keys      the default join's buffered side, projected to its sort key alone
 * @param filter    the swapped join's buffered rows that can match: `key op extreme(keys)`
 * @param maxRatio  the other side is buffered if at most this many of its rows pass per row of
 *                  the default buffered side ([[rangejoin.RangeJoinConf.SideSwitchMaxRatio]])
 */
private[rangejoin] case class SideSwitchExec(
    default: SparkPlan,
    swapped: SparkPlan,
    keys: SparkPlan,
    filter: DynamicFilter.Spec,
    maxRatio: Double) extends SparkPlan with CodegenSupport {

  override def nodeName: String = "RangeJoinSideSwitch"

  override def children: Seq[SparkPlan] = Seq(default, swapped, keys)

  override def output: Seq[Attribute] = default.output

  // The two joins keep different sides' partitioning, and only one runs.
  override def outputPartitioning: Partitioning = UnknownPartitioning(0)

  override lazy val metrics: Map[String, SQLMetric] = Map(
    "numBufferedRows" -> SQLMetrics.createMetric(sparkContext, "rows of the side planned as buffered"),
    "swapped" -> SQLMetrics.createMetric(sparkContext, "runs that buffered the other side"),
    "fromFooters" -> SQLMetrics.createMetric(sparkContext, "runs that read the buffered side's key from Parquet footers"))

  override def simpleString(maxFields: Int): String =
    s"$nodeName ${filter.streamedKey} ${filter.op.symbol} $extreme(${keys.output.head}), max rows ratio $maxRatio"

  private def extreme: Extreme = filter.op.deciding

  /** Whether the swapped join runs: decided once per execution of this plan, on the driver. */
  @transient private lazy val swap: Boolean = {
    val (rows, extremeKey) = measure()
    val keep = DynamicFilter.resolve(filter, sorted = true, extremeKey)
    val limit = math.min(rows * maxRatio, Long.MaxValue.toDouble).toLong
    val chosen = SideSwitchExec.joinOf(swapped).bufferIfAtMost(limit, keep, filter.streamedKey)
    longMetric("numBufferedRows") += rows
    if (chosen) longMetric("swapped") += 1
    SQLMetrics.postDriverMetricUpdates(sparkContext,
      sparkContext.getLocalProperty(SQLExecution.EXECUTION_ID_KEY), metrics.values.toSeq)
    chosen
  }

  /**
   * The default buffered side's row count and extreme key (None: no row has a key), from its
   * files' footers where they tell ([[FooterKeyPass]]), else by a pass over its keys.
   */
  private def measure(): (Long, Option[Literal]) = FooterKeyPass(keys, extreme) match {
    case Some(answer) =>
      longMetric("fromFooters") += 1
      answer
    case None => pass()
  }

  private def pass(): (Long, Option[Literal]) = {
    val key = keys.output.head
    val (rows, best) = ExtremeRows.across(extreme, keys.execute(), BoundReference(0, key.dataType, key.nullable), keys.schema)
    (rows, best.map(row => Literal(InternalRow.copyValue(row.get(0, key.dataType)), key.dataType)))
  }

  private def chosen: SparkPlan = if (swap) swapped else default

  protected override def doExecute(): RDD[InternalRow] = chosen.execute()

  // In generated code, the chosen join's code is the stage's, fused with the operators above,
  // as it would be without the switch: the switch decides when the stage generates its code (on
  // the driver, when it runs), and passes rows through. The other join's code is never generated.
  // Both joins sit in the stage; the key pass is a stage of its own ([[KeyPassExec]]).
  override def inputRDDs(): Seq[RDD[InternalRow]] = chosen.asInstanceOf[CodegenSupport].inputRDDs()

  override protected def doProduce(ctx: CodegenContext): String =
    chosen.asInstanceOf[CodegenSupport].produce(ctx, this)

  override def doConsume(ctx: CodegenContext, input: Seq[ExprCode], row: ExprCode): String =
    consume(ctx, input)

  override def needCopyResult: Boolean = chosen.asInstanceOf[CodegenSupport].needCopyResult

  override protected def withNewChildrenInternal(newChildren: IndexedSeq[SparkPlan]): SideSwitchExec =
    copy(default = newChildren(0), swapped = newChildren(1), keys = newChildren(2))
}

private[rangejoin] object SideSwitchExec {
  /** The join a child of the switch is, through the wrappers whole-stage code generation adds. */
  private def joinOf(plan: SparkPlan): PiecewiseMergeJoinExec = plan match {
    case j: PiecewiseMergeJoinExec => j
    case InputAdapter(child) => joinOf(child)
    case w: WholeStageCodegenExec => joinOf(w.child)
    case other => throw new IllegalStateException(s"RangeJoinSideSwitch: no PiecewiseMergeJoin to swap to in $other")
  }
}
