package rangejoin.shims

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.execution.FileSourceScanExec
import org.apache.spark.sql.execution.datasources.HadoopFsRelation

/** The scan `planned` reading `relation` instead: Spark 3.5's (nine fields) constructor. */
private[rangejoin] abstract class FileScanCopy(planned: FileSourceScanExec, relation: HadoopFsRelation)
  extends FileSourceScanExec(
    relation, planned.output, planned.requiredSchema,
    planned.partitionFilters, planned.optionalBucketSet, planned.optionalNumCoalescedBuckets,
    planned.dataFilters, planned.tableIdentifier, planned.disableBucketedScan)

private[rangejoin] object ScanFiles {
  /**
   * The files the scan reads once its static partition filters are applied: the listing it made
   * (or makes now) for its own reading. Dynamic partition pruning may drop some at run time.
   */
  def selected(scan: FileSourceScanExec): Iterator[Path] =
    scan.selectedPartitions.iterator.flatMap(_.files.iterator.map(_.getPath))
}
