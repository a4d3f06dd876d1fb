package rangejoin.execution.driver

import rangejoin.execution.index.{CandidateFinder, SortedBuffer}

/**
 * Stock Spark's order of a streamed row's candidates, for the one case where it matters: a semi,
 * anti or existence join decides a row by its first passing pair, and a residual that can fail
 * raised an error on some candidate. Spark tries the buffered rows in broadcast order (the
 * buffer's origins), rangejoin in its finder's order; the error is Spark's only if Spark would reach it
 * before a passing pair. Both the interpreted driver and generated code replay through here,
 * only once a residual has actually failed.
 */
private[rangejoin] object SparkOrder {

  /**
   * Whether some candidate of `finder` (positioned on the row by the caller) passes, tried in
   * stock Spark's order; `error` otherwise, raised again (an error raised on the way is Spark's
   * own, and propagates).
   */
  def anyPasses(finder: CandidateFinder, buffer: SortedBuffer, passes: Int => Boolean, error: Throwable): Boolean = {
    if (!buffer.keepsOrigins) {
      throw new IllegalStateException("a residual the plan took for one that cannot fail raised an error", error)
    }
    val candidates = Iterator.continually(finder.next()).takeWhile(_ >= 0).toArray
    if (candidates.sortBy(buffer.origin).exists(passes)) true
    else throw error // unreachable for a deterministic residual
  }
}
