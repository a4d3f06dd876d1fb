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
 */
private[rangejoin] final class IntervalTree(private val b: Array[Long]) extends Serializable {

  val n: Int = b.length

  /** Levels of the padded tree: 2^levels - 1 >= n nodes. */
  private val levels: Int = {
    var h = 0
    while (((1L << h) - 1) < n) h += 1
    h
  }

  private val size = ((1L << levels) - 1).toInt

  /** maxB(i): the largest b in node i's subtree. */
  private val maxB: Array[Long] = {
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

  /** A search over this tree; one per task (it keeps its traversal stack). */
  def cursor(): IntervalTree.Cursor = new IntervalTree.Cursor(this)

  private def root: Int = if (levels == 0) -1 else (1 << (levels - 1)) - 1
}

private[rangejoin] object IntervalTree {

  /**
   * Enumerates the positions i < p with `b(i) > lower` (`>=` when `inclusive`), in no particular
   * order: `start`, then `next()` until it returns -1.
   */
  final class Cursor private[IntervalTree] (tree: IntervalTree) {
    private[this] val b = tree.b
    private[this] val maxB = tree.maxB
    private[this] val n = tree.n
    // Nodes still to visit, with their levels; a path is at most `levels` deep, and each
    // visit pushes at most two.
    private[this] val nodes = new Array[Int](2 * tree.levels + 2)
    private[this] val nodeLevels = new Array[Int](2 * tree.levels + 2)
    private[this] var top = 0
    private[this] var p = 0
    private[this] var lower = 0L
    private[this] var inclusive = false

    private def passes(v: Long): Boolean = v > lower || (inclusive && v == lower)

    def start(p: Int, lower: Long, inclusive: Boolean): Unit = {
      this.p = math.min(p, n)
      this.lower = lower
      this.inclusive = inclusive
      top = 0
      if (this.p > 0 && tree.root >= 0) push(tree.root, tree.levels - 1)
    }

    private def push(node: Int, level: Int): Unit = {
      nodes(top) = node
      nodeLevels(top) = level
      top += 1
    }

    /** The next position found, or -1 when there is none. */
    def next(): Int = {
      while (top > 0) {
        top -= 1
        val node = nodes(top)
        val level = nodeLevels(top)
        val first = node - (1 << level) + 1
        if (first < p && passes(maxB(node))) {
          if (level > 0) {
            val half = 1 << (level - 1)
            push(node + half, level - 1)
            push(node - half, level - 1)
          }
          if (node < p && node < n && passes(b(node))) return node
        }
      }
      -1
    }
  }
}
