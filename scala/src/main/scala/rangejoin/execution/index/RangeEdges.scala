package rangejoin.execution.index

/**
 * One task's right rows nearest each range of time from outside it, which the task sends to that
 * range's task beside its own rows: into range p, the latest of its rows in the ranges before p
 * (backward, nearest) and the earliest of those after p (forward, nearest).
 * {{{
 *   ranges                  0        |  1        |  2        |  3
 *   this task's rows        2 7      |           |  23 25    |
 *   carried, backward       -        |  7        |  7        |  25
 *   carried, forward        23       |  23       |  -        |  -
 * }}}
 * Every task carries its own; range p's task searches them with its own rows, so the nearest of
 * all reaches each left row without a job that gathers them first. Among equal times a range keeps
 * the last row it met as its latest and the first as its earliest, as the search picks among
 * equal times (backward the last, forward the first).
 *
 * @param keep the copy of a row to hold past the row's turn (a task's input rows are reused)
 */
private[rangejoin] final class RangeEdges[R <: AnyRef](count: Int, backward: Boolean, forward: Boolean, keep: R => R) {
  private[this] val firstTime = new Array[Long](count)
  private[this] val firstRow = new Array[AnyRef](count)
  private[this] val lastTime = new Array[Long](count)
  private[this] val lastRow = new Array[AnyRef](count)

  /** Notes `row`, of time `t` in range `range`. */
  def add(range: Int, t: Long, row: R): Unit = {
    var kept: AnyRef = null
    if (forward && (firstRow(range) == null || t < firstTime(range))) {
      kept = keep(row)
      firstTime(range) = t
      firstRow(range) = kept
    }
    if (backward && (lastRow(range) == null || t >= lastTime(range))) {
      if (kept == null) kept = keep(row)
      lastTime(range) = t
      lastRow(range) = kept
    }
  }

  /**
   * The rows to carry, each with the range it goes to. The ranges are ordered by time, so the
   * latest row before range p is the latest of the last range before p that has rows.
   */
  def carried: Seq[(Int, R)] = {
    val out = scala.collection.mutable.ArrayBuffer.empty[(Int, R)]
    if (backward) {
      var latest: AnyRef = null
      for (p <- 0 until count) {
        if (latest != null) out += ((p, latest.asInstanceOf[R]))
        if (lastRow(p) != null) latest = lastRow(p)
      }
    }
    if (forward) {
      var earliest: AnyRef = null
      for (p <- count - 1 to 0 by -1) {
        if (earliest != null) out += ((p, earliest.asInstanceOf[R]))
        if (firstRow(p) != null) earliest = firstRow(p)
      }
    }
    out.toSeq
  }
}
