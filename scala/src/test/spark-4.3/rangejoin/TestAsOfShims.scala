package rangejoin

/** Spark 4.3: as-of joins on the DataFrame path and SQL's `ASOF JOIN`. */
object TestAsOfShims {

  /** Whether the line parses SQL's `ASOF JOIN` (Spark 4.3 on). */
  val sqlAsOf: Boolean = true
}
