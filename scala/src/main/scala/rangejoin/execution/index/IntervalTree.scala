package rangejoin.execution.index

/**
 * The interval index's search structure: positions 0 until n, sorted by their first key `a`,
 * each with a second key `b` (order-preserving longs, see [[KeyCodec]]); finds every position
 * i < p with `b(i) > lower` (or `>=`) in O(log n + k), for k positions found.
 *
 * The sorted positions are the in-order nodes of an implicit complete binary tree, as in
 * cgranges: node i sits at level k when i ends in exactly k one bits, and covers positions
 * [i - 2^k + 1, i + 2^k - 1]. Each node keeps the largest `b` of its subtree, so a whole subtree
 * whose largest `b` fails the lower bound, or that starts at or after p, is skipped at once:
 * {{{
 *   level 2                 3 (max b of 0..6)
 *   level 1         1 (0..2)            5 (4..6)
 *   level 0      0       2           4       6
 *   sorted by a: 0  1  2  3  4  5  6       p = the first position whose a fails the upper bound
 * }}}
 * Positions past n in the padded tree hold no row: they take part in the maxima as Long.MinValue
 * and are never reported.
 *
 * Most intervals are short: a point's matches sit just before p, and from the root the tree
 * would still visit about 2 log n nodes to reach them. So a search first scans back from p - 1
 * over at most [[IntervalTree.ScanWindow]] positions, stopping for good at the first position
 * whose prefix maximum of `b` fails the bound (no earlier position can pass); only if the window
 * runs out does the tree search the positions before it. Cost: O(min(k, window) + log n + k).
 *
 * Under equality keys the positions are sorted by `a` within each key's segment only, and a
 * search covers [from, p) of one segment: `segmentStarts` restarts the prefix maxima at each
 * segment, so another segment's long interval never defeats the scan, and the tree skips every
 * subtree that ends before `from` (at most log n subtrees straddle it). When no segment is longer
 * than the window (tiny key groups), no search reaches the tree, and its maxima are not built.
 */
private[rangejoin] final class IntervalTree(private val b: Array[Long], segmentStarts: Array[Int] = Array())
  extends Serializable {

  val n: Int = b.length

  /** Levels of the padded tree: 2^levels - 1 >= n nodes. */
  private val levels: Int = IntervalTree.levelsFor(n)

  private val size = ((1L << levels) - 1).toInt

  /** The segments [bounds(k), bounds(k + 1)): the whole tree when there are no segment starts. */
  private val segmentBounds: Array[Int] = IntervalTree.segmentBounds(segmentStarts, n)

  /**
   * Whether a search can reach the tree: only when some segment is longer than the scan window,
   * which otherwise covers every search (a search stays within one segment). (Not ruled out by
   * [[ascending]]: a finder then never starts a cursor, but the cursor stays usable.)
   */
  private val searchesTree: Boolean =
    IntervalTree.longestSegment(segmentBounds) > IntervalTree.ScanWindow

  /** maxB(i): the largest b in node i's subtree; not built when no search reaches the tree. */
  private val maxB: Array[Long] =
    if (searchesTree) IntervalTree.subtreeMaxima(b, levels, size) else Array()

  /** prefixMaxB(i): the largest b among positions s..i, s the start of i's segment. */
  private val prefixMaxB: Array[Long] = IntervalTree.prefixMaxima(b, segmentBounds)

  /**
   * Whether `b` ascends within every segment, as it does wherever the two keys move together
   * (`s.x >= b.k AND s.x < b.k + 500`; intervals of one length): the positions passing a lower
   * bound are then a suffix of any range, found by binary search ([[firstPassing]]), and a
   * search's matches are one run of positions, with no tree to walk.
   */
  val ascending: Boolean = IntervalTree.ascends(b, segmentBounds)

  /** Whether position i's `b` is above `lower` (at or above it when `inclusive`). */
  def passes(i: Int, lower: Long, inclusive: Boolean): Boolean = IntervalTree.passes(b(i), lower, inclusive)

  /**
   * The first position in [from, until) whose `b` passes the lower bound, `until` if none does;
   * only where `b` is [[ascending]] (within the one segment [from, until) lies in).
   */
  def firstPassing(from: Int, until: Int, lower: Long, inclusive: Boolean): Int = {
    var lo = from
    var hi = until
    while (lo < hi) {
      val mid = (lo + hi) >>> 1
      if (IntervalTree.passes(b(mid), lower, inclusive)) hi = mid else lo = mid + 1
    }
    lo
  }

  /** A search over this tree; one per task (it keeps its traversal stack). */
  def cursor(): IntervalTree.Cursor = new IntervalTree.Cursor(this)

  private def root: Int = if (levels == 0) -1 else (1 << (levels - 1)) - 1
}

private[rangejoin] object IntervalTree {

  /** Positions a search scans back from p before it turns to the tree. */
  val ScanWindow = 32

  /** Whether a second key `v` passes the lower bound: above `lower`, or at it when `inclusive`. */
  @inline def passes(v: Long, lower: Long, inclusive: Boolean): Boolean = v > lower || (inclusive && v == lower)

  // The tree is built once per query, so its constructor runs too rarely to be compiled, and a
  // loop inside a Scala field initializer cannot be compiled on the stack either (HotSpot skips
  // the OSR: the field's `this` is still on the operand stack). As methods of their own they
  // are compiled once for every query (docs/design.md gives the build times, interpreted and
  // compiled).

  private def levelsFor(n: Int): Int = {
    var h = 0
    while (((1L << h) - 1) < n) h += 1
    h
  }

  private def segmentBounds(segmentStarts: Array[Int], n: Int): Array[Int] = {
    val bounds = new Array[Int](segmentStarts.length + 2)
    var k = 0
    while (k < segmentStarts.length) {
      bounds(k + 1) = math.min(math.max(segmentStarts(k), 0), n)
      k += 1
    }
    bounds(bounds.length - 1) = n
    java.util.Arrays.sort(bounds)
    bounds
  }

  private def ascends(b: Array[Long], bounds: Array[Int]): Boolean = {
    var k = 0
    while (k + 1 < bounds.length) {
      var i = bounds(k) + 1
      while (i < bounds(k + 1)) {
        if (b(i) < b(i - 1)) return false
        i += 1
      }
      k += 1
    }
    true
  }

  private def longestSegment(bounds: Array[Int]): Int = {
    var k = 0
    var longest = 0
    while (k + 1 < bounds.length) {
      longest = math.max(longest, bounds(k + 1) - bounds(k))
      k += 1
    }
    longest
  }

  private def subtreeMaxima(b: Array[Long], levels: Int, size: Int): Array[Long] = {
    val n = b.length
    val m = new Array[Long](size)
    var i = 0
    while (i < size) {
      m(i) = if (i < n) b(i) else Long.MinValue
      i += 1
    }
    var k = 1
    while (k < levels) {
      val half = 1 << (k - 1)
      i = (1 << k) - 1
      while (i < size) {
        m(i) = math.max(m(i), math.max(m(i - half), m(i + half)))
        i += 1 << (k + 1)
      }
      k += 1
    }
    m
  }

  private def prefixMaxima(b: Array[Long], bounds: Array[Int]): Array[Long] = {
    val m = new Array[Long](b.length)
    var k = 0
    while (k + 1 < bounds.length) {
      var i = bounds(k)
      while (i < bounds(k + 1)) {
        m(i) = if (i == bounds(k)) b(i) else math.max(m(i - 1), b(i))
        i += 1
      }
      k += 1
    }
    m
  }

  /**
   * Enumerates the positions from <= i < p with `b(i) > lower` (`>=` when `inclusive`), in no
   * particular order: `start`, then `next()` until it returns -1.
   */
  final class Cursor private[IntervalTree] (tree: IntervalTree) {
    private[this] val b = tree.b
    private[this] val maxB = tree.maxB
    private[this] val prefixMaxB = tree.prefixMaxB
    private[this] val n = tree.n
    // Nodes still to visit, with their levels; a path is at most `levels` deep, and each
    // visit pushes at most two.
    private[this] val nodes = new Array[Int](2 * tree.levels + 2)
    private[this] val nodeLevels = new Array[Int](2 * tree.levels + 2)
    private[this] var top = 0
    private[this] var from = 0
    private[this] var p = 0
    private[this] var lower = 0L
    private[this] var inclusive = false
    private[this] var scan = -1 // the next position the backward scan checks
    private[this] var scanStop = 0 // where the scan hands over to the tree, which covers [0, scanStop)
    private[this] var treePending = false

    private def passes(v: Long): Boolean = IntervalTree.passes(v, lower, inclusive)

    def start(from: Int, p: Int, lower: Long, inclusive: Boolean): Unit = {
      this.from = math.max(0, from)
      this.p = math.max(this.from, math.min(p, n))
      this.lower = lower
      this.inclusive = inclusive
      top = 0
      scan = this.p - 1
      scanStop = math.max(this.from, this.p - ScanWindow)
      treePending = true
    }

    /** The positions i < p of the whole tree: [[start]] from 0. */
    def start(p: Int, lower: Long, inclusive: Boolean): Unit = start(0, p, lower, inclusive)

    private def push(node: Int, level: Int): Unit = {
      nodes(top) = node
      nodeLevels(top) = level
      top += 1
    }

    /** The next position found, or -1 when there is none. */
    def next(): Int = {
      while (scan >= scanStop) {
        val i = scan
        scan -= 1
        if (!passes(prefixMaxB(i))) { // nothing at or before i passes: the search is over
          scan = -1
          treePending = false
          return -1
        }
        if (passes(b(i))) return i
      }
      if (treePending) {
        treePending = false
        p = scanStop
        if (p > from && tree.root >= 0) push(tree.root, tree.levels - 1)
      }
      while (top > 0) {
        top -= 1
        val node = nodes(top)
        val level = nodeLevels(top)
        val first = node - (1 << level) + 1
        val last = node + (1 << level) - 1
        if (first < p && last >= from && passes(maxB(node))) {
          if (level > 0) {
            val half = 1 << (level - 1)
            push(node + half, level - 1)
            push(node - half, level - 1)
          }
          if (node < p && node >= from && node < n && passes(b(node))) return node
        }
      }
      -1
    }
  }
}
