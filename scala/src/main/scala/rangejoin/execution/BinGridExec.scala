package rangejoin.execution

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeSet, BoundReference, Expression, GenericInternalRow, UnsafeProjection}
import org.apache.spark.sql.execution.{SparkPlan, UnaryExecNode}
import org.apache.spark.sql.types.{DataType, DoubleType, LongType}

import rangejoin.bins.{RangeJoinDataGrid, RangeJoinOverlapDataGrid, SpanStatistics}

/**
 * Runs [[rangejoin.bins.BinGridOf]]: one job over the child, each task gathering its intervals'
 * [[SpanStatistics]], merged on the driver in partition order (so a floating-point sum comes out
 * the same each time), and the grid evaluated from them: the subquery's one row.
 * {{{
 *   BinGridExec            collect (one stage) -> merge -> grid
 *   +- *(1) Project [exponent, is_left, length, start, end]
 *      +- Scan ...
 * }}}
 * Its result is what Spark's subquery reads (`executeCollect`, `executeTake`); `execute` gives
 * the same row as an RDD, for a parent that asks.
 */
private[rangejoin] case class BinGridExec(inputs: Seq[Attribute], overlap: Boolean, grid: Attribute, child: SparkPlan)
  extends UnaryExecNode {

  override def output: Seq[Attribute] = Seq(grid)

  // The grid is made here, not read from the child.
  override def producedAttributes: AttributeSet = AttributeSet(grid)

  override def nodeName: String = "RangeJoinBinGrid"

  override def executeCollect(): Array[InternalRow] = Array(gridRow())

  override def executeTake(n: Int): Array[InternalRow] = executeCollect().take(n)

  override def executeTail(n: Int): Array[InternalRow] = executeCollect().takeRight(n)

  protected override def doExecute(): RDD[InternalRow] = sparkContext.parallelize(executeCollect().toSeq, 1)

  override protected def withNewChildInternal(newChild: SparkPlan): BinGridExec = copy(child = newChild)

  private def gridRow(): InternalRow = {
    val Seq(exponent, isLeft, length, start, end) =
      inputs.map(a => child.output.indexWhere(_.exprId == a.exprId))
    val perTask = child.execute().mapPartitions { rows =>
      Iterator(Tuple1(BinGridExec.gather(rows, exponent, isLeft, length, start, end).toLongs))
    }.collect()
    val statistics = perTask.foldLeft(new SpanStatistics)((all, task) => all.merge(SpanStatistics.fromLongs(task._1)))
    val value = BinGridExec.gridOf(overlap).eval(new GenericInternalRow(statistics.values))
    UnsafeProjection.create(Array[DataType](grid.dataType)).apply(new GenericInternalRow(Array[Any](value))).copy()
  }
}

private[rangejoin] object BinGridExec {

  /** A task's rows' statistics, read by ordinal (a companion's function: no plan in the closure). */
  def gather(rows: Iterator[InternalRow], exponent: Int, isLeft: Int, length: Int, start: Int, end: Int)
      : SpanStatistics = {
    val statistics = new SpanStatistics
    while (rows.hasNext) {
      val row = rows.next()
      val side = if (row.getBoolean(isLeft)) 0 else 1
      // The length, start and end are NULL exactly where the exponent is (no interval).
      if (row.isNullAt(exponent)) statistics.add(side, -1, 0.0, 0L, 0L)
      else statistics.add(side, row.getInt(exponent), row.getDouble(length), row.getLong(start), row.getLong(end))
    }
    statistics
  }

  /** The grid expression over [[SpanStatistics.values]]' nine columns. */
  private def gridOf(overlap: Boolean): Expression = {
    val types = Seq(DoubleType, LongType, LongType, LongType, LongType, DoubleType, DoubleType, LongType, LongType)
    val columns = types.zipWithIndex.map { case (t, i) => BoundReference(i, t, nullable = true) }
    if (overlap) RangeJoinOverlapDataGrid(columns) else RangeJoinDataGrid(columns(0), columns(1))
  }
}
