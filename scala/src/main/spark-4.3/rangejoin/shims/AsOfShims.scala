package rangejoin.shims

import org.apache.spark.sql.catalyst.plans.logical.AsOfJoin

/** Spark 4.3 adds SQL's `ASOF JOIN`: an `AsOfJoin` marked for its sort-merge as-of operator. */
private[rangejoin] object AsOfShims {

  /** Whether `j` is SQL's `ASOF JOIN` (planned by Spark's sort-merge as-of operator). */
  def isSqlAsOf(j: AsOfJoin): Boolean = j.requiresSortMergeAsOfJoin
}
