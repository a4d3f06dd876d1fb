package rangejoin

/** Before Spark 4.3: as-of joins only on the DataFrame (and pandas) path. */
object TestAsOfShims {

  /** Whether the line parses SQL's `ASOF JOIN` (Spark 4.3 on). */
  val sqlAsOf: Boolean = false
}
