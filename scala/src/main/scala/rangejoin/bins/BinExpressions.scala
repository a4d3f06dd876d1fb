package rangejoin.bins

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BaseGenericInternalRow, BinaryExpression, Expression, UnaryExpression, UnsafeArrayData}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, CodegenFallback, ExprCode}
import org.apache.spark.sql.catalyst.util.{ArrayData, GenericArrayData}
import org.apache.spark.sql.types._

/*
 * The expressions a binned range join ([[BinnedRangeJoin]]) adds to its plan:
 * each row's bin keys ([[BinGrid]]), exploded into one row per bin, and the pieces of the subquery that
 * reads the grid (base bin size and the levels in use) from the interval side. Their names all
 * start with `RangeJoin`, so EXPLAIN shows where rangejoin changed a join.
 *
 * None of them can raise an error: they read keys of types ordered as longs ([[BinKeys]]) and
 * use only [[BinGrid]]'s exact arithmetic. A NULL key, a NULL grid (no interval with both bounds,
 * lo <= hi) or an inverted interval gives no bins: such a row matches nothing.
 */

/**
 * The bin keys of an interval `[lo, hi]` over a grid, as an array (a query explodes it, in
 * generated code): reads the row's interval and the grid, and gives NULL (no bins) for a NULL
 * bound, a NULL grid or an inverted interval.
 */
private[rangejoin] trait IntervalBins extends Expression {
  def lo: Expression
  def hi: Expression
  def grid: Expression

  override def children: Seq[Expression] = Seq(lo, hi, grid)
  override def nullable: Boolean = true

  /** The bins of `[from, to]` (from <= to) over `grid`. */
  protected def bins(from: Long, to: Long, grid: InternalRow): ArrayData

  /** The bins of `[from, to]` over `grid`, or NULL for an inverted interval. */
  def binsOf(from: Long, to: Long, grid: InternalRow): ArrayData =
    if (from > to) null else bins(from, to, grid)

  override def eval(input: InternalRow): Any = {
    val l = lo.eval(input)
    val h = if (l == null) null else hi.eval(input)
    val g = if (h == null) null else grid.eval(input).asInstanceOf[InternalRow]
    if (g == null) null else binsOf(BinKeys.asLong(l), BinKeys.asLong(h), g)
  }

  // Generated code evaluates the children and calls binsOf: the bins are this object's own work,
  // but a CodegenFallback would keep the whole Generate out of its stage's generated code.
  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode =
    BinKeys.genCall(ctx, ev, ctx.addReferenceObj("bins", this), "binsOf", dataType, Seq(lo, hi), grid)
}

/** The [[BinKeys.key]] of every bin of the interval `[lo, hi]` on its level. */
private[rangejoin] case class RangeJoinIntervalBins(lo: Expression, hi: Expression, grid: Expression)
  extends IntervalBins {

  override def dataType: DataType = BinKeys.KeysType
  override def prettyName: String = "RangeJoinIntervalBins"

  override protected def bins(from: Long, to: Long, g: InternalRow): ArrayData = {
    val base = BinKeys.baseOf(g)
    val level = BinGrid.levelOf(from, to, base)
    val size = BinGrid.sizeAt(base, level)
    val first = BinGrid.bin(from, size)
    val keys = new Array[Long](BinGrid.binCount(from, to, size))
    var i = 0
    while (i < keys.length) {
      keys(i) = BinKeys.key(level, first + i)
      i += 1
    }
    UnsafeArrayData.fromPrimitiveArray(keys)
  }

  override protected def withNewChildrenInternal(c: IndexedSeq[Expression]): RangeJoinIntervalBins =
    copy(lo = c(0), hi = c(1), grid = c(2))
}

/**
 * (key, own, first) for every copy of the interval `[lo, hi]` in an overlap join
 * ([[BinGrid.overlapLevels]]): each bin it covers on its own level and on the levels above that
 * hold the other side's intervals (the overlap grid's `leftLevels` or `rightLevels`, as
 * `isLeft` says which side this is), with whether the level is its own and the bin its first there.
 */
private[rangejoin] case class RangeJoinOverlapBins(
    lo: Expression, hi: Expression, grid: Expression, isLeft: Boolean)
  extends IntervalBins {

  override def dataType: DataType = ArrayType(BinKeys.OverlapCopyType, containsNull = false)
  override def prettyName: String = "RangeJoinOverlapBins"

  // The grid is one value for the whole query: each own level's copy levels and their bin sizes
  // are worked out once per task, not once per interval.
  @transient private[this] var decoded: InternalRow = _
  @transient private[this] var copyLevels: Array[Array[Int]] = _
  @transient private[this] var copySizes: Array[Array[Long]] = _

  private def decode(g: InternalRow): Unit = if (!(g eq decoded)) {
    copyLevels = new Array[Array[Int]](64)
    copySizes = new Array[Array[Long]](64)
    decoded = g
  }

  override protected def bins(from: Long, to: Long, g: InternalRow): ArrayData = {
    decode(g)
    val base = BinKeys.baseOf(g)
    val own = BinGrid.levelOf(from, to, base)
    if (copyLevels(own) == null) {
      copyLevels(own) = BinGrid.overlapLevels(own, g.getLong(if (isLeft) 2 else 1), base)
      copySizes(own) = copyLevels(own).map(BinGrid.sizeAt(base, _))
    }
    val levels = copyLevels(own)
    val sizes = copySizes(own)
    // Counted first, so that each copy is one object and the array one more.
    var n = 0
    var i = 0
    while (i < levels.length) {
      n += BinGrid.binCount(from, to, sizes(i))
      i += 1
    }
    val copies = new Array[Any](n)
    var c = 0
    i = 0
    while (i < levels.length) {
      val first = BinGrid.bin(from, sizes(i))
      val count = BinGrid.binCount(from, to, sizes(i))
      var k = 0
      while (k < count) {
        copies(c) = new OverlapCopy(BinKeys.key(levels(i), first + k), levels(i) == own, k == 0)
        c += 1
        k += 1
      }
      i += 1
    }
    new GenericArrayData(copies)
  }

  override protected def withNewChildrenInternal(c: IndexedSeq[Expression]): RangeJoinOverlapBins =
    copy(lo = c(0), hi = c(1), grid = c(2))
}

/**
 * One copy of an interval, a [[BinKeys.OverlapCopyType]] row: its fields read as they are stored,
 * where a generic row would box the key (an interval makes a copy per bin, and every row of the
 * side is copied at least once).
 */
private final class OverlapCopy(key: Long, own: Boolean, first: Boolean) extends BaseGenericInternalRow {
  override def numFields: Int = 3

  override protected def genericGet(ordinal: Int): Any = ordinal match {
    case 0 => key
    case 1 => own
    case 2 => first
  }

  override def isNullAt(ordinal: Int): Boolean = false
  override def getLong(ordinal: Int): Long = if (ordinal == 0) key else super.getLong(ordinal)
  override def getBoolean(ordinal: Int): Boolean =
    if (ordinal == 1) own else if (ordinal == 2) first else super.getBoolean(ordinal)

  override def setNullAt(i: Int): Unit = throw new UnsupportedOperationException("an interval's bin copy is read-only")
  override def update(i: Int, value: Any): Unit = throw new UnsupportedOperationException("an interval's bin copy is read-only")
}

/** The [[BinKeys.key]] of the point `x`'s bin on every level of the grid; NULL for a NULL point or grid. */
private[rangejoin] case class RangeJoinPointBins(x: Expression, grid: Expression) extends Expression {

  override def children: Seq[Expression] = Seq(x, grid)
  override def dataType: DataType = BinKeys.KeysType
  override def nullable: Boolean = true
  override def prettyName: String = "RangeJoinPointBins"

  // The grid is one value for the whole query (a scalar subquery's): its levels and their bin
  // sizes are worked out once per task, not once per point.
  @transient private[this] var decoded: InternalRow = _
  @transient private[this] var levels: Array[Int] = _
  @transient private[this] var sizes: Array[Long] = _

  private def decode(g: InternalRow): Unit = if (!(g eq decoded)) {
    val (base, mask) = (BinKeys.baseOf(g), g.getLong(1))
    val used = (0 until 64).filter(l => (mask & (1L << l)) != 0).map(l => l -> BinGrid.sizeAt(base, l))
      .filter(_._2 > 0)
    levels = used.map(_._1).toArray
    sizes = used.map(_._2).toArray
    decoded = g
  }

  // One array a task, rewritten for each point: the explode over it reads it before the next
  // point's (this expression is only ever the child of BinnedRangeJoin's explode), and a copy a
  // row cost more than the bins themselves (two allocations and a copy).
  @transient private[this] var keys: UnsafeArrayData = _

  /** The point's bin keys over `grid`: an array valid until the next call. */
  def binsOf(point: Long, g: InternalRow): ArrayData = {
    decode(g)
    if (keys == null || keys.numElements() != levels.length)
      keys = UnsafeArrayData.fromPrimitiveArray(new Array[Long](levels.length))
    var i = 0
    while (i < levels.length) {
      keys.setLong(i, BinKeys.key(levels(i), BinGrid.bin(point, sizes(i))))
      i += 1
    }
    keys
  }

  override def eval(input: InternalRow): Any = {
    val v = x.eval(input)
    val g = if (v == null) null else grid.eval(input).asInstanceOf[InternalRow]
    if (g == null) null else binsOf(BinKeys.asLong(v), g)
  }

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode =
    BinKeys.genCall(ctx, ev, ctx.addReferenceObj("bins", this), "binsOf", dataType, Seq(x), grid)

  override protected def withNewChildrenInternal(c: IndexedSeq[Expression]): RangeJoinPointBins =
    copy(x = c(0), grid = c(1))
}

/**
 * An expression of an interval `[left, right]`, NULL for a NULL bound or an inverted interval;
 * in generated code, `ofInterval` of the two bounds as longs.
 */
private[rangejoin] trait OfInterval extends BinaryExpression {
  protected def ofInterval(from: String, to: String): String

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode =
    nullSafeCodeGen(ctx, ev, (l, r) =>
      s"""|if ((long) $l > (long) $r) {
          |  ${ev.isNull} = true;
          |} else {
          |  ${ev.value} = ${ofInterval(s"(long) $l", s"(long) $r")};
          |}""".stripMargin)
}

/** [[BinGrid.exponentOf]] of `[lo, hi]`; NULL for a NULL bound or an inverted interval. */
private[rangejoin] case class RangeJoinSpanExponent(left: Expression, right: Expression)
  extends OfInterval {

  override def dataType: DataType = IntegerType
  override def nullable: Boolean = true
  override def prettyName: String = "RangeJoinSpanExponent"

  override protected def nullSafeEval(lo: Any, hi: Any): Any = {
    val (from, to) = (BinKeys.asLong(lo), BinKeys.asLong(hi))
    if (from > to) null else BinGrid.exponentOf(from, to)
  }

  override protected def ofInterval(from: String, to: String): String = s"${BinKeys.Grid}.exponentOf($from, $to)"

  override protected def withNewChildrenInternal(l: Expression, r: Expression): RangeJoinSpanExponent =
    copy(left = l, right = r)
}

/** `1 << level` of `[lo, hi]` over base size `binSize`; NULL for a NULL bound or an inverted interval. */
private[rangejoin] case class RangeJoinLevelBit(left: Expression, right: Expression, binSize: Long)
  extends OfInterval {

  override def dataType: DataType = LongType
  override def nullable: Boolean = true
  override def prettyName: String = "RangeJoinLevelBit"

  override protected def nullSafeEval(lo: Any, hi: Any): Any = {
    val (from, to) = (BinKeys.asLong(lo), BinKeys.asLong(hi))
    if (from > to) null else 1L << BinGrid.levelOf(from, to, math.max(1L, binSize))
  }

  override protected def ofInterval(from: String, to: String): String =
    s"1L << ${BinKeys.Grid}.levelOf($from, $to, ${math.max(1L, binSize)}L)"

  override protected def withNewChildrenInternal(l: Expression, r: Expression): RangeJoinLevelBit =
    copy(left = l, right = r)
}

/**
 * The grid chosen from the data: base size 2^p for `p` from the given percentile of the intervals'
 * span exponents ([[BinGrid.baseExponent]]), and the levels their exponents fall on over that base.
 */
private[rangejoin] case class RangeJoinDataGrid(left: Expression, right: Expression)
  extends BinaryExpression with CodegenFallback {

  override def dataType: DataType = BinKeys.GridType
  override def nullable: Boolean = true
  override def prettyName: String = "RangeJoinDataGrid"

  override protected def nullSafeEval(percentile: Any, exponents: Any): Any = {
    val p = BinGrid.baseExponent(Some(percentile.asInstanceOf[Double]))
    BinKeys.grid(1L << p, BinGrid.levelMaskOfExponents(exponents.asInstanceOf[Long], p))
  }

  override protected def withNewChildrenInternal(l: Expression, r: Expression): RangeJoinDataGrid =
    copy(left = l, right = r)
}

/** The grid of a bin size given by a hint, with the levels (bit mask) that hold intervals. */
private[rangejoin] case class RangeJoinHintGrid(child: Expression, binSize: Long)
  extends UnaryExpression with CodegenFallback {

  override def dataType: DataType = BinKeys.GridType
  override def nullable: Boolean = true
  override def prettyName: String = "RangeJoinHintGrid"

  override protected def nullSafeEval(levels: Any): Any = BinKeys.grid(binSize, levels.asInstanceOf[Long])

  override protected def withNewChildInternal(c: Expression): RangeJoinHintGrid = copy(child = c)
}

/**
 * An overlap join's grid chosen from both sides' intervals: base size 2^q for `q` from the given
 * percentile of all their span exponents, widened by the sides' counts, mean lengths and key
 * range ([[BinGrid.overlapBaseExponent]]), and the levels each side's exponents fall on over it.
 * Children: percentile, left and right exponent masks, left and right interval counts, left and
 * right summed lengths, smallest start, largest end. NULL when the percentile or a mask is (a
 * side without intervals: nothing matches).
 */
private[rangejoin] case class RangeJoinOverlapDataGrid(children: Seq[Expression])
  extends Expression with CodegenFallback {

  override def dataType: DataType = BinKeys.OverlapGridType
  override def nullable: Boolean = true
  override def prettyName: String = "RangeJoinOverlapDataGrid"

  override def eval(input: InternalRow): Any = {
    val v = children.map(_.eval(input))
    if (v.take(3).contains(null)) return null
    def long(i: Int) = if (v(i) == null) 0L else v(i).asInstanceOf[Long]
    def double(i: Int) = if (v(i) == null) Double.NaN else v(i).asInstanceOf[Double]
    val domain = if (v(7) == null || v(8) == null) Double.NaN else long(8).toDouble - long(7).toDouble
    val p = BinGrid.baseExponent(Some(v(0).asInstanceOf[Double]))
    val q = BinGrid.overlapBaseExponent(p, long(3), long(4), double(5), double(6), domain)
    BinKeys.overlapGrid(1L << q,
      BinGrid.levelMaskOfExponents(v(1).asInstanceOf[Long], q),
      BinGrid.levelMaskOfExponents(v(2).asInstanceOf[Long], q))
  }

  override protected def withNewChildrenInternal(c: IndexedSeq[Expression]): RangeJoinOverlapDataGrid =
    copy(children = c)
}

/** `hi - lo` in floating point (no overflow); NULL for a NULL bound or an inverted interval. */
private[rangejoin] case class RangeJoinSpanLength(left: Expression, right: Expression)
  extends OfInterval {

  override def dataType: DataType = DoubleType
  override def nullable: Boolean = true
  override def prettyName: String = "RangeJoinSpanLength"

  override protected def nullSafeEval(lo: Any, hi: Any): Any = {
    val (from, to) = (BinKeys.asLong(lo), BinKeys.asLong(hi))
    if (from > to) null else to.toDouble - from.toDouble
  }

  override protected def ofInterval(from: String, to: String): String = s"(double) $to - (double) $from"

  override protected def withNewChildrenInternal(l: Expression, r: Expression): RangeJoinSpanLength =
    copy(left = l, right = r)
}

/** A bin key ([[BinKeys]]) as the long it bins as. */
private[rangejoin] case class RangeJoinKeyAsLong(child: Expression) extends UnaryExpression {

  override def dataType: DataType = LongType
  override def prettyName: String = "RangeJoinKeyAsLong"

  override protected def nullSafeEval(value: Any): Any = BinKeys.asLong(value)

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode =
    defineCodeGen(ctx, ev, v => s"(long) $v")

  override protected def withNewChildInternal(c: Expression): RangeJoinKeyAsLong = copy(child = c)
}

/** An overlap join's grid of a bin size given by a hint, with the levels each side's intervals are on. */
private[rangejoin] case class RangeJoinOverlapHintGrid(left: Expression, right: Expression, binSize: Long)
  extends BinaryExpression with CodegenFallback {

  override def dataType: DataType = BinKeys.OverlapGridType
  override def nullable: Boolean = true
  override def prettyName: String = "RangeJoinOverlapHintGrid"

  override protected def nullSafeEval(leftLevels: Any, rightLevels: Any): Any =
    BinKeys.overlapGrid(binSize, leftLevels.asInstanceOf[Long], rightLevels.asInstanceOf[Long])

  override protected def withNewChildrenInternal(l: Expression, r: Expression): RangeJoinOverlapHintGrid =
    copy(left = l, right = r)
}
