package rangejoin

import org.apache.spark.SparkConf
import org.apache.spark.sql.test.SharedSparkSession

/**
 * A shared test session with rangejoin installed. Spark's TestSparkSession is built without the
 * session builder, so it skips the ServiceLoader registration and needs `spark.sql.extensions`.
 */
trait RangeJoinSharedSession extends SharedSparkSession {
  override protected def sparkConf: SparkConf =
    super.sparkConf.set("spark.sql.extensions", classOf[RangeJoinExtensions].getName)
}
