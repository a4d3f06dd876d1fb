package rangejoin.execution.filter

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression, Predicate, SortOrder}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode}
import org.apache.spark.sql.catalyst.plans.physical.Partitioning
import org.apache.spark.sql.execution.{CodegenSupport, SparkPlan, UnaryExecNode, WholeStageCodegenExec}
import org.apache.spark.sql.execution.metric.SQLMetric

/**
 * A resolved dynamic filter inside its input's generated stage: the rows it drops are never
 * made into rows at all, where a filter over the stage's output rows pays for each of them.
 * {{{
 *   planned (the filter known only once the buffer is built)    run
 *   *(2) Filter isnotnull(k)                                    *(2) DynamicFilter k > 999
 *   +- ColumnarToRow ... Scan                                   +- Filter isnotnull(k) ...
 * }}}
 * Built at run time on the driver, never planned: the plan shows the join's `dynamic filter`, the
 * SQL UI counts the dropped rows in `skipped` (the join's or the broadcast's metric).
 */
private[filter] case class DynamicFilterExec(predicate: Expression, child: SparkPlan, skipped: SQLMetric)
  extends UnaryExecNode with CodegenSupport {

  override def output: Seq[Attribute] = child.output

  override def outputPartitioning: Partitioning = child.outputPartitioning

  override def outputOrdering: Seq[SortOrder] = child.outputOrdering

  override def nodeName: String = "DynamicFilter"

  override lazy val metrics: Map[String, SQLMetric] = Map("skipped" -> skipped)

  override def inputRDDs(): Seq[RDD[InternalRow]] = child.asInstanceOf[CodegenSupport].inputRDDs()

  protected override def doProduce(ctx: CodegenContext): String =
    child.asInstanceOf[CodegenSupport].produce(ctx, this)

  // The predicate's columns are evaluated before this (its `usedInputs`, by default its
  // references); the rest only for the rows it keeps, by the operators above.
  override def doConsume(ctx: CodegenContext, input: Seq[ExprCode], row: ExprCode): String =
    DynamicFilter.genCode(ctx, predicate, child.output, input, evaluated = "",
      skipped = metricTerm(ctx, "skipped"), body = consume(ctx, input))

  /** Where Spark falls back from the generated stage (its code failed to compile). */
  protected override def doExecute(): RDD[InternalRow] =
    DynamicFilterExec.filterRows(child.execute(), predicate, child.output, skipped)

  override protected def withNewChildInternal(newChild: SparkPlan): DynamicFilterExec = copy(child = newChild)
}

private[filter] object DynamicFilterExec {

  /**
   * `plan`'s rows that pass `predicate`: inside its generated stage where it is one whose code
   * can take a filter, over its rows otherwise.
   */
  def apply(plan: SparkPlan, predicate: Expression, skipped: SQLMetric): RDD[InternalRow] = plan match {
    case stage: WholeStageCodegenExec =>
      WholeStageCodegenExec(DynamicFilterExec(predicate, stage.child, skipped))(stage.codegenStageId).execute()
    case other => filterRows(other.execute(), predicate, other.output, skipped)
  }

  def filterRows(rows: RDD[InternalRow], predicate: Expression, input: Seq[Attribute], skipped: SQLMetric): RDD[InternalRow] =
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
