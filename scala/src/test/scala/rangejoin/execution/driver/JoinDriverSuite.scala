package rangejoin.execution.driver

import scala.util.Random

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{GenericInternalRow, UnsafeProjection}
import org.apache.spark.sql.catalyst.optimizer.{BuildLeft, BuildRight}
import org.apache.spark.sql.catalyst.plans._
import org.apache.spark.sql.execution.metric.SQLMetric
import org.apache.spark.sql.types.{DataType, IntegerType}
import org.scalatest.funsuite.AnyFunSuite

import rangejoin.condition.RangeOp
import rangejoin.differential.SharedAcrossSmokeLines
import rangejoin.execution.JoinHarness
import rangejoin.TestShims

/**
 * The core proof that one driver gets every join type right: for every (join type, build side)
 * JoinSemantics supports, every RangeOp, with no residual and with residuals, the output of
 * JoinSpec's streamed pass (per streamed partition) plus, where the buffered side emits rows of
 * its own, the marking pass merged over partitions and the buffered pass, equals the output of a
 * naive nested-loop join written here from the join type's definition. Inputs are small and
 * random (NULL keys, duplicates, empty sides), against a sorted buffer and against one left
 * unsorted because its key failed. Also: the streamed pass pulls streamed rows only as its output
 * is consumed.
 */
class JoinDriverSuite extends AnyFunSuite with SharedAcrossSmokeLines {

  import JoinHarness._

  // Every join type JoinSemantics supports.
  private val joinTypes = allJoinTypes

  private val trials = 6

  for (joinType <- joinTypes; buildSide <- Seq(BuildLeft, BuildRight)) {
    test(s"agrees with a nested-loop join: $joinType, $buildSide") {
      assert(JoinSemantics(joinType, buildSide).isDefined)
      val rnd = new Random(s"$joinType $buildSide".hashCode)
      for (op <- RangeOp.all; residual <- residuals; keyFails <- Seq(false, true)) {
        val join = DriverJoin(joinType, buildSide, op, residual, keyFails)
        for (trial <- 0 until trials) {
          val nullShare = Seq(0.0, 0.2, 0.5, 1.0)(trial % 4)
          val ls = randomSide(rnd, 12, nullShare, idBase = 0)
          val rs = randomSide(rnd, 12, nullShare, idBase = 100)
          val partitions = 1 + rnd.nextInt(3)
          // Generated code once per join shape, interpreted for the other trials.
          val actual = if (trial == 0) join.run(ls, rs, partitions) else interpreted(join.run(ls, rs, partitions))
          val expected = join.expected(ls, rs)
          assert(sameRows(actual, expected),
            s"$join, $partitions streamed partitions\n  left  $ls\n  right $rs\n" +
              s"  got      ${show(actual)}\n  expected ${show(expected)}")
        }
      }
    }
  }

  test("hand-picked inputs: empty sides, all keys NULL, all keys equal") {
    val inputs: Seq[(String, Seq[Rec], Seq[Rec])] = Seq(
      ("both empty", Nil, Nil),
      ("left empty", Nil, Seq(Rec(Some(1), 100))),
      ("right empty", Seq(Rec(Some(1), 0)), Nil),
      ("all NULL", Seq(Rec(None, 0), Rec(None, 1)), Seq(Rec(None, 100))),
      ("all equal", Seq(Rec(Some(3), 0), Rec(Some(3), 1)), Seq(Rec(Some(3), 100), Rec(Some(3), 101))),
      ("one NULL side", Seq(Rec(Some(3), 0)), Seq(Rec(None, 100), Rec(None, 101))))
    interpreted {
      for (joinType <- joinTypes; buildSide <- Seq(BuildLeft, BuildRight); op <- RangeOp.all;
           residual <- residuals.take(2); (name, ls, rs) <- inputs) {
        val join = DriverJoin(joinType, buildSide, op, residual, keyFails = false)
        val (actual, expected) = (join.run(ls, rs, partitions = 1), join.expected(ls, rs))
        assert(sameRows(actual, expected), s"$join on $name: got ${show(actual)}, expected ${show(expected)}")
      }
    }
  }

  test("JoinSemantics declines what the driver does not handle") {
    for (buildSide <- Seq(BuildLeft, BuildRight)) {
      for (joinType <- TestShims.newerJoinTypes) assert(JoinSemantics(joinType, buildSide).isEmpty)
    }
  }

  /** Streamed rows produced on demand, counting how many were pulled. */
  private final class CountingRows(recs: Iterator[Rec]) extends Iterator[InternalRow] {
    var pulled = 0
    private val toUnsafe = UnsafeProjection.create(Array[DataType](IntegerType, IntegerType))
    def hasNext: Boolean = recs.hasNext
    def next(): InternalRow = {
      pulled += 1
      toUnsafe(new GenericInternalRow(recs.next().values.toArray))
    }
  }

  test("the streamed pass pulls streamed rows only as its output is consumed") {
    val streamedCount = 1000000
    def streamedRec(i: Int) = Rec(if (i % 7 == 0) None else Some(i % 9), i)
    val buffered = Seq.tabulate(6)(i => Rec(Some(i + 2), 100 + i))
    for (joinType <- joinTypes; buildSide <- Seq(BuildLeft, BuildRight); residual <- residuals.take(2)) {
      val join = DriverJoin(joinType, buildSide, RangeOp.Lt, residual, keyFails = false)
      val streamedIsLeft = buildSide == BuildRight
      // The fewest streamed rows whose own output reaches n rows.
      def needed(n: Int): Int = Iterator.from(0)
        .scanLeft(0)((sum, i) => sum + streamedOutputsOf(join, streamedIsLeft, streamedRec(i), buffered))
        .indexWhere(_ >= n)
      if (join.semantics.streamedPassEmits) {
        val rows = new CountingRows(Iterator.range(0, streamedCount).map(streamedRec))
        val out = join.spec.streamedPass(rows, join.payload(toRows(buffered)), 0, marks = None, new SQLMetric("sum"))
        val taken = 10
        out.take(taken).foreach(_ => ())
        assert(rows.pulled == needed(taken), s"$join: $taken output rows taken")
        assert(out.hasNext && out.hasNext)
        assert(rows.pulled == needed(taken + 1), s"$join: hasNext looks only as far as the next output row")
      }
    }
  }

  /**
   * How many rows the streamed pass outputs for streamed row `s`, by the join type's definition:
   * its passing pairs where pairs are output, and itself alone where its side is preserved (outer),
   * filtered (semi, anti) or flagged (existence).
   */
  private def streamedOutputsOf(join: DriverJoin, streamedIsLeft: Boolean, s: Rec, buffered: Seq[Rec]): Int = {
    def passes(b: Rec) =
      if (streamedIsLeft) naiveHolds(join.op, s.key, b.key) && join.residual.forall(_.holds(s, b))
      else naiveHolds(join.op, b.key, s.key) && join.residual.forall(_.holds(b, s))
    val matched = buffered.count(passes)
    def unless(condition: Boolean) = if (condition) 0 else 1
    join.joinType match {
      case Inner | Cross => matched
      case LeftOuter if streamedIsLeft => matched + unless(matched > 0)
      case RightOuter if !streamedIsLeft => matched + unless(matched > 0)
      case FullOuter => matched + unless(matched > 0)
      case LeftOuter | RightOuter => matched
      case LeftSemi if streamedIsLeft => 1 - unless(matched > 0)
      case LeftAnti if streamedIsLeft => unless(matched > 0)
      case ExistenceJoin(_) if streamedIsLeft => 1
      case _ => 0
    }
  }
}
