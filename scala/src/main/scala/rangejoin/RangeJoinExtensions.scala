package rangejoin

import java.util.{Collections, WeakHashMap}

import org.apache.spark.SPARK_VERSION
import org.apache.spark.sql.{SparkSession, SparkSessionExtensions, SparkSessionExtensionsProvider}

import rangejoin.bins.{BinnedRangeJoin, ChunkedBinShuffle}
import rangejoin.planning.{AsOfFilterPushdown, AsOfJoinRule, AsOfJoinStrategy, BinChunksStrategy, BinGridStrategy, KeyedExistence, RangeJoinHintNames, RangeJoinHints, RangeJoinStrategy}
import rangejoin.shims.SessionShims

/**
 * rangejoin's entry point: `spark.sql.extensions=rangejoin.RangeJoinExtensions`. Spark also loads
 * it on its own whenever the jar is on the classpath (META-INF/services), so naming it in
 * `spark.sql.extensions` as well is harmless: it registers once per set of extensions.
 *
 * It refuses to load into a Spark whose version it was not built for: planner internals change
 * between Spark feature releases, and a mismatch would otherwise fail deep inside some query.
 */
class RangeJoinExtensions extends SparkSessionExtensionsProvider {

  override def apply(extensions: SparkSessionExtensions): Unit = {
    RangeJoinExtensions.checkSparkVersion(SPARK_VERSION)
    if (RangeJoinExtensions.firstTimeFor(extensions)) {
      // Keeps RANGE_JOIN(t)'s names from being resolved as columns, then resolves the hint
      // before Spark drops hints it does not know.
      SessionShims.injectHintRule(extensions, RangeJoinHintNames)
      extensions.injectResolutionRule(_ => RangeJoinHints)
      // Takes the DataFrame and pandas as-of joins before the optimizer rewrites them into a
      // correlated min_by per left row.
      extensions.injectPostHocResolutionRule(_ => AsOfJoinRule)
      // Pushes filters on the left side's columns below those as-of joins, as Spark's own.
      extensions.injectOptimizerRule(_ => AsOfFilterPushdown)
      // Rewrites band joins too large to broadcast into Spark's own equi-joins on bins.
      extensions.injectOptimizerRule(_ => BinnedRangeJoin)
      // Runs those joins' grid subqueries in one job of one stage.
      extensions.injectPlannerStrategy(_ => BinGridStrategy)
      // Shuffles their sides in chunks of many rows (once the optimizer has pruned their columns).
      extensions.injectPreCBORule(_ => ChunkedBinShuffle)
      extensions.injectPlannerStrategy(_ => BinChunksStrategy)
      // Reduces the subquery side of keyed semi, anti and existence joins with one inequality to
      // each key's extreme, for Spark's own aggregate and join (the fast path, with keys).
      extensions.injectOptimizerRule(_ => KeyedExistence)
      // Plans range joins as PiecewiseMergeJoinExec, ahead of Spark's JoinSelection.
      extensions.injectPlannerStrategy(_ => RangeJoinStrategy)
      // Plans as-of joins as PiecewiseMergeAsOfJoinExec, ahead of Spark's AsOfJoinSelection.
      extensions.injectPlannerStrategy(session => AsOfJoinStrategy(session))
    }
  }
}

object RangeJoinExtensions {

  /** The Spark feature release (major.minor) this build of rangejoin compiles against. */
  val SparkFeatureRelease: String = BuildInfo.sparkVersion.split('.').take(2).mkString(".")

  private val registered =
    Collections.synchronizedMap(new WeakHashMap[SparkSessionExtensions, java.lang.Boolean])

  private def firstTimeFor(extensions: SparkSessionExtensions): Boolean =
    registered.putIfAbsent(extensions, true) == null

  /** Fails with an explanation when `running` is not a [[SparkFeatureRelease]] patch release. */
  def checkSparkVersion(running: String): Unit = {
    val featureRelease = running.split('.').take(2).mkString(".")
    if (featureRelease != SparkFeatureRelease) {
      throw new IllegalStateException(
        s"rangejoin ${BuildInfo.version} is built for Spark $SparkFeatureRelease.x, but this is " +
          s"Spark $running. Use rangejoin's jar for Spark $featureRelease (rangejoin-spark-$featureRelease), or remove " +
          "rangejoin.RangeJoinExtensions from spark.sql.extensions and its jar from the classpath.")
    }
  }

  /**
   * Whether `session` plans with rangejoin: its planner holds rangejoin's strategy. False for a
   * session built before the extension was configured (Python checks this to explain what to do).
   */
  def isInstalled(session: SparkSession): Boolean =
    SessionShims.extraStrategies(session).exists(_.contains(RangeJoinStrategy))
}
