package rangejoin.execution.filter

import java.time.{LocalDate, LocalDateTime, ZoneOffset}

import org.apache.spark.sql.catalyst.expressions.{Attribute, Literal}
import org.apache.spark.sql.catalyst.util.DateTimeUtils
import org.apache.spark.sql.execution.FileSourceScanExec
import org.apache.spark.sql.execution.datasources.HadoopFsRelation
import org.apache.spark.sql.execution.datasources.orc.OrcFileFormat
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.execution.rangejoin.SparkInternals
import org.apache.spark.sql.types._

import rangejoin.condition.RangeOp
import rangejoin.shims.SessionShims
/**
 * The form of the dynamic filter's bound that a Parquet or ORC scan may take. A file scan skips
 * row groups (and Parquet pages, ORC index strides) whose statistics exclude a pushed filter;
 * those statistics compare values in the file's physical type and order, not in Spark's, so a
 * bound is pushed only in a form they can only ever over-approximate:
 * {{{
 *   join bound          pushed to the scan         why
 *   k <  b              k <= b                     a stored value truncated to b's precision
 *   k >  b              k >= b                     (TIMESTAMP_MILLIS, ORC millisecond statistics)
 *                                                  must not fail a strict test it passes exactly
 *   k >= 0.0 (double)   k >= -0.0                  statistics order -0.0 below 0.0; Spark does not
 *   k <= -0.0           k <= 0.0
 *   k >= NaN, k <= NaN  nothing                    NaN handling in statistics is the format's own
 *   dates, timestamps   nothing before 1900        Spark converts a pushed bound through
 *                                                  java.sql.Date/Timestamp, whose hybrid calendar
 *                                                  moves dates before the 1582 cutover
 *   other types         nothing                    no exact conversion, or no benefit
 * }}}
 * The exact filter always stays above the scan: what the scan keeps is only ever a superset.
 * Only Spark's own Parquet and ORC formats are trusted, not subclasses (a table format's reader
 * may apply a pushed filter to rows, or in its own way).
 */
private[execution] object ScanPushdown {

  /**
   * The scan's relation reading with `column op bound` pushed down, in the form its statistics
   * may take, or None. `op` reads `column op bound`, where `column` is one of the scan's data
   * columns and `bound` a non-NULL literal of its type.
   */
  def apply(scan: FileSourceScanExec, column: Attribute, op: RangeOp, bound: Literal): Option[HadoopFsRelation] = {
    val relation = scan.relation
    val format = relation.fileFormat.getClass
    val trusted = format == classOf[ParquetFileFormat] || format == classOf[OrcFileFormat]
    if (!trusted || bound.value == null || bound.dataType != column.dataType) None
    else {
      val orc = format == classOf[OrcFileFormat]
      for {
        b <- widened(bound, upper = op.isLess).map(b => if (orc) SessionShims.orcBound(b, upper = op.isLess) else b)
        filter <- SparkInternals.toSourceFilter(op.widened(column, b))
      } yield {
        val bounded = if (format == classOf[ParquetFileFormat]) new BoundedParquetFormat(filter)
          else new BoundedOrcFormat(filter)
        relation.copy(fileFormat = bounded)(relation.sparkSession)
      }
    }
  }

  /**
   * Dates and timestamps before this are never pushed (see the class comment), nor read from
   * statistics (sideswitch.FooterKeyPass): Spark may rebase such values when it reads them.
   */
  private[execution] val EarliestDay: Int = LocalDate.of(1900, 1, 1).toEpochDay.toInt
  private[execution] val EarliestMicros: Long =
    DateTimeUtils.instantToMicros(LocalDateTime.of(1900, 1, 2, 0, 0).toInstant(ZoneOffset.UTC))

  /** The bound, widened for statistics; `upper` when the column is bounded from above. */
  private def widened(bound: Literal, upper: Boolean): Option[Literal] = bound.dataType match {
    case ByteType | ShortType | IntegerType | LongType | _: DecimalType => Some(bound)
    case DateType => Some(bound).filter(_.value.asInstanceOf[Int] >= EarliestDay)
    case TimestampType | TimestampNTZType =>
      // A day's margin: a time zone's offset never moves an instant past it.
      Some(bound).filter(_.value.asInstanceOf[Long] >= EarliestMicros)
    case DoubleType =>
      val d = bound.value.asInstanceOf[Double]
      if (d.isNaN) None
      else if (d == 0.0d) Some(Literal(if (upper) 0.0d else -0.0d, DoubleType))
      else Some(bound)
    case FloatType =>
      val f = bound.value.asInstanceOf[Float]
      if (f.isNaN) None
      else if (f == 0.0f) Some(Literal(if (upper) 0.0f else -0.0f, FloatType))
      else Some(bound)
    case s: StringType if SessionShims.isBinaryString(s) =>
      Some(bound) // statistics compare UTF-8 bytes, as this collation does
    case _ => None
  }
}
