package rangejoin.bins

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, CodeGenerator, ExprCode}
import org.apache.spark.sql.catalyst.expressions.codegen.Block._
import org.apache.spark.sql.types._

import rangejoin.condition.KeyTypes

/** The bin keys of a binned join: which key types bin, the grid's row type and one long per bin. */
private[rangejoin] object BinKeys {

  /** Types whose values are longs (or narrower integers) in Spark's order, which bin as they are. */
  def supports(dataType: DataType): Boolean = KeyTypes.integral(dataType)

  def asLong(value: Any): Long = value match {
    case l: Long => l
    case i: Int => i
    case s: Short => s
    case b: Byte => b
  }

  /** The grid a subquery reads: the base bin size and the levels that hold intervals, a bit mask. */
  val GridType: StructType = StructType(Seq(
    StructField("binSize", LongType, nullable = false),
    StructField("levels", LongType, nullable = false)))

  /**
   * One long per (level, bin): `bin * 64 + level`, wrapping. Levels are below 64, so a key's level
   * is its low six bits and two keys of different levels differ; two bins of one level share a
   * key only if they are a multiple of 2^58 apart. The join keeps its condition, and the bins of
   * a matching pair at any level are at most [[BinGrid.TopLevelBins]] apart (the point's bin is
   * among the interval's, two intersecting intervals' bins overlap), so such a collision never
   * meets a pair twice or a pair that does not match: one key is exact, and lets Spark sort each
   * side by one long (a radix sort) rather than by (level, bin).
   */
  def key(level: Int, bin: Long): Long = (bin << 6) + level

  /**
   * Generated code for `self.method(keys..., grid)`, NULL if any key or the grid is: the keys,
   * of any [[supports]]ed type, passed as longs.
   */
  def genCall(ctx: CodegenContext, ev: ExprCode, self: String, method: String, dataType: DataType,
      keys: Seq[Expression], grid: Expression): ExprCode = {
    val evaluated = (keys :+ grid).map(_.genCode(ctx))
    val args = evaluated.init.map(k => s"(long) ${k.value}") :+ evaluated.last.value.toString
    val javaType = CodeGenerator.javaType(dataType)
    // Each operand is evaluated only where those before it are not NULL, as eval does.
    val call = s"${ev.value} = $self.$method(${args.mkString(", ")});\n${ev.isNull} = ${ev.value} == null;"
    val nested = evaluated.foldRight(call) { (operand, inner) =>
      s"""|${operand.code}
          |if (!${operand.isNull}) {
          |  $inner
          |}""".stripMargin
    }
    ev.copy(code = code"""
      |boolean ${ev.isNull} = true;
      |$javaType ${ev.value} = null;
      |$nested""".stripMargin)
  }

  /** [[BinGrid]] as generated code calls it. */
  val Grid: String = BinGrid.getClass.getName + ".MODULE$"

  /** A row's bin keys, to explode. */
  val KeysType: ArrayType = ArrayType(LongType, containsNull = false)

  def grid(binSize: Long, levels: Long): InternalRow = InternalRow(binSize, levels)

  /** An overlap join's grid: the base bin size and the levels each side's intervals are on. */
  val OverlapGridType: StructType = StructType(Seq(
    StructField("binSize", LongType, nullable = false),
    StructField("leftLevels", LongType, nullable = false),
    StructField("rightLevels", LongType, nullable = false)))

  /** One copy of an interval in an overlap join: its bin key, on its own level, at its first bin there. */
  val OverlapCopyType: StructType = StructType(Seq(
    StructField("rangejoin_bin", LongType, nullable = false),
    StructField("rangejoin_own", BooleanType, nullable = false),
    StructField("rangejoin_first", BooleanType, nullable = false)))

  def overlapGrid(binSize: Long, leftLevels: Long, rightLevels: Long): InternalRow =
    InternalRow(binSize, leftLevels, rightLevels)

  private[bins] def baseOf(grid: InternalRow): Long = math.max(1L, grid.getLong(0))
}
