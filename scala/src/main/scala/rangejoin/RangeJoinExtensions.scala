package rangejoin

import java.util.{Collections, WeakHashMap}

import org.apache.spark.sql.{SparkSessionExtensions, SparkSessionExtensionsProvider}

import rangejoin.planning.RangeJoinStrategy

/**
 * rangejoin's entry point: `spark.sql.extensions=rangejoin.RangeJoinExtensions`. Spark also loads
 * it on its own whenever the jar is on the classpath (META-INF/services), so naming it in
 * `spark.sql.extensions` as well is harmless: it registers once per set of extensions.
 */
class RangeJoinExtensions extends SparkSessionExtensionsProvider {

  override def apply(extensions: SparkSessionExtensions): Unit = {
    if (RangeJoinExtensions.firstTimeFor(extensions)) {
      // Plans single-inequality joins as PiecewiseMergeJoinExec, ahead of Spark's JoinSelection.
      extensions.injectPlannerStrategy(RangeJoinStrategy)
    }
  }
}

object RangeJoinExtensions {

  private val registered =
    Collections.synchronizedMap(new WeakHashMap[SparkSessionExtensions, java.lang.Boolean])

  private def firstTimeFor(extensions: SparkSessionExtensions): Boolean =
    registered.putIfAbsent(extensions, true) == null
}
