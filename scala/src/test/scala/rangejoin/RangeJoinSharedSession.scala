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
      .setAll(TestShims.sessionConf)

  /** `withSQLConf` for a body with a value: Spark 3.5's returns Unit. */
  protected def withConf[T](pairs: (String, String)*)(body: => T): T = {
    var result: Option[T] = None
    withSQLConf(pairs: _*) { result = Some(body) }
    result.get
  }
}
