package rangejoin.shims

import org.apache.spark.sql.execution.FileSourceScanExec
import org.apache.spark.sql.execution.datasources.HadoopFsRelation

/** The scan `planned` reading `relation` instead: Spark 4.0 to 4.2's (a stream, ten fields) constructor. */
private[rangejoin] abstract class FileScanCopy(planned: FileSourceScanExec, relation: HadoopFsRelation)
  extends FileSourceScanExec(
    relation, planned.stream, planned.output, planned.requiredSchema,
    planned.partitionFilters, planned.optionalBucketSet, planned.optionalNumCoalescedBuckets,
    planned.dataFilters, planned.tableIdentifier, planned.disableBucketedScan)
