package rangejoin.differential

import java.nio.file.Files

import org.apache.spark.SparkFunSuite

object KeyedExistenceSuites {
  lazy val dir: java.io.File = {
    val d = Files.createTempDirectory("keyed-existence").toFile
    d.deleteOnExit()
    d
  }
  val all: Seq[ExistenceCase] = KeyedExistenceCases.main ++ KeyedExistenceCases.edges ++
    KeyedExistenceCases.overflow ++ KeyedExistenceCases.collated ++ KeyedExistenceCases.subqueries ++
    KeyedExistenceCases.perKeyIndex ++
    KeyedExistenceCases.declined
  def every(n: Int, offset: Int): Seq[ExistenceCase] = all.indices.filter(_ % n == offset).map(all)
}

/** The existence family's tables, written once per suite (Parquet, so that no side is provably empty). */
trait ExistenceTables extends LocalDifferentialSession { this: SparkFunSuite =>
  override def beforeAll(): Unit = {
    super.beforeAll()
    KeyedExistenceCases.register(spark, KeyedExistenceSuites.dir)
  }
}

/** Every case, on a local session with adaptive execution. */
class KeyedExistenceDifferentialSuite extends DifferentialSuite(KeyedExistenceSuites.all) with ExistenceTables

/** Every fourth case without adaptive execution: sort-merge and hash joins planned up front. */
class KeyedExistenceAqeOffSuite extends DifferentialSuite(KeyedExistenceSuites.every(4, 0)) with ExistenceTables with AqeOff

/**
 * Every eighth case on `local-cluster[2,1,1024]`: the aggregate's shuffle and the join's broadcast
 * cross executor JVMs. AQE on and off.
 */
class KeyedExistenceDistributedSuite extends DistributedDifferentialSuite {
  override protected def setUp(): Unit =
    KeyedExistenceCases.register(spark, Files.createTempDirectory("keyed-existence-cluster").toFile)

  // A tenth, as KeyedDistributedSuite: a twentieth (two cases) planned no range join.
  checkAqeOnAndOffShare("", KeyedExistenceSuites.every(8, 1), Tier.tenth)
}
