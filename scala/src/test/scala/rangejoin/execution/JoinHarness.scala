package rangejoin.execution

import scala.util.Random

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.optimizer.{BuildRight, BuildSide}
import org.apache.spark.sql.catalyst.plans._
import org.apache.spark.sql.execution.metric.SQLMetric
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.{BooleanType, IntegerType, StringType}
import org.apache.spark.unsafe.types.UTF8String

import rangejoin.execution.TestSupport._
import rangejoin.condition.{IndexSpec, RangeCondition, RangeOp, RangePredicate}
import rangejoin.execution.index.SortedBuffer
import rangejoin.execution.driver.{JoinSemantics, JoinSpec, Matches, RowEmit}
/**
 * Drives JoinSpec as PiecewiseMergeJoinExec wires it, on rows given in the test, and defines each
 * join type by a naive nested loop to compare with. Two integer columns a side: a nullable key
 * and an id.
 */
object JoinHarness {

  val lk = AttributeReference("lk", IntegerType, nullable = true)()
  val lid = AttributeReference("lid", IntegerType, nullable = false)()
  val rk = AttributeReference("rk", IntegerType, nullable = true)()
  val rid = AttributeReference("rid", IntegerType, nullable = false)()
  val existsFlag = AttributeReference("exists", BooleanType, nullable = false)()
  val left = Seq(lk, lid)
  val right = Seq(rk, rid)

  /** A row of either side: a key (None for NULL) and an id unique within its side. */
  final case class Rec(key: Option[Int], id: Int) {
    def values: Seq[Any] = Seq(key.map(Int.box).orNull, id)
  }

  /** A residual as the join evaluates it, and as the naive join does. */
  final case class Residual(name: String, expression: Expression, holds: (Rec, Rec) => Boolean)

  val residuals: Seq[Option[Residual]] = Seq(
    None,
    Some(Residual("(lid + rid) % 3 <> 0",
      Not(EqualTo(Remainder(Add(lid, rid), Literal(3)), Literal(0))), (l, r) => (l.id + r.id) % 3 != 0)),
    Some(Residual("lid < rid", LessThan(lid, rid), (l, r) => l.id < r.id)),
    Some(Residual("false", Literal(false), (_, _) => false)))

  val allJoinTypes: Seq[JoinType] =
    Seq(Inner, Cross, LeftOuter, RightOuter, FullOuter, LeftSemi, LeftAnti, ExistenceJoin(existsFlag))

  def naiveHolds(op: RangeOp, x: Option[Int], y: Option[Int]): Boolean = (x, y) match {
    case (Some(a), Some(b)) => op match {
      case RangeOp.Lt => a < b
      case RangeOp.Le => a <= b
      case RangeOp.Gt => a > b
      case RangeOp.Ge => a >= b
    }
    case _ => false
  }

  /** The join type's definition, as a nested loop over every pair. */
  def naiveJoin(joinType: JoinType, ls: Seq[Rec], rs: Seq[Rec], matches: (Rec, Rec) => Boolean): Seq[Seq[Any]] = {
    val nulls = Seq(null, null)
    val pairs = for (l <- ls; r <- rs if matches(l, r)) yield l.values ++ r.values
    def leftMatched(l: Rec) = rs.exists(matches(l, _))
    def rightMatched(r: Rec) = ls.exists(matches(_, r))
    val leftAlone = ls.filterNot(leftMatched).map(_.values ++ nulls)
    val rightAlone = rs.filterNot(rightMatched).map(nulls ++ _.values)
    joinType match {
      case Inner | Cross => pairs
      case LeftOuter => pairs ++ leftAlone
      case RightOuter => pairs ++ rightAlone
      case FullOuter => pairs ++ leftAlone ++ rightAlone
      case LeftSemi => ls.filter(leftMatched).map(_.values)
      case LeftAnti => ls.filterNot(leftMatched).map(_.values)
      case ExistenceJoin(_) => ls.map(l => l.values :+ leftMatched(l))
      case other => throw new IllegalArgumentException(s"no naive definition of $other")
    }
  }

  def outputOf(joinType: JoinType): Seq[Attribute] = {
    def nullable(as: Seq[Attribute]) = as.map(_.withNullability(true))
    joinType match {
      case Inner | Cross => left ++ right
      case LeftOuter => left ++ nullable(right)
      case RightOuter => nullable(left) ++ right
      case FullOuter => nullable(left ++ right)
      case LeftSemi | LeftAnti => left
      case ExistenceJoin(flag) => left :+ flag
      case other => throw new IllegalArgumentException(s"no output for $other")
    }
  }

  def scalaValues(output: Seq[Attribute])(row: InternalRow): Seq[Any] =
    output.indices.map(i => valueAt(row, i, output(i).dataType))

  def toRows(recs: Seq[Rec]): Seq[InternalRow] = unsafeRows(Seq(IntegerType, IntegerType), recs.map(_.values))

  /** A join as PiecewiseMergeJoinExec wires it, without a plan: passes over streamed partitions. */
  final case class DriverJoin(
      joinType: JoinType, buildSide: BuildSide, op: RangeOp, residual: Option[Residual], keyFails: Boolean) {

    val semantics: JoinSemantics = JoinSemantics(joinType, buildSide).get
    val streamedIsLeft = buildSide == BuildRight
    val output = outputOf(joinType)
    val range = comparison(op, lk, rk)

    val spec: JoinSpec = JoinSpec(
      semantics,
      // `range` compares lk with rk, lk first
      index = IndexSpec.of(RangeCondition(Seq(RangePredicate(lk, op, rk, leftKeyFirst = true)), None)
        .oriented(streamedIsLeft)),
      residual = residual.map(_.expression),
      condition = residual.fold(range)(r => And(range, r.expression)),
      left = left,
      right = right,
      output = output,
      exists = joinType match {
        case ExistenceJoin(flag) => Some(flag)
        case _ => None
      },
      streamedIsLeft = streamedIsLeft)

    /** The broadcast payload of the buffered rows; with `keyFails`, the key raises on any row. */
    def payload(buffered: Seq[InternalRow]): SortedBuffer = {
      val key =
        if (keyFails) Cast(Literal(UTF8String.fromString("not a number"), StringType), IntegerType, None, EvalMode.ANSI)
        else BindReferences.bindReference[Expression](if (streamedIsLeft) rk else lk, if (streamedIsLeft) right else left)
      val built = SortedBuffer.build(buffered.toArray, key, keepOrigins = spec.replaysInSparkOrder)
      assert(built.isSorted == (!keyFails || buffered.isEmpty))
      built
    }

    def run(ls: Seq[Rec], rs: Seq[Rec], partitions: Int): Seq[Seq[Any]] = {
      val (streamed, buffered) = if (streamedIsLeft) (ls, rs) else (rs, ls)
      val shipped = payload(toRows(buffered))
      val streamedRows = toRows(streamed)
      val examined = new SQLMetric("sum")
      val parts = (0 until partitions).map { p =>
        streamedRows.slice(streamedRows.length * p / partitions, streamedRows.length * (p + 1) / partitions)
      }
      val streamedOutput =
        if (!semantics.streamedPassEmits) Nil
        else parts.zipWithIndex.flatMap { case (rows, index) =>
          spec.streamedPass(rows.iterator, shipped, index, marks = None, examined).map(scalaValues(output)).toList
        }
      // Every pair output was examined as a candidate first.
      if (semantics.emitsPairs && semantics.streamed == RowEmit.Never) {
        assert(examined.value >= streamedOutput.size, s"${examined.value} candidates, ${streamedOutput.size} pairs")
      }
      val bufferedOutput =
        if (!semantics.needsBufferedMatches) Nil
        else {
          val perPartition = parts.zipWithIndex.map { case (rows, index) =>
            val marks = new Matches
            assert(spec.streamedPass(rows.iterator, shipped, index, Some(marks), examined).isEmpty, "the marking pass emits nothing")
            javaRoundTrip(marks)
          }
          val merged = perPartition.foldLeft(new Matches)(_.merge(_))
          val numRows = shipped.numRows
          // Two slices, as emitBuffered cuts the buffer, and one past the end.
          Seq((0, numRows / 2), (numRows / 2, numRows), (numRows, numRows + 5)).flatMap { case (from, until) =>
            spec.bufferedPass(shipped, from, until, merged).map(scalaValues(output)).toList
          }
        }
      streamedOutput ++ bufferedOutput
    }

    def expected(ls: Seq[Rec], rs: Seq[Rec]): Seq[Seq[Any]] =
      naiveJoin(joinType, ls, rs, (l, r) => naiveHolds(op, l.key, r.key) && residual.forall(_.holds(l, r)))

    override def toString: String =
      s"$joinType $buildSide, lk $op rk${residual.map(r => s" AND ${r.name}").getOrElse("")}" +
        (if (keyFails) ", buffer left unsorted" else "")
  }

  def randomSide(rnd: Random, maxSize: Int, nullShare: Double, idBase: Int): Seq[Rec] =
    Seq.tabulate(rnd.nextInt(maxSize + 1)) { i =>
      Rec(if (rnd.nextDouble() < nullShare) None else Some(rnd.nextInt(6)), idBase + i)
    }

  def sameRows(actual: Seq[Seq[Any]], expected: Seq[Seq[Any]]): Boolean = {
    def counts(rows: Seq[Seq[Any]]) = rows.groupBy(identity).map { case (row, same) => row -> same.size }
    counts(actual) == counts(expected)
  }

  /** Interpreted projections: the same semantics as generated code, without compiling each time. */
  def interpreted[T](body: => T): T = {
    val conf = new SQLConf
    conf.setConfString(SQLConf.CODEGEN_FACTORY_MODE.key, "NO_CODEGEN")
    SQLConf.withExistingConf(conf)(body)
  }

  def show(rows: Seq[Seq[Any]]): String = rows.map(_.mkString("(", ",", ")")).sortBy(identity).mkString(" ")
}
