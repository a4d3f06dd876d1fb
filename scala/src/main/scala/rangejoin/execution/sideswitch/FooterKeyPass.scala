package rangejoin.execution.sideswitch

import scala.concurrent.{blocking, Await, ExecutionContext, Future}
import scala.concurrent.duration.Duration
import scala.jdk.CollectionConverters._
import scala.util.Try

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.HadoopReadOptions
import org.apache.parquet.column.statistics.Statistics
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.metadata.{BlockMetaData, ColumnPath}
import org.apache.parquet.hadoop.util.HadoopInputFile
import org.apache.parquet.schema.LogicalTypeAnnotation.{DateLogicalTypeAnnotation, IntLogicalTypeAnnotation, TimeUnit, TimestampLogicalTypeAnnotation}
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName
import org.apache.parquet.schema.{PrimitiveType, Type}
import org.apache.spark.sql.catalyst.expressions.{Alias, And, Attribute, Expression, IsNotNull, Literal, PlanExpression}
import org.apache.spark.sql.execution.{ColumnarToRowExec, FileSourceScanExec, FilterExec, InputAdapter, ProjectExec, SparkPlan, WholeStageCodegenExec}
import org.apache.spark.sql.execution.datasources.parquet.{ParquetFileFormat, ParquetUtils}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.{DataType, DateType, IntegerType, LongType, TimestampNTZType, TimestampType}

import rangejoin.condition.Extreme
import rangejoin.execution.filter.{BoundedParquetFormat, ScanPushdown}
import rangejoin.shims.ScanFiles

/**
 * The side switch's pass ([[KeyPassExec]]) answered from Parquet footers, without a job: where
 * the buffered side's key is a column of a few Parquet files, their row counts and row-group
 * statistics give the pass's two answers, the side's row count and its extreme key.
 * {{{
 *   RangeJoinKeyPass                       file 1  row group 1: 122,880 rows, k in [1e9, 2e9], 0 NULL
 *   +- Project [b.k AS key]                        row group 2: ...
 *      +- Filter isnotnull(b.k)            file 2  ...
 *         +- Parquet scan of b [k]
 *                                          rows = sum of (rows - NULL keys), min = min of the minima
 * }}}
 * The row count is exact: it is what the pass counts, every row of the files, less those the
 * filters above the scan drop. The extreme from statistics is a bound the true one never passes
 * on the wrong side (a row group's minimum is at most each of its values), and the switch's
 * filter only ever needs such a bound: it keeps a superset of the rows that can match, and the
 * join tests every pair it forms. Only where that is certain:
 *  - the key is a column of Spark's own Parquet format, through projections, columnar-to-row
 *    conversions and `isnotnull` filters (the ones Spark infers from the join): of the key, or
 *    of columns NULL in no row group; no bucket or dynamic partition pruning (files the listing
 *    holds that the scan would skip);
 *  - each file stores the column as a signed 64-bit integer for BIGINT, 32-bit for INT, days
 *    for DATE, microseconds for TIMESTAMP (UTC-adjusted) and TIMESTAMP_NTZ (not), so a statistic
 *    is a value Spark reads unchanged (no truncation, no unsigned order, no unit to convert), and
 *    dates and timestamps are from 1900 on (Spark may rebase older ones from a legacy calendar);
 *    a file without the column reads it as NULL and adds no key;
 *  - every row group has statistics for the column, with its NULL count;
 *  - at most [[MaxFiles]] files, whose footers are read on the driver, in parallel: more would
 *    cost more than the pass's job, which reads them on the executors.
 * Anything else, or a footer that cannot be read: None, and the pass runs (and raises what Spark
 * would raise reading such a file).
 */
private[rangejoin] object FooterKeyPass {

  val MaxFiles: Int = 16

  /** The pass's answer, (rows, extreme key), from the footers of the files `keys` reads, or None. */
  def apply(keys: SparkPlan, extreme: Extreme): Option[(Long, Option[Literal])] = Try {
    for {
      source <- traced(keys, keys.output.head, notNull = Nil)
      answer <- read(source, extreme)
    } yield answer
  }.toOption.flatten

  /** The scan `key` is a column of, and the columns whose NULL rows are filtered out above it. */
  private final case class Source(scan: FileSourceScanExec, column: Attribute, notNull: Seq[Attribute])

  private def traced(plan: SparkPlan, key: Attribute, notNull: Seq[Attribute]): Option[Source] = plan match {
    case KeyPassExec(child) => traced(child, key, notNull)
    case w: WholeStageCodegenExec => traced(w.child, key, notNull)
    case InputAdapter(child) => traced(child, key, notNull)
    case ColumnarToRowExec(child) => traced(child, key, notNull)
    case ProjectExec(projectList, child) => projectList.find(_.exprId == key.exprId).flatMap {
      case a: Attribute => traced(child, a, notNull)
      case Alias(a: Attribute, _) => traced(child, a, notNull)
      case _ => None
    }
    case FilterExec(condition, child) =>
      notNullColumns(condition).flatMap(columns => traced(child, key, notNull ++ columns))
    case scan: FileSourceScanExec
        if scan.relation.fileFormat.getClass == classOf[ParquetFileFormat] &&
          // Files the listing holds and the scan does not read: by bucket, by a dynamic filter.
          scan.optionalBucketSet.isEmpty &&
          !scan.partitionFilters.exists(_.exists(_.isInstanceOf[PlanExpression[_]])) &&
          (notNull :+ key).forall(a => scan.output.exists(_.exprId == a.exprId) &&
            BoundedParquetFormat.matching(scan.relation.partitionSchema.fields.toSeq)(_.name, a.name,
              caseSensitive(scan)).isEmpty) =>
      // The scan's pushed filters skip only row groups whose rows the filters above drop.
      val pushed = scan.dataFilters.map(notNullColumns)
      if (pushed.forall(_.exists(_.forall(a => notNull.exists(_.exprId == a.exprId))))) {
        Some(Source(scan, key, notNull.distinct))
      } else None
    case _ => None
  }

  /** The columns `condition` keeps the non-NULL rows of, if it is only that (Spark's inferred filters). */
  private def notNullColumns(condition: Expression): Option[Seq[Attribute]] = condition match {
    case And(l, r) => for (a <- notNullColumns(l); b <- notNullColumns(r)) yield a ++ b
    case IsNotNull(a: Attribute) => Some(Seq(a))
    case _ => None
  }

  private def caseSensitive(scan: FileSourceScanExec): Boolean =
    scan.relation.sparkSession.sessionState.conf.caseSensitiveAnalysis

  /** The footers' answer for `source`, or None where one file or row group leaves it unknown. */
  private def read(source: Source, extreme: Extreme): Option[(Long, Option[Literal])] = {
    val scan = source.scan
    val session = scan.relation.sparkSession
    val conf = session.sessionState.conf
    val field = BoundedParquetFormat.matching(scan.relation.dataSchema.fields.toSeq)(_.name, source.column.name,
      caseSensitive(scan))
    val files = ScanFiles.selected(scan).take(MaxFiles + 1).toVector
    val byFieldId = conf.getConf(SQLConf.PARQUET_FIELD_ID_READ_ENABLED) &&
      ParquetUtils.hasFieldIds(scan.requiredSchema)
    if (field.length != 1 || byFieldId || files.length > MaxFiles ||
      !FileKeys.Types.contains(source.column.dataType)) None
    else {
      val hadoopConf = session.sessionState.newHadoopConfWithOptions(scan.relation.options)
      implicit val ec: ExecutionContext = ExecutionContext.global
      val notNull = source.notNull.map(_.name).distinct
      val perFile = Await.result(Future.traverse(files) { path =>
        Future(blocking(FileKeys.of(hadoopConf, path, source.column.name, source.column.dataType, notNull,
          conf.caseSensitiveAnalysis)))
      }, Duration.Inf)
      if (perFile.exists(_.isEmpty)) None
      else {
        val all = perFile.flatten
        val rows = all.map(_.rows).sum
        val keys = all.flatMap(_.bounds).map(b => if (extreme == Extreme.Min) b._1 else b._2)
        val best = if (keys.isEmpty) None
          else Some(if (extreme == Extreme.Min) keys.min else keys.max)
        Some((rows, best.map(v => literal(v, source.column.dataType))))
      }
    }
  }

  private def literal(v: Long, dataType: DataType): Literal = dataType match {
    case IntegerType | DateType => Literal(v.toInt, dataType)
    case _ => Literal(v, dataType)
  }
}

/** One file's rows (those the filters above the scan keep) and its keys' (min, max). */
private final case class FileKeys(rows: Long, bounds: Option[(Long, Long)])

private object FileKeys {

  /**
   * The file's keys from its footer, where `notNull` names the columns whose NULL rows are
   * filtered out; None where the footer leaves them unknown. Rows are counted exactly: a file
   * without one of `notNull`'s columns reads it as NULL and keeps no row; a column of `notNull`
   * other than the key must be NULL nowhere (statistics cannot tell which rows two columns'
   * NULLs share).
   */
  def of(conf: Configuration, path: Path, column: String, dataType: DataType, notNull: Seq[String],
      caseSensitive: Boolean): Option[FileKeys] = {
    val reader = ParquetFileReader.open(HadoopInputFile.fromPath(path, conf),
      HadoopReadOptions.builder(conf, path).build())
    val footer = try reader.getFooter finally reader.close()
    val fields = footer.getFileMetaData.getSchema.getFields.asScala.toSeq
    def named(name: String): Seq[Type] = BoundedParquetFormat.matching(fields)(_.getName, name, caseSensitive)
    def isKey(name: String) = BoundedParquetFormat.matching(Seq(name))(identity, column, caseSensitive).nonEmpty
    val blocks = footer.getBlocks.asScala.toSeq.filter(_.getRowCount > 0)
    val keyFiltered = notNull.exists(isKey)
    val others = notNull.filterNot(isKey).map(named)
    if (others.exists(_.size > 1) || others.flatten.exists(!_.isPrimitive)) None
    // A filtered column the file lacks is NULL in every row: none kept.
    else if (others.exists(_.isEmpty) || (keyFiltered && named(column).isEmpty)) Some(FileKeys(0L, None))
    else {
      def statistics(block: BlockMetaData, field: Type): Option[Statistics[_]] =
        block.getColumns.asScala.find(_.getPath == ColumnPath.get(field.getName))
          .flatMap(chunk => Option[Statistics[_]](chunk.getStatistics)).filter(_.isNumNullsSet)
      val othersNeverNull = blocks.forall(block =>
        others.flatten.forall(f => statistics(block, f).exists(_.getNumNulls == 0)))
      named(column) match {
        case _ if !othersNeverNull => None
        // Read as NULL: rows without a key.
        case Seq() => Some(FileKeys(blocks.map(_.getRowCount).sum, None))
        case Seq(f) if storesExactly(f, dataType) =>
          val groups = blocks.map { block =>
            statistics(block, f).flatMap { stats =>
              val keyed = block.getRowCount - stats.getNumNulls
              val rows = if (keyFiltered) keyed else block.getRowCount
              if (keyed == 0) Some(FileKeys(rows, None))
              else if (!stats.hasNonNullValue) None
              else {
                val (min, max) = (number(stats.genericGetMin), number(stats.genericGetMax))
                if (min < earliest(dataType)) None else Some(FileKeys(rows, Some((min, max))))
              }
            }
          }
          if (groups.exists(_.isEmpty)) None
          else {
            val all = groups.flatten
            val bounds = all.flatMap(_.bounds)
            Some(FileKeys(all.map(_.rows).sum,
              if (bounds.isEmpty) None else Some((bounds.map(_._1).min, bounds.map(_._2).max))))
          }
        case _ => None
      }
    }
  }

  /** The key types whose statistics are read: those stored as a signed integer of their own. */
  val Types: Set[DataType] = Set(LongType, IntegerType, DateType, TimestampType, TimestampNTZType)

  /**
   * Whether Spark reads the field's stored values unchanged as `dataType`, ordered as stored:
   * a signed integer of the type's width, dates as days, timestamps in microseconds (UTC-adjusted
   * for TIMESTAMP, local for TIMESTAMP_NTZ).
   */
  private def storesExactly(field: Type, dataType: DataType): Boolean = field.isPrimitive &&
    !field.isRepetition(Type.Repetition.REPEATED) && {
      val primitive: PrimitiveType = field.asPrimitiveType
      val annotation = primitive.getLogicalTypeAnnotation
      def integer(bits: Int) = annotation match {
        case null => true
        case i: IntLogicalTypeAnnotation => i.isSigned && i.getBitWidth == bits
        case _ => false
      }
      def micros(utc: Boolean) = annotation match {
        case t: TimestampLogicalTypeAnnotation => t.getUnit == TimeUnit.MICROS && t.isAdjustedToUTC == utc
        case _ => false
      }
      (primitive.getPrimitiveTypeName, dataType) match {
        case (PrimitiveTypeName.INT64, LongType) => integer(64)
        case (PrimitiveTypeName.INT32, IntegerType) => integer(32)
        case (PrimitiveTypeName.INT32, DateType) => annotation.isInstanceOf[DateLogicalTypeAnnotation]
        case (PrimitiveTypeName.INT64, TimestampType) => micros(utc = true)
        case (PrimitiveTypeName.INT64, TimestampNTZType) => micros(utc = false)
        case _ => false
      }
    }

  /**
   * The least value read as stored: Spark may rebase older dates and timestamps (files written
   * with the legacy hybrid calendar), so a row group with one is left to the pass.
   */
  private def earliest(dataType: DataType): Long = dataType match {
    case DateType => ScanPushdown.EarliestDay.toLong
    case TimestampType | TimestampNTZType => ScanPushdown.EarliestMicros
    case _ => Long.MinValue
  }

  private def number(v: Any): Long = v match {
    case l: java.lang.Long => l
    case i: java.lang.Integer => i.longValue
    case other => throw new IllegalStateException(s"not an integer statistic: $other")
  }
}
