package rangejoin.execution.driver

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import rangejoin.differential.SharedAcrossSmokeLines
import rangejoin.execution.TestSupport._

/**
 * Matches marks exactly what a naive Set[Int] model marks, over random sequences of markRun,
 * mark and merge: runs at either end as the finders produce them, runs anywhere (touching the
 * interval or not), empty runs, merges of empty and non-empty marks, and marks that went through
 * Java or Kryo serialization in between (as the per-task marks travel to the driver).
 */
class MatchesSuite extends AnyFunSuite with SharedAcrossSmokeLines {

  private val positions = 64

  /** A Matches and its model, changed together. */
  private final class Tracked(var matches: Matches, var model: Set[Int]) {
    def check(context: => String): Unit =
      for (i <- 0 until positions + 8) {
        assert(matches.isMarked(i) == model(i), s"$context: isMarked($i) should be ${model(i)}")
      }
  }

  private def tracked() = new Tracked(new Matches, Set.empty)

  /** Runs as a finder makes them: from one end of [0, size). */
  private def endRun(rnd: Random, size: Int): (Int, Int) = {
    val boundary = rnd.nextInt(size + 1)
    if (rnd.nextBoolean()) (0, boundary) else (boundary, size)
  }

  private def anyRun(rnd: Random): (Int, Int) = (rnd.nextInt(positions), rnd.nextInt(positions))

  private def randomOps(rnd: Random, t: Tracked, steps: Int, endRunsOnly: Boolean, nested: Boolean): Unit =
    for (step <- 0 until steps) {
      rnd.nextInt(if (nested) 4 else 3) match {
        case 0 =>
          val (from, until) = if (endRunsOnly) endRun(rnd, positions) else anyRun(rnd)
          t.matches.markRun(from, until)
          t.model ++= (from until until)
        case 1 =>
          val i = rnd.nextInt(positions)
          t.matches.mark(i)
          t.model += i
        case 2 if rnd.nextInt(4) == 0 =>
          t.matches = javaRoundTrip(t.matches)
        case 2 =>
          ()
        case _ =>
          // Another task's marks: often empty, otherwise built the same way.
          val other = tracked()
          if (rnd.nextBoolean()) randomOps(rnd, other, rnd.nextInt(6), endRunsOnly, nested = false)
          assert(t.matches.merge(other.matches) eq t.matches, "merge returns the marks merged into")
          t.model ++= other.model
      }
      t.check(s"after step $step")
    }

  test("agrees with a set model: runs at the ends, as the finders make them") {
    val rnd = new Random(1)
    for (_ <- 0 until 300) randomOps(rnd, tracked(), steps = 20, endRunsOnly = true, nested = true)
  }

  test("agrees with a set model: runs anywhere, touching the interval or not") {
    val rnd = new Random(2)
    for (_ <- 0 until 300) randomOps(rnd, tracked(), steps = 20, endRunsOnly = false, nested = true)
  }

  test("hand-picked runs: disjoint, adjacent, contained, empty and reversed") {
    val t = tracked()
    def run(from: Int, until: Int): Unit = {
      t.matches.markRun(from, until)
      t.model ++= (from until until)
      t.check(s"after markRun($from, $until)")
    }
    run(10, 20)
    run(30, 40) // apart from [10, 20)
    run(20, 25) // adjacent: extends the interval
    run(5, 10)
    run(12, 14) // inside
    run(50, 50) // empty
    run(45, 41) // reversed: empty
    run(0, 64) // covers everything
  }

  test("merging empty marks changes nothing, either way round") {
    val t = tracked()
    t.matches.markRun(3, 9)
    t.matches.mark(40)
    t.model = (3 until 9).toSet + 40
    t.matches.merge(new Matches)
    t.check("after merging empty marks in")
    val empty = new Matches
    empty.merge(t.matches)
    new Tracked(empty, t.model).check("after merging into empty marks")
  }

  // Task results travel with spark.serializer, Java by default or Kryo.
  test("marks survive a round trip through Java and Kryo serialization") {
    val rnd = new Random(3)
    for (_ <- 0 until 100) {
      val t = tracked()
      randomOps(rnd, t, steps = 10, endRunsOnly = false, nested = true)
      for ((serializer, shipped) <- asShipped(t.matches)) {
        new Tracked(shipped, t.model).check(s"after a $serializer round trip")
      }
    }
  }
}
