package rangejoin.execution.filter

import scala.jdk.CollectionConverters._
import scala.util.Try

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.HadoopReadOptions
import org.apache.parquet.format.converter.ParquetMetadataConverter
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.util.HadoopInputFile
import org.apache.parquet.schema.MessageType
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.execution.datasources.PartitionedFile
import org.apache.spark.sql.execution.datasources.orc.OrcFileFormat
import org.apache.spark.sql.execution.datasources.parquet.{ParquetFileFormat, ParquetToSparkSchemaConverter, ParquetUtils}
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.sources.Filter
import org.apache.spark.sql.types._
import org.apache.spark.util.SerializableConfiguration

/**
 * Spark's Parquet format, reading each file with the dynamic filter's bound pushed down only when
 * that file stores every column the scan reads in the table's own type.
 * {{{
 *   table k DECIMAL(12,2)      file a: k DECIMAL(12,2)  ->  read with k <= 21474836.48
 *   bound k <= 21474836.48     file b: k DECIMAL(5,2)   ->  read without it (all rows, exact
 *                                                           filter above the scan decides)
 * }}}
 * Spark converts a pushed literal to each file's physical type, and that conversion is exact
 * only for the type the table declares: a DECIMAL(5,2) file read as DECIMAL(12,2) gets the
 * literal's unscaled value truncated to an INT32 (rows lost) or too wide for its fixed-length
 * bytes (a read error stock Spark does not raise). And a bound that skips a row group also skips
 * decoding it, so a file whose column Spark cannot read as the table's type (a string read as
 * INT) would no longer raise Spark's error. A file that stores every read column in the table's
 * type has neither problem: the literal is of that type, and decoding cannot fail on a type
 * mismatch. Files that store a column in another type (schema evolution, a user-given schema, a
 * schema inferred from another file) are read whole, as stock Spark reads them.
 *
 * The decision needs each file's schema, so a file read with the bound has its footer read twice
 * (here, then by Spark's reader); without pushdown on, nothing changes and nothing is read.
 */
private[execution] final class BoundedParquetFormat(val bound: Filter) extends ParquetFileFormat {

  override def buildReaderWithPartitionValues(
      sparkSession: SparkSession,
      dataSchema: StructType,
      partitionSchema: StructType,
      requiredSchema: StructType,
      filters: Seq[Filter],
      options: Map[String, String],
      hadoopConf: Configuration): PartitionedFile => Iterator[InternalRow] = {
    val withoutBound = super.buildReaderWithPartitionValues(
      sparkSession, dataSchema, partitionSchema, requiredSchema, filters, options, hadoopConf)
    val conf = sparkSession.sessionState.conf
    // Field ids match columns by id, not name: not what the check below compares.
    val byFieldId = conf.getConf(SQLConf.PARQUET_FIELD_ID_READ_ENABLED) &&
      ParquetUtils.hasFieldIds(requiredSchema)
    if (!conf.parquetFilterPushDown || byFieldId) withoutBound
    else {
      val withBound = super.buildReaderWithPartitionValues(
        sparkSession, dataSchema, partitionSchema, requiredSchema, filters :+ bound, options, hadoopConf)
      // super set the schema converter's keys on hadoopConf.
      val fileConf = sparkSession.sparkContext.broadcast(new SerializableConfiguration(hadoopConf))
      val caseSensitive = conf.caseSensitiveAnalysis
      (file: PartitionedFile) => {
        val sharedConf = fileConf.value.value
        val readsAsTable = BoundedParquetFormat.fileSchema(sharedConf, file.toPath)
          .exists(BoundedParquetFormat.storesAs(_, requiredSchema, caseSensitive))
        if (readsAsTable) withBound(file) else withoutBound(file)
      }
    }
  }

  override def toString: String = s"Parquet with $bound"

  // Spark's formats equal any other instance of their class; this one reads other rows.
  override def equals(other: Any): Boolean = other match {
    case o: BoundedParquetFormat => o.bound == bound
    case _ => false
  }

  override def hashCode(): Int = bound.hashCode()
}

/**
 * Spark's ORC format, reading every file with the dynamic filter's bound pushed down. ORC needs
 * no per-file check: Spark converts the bound to each file's own types (`OrcFilters` over the
 * file's schema, decimals as `HiveDecimal`, exactly), ORC evaluates it only on columns whose
 * conversion from the file's type keeps statistics comparable (`SchemaEvolution`'s
 * "PPD-safe" conversions: same type and precision, wider integers, strings), and ORC raises a
 * conversion it does not support when it opens the file, before it skips anything.
 */
private[execution] final class BoundedOrcFormat(val bound: Filter) extends OrcFileFormat {

  override def buildReaderWithPartitionValues(
      sparkSession: SparkSession,
      dataSchema: StructType,
      partitionSchema: StructType,
      requiredSchema: StructType,
      filters: Seq[Filter],
      options: Map[String, String],
      hadoopConf: Configuration): PartitionedFile => Iterator[InternalRow] =
    super.buildReaderWithPartitionValues(
      sparkSession, dataSchema, partitionSchema, requiredSchema, filters :+ bound, options, hadoopConf)

  override def toString: String = s"ORC with $bound"

  override def equals(other: Any): Boolean = other match {
    case o: BoundedOrcFormat => o.bound == bound
    case _ => false
  }

  override def hashCode(): Int = bound.hashCode()
}

private[execution] object BoundedParquetFormat {

  /**
   * The file's top-level fields and the type Spark reads each as (None: one it cannot read); None
   * when its footer cannot be read.
   */
  def fileSchema(conf: Configuration, path: Path): Option[Seq[(String, Option[DataType])]] = Try {
    val options = HadoopReadOptions.builder(conf, path)
      .withMetadataFilter(ParquetMetadataConverter.SKIP_ROW_GROUPS).build()
    val reader = ParquetFileReader.open(HadoopInputFile.fromPath(path, conf), options)
    val parquet = try reader.getFooter.getFileMetaData.getSchema finally reader.close()
    // Each field on its own: a type Spark cannot read fails that field, not the others.
    val converter = new ParquetToSparkSchemaConverter(conf)
    parquet.getFields.asScala.toSeq.map { field =>
      field.getName -> Try(converter.convert(new MessageType(parquet.getName, field)).fields.head.dataType).toOption
    }
  }.toOption

  /**
   * Whether a file of top-level fields `file` holds each field of `required` that it has in that
   * field's type. Fields it lacks, nested or not, read as NULL and raise nothing; a field whose
   * name matches two of the file's (case-insensitive reads) is not its.
   */
  def storesAs(file: Seq[(String, Option[DataType])], required: StructType, caseSensitive: Boolean): Boolean =
    required.fields.forall { field =>
      matching(file)(_._1, field.name, caseSensitive) match {
        case Seq() => true
        case Seq((_, stored)) => stored.exists(sameType(_, field.dataType, caseSensitive))
        case _ => false
      }
    }

  /** The fields named `wanted`, as the session matches names. */
  def matching[T](fields: Seq[T])(name: T => String, wanted: String, caseSensitive: Boolean): Seq[T] =
    fields.filter(f => if (caseSensitive) name(f) == wanted else name(f).equalsIgnoreCase(wanted))

  private def sameType(file: DataType, table: DataType, caseSensitive: Boolean): Boolean = (file, table) match {
    case (f: StructType, t: StructType) =>
      storesAs(f.fields.toSeq.map(s => s.name -> Some(s.dataType)), t, caseSensitive)
    case (f: ArrayType, t: ArrayType) => sameType(f.elementType, t.elementType, caseSensitive)
    case (f: MapType, t: MapType) =>
      sameType(f.keyType, t.keyType, caseSensitive) && sameType(f.valueType, t.valueType, caseSensitive)
    // A collation orders values, it does not change how they are stored.
    case (_: StringType, _: StringType) => true
    case _ => file == table
  }
}
