package rangejoin.execution.driver

import scala.util.control.NonFatal

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.execution.metric.SQLMetric

import rangejoin.execution.index.{CandidateFinder, SortedBuffer}
/**
 * The join driver for one partition of the streamed side: for each streamed row it asks the
 * [[CandidateFinder]] for the run of candidate buffered rows, evaluates the residual on each
 * candidate pair, and emits what [[JoinSemantics]] asks for. It knows nothing of join types
 * beyond that, and nothing of plans.
 * {{{
 *   for each streamed row s:
 *     finder.find(s)
 *     for b in finder's candidates (one run, or any positions an index finds):
 *       if residual(s, b): matched = true; mark b; emit pair (s, b) if pairs are output
 *     emit s alone as `streamedEmit` says, given matched
 * }}}
 * Output is pulled one row at a time: nothing is buffered beyond the row being returned.
 *
 * Two modes share this loop. The output pass emits pairs and streamed rows. The marking pass
 * (`marks` set, nothing emitted) records which buffered rows matched, for the buffered side's
 * output after every partition is done; it may skip candidates already marked, since their fate
 * is settled.
 *
 * Work per streamed row: one search, plus one residual evaluation per candidate. With no
 * residual every candidate passes, so a row whose pairs are not output costs the search alone.
 * `examined` counts the candidates looked at one by one (a run settled whole counts none): beside
 * the output rows it shows how much the index saved, or did not.
 *
 * Semi, anti and existence rows are decided by their first passing pair, found in the finder's
 * order (key order, or the run's fixed end first: index.FixedEndFirstFinder). Stock Spark tries
 * the buffered rows in broadcast order instead, so if the residual raises an
 * error here, the candidates are replayed in Spark's order: the error stands only if Spark would
 * reach it before a passing pair. That costs nothing until a residual actually fails.
 */
private[rangejoin] final class StreamedJoinIterator(
    streamed: Iterator[InternalRow],
    finder: CandidateFinder,
    buffered: SortedBuffer,
    residual: Option[InternalRow => Boolean],
    out: JoinOutput,
    streamedIsLeft: Boolean,
    emitPairs: Boolean,
    streamedEmit: RowEmit,
    marks: Option[Matches],
    examined: SQLMetric) extends Iterator[InternalRow] {

  private[this] val markOnly = marks.isDefined && !emitPairs && streamedEmit == RowEmit.Never
  private[this] val firstPassDecides = marks.isEmpty && !emitPairs
  private[this] val passes = residual.orNull
  private[this] val matches = marks.orNull

  private[this] var current: InternalRow = _ // the streamed row whose candidates are being scanned
  private[this] var scanning = false // whether the current row's candidates remain to be scanned
  private[this] var matched = false
  private[this] var pending: InternalRow = _ // the next output row, once found
  private[this] var looked = 0L // candidates examined for the current row, added to `examined` once

  override def hasNext: Boolean = pending != null || advance()

  override def next(): InternalRow = {
    if (!hasNext) throw new NoSuchElementException("end of join output")
    val row = pending
    pending = null
    row
  }

  /** Finds the next output row into `pending`; false when the streamed rows are exhausted. */
  private def advance(): Boolean = {
    while (true) {
      if (current == null) {
        if (!streamed.hasNext) return false
        start(streamed.next())
      }
      if (scanCandidates()) return true
      pending = out.alone(current, streamedIsLeft, streamedEmit, matched)
      current = null
      if (looked > 0) {
        examined.add(looked)
        looked = 0
      }
      if (pending != null) return true
    }
    false
  }

  private def start(row: InternalRow): Unit = {
    current = row
    finder.find(row)
    matched = false
    scanning = true
    if (passes == null && !emitPairs) {
      // Every candidate passes: the row's fate and its marks are known without a scan.
      if (finder.isRun) {
        matched = finder.runFrom < finder.runUntil
        if (matches != null) matches.markRun(finder.runFrom, finder.runUntil)
      } else if (matches == null) {
        matched = finder.next() >= 0
        if (matched) looked += 1
      } else {
        var i = finder.next()
        while (i >= 0) {
          matches.mark(i)
          matched = true
          looked += 1
          i = finder.next()
        }
      }
      scanning = false
    } else if (passes == null && finder.isRun && matches != null) {
      matches.markRun(finder.runFrom, finder.runUntil)
    }
  }

  /** Scans the current row's candidates up to the next output pair; true when one is pending. */
  private def scanCandidates(): Boolean = {
    if (!scanning) return false
    var i = finder.next()
    while (i >= 0) {
      looked += 1
      if (!(markOnly && matches.isMarked(i)) && pairPasses(i)) {
        matched = true
        if (matches != null && (passes != null || !finder.isRun)) matches.mark(i)
        if (emitPairs) {
          pending = out.pair()
          return true
        }
        if (firstPassDecides) {
          scanning = false
          return false
        }
      }
      i = finder.next()
    }
    scanning = false
    false
  }

  /** Whether the pair (current, buffered row i) passes; it stays arranged for `out.pair()`. */
  private def pairPasses(i: Int): Boolean = {
    val pair = out.arrange(current, buffered.row(i))
    if (passes == null) true
    else if (!firstPassDecides) passes(pair)
    else {
      try passes(pair) catch {
        case NonFatal(e) => passesInSparkOrder(e)
      }
    }
  }

  /**
   * Replays the current row's candidates in stock Spark's order; an error raised on the way is
   * Spark's too. The search is run again, so the candidates scanned so far are lost: this is
   * called only where the first passing pair decides the row.
   */
  private def passesInSparkOrder(error: Throwable): Boolean = {
    finder.find(current)
    SparkOrder.anyPasses(finder, buffered, c => passes(out.arrange(current, buffered.row(c))), error)
  }
}
