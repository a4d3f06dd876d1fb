package rangejoin.execution.index

import org.apache.spark.sql.catalyst.InternalRow

/**
 * A single inequality's candidates for a join that any one passing candidate decides (semi,
 * anti, existence, with a residual): candidates at fixed distances from the run's fixed end
 * first, then the rest.
 * {{{
 *   window  [ .  .  .  .  .  .  .  .  .  . |b .  .  .  .  .  .  .  .  .  .  .  .  .  .  . ]
 *                                      tries:  t5          t4          t3    t2    t1 t0
 *   suffix run [b, until): try the positions until - 1, until - 2, until - 4, ... while they are
 *   candidates (one comparison each, no search); a try that is not one bounds b between it and
 *   the try before; then b's search, in that gap only, and the rest of the run
 * }}}
 * The fixed end of a suffix run is the window's last position, of a prefix its first, so without
 * equality keys the tried positions are the same for every streamed row, and in cache, where the
 * steps of a search over a large buffer miss it. Where the residual passes often (W2's SEMI+residual: 1 candidate
 * in 3), a few tries decide most rows and the search is never made; spread out, the tries are
 * not neighbours, whose keys (and so the residual's answer) are often alike. Each candidate is
 * found once; the order differs from a run's, which only a residual that raises could tell, and
 * such a row is replayed in stock Spark's order whatever the finder's (driver.SparkOrder).
 *
 * Where the residual seldom passes, the tries are work before the search: over a block of rows
 * most of which the tries did not decide, the finder searches first for the next blocks, then
 * tries again.
 */
private[rangejoin] final class FixedEndFirstFinder(run: SortedRunFinder) extends CandidateFinder {
  import FixedEndFirstFinder._

  private[this] var state = Done
  // Positions at distance 1, 2, 4, ... 2^(tried - 1) from the fixed end have been found.
  private[this] var tried = 0
  private[this] var pos = 0
  private[this] var end = 0

  // The block's rows, and those the tries did not decide (searched after them).
  private[this] var rows = 0
  private[this] var missed = 0
  private[this] var pausedBlocks = 0

  override def find(streamed: InternalRow): Unit = {
    rows += 1
    if (rows == Block) endBlock()
    tried = 0
    if (!run.load(streamed)) state = Done
    else if (pausedBlocks > 0) {
      run.searchLoaded()
      walk()
    } else state = Trying
  }

  private def endBlock(): Unit = {
    if (pausedBlocks > 0) pausedBlocks -= 1
    else if (missed * 2 > Block) pausedBlocks = PausedBlocks
    rows = 0
    missed = 0
  }

  /** The window position at `distance` (1: the fixed end itself) from the fixed end. */
  private def at(distance: Int): Int =
    if (run.runIsSuffix) run.windowUntil - distance else run.windowFrom + distance - 1

  override def next(): Int = state match {
    case Trying =>
      val p = at(1 << tried)
      if (p >= run.windowFrom && p < run.windowUntil && run.isCandidate(p)) {
        tried += 1
        if (tried == Tries) {
          // Every try a candidate: the boundary lies beyond the last, anywhere in the window.
          run.searchLoaded()
          walk()
        }
        p
      } else {
        // Not a candidate (or past the window): the boundary lies between p and the last try.
        if (tried == 0) {
          state = Done
          -1
        } else {
          val last = at(1 << (tried - 1))
          if (run.runIsSuffix) run.searchLoadedWithin(math.max(p + 1, run.windowFrom), last)
          else run.searchLoadedWithin(last + 1, math.min(p, run.windowUntil))
          walk()
          next()
        }
      }
    case Walking =>
      while (pos < end && isTried(pos)) pos += 1
      if (pos < end) {
        pos += 1
        pos - 1
      } else {
        state = Done
        -1
      }
    case _ => -1
  }

  /** Walks the run, past the positions tried; after tries, the row was not decided by them. */
  private def walk(): Unit = {
    if (tried > 0) missed += 1
    pos = run.from
    end = run.until
    state = Walking
  }

  private def isTried(p: Int): Boolean = {
    val distance = if (run.runIsSuffix) run.windowUntil - p else p - run.windowFrom + 1
    distance < (1 << tried) && (distance & (distance - 1)) == 0
  }

  override def isRun: Boolean = false
  override def runFrom: Int = throw new UnsupportedOperationException("the candidates are not one run")
  override def runUntil: Int = throw new UnsupportedOperationException("the candidates are not one run")
}

private[rangejoin] object FixedEndFirstFinder {
  private final val Trying = 0
  private final val Walking = 1
  private final val Done = 2

  /** Positions tried before a search: distances 1, 2, 4, ... 2^(Tries - 1) from the fixed end. */
  val Tries = 12
  /** Rows per decision whether to try first. */
  val Block = 256
  /** Blocks searched first after one where the tries decided at most half the rows. */
  val PausedBlocks = 16
}
