package rangejoin.execution.driver

/**
 * Which buffered rows had a passing pair: in one task, then merged over all tasks through Spark
 * (executors are separate JVMs; nothing is shared in process).
 *
 * Without a residual, every candidate of a run passes, so a whole run is marked at once. The runs
 * of a one-bound join all touch the same end of the buffered rows, so their union is one interval
 * [lo, hi) and marking a run costs O(1) whatever its length. A band's runs may lie anywhere: one
 * that does not touch the interval goes to a bitset (word by word), as do rows marked one by one
 * (a residual decided, or an interval index's candidates).
 */
private[rangejoin] final class Matches extends Serializable {

  private var lo = 0
  private var hi = 0 // [lo, hi) empty while lo == hi
  private val bits = new java.util.BitSet

  def markRun(from: Int, until: Int): Unit = {
    if (from >= until) return
    if (lo == hi) {
      lo = from
      hi = until
    } else if (from <= hi && until >= lo) {
      lo = math.min(lo, from)
      hi = math.max(hi, until)
    } else {
      bits.set(from, until)
    }
  }

  def mark(i: Int): Unit = bits.set(i)

  def isMarked(i: Int): Boolean = (i >= lo && i < hi) || bits.get(i)

  /** Adds the marks of `other` to these, and returns these. */
  def merge(other: Matches): Matches = {
    markRun(other.lo, other.hi)
    bits.or(other.bits)
    this
  }
}
