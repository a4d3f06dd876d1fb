package rangejoin.execution.filter

import org.apache.spark.sql.execution.FileSourceScanExec
import org.apache.spark.sql.execution.datasources.HadoopFsRelation
import org.apache.spark.sql.execution.metric.SQLMetric

import rangejoin.shims.FileScanCopy

/**
 * The planned scan reading with the bound too, and reporting to the planned scan's metrics: a
 * scan fixes its pushed filters when planned, so the bound needs a new scan, but what it reads is
 * the planned scan's to report. The bound goes to the relation's format ([[ScanPushdown]]), not to
 * the scan's data filters, which a format would apply to every file alike.
 */
private final class PushedScan(planned: FileSourceScanExec, relation: HadoopFsRelation)
  extends FileScanCopy(planned, relation) {

  override def metrics: Map[String, SQLMetric] = planned.metrics

  override lazy val driverMetrics: Map[String, SQLMetric] = planned.driverMetrics

  // Only the format tells this scan from the planned one, and Spark's Parquet and ORC formats
  // equal any of their class: `withNewChildren` would take this scan for the planned one (equal
  // children) and keep that.
  override def canEqual(other: Any): Boolean = other.isInstanceOf[PushedScan]

  override def equals(other: Any): Boolean = other match {
    case o: PushedScan => o.relation.fileFormat == relation.fileFormat && super.equals(o)
    case _ => false
  }

  override def hashCode(): Int = super.hashCode()
}
