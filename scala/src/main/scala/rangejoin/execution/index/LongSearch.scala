package rangejoin.execution.index

/**
 * Binary search over sorted longs (as-of times, range join keys stored as order-preserving longs),
 * in two forms with the same answers, and the choice between them by the order of the values
 * searched for, which the caller reports with [[observe]] once per streamed row:
 * {{{
 *   streamed values   3 5 8 9 12 ...      in order: a branch per step (predicted: loads ahead)
 *                     9 2 14 1 7 ...      in no order: branch-free (nothing to mispredict)
 *   decided per block of 256 rows; windows over 256K keys always branch (each load misses the cache)
 *
 *   in no order, over a buffer past the cache, through fences:
 *   keys    [ 1  2  4  4  5  7  8  9 | 11 12 12 13 15 16 18 19 | 20 ... ]   blocks of 8 positions
 *   fences  [ 9                      | 19                      | ...   ]   each block's last key
 *           branch-free over the fences (an eighth of the bytes: they stay cached), then one
 *           block counted (its loads all independent: one wait for memory instead of several)
 * }}}
 * Instances are per task. `fencesFrom`: the fewest keys a buffer has for its searches to go
 * through fences (tests lower it).
 */
private[rangejoin] final class LongSearch(keys: Array[Long], fencesFrom: Int = LongSearch.FencedKeys) {

  // Which of two searches (the same answers) runs: the values of the last block of rows
  // decide. In order, consecutive searches take the same branches, and a branch per step lets
  // the CPU predict them and load ahead; in no order, each step's branch is a coin toss, and a
  // conditional add with no branch to mispredict wins, but for windows far past the cache, where
  // a step's load costs more than a missed branch and the predicted branch at least loads ahead.
  // Measured over 2M searches (JDK 17, 2 cores), branching against branch-free:
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
  // Fences: a binary search's steps over keys past the cache (another task's rows and the
  // streamed side's batches push them out) each wait for memory, one after another: W14's keyed
  // join over its 100K quotes costs several hundred ns a trade more than over every 100th of them
  // (bench.probes.asof_cpu). The fences are an eighth of the keys' bytes, so a search's steps
  // over them mostly hit the cache, and the block found is counted with no dependent load.
  // Measured in a scratch loop of 1M searches on 2 threads beside streamed writes (JDK 17, this
  // 2-core machine, 512 KB of L2 a core), branch-free against fenced: 82 against 61 ns (100
  // windows of 1,000 keys), 86 against 62 (one of 100,000), 131 against 103 (200,000); alike
  // (21-32 ns) where the keys fit the cache (100 x 100, 10 x 1,000), hence the buffer size below
  // which there are none.
  // Windows over 256K keys still branch: there the fence of 16 above lost to the branch. In the
  // query the gain is smaller: W14's keyed join about a tenth less CPU over seven alternating
  // rounds, a twentieth without a key (docs/design.md, as-of joins: bench.probes.asof_cpu).
  // Built at the first search through them: a window of the whole buffer over 256K keys never is.
  private[this] var fences: Array[Long] = _
  private[this] val fenced = keys.length >= fencesFrom

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
    else if (fenced && until - from >= LongSearch.FencedWindow) firstAboveFenced(from, until, v, orEqual)
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
    above(from, until, v, orEqual, throughFences = false)

  private[index] def firstAboveFenced(from: Int, until: Int, v: Long, orEqual: Boolean): Int =
    above(from, until, v, orEqual, throughFences = true)

  /** The branch-free forms compare with `>` alone: at or above v is above v - 1. */
  private def above(from: Int, until: Int, v: Long, orEqual: Boolean, throughFences: Boolean): Int =
    if (orEqual && v == Long.MinValue) from
    else {
      val strict = if (orEqual) v - 1 else v
      if (throughFences) fencedAbove(from, until, strict) else LongSearch.branchFree(keys, from, until, strict)
    }

  private def fencedAbove(from: Int, until: Int, v: Long): Int =
    if (from >= until) from
    else {
      if (fences == null) fences = LongSearch.fencesOf(keys)
      // Blocks first until last - 1 end inside the window: their fences are its keys, in order.
      // The first of them whose last key is above v holds the answer; if none, the last block.
      val last = (until - 1) >>> 3
      val block = LongSearch.branchFree(fences, from >>> 3, last, v)
      val start = math.max(from, block << 3)
      val end = math.min(until, (block << 3) + 8)
      var at = start
      var i = start
      while (i < end) {
        at += (if (keys(i) <= v) 1 else 0)
        i += 1
      }
      at
    }
}

private[rangejoin] object LongSearch {
  /** Streamed rows per decision of which search runs. */
  val Block = 256
  /** In order: at least this many of a block's values at or after the one before. */
  val InOrder = 230
  /** Windows of more keys than this are searched with branches whatever the order (above). */
  val LargeWindow: Int = 1 << 18

  /** Buffers of fewer keys than this (256 KB: half this machine's L2 cache a core) have no fences. */
  val FencedKeys: Int = 1 << 15

  /** Windows of fewer keys than this are searched without the fences (a few blocks). */
  val FencedWindow = 64

  /** The last key of each block of 8 positions (of the last, partial one its last key). */
  private def fencesOf(keys: Array[Long]): Array[Long] = {
    val fences = new Array[Long]((keys.length + 7) >>> 3)
    var j = 0
    while (j < fences.length) {
      fences(j) = keys(math.min(keys.length - 1, (j << 3) + 7))
      j += 1
    }
    fences
  }

  /**
   * The first position of [from, until) of sorted `keys` whose key is above `v`: halves the
   * window n times whatever the keys, choosing the half by a conditional add.
   */
  private def branchFree(keys: Array[Long], from: Int, until: Int, v: Long): Int = {
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
