package rangejoin.execution.filter

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode}
import org.apache.spark.sql.execution.{ColumnarToRowExec, FileSourceScanExec, FilterExec, InputAdapter, ProjectExec, SparkPlan, WholeStageCodegenExec}
import org.apache.spark.sql.execution.metric.SQLMetric

import rangejoin.condition.{CannotFail, RangeOp}

/**
 * The dynamic filter: once the buffered side is sorted, its extreme key bounds every streamed
 * key that can match, so streamed rows beyond it are dropped before the join sees them.
 * {{{
 *   buffered keys  1 .. 1000          streamed s, condition s < b   =>   keep s < 1000
 *
 *   planned                                      run
 *   PiecewiseMergeJoin ..., dynamic filter       the join reads its broadcast's extreme key:
 *   :- Scan t2                                     resolve(spec, 1000) = s < 1000
 *   +- SortedBroadcast b                         its loop skips s >= 1000 (in generated code),
 *                                                reading from Scan t2 with s <= 1000 pushed
 *                                                (Parquet/ORC row groups skipped)
 * }}}
 * The planner decides that a join has one ([[Spec]], a field of the join); the join resolves it
 * to this run's filter ([[Resolved]]) once its buffer is built, and applies it to its own
 * streamed input: no plan node of its own, and no state shared between nodes. The side switch
 * applies one the same way to the side it buffers ([[rangejoin.execution.sideswitch.SideSwitchExec]]).
 *
 * Only for join types where a streamed row with no match outputs nothing, and only with a
 * streamed key that cannot fail (evaluating it on rows Spark would not pair must not raise an
 * error). It is exact: it keeps what Spark's comparison keeps. Where the key is a column of a
 * Parquet or ORC scan reached only through operators that see each row on its own and cannot
 * fail, a widened form of it ([[ScanPushdown]]) is also pushed to the scan, which skips row
 * groups whose statistics exclude it. That scan is a copy of the planned one reporting to the
 * planned one's metrics ([[PushedScan]]), so the SQL UI shows what it read.
 */
private[rangejoin] object DynamicFilter {

  /**
   * A planned filter: keep the streamed rows with `streamedKey op b` for some buffered key `b`,
   * decided by the buffered side's extreme ([[RangeOp.deciding]]); `keepRejected` keeps the
   * others instead (the anti join's fast path, whose answer they are).
   */
  final case class Spec(op: RangeOp, streamedKey: Expression, keepRejected: Boolean) {
    override def toString: String =
      s"${if (keepRejected) "NOT " else ""}$streamedKey ${op.symbol} the buffered keys' ${op.deciding}"
  }

  /**
   * The filter for one run: `predicate` over the streamed rows (None keeps every row: an
   * unsorted buffer, whose keys are not known), and the bound a file scan may take.
   */
  final case class Resolved(predicate: Option[Expression], scanBound: Option[(RangeOp, Literal)])

  val KeepAll: Resolved = Resolved(None, None)

  /**
   * `spec` for a buffer whose extreme key is `extreme` (None: no buffered row has a key, so
   * nothing matches); `sorted` false when the buffer's keys are not known (a buffered key raised
   * an error), which keeps every row.
   */
  def resolve(spec: Spec, sorted: Boolean, extreme: Option[Literal]): Resolved =
    if (!sorted) KeepAll
    else {
      val exact = predicate(spec.op, spec.streamedKey, extreme)
      if (spec.keepRejected) Resolved(Some(Not(Coalesce(Seq(exact, Literal.FalseLiteral)))), None)
      else Resolved(Some(exact), extreme.map(spec.op -> _))
    }

  /** `streamedKey op bound`, exactly as Spark compares; false when there is no bound. */
  def predicate(op: RangeOp, streamedKey: Expression, bound: Option[Literal]): Expression =
    bound.map(op(streamedKey, _)).getOrElse(Literal.FalseLiteral)

  /**
   * The plan the rows come from: `plan`, or a copy of it whose file scan has the scan bound too
   * (its generated code is `plan`'s; only its input differs).
   */
  def source(plan: SparkPlan, filter: Resolved, key: Expression): SparkPlan = (key, filter.scanBound) match {
    case (column: Attribute, Some((op, value))) => pushToScan(plan, column, op, value)
    case _ => plan
  }

  /**
   * The rows of `plan` that pass `filter`, counting those dropped in `skipped`: in `plan`'s
   * generated code where it has some ([[DynamicFilterExec]]).
   */
  def filtered(plan: SparkPlan, filter: Resolved, key: Expression, skipped: SQLMetric): RDD[InternalRow] = {
    val rows = source(plan, filter, key)
    filter.predicate match {
      case None => rows.execute()
      case Some(predicate) => DynamicFilterExec(rows, predicate, skipped)
    }
  }

  /**
   * Generated code running `body` only for the input rows that pass `predicate` (over `output`,
   * the rows' attributes, `input` their variables, of which `evaluated` has computed those the
   * predicate reads), counting the others in `skipped`. In a do-while(false), as FilterExec's:
   * `continue` leaves this row, not the loop around it.
   */
  def genCode(
      ctx: CodegenContext,
      predicate: Expression,
      output: Seq[Attribute],
      input: Seq[ExprCode],
      evaluated: String,
      skipped: String,
      body: String): String = {
    ctx.INPUT_ROW = null
    ctx.currentVars = input
    val test = BindReferences.bindReference(predicate, output).genCode(ctx)
    s"""
       |do {
       |  $evaluated
       |  ${test.code}
       |  if (${test.isNull} || !${test.value}) {
       |    $skipped.add(1);
       |    continue;
       |  }
       |  $body
       |} while (false);
     """.stripMargin
  }

  /**
   * Pushes `column op bound` to the file scan that produces `column`, in a form the scan's
   * statistics can only over-approximate ([[ScanPushdown]]). Rows skipped there never reach the
   * operators above the scan, so it crosses only operators for which that is the same as
   * dropping them at the join: ones that pass the column through unchanged, are deterministic,
   * cannot fail ([[CannotFail]]; a failing row skipped at the scan would hide Spark's error)
   * and compute each row on its own. A non-deterministic projection (rand, or
   * monotonically_increasing_id, which numbers rows as they come) or a filter that may raise
   * stops it.
   */
  private def pushToScan(plan: SparkPlan, column: Attribute, op: RangeOp, bound: Literal): SparkPlan = {
    def passes(expressions: Seq[Expression]) =
      plan.outputSet.contains(column) && expressions.forall(e => e.deterministic && CannotFail(e))
    plan match {
      case p @ (_: WholeStageCodegenExec | _: InputAdapter | _: ColumnarToRowExec)
          if plan.outputSet.contains(column) =>
        p.withNewChildren(p.children.map(pushToScan(_, column, op, bound)))
      case p: FilterExec if passes(p.condition :: Nil) =>
        p.withNewChildren(p.children.map(pushToScan(_, column, op, bound)))
      case p: ProjectExec if passes(p.projectList) =>
        p.withNewChildren(p.children.map(pushToScan(_, column, op, bound)))
      case scan: FileSourceScanExec if isDataColumn(scan, column) =>
        ScanPushdown(scan, column, op, bound).map(new PushedScan(scan, _)).getOrElse(scan)
      case other => other
    }
  }

  private def isDataColumn(scan: FileSourceScanExec, column: Attribute): Boolean =
    scan.output.exists(_.exprId == column.exprId) &&
      !scan.partitionFilters.exists(SubqueryExpression.hasSubquery) &&
      scan.requiredSchema.fieldNames.exists(_.equalsIgnoreCase(column.name)) &&
      !scan.relation.partitionSchema.fieldNames.exists(_.equalsIgnoreCase(column.name))
}
