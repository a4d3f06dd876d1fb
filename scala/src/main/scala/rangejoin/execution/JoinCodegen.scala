package rangejoin.execution

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, BindReferences, BoundReference, Expression}
import org.apache.spark.sql.catalyst.expressions.codegen._
import org.apache.spark.sql.catalyst.expressions.codegen.Block._
import org.apache.spark.sql.execution.{CodegenSupport, InputAdapter, SparkPlan}
import org.apache.spark.sql.types.BooleanType

import rangejoin.condition.CannotFail
import rangejoin.execution.driver.{CodegenJoinTask, JoinSemantics, JoinSpec, RowEmit}
import rangejoin.execution.filter.DynamicFilter
import rangejoin.execution.index.BufferedColumns
/**
 * Whole-stage code generation for [[PiecewiseMergeJoinExec]], where only streamed rows and pairs
 * are output: the join's loop is generated inside the streamed side's loop and fused with the
 * operators above, as Spark's BroadcastNestedLoopJoin and BroadcastHashJoin are.
 * {{{
 *   for each streamed row s (the streamed side's generated loop):
 *     task.find(streamed keys of s)                 the search, in Scala: [[CodegenJoinTask]]
 *     for i in task's candidates:
 *       b = buffered row i                          its columns read as variables, from
 *                                                   BufferedColumns' arrays where they can be
 *       sorted ? residual(s, b) : condition(s, b)   generated
 *       pairs: consume (s, b)   semi/anti/existence: the first passing pair decides s
 *     outer and no pair passed: consume (s, NULLs)  (outer: consume is in a method called twice)
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

  override def inputRDDs(): Seq[RDD[InternalRow]] = streamedSource.asInstanceOf[CodegenSupport].inputRDDs()

  /**
   * The plan the streamed rows come from: the streamed child, or a copy of it whose file scan
   * takes the dynamic filter's bound too (its code is the child's: only the input differs).
   */
  protected def streamedSource: SparkPlan = streamed

  /** The dynamic filter's predicate over the streamed rows, tested before the join's code. */
  protected def streamedFilter: Option[Expression] = None

  /** Whether the filter is the whole join (the existence fast path): the rows it keeps are output. */
  protected def joinedByFilter: Boolean = false

  override def needCopyResult: Boolean =
    semantics.emitsPairs || streamed.asInstanceOf[CodegenSupport].needCopyResult

  /**
   * Each task's [[CodegenJoinTasks]], and the Java expression that creates its task in the
   * generated class's initialization (where `inputs` are the stage's input iterators).
   */
  protected def codegenTasks(ctx: CodegenContext): String

  override protected def doProduce(ctx: CodegenContext): String =
    streamed.asInstanceOf[CodegenSupport].produce(ctx, this)

  override def doConsume(ctx: CodegenContext, input: Seq[ExprCode], row: ExprCode): String =
    streamedFilter match {
      case None => joinCode(ctx, input)
      case Some(predicate) =>
        // The filter's columns first, so that a row it drops computes no others.
        val evaluated = evaluateRequiredVariables(streamed.output, input, predicate.references)
        val body = if (joinedByFilter) consume(ctx, input) else joinCode(ctx, input)
        DynamicFilter.genCode(ctx, predicate, streamed.output, input, evaluated,
          metricTerm(ctx, "numStreamedRowsSkipped"), body)
    }

  /** The join's code for one streamed row. */
  private def joinCode(ctx: CodegenContext, input: Seq[ExprCode]): String = {
    val task = taskTerm(ctx)
    declareBufferedTerms(ctx, task)
    // Every streamed column is computed before the join, as the interpreted join's input rows are;
    // the join's branches then only read them.
    val evalInput = evaluateVariables(input)
    val (keys, keysTerm) = probeKeys(ctx, input, task)
    val looked = ctx.freshName("looked")
    val body = if (semantics.emitsPairs) pairsLoop(ctx, input, task, looked)
      else decide(ctx, input, task, looked, keysTerm)
    fetchReadColumns(ctx, task, body)
    s"""
       |${lazyTaskInit(task)}
       |$evalInput
       |$keys
       |long $looked = 0L;
       |$body
     """.stripMargin
  }

  /**
   * Whether the task is created when the first streamed row reaches the join, rather than in the
   * generated class's init: see ShuffledPiecewiseMergeJoinExec.
   */
  protected def createsTaskLazily: Boolean = false

  /** The task's [[CodegenJoinTask]], created once per task: in the generated class's init, or lazily. */
  private def taskTerm(ctx: CodegenContext): String = {
    val create = codegenTasks(ctx)
    val cls = classOf[CodegenJoinTask].getName
    taskInit = Nil
    if (createsTaskLazily) {
      val task = ctx.addMutableState(cls, "joinTask", v => s"$v = null;", forceInline = true)
      taskInit = Seq(s"$task = $create;")
      task
    } else {
      ctx.addMutableState(cls, "joinTask", v => s"$v = $create;", forceInline = true)
    }
  }

  /** Statements that read from the task once it exists: see [[atTaskStart]]. */
  @transient private var taskInit: Seq[String] = Nil

  /** Runs `statement` once the task exists: in the generated class's init, or where it is created. */
  private def atTaskStart(ctx: CodegenContext, statement: String): Unit =
    if (createsTaskLazily) taskInit :+= statement else ctx.addPartitionInitializationStatement(statement)

  /** The lazily created task's creation and first reads, at the top of each streamed row's code. */
  private def lazyTaskInit(task: String): String =
    if (!createsTaskLazily) "" else s"if ($task == null) {\n${taskInit.mkString("\n")}\n}"

  /**
   * Projects the streamed keys and positions the search; the keys are evaluated only where Spark
   * evaluates them (see JoinSpec.probes), which the task knows once the broadcast is read.
   */
  private def probeKeys(ctx: CodegenContext, input: Seq[ExprCode], task: String): (String, String) = {
    ctx.INPUT_ROW = null
    ctx.currentVars = input
    val bound = joinSpec.probedKeys.map(BindReferences.bindReference(_, streamed.output))
    val projected = GenerateUnsafeProjection.createCode(ctx, bound)
    val keys = ctx.freshName("keys")
    (s"""
       |InternalRow $keys = null;
       |if ($task.probes()) {
       |  ${projected.code}
       |  $keys = ${projected.value};
       |}
       |$task.find($keys);
     """.stripMargin, keys)
  }

  /**
   * Sets `pass` (declared by the caller) to whether the pair (input, buffered row `i`) passes:
   * the residual over a sorted buffer, the whole condition over an unsorted one. Buffered columns are read here, into
   * variables local to each branch.
   */
  private def passes(
      ctx: CodegenContext,
      input: Seq[ExprCode],
      task: String,
      sorted: String,
      i: String,
      pass: String): String = {
    // The unsorted buffer (rare: a buffered key raised an error) reads the rows, so the key's
    // array, which a sorted buffer never reads, is not built for it.
    def test(e: Option[Expression], fromRows: Boolean): String = e match {
      case None => s"$pass = true;"
      case Some(predicate) =>
        val bufferedVars = bufferedColumns(ctx, task, i, pad = None, fromRows)
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
       |if ($sorted) {
       |  ${test(residual, fromRows = false)}
       |} else {
       |  ${test(Some(condition), fromRows = true)}
       |}
     """.stripMargin
  }

  private def candidateTerms(ctx: CodegenContext, input: Seq[ExprCode], task: String): JoinCodegen.CandidateTerms = {
    val i = ctx.freshName("candidate")
    val pass = ctx.freshName("pass")
    val sorted = ctx.freshName("sorted")
    JoinCodegen.CandidateTerms(i, ctx.freshName("matched"), pass, metricTerm(ctx, "numOutputRows"),
      metricTerm(ctx, "numCandidates"), sorted, passes(ctx, input, task, sorted, i, pass))
  }

  /**
   * Inner and outer joins: every passing pair is output, then an outer join's streamed row with
   * none, padded. A parent's code is generated once: an inner join's is in the candidate loop;
   * an outer join's is in a method of the generated class ([[emitFunction]]) called from the loop
   * and once more, after it, for the padding. So the loop, where an output-heavy join spends its
   * time, carries no padding (docs/design.md measures the difference on W4).
   *
   * Where every search finds a run (JoinSpec.findsRuns), the loop is a counted one over the
   * run's positions, as Spark's BroadcastNestedLoopJoin walks its array; otherwise it walks the
   * finder's candidates.
   */
  private def pairsLoop(ctx: CodegenContext, input: Seq[ExprCode], task: String, looked: String): String = {
    val padded = semantics.streamed == RowEmit.PaddedIfUnmatched
    val terms = candidateTerms(ctx, input, task)
    import terms._
    // A pair's output: the parent's code in the loop for an inner join; for an outer join, which
    // also outputs a padded row, a call to the method that holds it.
    val (emitPair, emitPadding) = if (padded) {
      val (emit, streamedArgs) = emitFunction(ctx, input, task)
      def call(at: String, pad: Boolean) = s"$emit(${(streamedArgs :+ at :+ pad.toString).mkString(", ")});"
      (call(i, pad = false), call("0", pad = true))
    } else {
      val bufferedVars = bufferedColumns(ctx, task, i, pad = None)
      (consume(ctx, if (streamedIsLeft) input ++ bufferedVars else bufferedVars ++ input), "")
    }
    // Counted in a local and added to the metric once per streamed row.
    val produced = ctx.freshName("produced")
    // Candidate i: whether the pair passes; a failing pair goes to the next one. `sorted` is
    // read once per streamed row, outside the loop.
    val candidate = s"""
       |  boolean $pass;
       |  $test
       |  if (!$pass) continue;
       |  $matched = true;
       |  $produced++;
       |  $emitPair
     """.stripMargin
    val loop = if (joinSpec.findsRuns) {
      val end = ctx.freshName("runEnd")
      s"""
         |int $end = $task.runUntil();
         |if ($end > $task.runFrom()) $examined.add((long) ($end - $task.runFrom()));
         |for (int $i = $task.runFrom(); $i < $end; $i++) {
         |  $candidate
         |}
       """.stripMargin
    } else {
      // An interval index's search may still find a run (its second key ascending, as for
      // intervals of one length): that run is walked as a counted one, the loop's one test of
      // which kind being as predictable as the run's end.
      val end = ctx.freshName("runEnd")
      s"""
         |int $i = -1;
         |int $end = -1;
         |if ($task.isRun()) {
         |  $i = $task.runFrom() - 1;
         |  $end = $task.runUntil();
         |  if ($end > $i + 1) $examined.add((long) ($end - $i - 1));
         |}
         |while (true) {
         |  if ($end >= 0) {
         |    if (++$i >= $end) break;
         |  } else {
         |    if (($i = $task.next()) < 0) break;
         |    $looked++;
         |  }
         |  $candidate
         |}
         |if ($looked > 0) $examined.add($looked);
       """.stripMargin
    }
    // The padding's position is never read.
    val padding = if (padded) s"""
       |if (!$matched) {
       |  $produced++;
       |  $emitPadding
       |}
     """.stripMargin else ""
    s"""
       |long $produced = 0L;
       |boolean $matched = false;
       |boolean $sorted = $task.sorted();
       |$loop
       |$padding
       |if ($produced > 0) $numOutput.add($produced);
     """.stripMargin
  }

  /**
   * A method of the generated class that outputs one row: the streamed row's columns (its
   * parameters) with buffered row `at`'s, all NULL if `pad`. Returns its name and the arguments
   * that pass the streamed columns. Each call site passes `pad` as a constant, so where the JIT
   * inlines the method (a small one: Spark puts a large parent's code in methods of its own), a
   * pair's NULL checks read the buffered columns' NULL arrays alone. The parent's code runs in a
   * `do { } while (false)`, so a `continue` in it (a filter above) ends this row, as in a loop.
   * [[JoinCodegen.supports]] keeps the parameters within the JVM's limit.
   */
  private def emitFunction(ctx: CodegenContext, input: Seq[ExprCode], task: String): (String, Seq[String]) = {
    val at = ctx.freshName("at")
    val pad = ctx.freshName("pad")
    val (args, params, streamedVars) = streamed.output.zip(input).map { case (a, ev) =>
      val value = ctx.freshName("streamed")
      val javaType = CodeGenerator.javaType(a.dataType)
      ev.isNull match {
        case _ if !a.nullable =>
          (Seq(ev.value.toString), Seq(s"$javaType $value"), ExprCode(FalseLiteral, JavaCode.variable(value, a.dataType)))
        case literal: LiteralValue =>
          (Seq(ev.value.toString), Seq(s"$javaType $value"), ExprCode(literal, JavaCode.variable(value, a.dataType)))
        case isNull =>
          val nullParam = ctx.freshName("streamedIsNull")
          (Seq(ev.value.toString, isNull.toString), Seq(s"$javaType $value", s"boolean $nullParam"),
            ExprCode(JavaCode.isNullVariable(nullParam), JavaCode.variable(value, a.dataType)))
      }
    }.unzip3
    val name = ctx.freshName("emitRow")
    val bufferedVars = bufferedColumns(ctx, task, at, pad = Some(pad))
    val resultVars = if (streamedIsLeft) streamedVars ++ bufferedVars else bufferedVars ++ streamedVars
    val body = consume(ctx, resultVars)
    ctx.addNewFunction(name,
      s"""
         |private void $name(${(params.flatten ++ Seq(s"int $at", s"boolean $pad")).mkString(", ")})
         |    throws java.io.IOException {
         |  do {
         |    $body
         |  } while (false);
         |}
       """.stripMargin, inlineToOuterClass = true)
    (name, args.flatten)
  }

  /**
   * Semi, anti and existence joins: the first passing candidate decides the streamed row. With no
   * residual over a sorted buffer every candidate passes, so a run decides it at once. (Codegen is
   * used only where the residual cannot fail: see [[JoinCodegen.supports]].)
   */
  private def decide(ctx: CodegenContext, input: Seq[ExprCode], task: String, looked: String, keys: String): String = {
    val terms = candidateTerms(ctx, input, task)
    import terms._
    // A residual that raises on a candidate met in the finder's order: the task replays the row's
    // candidates in stock Spark's order (driver.SparkOrder), which decides it, or raises.
    val replay = if (residual.forall(CannotFail(_))) None else {
      ctx.INPUT_ROW = null
      ctx.currentVars = input
      val row = GenerateUnsafeProjection.createCode(ctx, streamed.output.zipWithIndex.map { case (a, o) =>
        BoundReference(o, a.dataType, a.nullable) })
      val error = ctx.freshName("error")
      Some((error, s"""
         |${row.code}
         |$matched = $task.passesInSparkOrder($keys, ${row.value}, $error);
         |break;
       """.stripMargin))
    }
    val tested = replay match {
      case None => s"boolean $pass;\n$test"
      case Some((error, onError)) =>
        s"""
           |boolean $pass = false;
           |try {
           |  $test
           |} catch (Throwable $error) {
           |  $onError
           |}
         """.stripMargin
    }
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
       |    $tested
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

  /**
   * The generated class's fields buffered rows are read through: the rows, and per column of a
   * fixed-width type its value and NULL arrays. Set per code generation in doConsume.
   */
  @transient private var rowsTerm: String = _
  @transient private var columnTerms: Seq[Option[(String, String)]] = Nil

  private def declareBufferedTerms(ctx: CodegenContext, task: String): Unit = {
    rowsTerm = ctx.addMutableState("InternalRow[]", "bufferedRows", forceInline = true)
    columnTerms = buffered.output.map { a =>
      if (BufferedColumns.supports(a.dataType)) {
        val javaType = CodeGenerator.javaType(a.dataType)
        Some((ctx.addMutableState(s"$javaType[]", "bufferedValues", forceInline = true),
          ctx.addMutableState("boolean[]", "bufferedNulls", forceInline = true)))
      } else None
    }
  }

  /**
   * Fetches, at the task's start, the rows and the arrays of the columns the generated code reads:
   * a column is built on its first fetch in the JVM, so one no operator reads (a parent may read
   * none) is never built, and neither are the rows of a side that is its keys
   * ([[rangejoin.execution.index.KeyRows]]) where every column read comes from an array. Any code
   * that reads them is in `code` (doConsume's) or in a function added to `ctx` while it was
   * generated; what that code does not name is never read.
   */
  private def fetchReadColumns(ctx: CodegenContext, task: String, code: String): Unit = {
    val named = JoinCodegen.namedIn(ctx, code)
    if (named(rowsTerm)) atTaskStart(ctx, s"$rowsTerm = $task.rows();")
    buffered.output.zip(columnTerms).zipWithIndex.foreach {
      case ((a, Some((values, nulls))), ordinal) if named(values) =>
        val javaType = CodeGenerator.javaType(a.dataType)
        atTaskStart(ctx,
          s"""$nulls = $task.nulls($ordinal);
             |$values = ($javaType[]) $task.values($ordinal, "$javaType");""".stripMargin)
      case _ =>
    }
  }

  /**
   * Buffered row `i`'s columns as variables; with `pad`, all NULL where `pad` is true. A column
   * of a fixed-width type is read from its [[BufferedColumns]] array, unless `fromRows` (the
   * unsorted buffer's rare branch); another is read from the row. Buffered rows are always
   * UnsafeRows (BroadcastRows carries nothing else): typed so, as Spark's BroadcastNestedLoopJoin
   * types its own, their getters are calls to a final class.
   */
  private def bufferedColumns(
      ctx: CodegenContext,
      task: String,
      i: String,
      pad: Option[String],
      fromRows: Boolean = false): Seq[ExprCode] =
    buffered.output.zip(columnTerms).zipWithIndex.map { case ((a, terms), ordinal) =>
      val isNull = ctx.freshName("isNull")
      val value = ctx.freshName("value")
      val javaType = CodeGenerator.javaType(a.dataType)
      val read = terms.filterNot(_ => fromRows) match {
        case Some((values, nulls)) => s"""
           |$isNull = ${pad.fold("")(p => s"$p || ")}${if (a.nullable) s"($nulls != null && $nulls[$i])" else "false"};
           |$value = ${pad.fold(s"$values[$i]")(p => s"$p ? ${CodeGenerator.defaultValue(a.dataType)} : $values[$i]")};
         """.stripMargin
        case None =>
          ctx.currentVars = null
          // The unsorted buffer's branch asks the task for the rows, so that a sorted one whose
          // other reads are all from arrays never fetches them (nor builds [[KeyRows]]' rows).
          ctx.INPUT_ROW = s"((UnsafeRow) ${if (fromRows) s"$task.rows()" else rowsTerm}[$i])"
          val ev = BoundReference(ordinal, a.dataType, a.nullable).genCode(ctx)
          val read = s"""
             |${ev.code}
             |$isNull = ${ev.isNull};
             |$value = ${ev.value};
           """.stripMargin
          pad.fold(read)(p => s"if (!$p) {\n$read\n}")
      }
      val code = code"""
        |boolean $isNull = true;
        |$javaType $value = ${CodeGenerator.defaultValue(a.dataType)};
        |$read
        """.stripMargin
      ExprCode(code, JavaCode.isNullVariable(isNull), JavaCode.variable(value, a.dataType))
    }
}

private[execution] object JoinCodegen {

  /**
   * Whether a term is named in `code` or in a function added to `ctx` while it was generated:
   * a buffered column's array is fetched (and so built) only where generated code reads it.
   */
  def namedIn(ctx: CodegenContext, code: String): String => Boolean = {
    lazy val functions = ctx.declareAddedFunctions()
    term => {
      val name = s"\\b$term\\b".r
      name.findFirstIn(code).isDefined || name.findFirstIn(functions).isDefined
    }
  }

  /**
   * Whether a shuffled join's streamed child is read as its stage's input (an exchange, as
   * Spark's shuffled joins read their children), so the join can be generated over that input
   * zipped with its buffered partition ([[driver.TaskBuffers]]); a generated child would have
   * to be fused instead.
   */
  def readsAsInput(child: SparkPlan): Boolean = child match {
    case _: InputAdapter => true
    case c: CodegenSupport => !c.supportCodegen
    case _ => true
  }
  /**
   * The names both candidate loops use: the candidate's position `i`, whether any pair `matched`,
   * whether this one `pass`es (tested by `test`), the metrics, and the buffer's `sorted` flag.
   */
  final case class CandidateTerms(
      i: String, matched: String, pass: String, numOutput: String, examined: String, sorted: String, test: String)

  /**
   * Whether the join's loop can be generated: the streamed side's output alone depends on each
   * streamed row (the buffered side outputs nothing on its own), no extreme buffered row decides
   * every row (the fast path: its filter is the answer). Where a first passing pair decides a
   * row and the residual raises, the task replays the row's candidates in Spark's order, as the
   * interpreted driver does. A dynamic filter is generated in the join's own code.
   */
  def supports(
      semantics: JoinSemantics,
      bufferedExtreme: Boolean,
      streamedOutput: Seq[Attribute]): Boolean =
    !semantics.needsBufferedMatches && !bufferedExtreme &&
      // An outer join outputs through a method with the streamed columns, a position and a flag
      // as parameters (see pairsLoop): the JVM's limit on them applies to a very wide side.
      (semantics.streamed != RowEmit.PaddedIfUnmatched ||
        CodeGenerator.isValidParamLength(CodeGenerator.calculateParamLength(streamedOutput) + 2))
}

