package rangejoin.execution

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeSet, BindReferences, BoundReference, Expression}
import org.apache.spark.sql.catalyst.expressions.codegen._
import org.apache.spark.sql.catalyst.expressions.codegen.Block._
import org.apache.spark.sql.catalyst.plans.Inner
import org.apache.spark.sql.execution.CodegenSupport

import rangejoin.execution.driver.AsOfJoinTask
import rangejoin.execution.index.BufferedColumns

/**
 * Whole-stage code generation for the as-of joins whose left rows come from their stage's one
 * input: the broadcast placement (the left side's own generated loop) and the per-key shuffled
 * one (the shuffled left rows). The join is fused with the left side and the operators above,
 * as Spark's BroadcastHashJoin is; the search stays the one [[AsOfJoinTask]] every placement runs.
 * {{{
 *   for each left row l (the left side's generated loop):
 *     probe = the columns of l the match reads      generated: times, bounds' and keys' columns
 *     at = task.find(probe)                         the search, in Scala: AsOfJoinTask
 *     inner and at < 0: next row
 *     r = at >= 0 ? buffered row at : NULLs         its columns read as variables, when read:
 *                                                   from BufferedColumns' arrays where they can be
 *     consume (l, r)
 * }}}
 * A left row gives at most one row, so the stage copies its output only where its left side would.
 */
private[execution] trait AsOfJoinCodegen extends CodegenSupport { self: PiecewiseMergeAsOfJoinLike =>

  /** The Java expression creating this task's [[AsOfJoinTask]], from `spec`. */
  protected def codegenTasks(ctx: CodegenContext, spec: AsOfJoinTask.Spec): String

  /**
   * Whether the task is created when the first left row reaches the join, rather than in the
   * generated class's init: in a stage fusing a union, a task reading another child's rows has
   * no buffer of a shuffled join's (see ShuffledPiecewiseMergeJoinExec).
   */
  protected def createsTaskLazily: Boolean

  private def leftCode: CodegenSupport = left.asInstanceOf[CodegenSupport]

  override def inputRDDs(): Seq[RDD[InternalRow]] = leftCode.inputRDDs()

  override def needCopyResult: Boolean = leftCode.needCopyResult

  override protected def doProduce(ctx: CodegenContext): String = leftCode.produce(ctx, this)

  /** The left columns the match reads: all a task's search sees of a left row. */
  private def probeOutput: Seq[Attribute] = {
    val read = AttributeSet(
      (Seq(asOf.leftTime, asOf.distance) ++ asOf.lowerBound ++ asOf.upperBound ++ asOf.leftKeys).flatMap(_.references))
    left.output.filter(read.contains)
  }

  override def doConsume(ctx: CodegenContext, input: Seq[ExprCode], row: ExprCode): String = {
    val probe = probeOutput
    val create = codegenTasks(ctx, taskSpec(probe))
    val task = ctx.addMutableState(classOf[AsOfJoinTask].getName, "asOfTask", v => s"$v = null;", forceInline = true)
    // Every left column is computed before the search, as the interpreted join's input rows
    // are: a column that raises (ANSI arithmetic below) raises for a row an inner join drops
    // too, as in stock Spark's plans, which materialize the left rows before the join.
    val evaluated = evaluateVariables(input)
    ctx.INPUT_ROW = null
    ctx.currentVars = input
    val projected = GenerateUnsafeProjection.createCode(ctx,
      probe.map(a => BindReferences.bindReference(a: Expression, left.output)))
    val at = ctx.freshName("at")
    val inner = joinType == Inner
    val columns = right.output.map { a =>
      if (BufferedColumns.supports(a.dataType)) {
        val javaType = CodeGenerator.javaType(a.dataType)
        Some((ctx.addMutableState(s"$javaType[]", "rightValues", forceInline = true),
          ctx.addMutableState("boolean[]", "rightNulls", forceInline = true)))
      } else None
    }
    val body = consume(ctx, input ++ rightColumns(ctx, task, at, columns, padded = !inner))
    // A column's array is built on its first fetch in the JVM: fetched only if the code reads it.
    val named = JoinCodegen.namedIn(ctx, body)
    val fetches = right.output.zip(columns).zipWithIndex.collect {
      case ((a, Some((values, nulls))), ordinal) if named(values) =>
        val javaType = CodeGenerator.javaType(a.dataType)
        s"""$nulls = $task.nulls($ordinal);
           |$values = ($javaType[]) $task.values($ordinal, "$javaType");""".stripMargin
    }
    val init = s"$task = $create;\n${fetches.mkString("\n")}"
    val lazyInit = if (createsTaskLazily) s"if ($task == null) {\n$init\n}" else {
      ctx.addPartitionInitializationStatement(init)
      ""
    }
    s"""
       |$lazyInit
       |$evaluated
       |${projected.code}
       |int $at = $task.find(${projected.value});
       |if (${if (inner) s"$at >= 0" else "true"}) {
       |  ${metricTerm(ctx, "numOutputRows")}.add(1);
       |  $body
       |}
     """.stripMargin
  }

  /**
   * The matched right row's columns as variables, all NULL where there is none (`at` < 0, when
   * `padded`): a fixed-width column read from its array (`columns`), another from the row.
   */
  private def rightColumns(
      ctx: CodegenContext,
      task: String,
      at: String,
      columns: Seq[Option[(String, String)]],
      padded: Boolean): Seq[ExprCode] =
    right.output.zip(columns).zipWithIndex.map { case ((a, terms), ordinal) =>
      val isNull = ctx.freshName("isNull")
      val value = ctx.freshName("value")
      val javaType = CodeGenerator.javaType(a.dataType)
      val default = CodeGenerator.defaultValue(a.dataType)
      val read = terms match {
        case Some((values, nulls)) =>
          // A NULL's slot in the array holds the default value.
          s"""
             |$isNull = ${if (padded) s"$at < 0 || " else ""}${if (a.nullable) s"($nulls != null && $nulls[$at])" else "false"};
             |$value = ${if (padded) s"$at < 0 ? $default : " else ""}$values[$at];
           """.stripMargin
        case None =>
          ctx.INPUT_ROW = s"$task.row($at)"
          ctx.currentVars = null
          val ev = BoundReference(ordinal, a.dataType, a.nullable).genCode(ctx)
          val fromRow = s"""
             |${ev.code}
             |$isNull = ${ev.isNull};
             |$value = ${ev.value};
           """.stripMargin
          if (padded) s"if ($at >= 0) {\n$fromRow\n}" else fromRow
      }
      val code = code"""
        |boolean $isNull = true;
        |$javaType $value = $default;
        |$read
        """.stripMargin
      ExprCode(code, JavaCode.isNullVariable(isNull), JavaCode.variable(value, a.dataType))
    }
}
