package rangejoin.execution

import org.apache.spark.broadcast.Broadcast
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BindReferences, BoundReference, Expression}
import org.apache.spark.sql.catalyst.expressions.codegen._
import org.apache.spark.sql.catalyst.expressions.codegen.Block._
import org.apache.spark.sql.execution.{CodegenSupport, SparkPlan}
import org.apache.spark.sql.types.BooleanType

import rangejoin.execution.driver.{CodegenJoinTask, CodegenJoinTasks, JoinSemantics, JoinSpec, RowEmit}
import rangejoin.execution.index.SortedBuffer

/**
 * Whole-stage code generation for [[PiecewiseMergeJoinExec]], where only streamed rows and pairs
 * are output: the join's loop is generated inside the streamed side's loop and fused with the
 * operators above, as Spark's BroadcastNestedLoopJoin and BroadcastHashJoin are.
 * {{{
 *   for each streamed row s (the streamed side's generated loop):
 *     task.find(streamed keys of s)                 the search, in Scala: [[CodegenJoinTask]]
 *     for i in task's candidates:
 *       b = task.row(i)                             buffered columns read as variables
 *       sorted ? residual(s, b) : condition(s, b)   generated
 *       pairs: consume (s, b)   semi/anti/existence: the first passing pair decides s
 *     outer and no pair passed: consume (s, NULLs)
 *     semi/anti/existence: consume s (and its flag) as s's fate says
 * }}}
 * The semantics are those of [[driver.StreamedJoinIterator]], counters included: a candidate
 * counts in numCandidates when it is looked at one by one.
 */
private[execution] trait JoinCodegen extends CodegenSupport {

  protected def streamed: SparkPlan
  protected def buffered: SparkPlan
  protected def streamedIsLeft: Boolean
  protected def semantics: JoinSemantics
  protected def joinSpec: JoinSpec
  protected def residual: Option[Expression]
  protected def condition: Expression
  protected def left: SparkPlan
  protected def right: SparkPlan

  override def inputRDDs(): Seq[RDD[InternalRow]] = streamed.asInstanceOf[CodegenSupport].inputRDDs()

  override def needCopyResult: Boolean =
    semantics.emitsPairs || streamed.asInstanceOf[CodegenSupport].needCopyResult

  /** Gives the dynamic filter below, if any, its bound from the buffer (see DynamicBound). */
  protected def setDynamicBound(buffer: SortedBuffer): Unit

  override protected def doProduce(ctx: CodegenContext): String = {
    // A dynamic filter in the streamed side's code is generated with its bound: set it first.
    setDynamicBound(buffered.executeBroadcast[SortedBuffer]().value)
    streamed.asInstanceOf[CodegenSupport].produce(ctx, this)
  }

  override def doConsume(ctx: CodegenContext, input: Seq[ExprCode], row: ExprCode): String = {
    val payload = buffered.executeBroadcast[SortedBuffer]()
    val task = taskTerm(ctx, payload)
    // Every streamed column is computed before the join, as the interpreted join's input rows are;
    // the join's branches then only read them.
    val evalInput = evaluateVariables(input)
    val keys = probeKeys(ctx, input, task)
    val looked = ctx.freshName("looked")
    val body = if (semantics.emitsPairs) pairsLoop(ctx, input, task, looked) else decide(ctx, input, task, looked)
    s"""
       |$evalInput
       |$keys
       |long $looked = 0L;
       |$body
     """.stripMargin
  }

  /** The task's [[CodegenJoinTask]], created once per task in the generated class's init. */
  private def taskTerm(ctx: CodegenContext, payload: Broadcast[SortedBuffer]): String = {
    val tasks = ctx.addReferenceObj("joinTasks", new CodegenJoinTasks(joinSpec, payload))
    val cls = classOf[CodegenJoinTask].getName
    ctx.addMutableState(cls, "joinTask", v => s"$v = $tasks.create();", forceInline = true)
  }

  /**
   * Projects the streamed keys and positions the search; the keys are evaluated only where Spark
   * evaluates them (see JoinSpec.probes), which the task knows once the broadcast is read.
   */
  private def probeKeys(ctx: CodegenContext, input: Seq[ExprCode], task: String): String = {
    ctx.INPUT_ROW = null
    ctx.currentVars = input
    val bound = joinSpec.probedKeys.map(BindReferences.bindReference(_, streamed.output))
    val projected = GenerateUnsafeProjection.createCode(ctx, bound)
    val keys = ctx.freshName("keys")
    s"""
       |InternalRow $keys = null;
       |if ($task.probes()) {
       |  ${projected.code}
       |  $keys = ${projected.value};
       |}
       |$task.find($keys);
     """.stripMargin
  }

  /**
   * Sets `pass` to whether the pair (input, buffered row `bufferedRow`) passes: the residual over
   * a sorted buffer, the whole condition over an unsorted one. Buffered columns are read here,
   * into variables local to each branch.
   */
  private def passes(
      ctx: CodegenContext,
      input: Seq[ExprCode],
      sorted: String,
      bufferedRow: String,
      pass: String): String = {
    def test(e: Option[Expression]): String = e match {
      case None => s"$pass = true;"
      case Some(predicate) =>
        val bufferedVars = bufferedColumns(ctx, bufferedRow, padded = false)
        val eval = evaluateRequiredVariables(buffered.output, bufferedVars, predicate.references)
        ctx.INPUT_ROW = null
        ctx.currentVars = if (streamedIsLeft) input ++ bufferedVars else bufferedVars ++ input
        val ev = BindReferences.bindReference(predicate, left.output ++ right.output).genCode(ctx)
        s"""
           |$eval
           |${ev.code}
           |$pass = !${ev.isNull} && ${ev.value};
         """.stripMargin
    }
    s"""
       |boolean $pass;
       |if ($sorted) {
       |  ${test(residual)}
       |} else {
       |  ${test(Some(condition))}
       |}
     """.stripMargin
  }

  /**
   * Inner and outer joins: every passing pair is output, then an outer join's streamed row with
   * none, padded. One `consume` for both (a parent's code is generated once), in a `for` whose
   * update step a parent's `continue` (a filter above) still reaches.
   *
   * Where every search finds a run (IndexSpec.findsRuns), the loop is a counted one over the run's
   * positions, as Spark's BroadcastNestedLoopJoin walks its array, one step longer for an outer
   * join's padding: an output-heavy join spends most of its time here. Otherwise i walks the
   * finder's candidates, then -1 once (the padding), then -2.
   */
  private def pairsLoop(ctx: CodegenContext, input: Seq[ExprCode], task: String, looked: String): String = {
    val padded = semantics.streamed == RowEmit.PaddedIfUnmatched
    val i = ctx.freshName("candidate")
    val matched = ctx.freshName("matched")
    val bufferedRow = ctx.freshName("bufferedRow")
    val pass = ctx.freshName("pass")
    val rows = ctx.addMutableState("InternalRow[]", "bufferedRows", v => s"$v = $task.rows();", forceInline = true)
    val numOutput = metricTerm(ctx, "numOutputRows")
    val examined = metricTerm(ctx, "numCandidates")
    val sorted = ctx.freshName("sorted")
    val test = passes(ctx, input, sorted, bufferedRow, pass)
    val bufferedVars = bufferedColumns(ctx, bufferedRow, padded)
    val resultVars = if (streamedIsLeft) input ++ bufferedVars else bufferedVars ++ input
    // Counted in a local and added to the metric once per streamed row: a parent's `continue`
    // only skips to the next candidate, and nothing a parent generates leaves the loop.
    val produced = ctx.freshName("produced")
    val output = s"""
       |  $produced++;
       |  ${consume(ctx, resultVars)}
     """.stripMargin
    // Candidate i: its row, and whether the pair passes; a failing pair goes to the next one.
    // A buffered row is always an UnsafeRow (BroadcastRows carries nothing else): typed so, as
    // Spark's BroadcastNestedLoopJoin types its own, its getters are calls to a final class.
    // `sorted` is read once per streamed row, outside the loop.
    val candidate = s"""
       |    $bufferedRow = (UnsafeRow) $rows[$i];
       |    $test
       |    if (!$pass) continue;
       |    $matched = true;
     """.stripMargin
    val loop = if (joinSpec.index.findsRuns) {
      val end = ctx.freshName("runEnd")
      s"""
         |int $end = $task.runUntil();
         |if ($end > $task.runFrom()) $examined.add((long) ($end - $task.runFrom()));
         |for (int $i = $task.runFrom(); $i < ${if (padded) s"$end + 1" else end}; $i++) {
         |  UnsafeRow $bufferedRow = null;
         |  if ($i < $end) {
         |    $candidate
         |  } else if ($matched) {
         |    continue;
         |  }
         |  $output
         |}
       """.stripMargin
    } else {
      s"""
         |for (int $i = $task.next(); $i != -2; $i = $i == -1 ? -2 : $task.next()) {
         |  UnsafeRow $bufferedRow = null;
         |  if ($i >= 0) {
         |    $looked++;
         |    $candidate
         |  } else {
         |    if ($looked > 0) $examined.add($looked);
         |    if (${!padded} || $matched) continue;
         |  }
         |  $output
         |}
       """.stripMargin
    }
    s"""
       |long $produced = 0L;
       |boolean $matched = false;
       |boolean $sorted = $task.sorted();
       |$loop
       |if ($produced > 0) $numOutput.add($produced);
     """.stripMargin
  }

  /**
   * Semi, anti and existence joins: the first passing candidate decides the streamed row. With no
   * residual over a sorted buffer every candidate passes, so a run decides it at once. (Codegen is
   * used only where the residual cannot fail: see [[JoinCodegen.supports]].)
   */
  private def decide(ctx: CodegenContext, input: Seq[ExprCode], task: String, looked: String): String = {
    val i = ctx.freshName("candidate")
    val matched = ctx.freshName("matched")
    val bufferedRow = ctx.freshName("bufferedRow")
    val pass = ctx.freshName("pass")
    val numOutput = metricTerm(ctx, "numOutputRows")
    val examined = metricTerm(ctx, "numCandidates")
    val sorted = ctx.freshName("sorted")
    val test = passes(ctx, input, sorted, bufferedRow, pass)
    val scan = ctx.freshName("scan")
    val settledWhole = if (residual.isEmpty) {
      s"""
         |if ($sorted) {
         |  if ($task.isRun()) {
         |    $matched = $task.runFrom() < $task.runUntil();
         |  } else {
         |    $matched = $task.next() >= 0;
         |    if ($matched) $looked = 1L;
         |  }
         |  $scan = false;
         |}
       """.stripMargin
    } else ""
    val (emit, resultVars) = semantics.streamed match {
      case RowEmit.IfMatched => (matched, input)
      case RowEmit.IfUnmatched => (s"!$matched", input)
      case RowEmit.WithMatchFlag =>
        ("true", input :+ ExprCode(FalseLiteral, JavaCode.variable(matched, BooleanType)))
      case other => throw new IllegalStateException(s"no generated code for streamed rows $other")
    }
    s"""
       |boolean $matched = false;
       |boolean $scan = true;
       |boolean $sorted = $task.sorted();
       |$settledWhole
       |if ($scan) {
       |  int $i;
       |  while (($i = $task.next()) >= 0) {
       |    $looked++;
       |    UnsafeRow $bufferedRow = (UnsafeRow) $task.row($i);
       |    $test
       |    if ($pass) {
       |      $matched = true;
       |      break;
       |    }
       |  }
       |}
       |if ($looked > 0) $examined.add($looked);
       |if ($emit) {
       |  $numOutput.add(1);
       |  ${consume(ctx, resultVars)}
       |}
     """.stripMargin
  }

  /** The buffered row's columns as variables; `padded`: all NULL when the row is null. */
  private def bufferedColumns(ctx: CodegenContext, row: String, padded: Boolean): Seq[ExprCode] = {
    ctx.currentVars = null
    ctx.INPUT_ROW = row
    buffered.output.zipWithIndex.map { case (a, i) =>
      val ev = BoundReference(i, a.dataType, a.nullable).genCode(ctx)
      if (!padded) ev
      else {
        val isNull = ctx.freshName("isNull")
        val value = ctx.freshName("value")
        val code = code"""
          |boolean $isNull = true;
          |${CodeGenerator.javaType(a.dataType)} $value = ${CodeGenerator.defaultValue(a.dataType)};
          |if ($row != null) {
          |  ${ev.code}
          |  $isNull = ${ev.isNull};
          |  $value = ${ev.value};
          |}
          """.stripMargin
        ExprCode(code, JavaCode.isNullVariable(isNull), JavaCode.variable(value, a.dataType))
      }
    }
  }
}

private[execution] object JoinCodegen {
  /**
   * Whether the join's loop can be generated: the streamed side's output alone depends on each
   * streamed row (the buffered side outputs nothing on its own), no extreme buffered row decides
   * every row (the fast path: its filter is the answer), and a first passing pair that decides a
   * row is never preceded by a residual that raises (the interpreted driver would replay the
   * candidates in Spark's order). A dynamic filter is a node of its own below, generated too.
   */
  def supports(
      semantics: JoinSemantics,
      residualCannotFail: Boolean,
      bufferedExtreme: Boolean): Boolean =
    !semantics.needsBufferedMatches && !bufferedExtreme &&
      (semantics.emitsPairs || residualCannotFail)
}
