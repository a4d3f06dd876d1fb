package rangejoin.execution

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeSet, BindReferences, BoundReference, Expression, UnsafeProjection}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodeGenerator, CodegenContext, ExprCode, GenerateUnsafeProjection}
import org.apache.spark.sql.catalyst.plans.physical.{HashPartitioning, Partitioning, UnknownPartitioning}
import org.apache.spark.sql.execution.{CodegenSupport, SparkPlan, UnaryExecNode}

/**
 * Runs [[rangejoin.bins.BinChunks]]: the child's rows packed into chunks by the partition that
 * Spark's hash partitioning on `keys` into `numPartitions` gives them ([[ChunkedRows]]); the
 * exchange above ([[rangejoin.planning.BinChunksStrategy]]) is Spark's, on the chunk's
 * `partition` key. In generated code, fused with the stage that makes the rows:
 * {{{
 *   Exchange hashpartitioning(partition, n)       one shuffled row a chunk
 *   +- *(1) RangeJoinBinChunks ...                each row into its chunk where it is made; a
 *      +- *(1) Generate ...                       full chunk out to the stage's buffer
 * }}}
 * so a row is written once into its chunk, where a stage ending in the generator copies each row
 * into its buffer first (a generator's stage hands out several rows at a time).
 */
private[rangejoin] case class BinChunksExec(
    keys: Seq[Expression],
    numPartitions: Int,
    partition: Attribute,
    chunk: Attribute,
    child: SparkPlan) extends UnaryExecNode with CodegenSupport {

  override def output: Seq[Attribute] = Seq(partition, chunk)

  override def producedAttributes: AttributeSet = AttributeSet(output)

  override def nodeName: String = "RangeJoinBinChunks"

  private def partitionId: Expression =
    BindReferences.bindReference(HashPartitioning(keys, numPartitions).partitionIdExpression, child.output)

  protected override def doExecute(): RDD[InternalRow] = {
    val (inputs, n, id) = (child.output, numPartitions, partitionId)
    val capacity = ChunkedRows.chunkBytes(n)
    child.execute().mapPartitions { rows =>
      // Spark's exchange above serializes each chunk as it takes it, as it does its own rows.
      new ChunkedRows.Chunker(rows.map(row => (id.eval(row).asInstanceOf[Int], row)),
        ChunkedRows.hashSink(n, capacity), () => UnsafeProjection.create(inputs, inputs), copies = false)
    }
  }

  override def inputRDDs(): Seq[RDD[InternalRow]] = child.asInstanceOf[CodegenSupport].inputRDDs()

  // A row made by the child may fill a chunk, so one input row (a generator's) may hand out
  // several chunks before the stage's buffer is read.
  override def needCopyResult: Boolean = true

  private var sink: String = _
  private var consumed: String = _

  override protected def doProduce(ctx: CodegenContext): String = {
    val sinkClass = classOf[ChunkedRows.ChunkSink].getName
    sink = ctx.addMutableState(sinkClass, "chunkSink",
      v => s"$v = ${ChunkedRows.getClass.getName.stripSuffix("$")}.hashSink($numPartitions, ${ChunkedRows.chunkBytes(numPartitions)});",
      forceInline = true)
    consumed = ctx.addMutableState(CodeGenerator.JAVA_BOOLEAN, "chunksConsumed", forceInline = true)
    val chunkRow = ctx.freshName("chunk")
    // The child's loop stops whenever the buffer holds a chunk, and resumes on the next call. It
    // may stop inside a method of its own (a union's child), which returns here as if it had run
    // out: so its input counts as consumed only once a pass through it leaves the buffer empty
    // (a stop needs a chunk in the buffer); a pass over input already consumed finds nothing.
    // Then the chunks left go out, one a call.
    s"""
       |if (!$consumed) {
       |  ${child.asInstanceOf[CodegenSupport].produce(ctx, this)}
       |  if (shouldStop()) return;
       |  $consumed = true;
       |}
       |while ($sink.flushNext()) {
       |  UnsafeRow $chunkRow = $sink.chunk();
       |  ${consume(ctx, null, chunkRow)}
       |  if (shouldStop()) return;
       |}
     """.stripMargin
  }

  override def doConsume(ctx: CodegenContext, input: Seq[ExprCode], row: ExprCode): String = {
    val columns = child.output.zipWithIndex.map { case (a, i) => BoundReference(i, a.dataType, a.nullable) }
    val evaluated = evaluateVariables(input)
    ctx.INPUT_ROW = null
    ctx.currentVars = input
    val unsafe = GenerateUnsafeProjection.createCode(ctx, columns, false)
    ctx.INPUT_ROW = unsafe.value.toString
    ctx.currentVars = null
    val id = partitionId.genCode(ctx)
    val chunkRow = ctx.freshName("chunk")
    s"""
       |$evaluated
       |${unsafe.code}
       |${id.code}
       |if ($sink.add(${id.value}, ${unsafe.value})) {
       |  UnsafeRow $chunkRow = $sink.chunk();
       |  ${consume(ctx, null, chunkRow)}
       |}
     """.stripMargin
  }

  override protected def withNewChildInternal(newChild: SparkPlan): BinChunksExec = copy(child = newChild)
}

/**
 * Runs [[rangejoin.bins.BinUnchunk]]: the rows out of the chunks the exchange below delivered
 * ([[ChunkedRows.Unchunker]]). They are where Spark's hash partitioning on `keys` puts them, so
 * this reports that partitioning wherever its child reports hash partitioning on the chunks'
 * key: the exchange's own, or its partitions coalesced by adaptive execution (as Spark's
 * coalesced shuffle read reports its own); otherwise none.
 */
private[rangejoin] case class BinUnchunkExec(rows: Seq[Attribute], keys: Seq[Expression], child: SparkPlan)
  extends UnaryExecNode {

  override def output: Seq[Attribute] = rows

  override def producedAttributes: AttributeSet = AttributeSet(rows)

  override def nodeName: String = "RangeJoinBinUnchunk"

  override def outputPartitioning: Partitioning = child.outputPartitioning match {
    case h: HashPartitioning => HashPartitioning(keys, h.numPartitions)
    case other => UnknownPartitioning(other.numPartitions)
  }

  protected override def doExecute(): RDD[InternalRow] = {
    val width = rows.size
    child.execute().mapPartitions(chunks => new ChunkedRows.Unchunker(chunks, width))
  }

  override protected def withNewChildInternal(newChild: SparkPlan): BinUnchunkExec = copy(child = newChild)
}
