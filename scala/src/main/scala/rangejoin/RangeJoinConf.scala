package rangejoin

import java.util.Locale

import org.apache.spark.sql.internal.SQLConf

/**
 * rangejoin's configuration keys. They are plain SQL configuration strings, read from the session
 * each time a query is planned, so `SET spark.rangejoin.enabled = false` or
 * `spark.conf.set(...)` takes effect for the next query. (Spark's typed ConfigBuilder is private
 * to Spark.) Every key is documented in docs/configuration.md.
 */
object RangeJoinConf {

  /** Plans eligible range joins as PiecewiseMergeJoinExec; false leaves every join to Spark. */
  val Enabled = "spark.rangejoin.enabled"
  val EnabledDefault = true

  def enabled(conf: SQLConf): Boolean = boolean(conf, Enabled, EnabledDefault)

  private def boolean(conf: SQLConf, key: String, default: Boolean): Boolean =
    conf.getConfString(key, default.toString).trim.toLowerCase(Locale.ROOT) match {
      case "true" => true
      case "false" => false
      case other => throw new IllegalArgumentException(
        s"Invalid value for $key: '$other'. Use true or false.")
    }
}
