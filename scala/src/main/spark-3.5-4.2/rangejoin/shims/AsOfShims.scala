package rangejoin.shims

import org.apache.spark.sql.catalyst.plans.logical.AsOfJoin

/** Before Spark 4.3: no SQL `ASOF JOIN`; every `AsOfJoin` is the DataFrame (or pandas) path's. */
private[rangejoin] object AsOfShims {

  /** Whether `j` is SQL's `ASOF JOIN` (planned by Spark's sort-merge as-of operator). */
  def isSqlAsOf(j: AsOfJoin): Boolean = false
}
