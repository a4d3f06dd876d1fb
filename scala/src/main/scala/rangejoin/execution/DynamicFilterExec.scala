package rangejoin.execution

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, BindReferences, Predicate, SortOrder}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode}
import org.apache.spark.sql.catalyst.plans.physical.Partitioning
import org.apache.spark.sql.execution.{CodegenSupport, SparkPlan, UnaryExecNode}
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}

/**
 * The dynamic filter ([[DynamicFilter]]) as a node of the plan: planned on the streamed side of
 * the join it serves, it drops streamed rows that cannot match, by the bound the join sets once
 * its broadcast is sorted ([[DynamicBound]]).
 * {{{
 *   *(2) PiecewiseMergeJoin Inner, BuildRight, SortedRun (s#1 < b#2)
 *   :- *(2) RangeJoinDynamicFilter s#1 < the buffered side's extreme key
 *   :  +- *(2) ColumnarToRow
 *   :     +- FileScan parquet [s#1]          (run with the bound pushed: s <= 1000)
 *   +- SortedBroadcast b#2
 * }}}
 * In generated code it is a compare in the streamed side's loop, fused with the join above; run
 * on its own, a filter over each partition. Where the bound may go to a Parquet or ORC scan below
 * (`DynamicFilter.pushToScan`), the rows come from a copy of the planned scan that also has it,
 * which skips row groups its statistics exclude: the generated code is the planned plan's, only
 * its input differs. The exact filter always stays here.
 */
private[rangejoin] case class DynamicFilterExec(bound: DynamicBound, child: SparkPlan)
  extends UnaryExecNode with CodegenSupport {

  override def nodeName: String = "RangeJoinDynamicFilter"

  override def output: Seq[Attribute] = child.output

  override def outputPartitioning: Partitioning = child.outputPartitioning

  override def outputOrdering: Seq[SortOrder] = child.outputOrdering

  override lazy val metrics: Map[String, SQLMetric] = Map(
    "numStreamedRowsSkipped" ->
      SQLMetrics.createMetric(sparkContext, "streamed rows skipped by the dynamic filter"))

  override def simpleString(maxFields: Int): String = s"$nodeName $bound"

  /** The plan the rows come from: the child, or a copy of it whose file scan has the bound too. */
  private def source(filter: DynamicBound.Filter): SparkPlan = (bound.streamedKey, filter.scanBound) match {
    case (column: Attribute, Some((op, value))) => DynamicFilter.pushToScan(child, column, op, value)
    case _ => child
  }

  protected override def doExecute(): RDD[InternalRow] = {
    val filter = bound.get
    val rows = source(filter).execute()
    filter.predicate match {
      case None => rows
      case Some(predicate) =>
        val skipped = longMetric("numStreamedRowsSkipped")
        val input = child.output
        rows.mapPartitionsWithIndex { (index, iter) =>
          val keep = Predicate.create(predicate, input)
          keep.initialize(index)
          iter.filter { row =>
            val kept = keep.eval(row)
            if (!kept) skipped += 1
            kept
          }
        }
    }
  }

  override def inputRDDs(): Seq[RDD[InternalRow]] =
    source(bound.get).asInstanceOf[CodegenSupport].inputRDDs()

  override protected def doProduce(ctx: CodegenContext): String =
    child.asInstanceOf[CodegenSupport].produce(ctx, this)

  override def doConsume(ctx: CodegenContext, input: Seq[ExprCode], row: ExprCode): String =
    bound.peek.map(_.predicate) match {
      case None =>
        // Code generated before the join set the bound, only ever to be shown (EXPLAIN CODEGEN of a
        // stage without the join): a row reaching it would be a bug, and fails.
        val unset = ctx.addReferenceObj("unset", bound.unset)
        s"""
           |if (true) throw $unset;
           |${consume(ctx, input)}
         """.stripMargin
      case Some(None) => consume(ctx, input)
      case Some(Some(predicate)) =>
        val skipped = metricTerm(ctx, "numStreamedRowsSkipped")
        val evaluated = evaluateRequiredVariables(child.output, input, predicate.references)
        ctx.INPUT_ROW = null
        ctx.currentVars = input
        val test = BindReferences.bindReference(predicate, child.output).genCode(ctx)
        // In a do-while(false), as FilterExec's: `continue` leaves this row, not the loop above.
        s"""
           |do {
           |  $evaluated
           |  ${test.code}
           |  if (${test.isNull} || !${test.value}) {
           |    $skipped.add(1);
           |    continue;
           |  }
           |  ${consume(ctx, input)}
           |} while (false);
         """.stripMargin
    }

  override protected def withNewChildInternal(newChild: SparkPlan): DynamicFilterExec =
    copy(child = newChild)
}
