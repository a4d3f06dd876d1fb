package rangejoin.execution.index

import org.apache.spark.sql.catalyst.InternalRow

import rangejoin.condition.{LongEncoder, RangeOp}

/**
 * Finds, for one streamed row, the buffered rows that may satisfy the join condition, by their
 * positions in the buffer: `find` once per streamed row, then `next()` until it returns -1. Its
 * contract with [[StreamedJoinIterator]]: every buffered row that satisfies the condition with the
 * streamed row is found, once, and every row found satisfies it once the residual (if any) holds.
 *
 * Where the candidates are one run of positions [runFrom, runUntil) (`isRun`), the driver may
 * use the run as a whole: to decide a row, or mark every candidate, in O(1).
 */
private[rangejoin] abstract class CandidateFinder {

  /** Positions the search for `streamed`. */
  def find(streamed: InternalRow): Unit

  /** The next candidate's position, or -1 when there is none. */
  def next(): Int

  /** Whether the last `find`'s candidates are the run [runFrom, runUntil). */
  def isRun: Boolean

  def runFrom: Int

  def runUntil: Int
}

/** A finder whose candidates are always one run: `next()` walks it. */
private[rangejoin] abstract class RunFinder extends CandidateFinder {
  protected var start = 0
  protected var end = 0
  private[this] var pos = 0

  /** Sets the run for `streamed` into `start` and `end`. */
  protected def locate(streamed: InternalRow): Unit

  final override def find(streamed: InternalRow): Unit = {
    locate(streamed)
    pos = start
  }

  final override def next(): Int =
    if (pos < end) {
      pos += 1
      pos - 1
    } else -1

  final override def isRun: Boolean = true
  final override def runFrom: Int = start
  final override def runUntil: Int = end
}

/**
 * The piecewise merge join's finder: the streamed key's run in the sorted buffered keys, found by
 * binary search. `op` reads `streamed op buffered`; the streamed key is field `keyOrdinal` of
 * `streamedKey(row)` (a projection, or the row itself when the key is one of its columns).
 *
 * `probe` is false when Spark would not evaluate the streamed key at all (no buffered row to
 * pair it with): the key is then not evaluated either, so an expression that could raise an
 * error on this row does not.
 */
private[rangejoin] final class SortedRunFinder(
    keys: SortedKeys,
    op: RangeOp,
    streamedKey: InternalRow => InternalRow,
    keyOrdinal: Int,
    probe: Boolean) extends RunFinder {

  /** Whether the run is a suffix of the window (buffered keys above the streamed one), else a prefix. */
  val runIsSuffix: Boolean = op == RangeOp.Lt || op == RangeOp.Le
  private[this] val boundaryIncludesEqual = op == RangeOp.Le || op == RangeOp.Gt

  override protected def locate(streamed: InternalRow): Unit =
    if (load(streamed)) searchLoaded() else {
      start = 0
      end = 0
    }

  /** Loads the streamed row's key; false when it has no candidates (a NULL key, or no probe). */
  def load(streamed: InternalRow): Boolean = probe && keys.load(streamedKey(streamed), keyOrdinal)

  /** The run of the key [[load]] loaded: the binary search for its boundary. */
  def searchLoaded(): Unit = setRun(keys.boundary(boundaryIncludesEqual))

  /** As [[searchLoaded]], where the caller knows the boundary is in [lo, hi] (hi: none of [lo, hi) above). */
  def searchLoadedWithin(lo: Int, hi: Int): Unit = setRun(keys.firstAboveIn(lo, hi, boundaryIncludesEqual))

  private def setRun(boundary: Int): Unit =
    if (runIsSuffix) {
      start = boundary
      end = keys.until
    } else {
      start = keys.from
      end = boundary
    }

  /** Whether position i of the window is a candidate of the loaded key: one comparison, no search. */
  def isCandidate(i: Int): Boolean = keys.isAbove(i, boundaryIncludesEqual) == runIsSuffix

  /** The window the run is in: [windowFrom, windowUntil). */
  def windowFrom: Int = keys.from
  def windowUntil: Int = keys.until

  /** The run's first position: what the old contiguous-run contract called `from`. */
  def from: Int = start

  def until: Int = end
}

/** Every buffered row is a candidate: the nested-loop finder, for an unsorted buffer. */
private[rangejoin] final class EveryRowFinder(numRows: Int) extends RunFinder {
  override protected def locate(streamed: InternalRow): Unit = {
    start = 0
    end = numRows
  }
}

/**
 * A band on one buffered key (`b.t >= s.lo AND b.t < s.hi`): the run between two binary searches
 * of the sorted keys. `lowerOp` reads `streamed op buffered` and bounds the buffered key from below
 * (Lt, Le), `upperOp` from above (Gt, Ge); `probes(row)` holds the lower bound's streamed key in
 * field 0 and the upper bound's in field 1. Two searches over one set of keys, each with its own
 * probe. `probe` is as for [[SortedRunFinder]].
 */
private[rangejoin] final class BandRunFinder(
    lowerKeys: SortedKeys,
    lowerOp: RangeOp,
    upperKeys: SortedKeys,
    upperOp: RangeOp,
    probes: InternalRow => InternalRow,
    probe: Boolean) extends RunFinder {

  override protected def locate(streamed: InternalRow): Unit = {
    start = 0
    end = 0
    if (probe) {
      val p = probes(streamed)
      if (lowerKeys.load(p, 0) && upperKeys.load(p, 1)) {
        start = lowerKeys.boundary(lowerOp == RangeOp.Le)
        end = math.max(start, upperKeys.boundary(upperOp == RangeOp.Gt))
      }
    }
  }
}

/**
 * A band on two buffered keys (`s.x >= b.lo AND s.x < b.hi`, overlapping intervals): the buffer is
 * sorted by the key bounded from above and keeps the other key, bounded from below, in an
 * [[IntervalTree]]. The rows before the upper bound's boundary whose other key passes the lower
 * bound are every match, found in O(log n + k):
 * {{{
 *   s.x = 7, condition b.lo <= s.x AND b.hi > s.x
 *   sorted by lo:    lo  1   2   4   6   8   9
 *                    hi  3  12   5   9  10  11
 *   lo <= 7: prefix  [1   2   4   6]           one binary search
 *   hi > 7 in it:        2       6             the tree skips subtrees whose largest hi <= 7
 * }}}
 * Where the tree key ascends with the sorted one (intervals of one length: `b.hi = b.lo + 50`),
 * the matches are a run, and a second binary search over the tree key finds its start.
 * `upperOp` (Gt, Ge) reads `streamed op sorted key`, `lowerOp` (Lt, Le) `streamed op tree key`;
 * `probes(row)` holds the lower bound's streamed key in field 0 (read as a long with
 * `encodeLower`) and the upper bound's in field 1.
 */
private[rangejoin] final class IntervalFinder(
    upperKeys: SortedKeys,
    upperOp: RangeOp,
    lowerOp: RangeOp,
    encodeLower: LongEncoder,
    tree: IntervalTree,
    probes: InternalRow => InternalRow,
    probe: Boolean) extends CandidateFinder {

  private[this] val cursor = tree.cursor()
  // Second keys ascending with the sorted ones: every search's matches are one run, found by a
  // second binary search (see IntervalTree.ascending). [runStart, runEnd) the last one, runNext
  // the next position next() returns from it.
  private[this] val ascending = tree.ascending
  private[this] var runStart = 0
  private[this] var runEnd = 0
  private[this] var runNext = 0
  private[this] val upperOrEqual = upperOp == RangeOp.Gt
  private[this] val inclusive = lowerOp == RangeOp.Le
  private[this] var searching = false
  // A window of a few positions (a tiny key group) is tested position by position, both keys
  // at once: their reads do not wait on each other, where the search reads the sorted keys
  // first and only then the tree's. The positions [shortNext, shortUntil) left to test.
  private[this] var shortNext = 0
  private[this] var shortUntil = 0
  private[this] var lower = 0L

  override def find(streamed: InternalRow): Unit = {
    searching = false
    shortNext = 0
    shortUntil = 0
    runStart = 0
    runEnd = 0
    if (probe) {
      val p = probes(streamed)
      if (!p.isNullAt(0) && upperKeys.load(p, 1)) {
        lower = encodeLower(p, 0)
        if (ascending) {
          runEnd = upperKeys.boundary(upperOrEqual)
          runStart = tree.firstPassing(upperKeys.from, runEnd, lower, inclusive)
          runNext = runStart
        } else if (upperKeys.until - upperKeys.from <= IntervalFinder.ShortWindow) {
          shortNext = upperKeys.from
          shortUntil = upperKeys.until
        } else {
          cursor.start(upperKeys.from, upperKeys.boundary(upperOrEqual), lower, inclusive)
          searching = true
        }
      }
    }
  }

  override def next(): Int = {
    if (runNext < runEnd) {
      runNext += 1
      return runNext - 1
    }
    while (shortNext < shortUntil) {
      val i = shortNext
      shortNext += 1
      if (!upperKeys.isAbove(i, upperOrEqual) && tree.passes(i, lower, inclusive)) return i
    }
    if (searching) cursor.next() else -1
  }

  override def isRun: Boolean = ascending
  override def runFrom: Int = runStart
  override def runUntil: Int = runEnd
}

private[rangejoin] object IntervalFinder {
  /** A window of at most this many positions is tested position by position, not searched. */
  val ShortWindow = 4
}

/**
 * The per-key index's finder: the streamed row's equality key picks its segment of the buffer
 * ([[KeyGroups]]), and `within` (any finder above, over `windows`, the sorted keys it searches)
 * searches that segment alone. A row whose key no buffered row has is settled by the lookup:
 * its range keys are not even read.
 * {{{
 *   streamed (chr2, x = 3)  ->  lookup chr2: segment [4, 6)  ->  within.find in keys(4 until 6)
 * }}}
 * `probe` is as for [[SortedRunFinder]]; `segmentOf` looks the streamed row's equality key's
 * segment up (empty: no buffered row has it).
 */
private[rangejoin] final class PerKeyFinder(
    segmentOf: SegmentOf,
    windows: Array[SortedKeys],
    within: CandidateFinder,
    probe: Boolean) extends CandidateFinder {

  private[this] var empty = true

  override def find(streamed: InternalRow): Unit = {
    val segment = if (probe) segmentOf(streamed) else KeyGroups.Empty
    val from = KeyGroups.from(segment)
    val until = KeyGroups.until(segment)
    empty = from == until
    if (!empty) {
      var i = 0
      while (i < windows.length) {
        windows(i).restrict(from, until)
        i += 1
      }
      within.find(streamed)
    }
  }

  override def next(): Int = if (empty) -1 else within.next()

  override def isRun: Boolean = empty || within.isRun
  override def runFrom: Int = if (empty) 0 else within.runFrom
  override def runUntil: Int = if (empty) 0 else within.runUntil
}
