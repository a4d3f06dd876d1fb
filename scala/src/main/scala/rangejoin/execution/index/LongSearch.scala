package rangejoin.execution.index

/**
 * Binary search over sorted longs (as-of times, range join keys stored as order-preserving longs),
 * in two forms with the same answers, and the choice between them by the order of the values
 * searched for, which the caller reports with [[observe]] once per streamed row:
 * {{{
 *   streamed values   3 5 8 9 12 ...      in order: a branch per step (predicted: loads ahead)
 *                     9 2 14 1 7 ...      in no order: branch-free (nothing to mispredict)
 *   decided per block of 256 rows; windows over 256K keys always branch (each load misses the cache)
 * }}}
 * Instances are per task.
 */
private[rangejoin] final class LongSearch(keys: Array[Long]) {

  // Which of two searches (the same answers) runs: the values of the last block of rows
  // decide. In order, consecutive searches take the same branches, and a branch per step lets
  // the CPU predict them and load ahead; in no order, each step's branch is a coin toss, and a
  // conditional add with no branch to mispredict wins, but for windows far past the cache, where
  // a step's load costs more than a missed branch and the predicted branch at least loads ahead.
  // Measured over 2M searches (JDK 17, 2 cores, 4 MB of L2 each), branching against branch-free:
  // in order, 14 ns against 20-33 ns (windows of 2,000 keys) and 28-31 against 39-42 (200,000);
  // in no order, 73-86 against 20-31 (2,000), 133-142 against 58-76 (200,000), 200-214 against
  // 148-176 (1M) and 267-276 against 304-346 (2M). In a query, other work shares the cache: W2's
  // SEMI+residual (10M streamed keys in no order, 1M buffered) took 4.3-4.4 s branch-free against
  // 3.4-4.3 s branching (alternate runs, one session), so windows over 256K keys (2 MB) branch.
  // A fence (every 16th key, searched branch-free in the cache, then one block of 16) won the
  // microbenchmark at 1M keys (196 ns against 258 with each search waiting on the one before) but
  // lost in that query (join stage 3.7-5.0 s against 3.5-4.0 s): the branch's speculative loads
  // overlap the misses that a data-dependent search must wait for one by one. So did a table of
  // buckets (a key's high bits above the smallest key: a direct load, then a search of the ~9
  // keys of one bucket; branch wip/key-buckets): 36-50 ns against 205-272 in that loop at 1M
  // keys, but in the query (async-profiler, 5 runs) the search's share of CPU went from 27% to
  // 32%: the bucket's one or two lines still miss, and nothing runs ahead of them.
  private[this] var previous = Long.MinValue
  private[this] var inOrder = 0
  private[this] var seen = 0
  private[this] var ordered = true

  /** Reports the next streamed row's value, before its searches. */
  def observe(v: Long): Unit = {
    if (v >= previous) inOrder += 1
    previous = v
    seen += 1
    if (seen == LongSearch.Block) {
      ordered = inOrder >= LongSearch.InOrder
      inOrder = 0
      seen = 0
    }
  }

  /** The first position of [from, until) whose key is above `v` (at or above, `orEqual`); `until` if none. */
  def firstAbove(from: Int, until: Int, v: Long, orEqual: Boolean): Int =
    if (ordered || until - from > LongSearch.LargeWindow) firstAboveBranching(from, until, v, orEqual)
    else firstAboveBranchFree(from, until, v, orEqual)

  private[index] def firstAboveBranching(from: Int, until: Int, v: Long, orEqual: Boolean): Int = {
    var a = from
    var b = until
    while (a < b) {
      val mid = (a + b) >>> 1
      val k = keys(mid)
      if (k > v || (orEqual && k == v)) b = mid else a = mid + 1
    }
    a
  }

  private[index] def firstAboveBranchFree(from: Int, until: Int, v: Long, orEqual: Boolean): Int =
    if (!orEqual) firstAboveBranchFree(from, until, v)
    else if (v == Long.MinValue) from
    else firstAboveBranchFree(from, until, v - 1) // at or above v: above v - 1

  /** Halves the window n times whatever the keys, choosing the half by a conditional add. */
  private def firstAboveBranchFree(from: Int, until: Int, v: Long): Int = {
    var base = from
    var n = until - from
    while (n > 1) {
      val half = n >>> 1
      base = if (keys(base + half - 1) > v) base else base + half
      n -= half
    }
    if (n == 1 && keys(base) <= v) base + 1 else base
  }
}

private[rangejoin] object LongSearch {
  /** Streamed rows per decision of which search runs. */
  val Block = 256
  /** In order: at least this many of a block's values at or after the one before. */
  val InOrder = 230
  /** Windows of more keys than this are searched with branches whatever the order (above). */
  val LargeWindow: Int = 1 << 18
}
