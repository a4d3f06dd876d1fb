package rangejoin.shims

import org.apache.spark.sql.execution.FileSourceScanExec
import org.apache.spark.sql.execution.datasources.HadoopFsRelation

/** The scan `planned` reading `relation` instead: Spark 3.5's (nine fields) constructor. */
private[rangejoin] abstract class FileScanCopy(planned: FileSourceScanExec, relation: HadoopFsRelation)
  extends FileSourceScanExec(
    relation, planned.output, planned.requiredSchema,
    planned.partitionFilters, planned.optionalBucketSet, planned.optionalNumCoalescedBuckets,
    planned.dataFilters, planned.tableIdentifier, planned.disableBucketedScan)
