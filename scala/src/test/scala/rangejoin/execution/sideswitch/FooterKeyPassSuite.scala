package rangejoin.execution.sideswitch

import java.io.File

import scala.jdk.CollectionConverters._

import org.apache.hadoop.fs.Path
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.util.HadoopInputFile
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.internal.SQLConf

import rangejoin.{RangeJoinConf, TestShims}
import rangejoin.features.RangeJoinQueries

/**
 * The side switch's pass answered from Parquet footers ([[FooterKeyPass]]):
 * the buffered side's row count and extreme key read from its files' statistics where they tell
 * exactly, the pass over its keys everywhere else. Answers as stock Spark's either way, and the
 * row count the switch decides on is the pass's.
 */
class FooterKeyPassSuite extends RangeJoinQueries {

  private val always = Seq(RangeJoinConf.SideSwitchMinSize -> "0")

  private def switchOf(df: DataFrame): SideSwitchExec = {
    val Seq(switch) = collect(df.queryExecution.executedPlan) { case s: SideSwitchExec => s }
    switch
  }

  /** The answer as stock's; the switch read footers (or passed) and swapped (or not) as given. */
  private def assertSwitch(query: String, footers: Boolean, swapped: Boolean, rows: Long = -1): DataFrame = {
    val df = assertAsStock(query)
    val switch = switchOf(df)
    val plan = df.queryExecution.executedPlan
    assert(switch.metrics("fromFooters").value == (if (footers) 1 else 0), s"$query\n$plan")
    assert(switch.metrics("swapped").value == (if (swapped) 1 else 0), s"$query\n$plan")
    if (rows >= 0) assert(switch.metrics("numBufferedRows").value == rows, s"$query\n$plan")
    df
  }

  private def parquetFiles(dir: File): Seq[File] = dir.listFiles().filter(_.getName.endsWith(".parquet")).toSeq

  /**
   * b: 4,000 rows in four files of several row groups each, k = id % 1,000 + 500 (a BIGINT) and
   * ki (an INT) the same, NULL on every 7th row and on every row from 3,900 on (whole row groups);
   * n = id, NULL on every 5th row. Sides to join it with, 6,000 rows each (estimated larger: b is
   * the side buffered as planned): s (k in 0..1,599: most rows pass either filter), lo
   * (-5,400..599: 99 above min(b.k) = 500) and hi (1,400..7,399: 99 below max(b.k) = 1,499).
   */
  private def withTables(body: File => Unit): Unit = withTempPath { dir =>
    sql("""SELECT id, IF(id % 7 = 0 OR id >= 3900, NULL, id % 1000 + 500) AS k,
          |  CAST(IF(id % 7 = 0 OR id >= 3900, NULL, id % 1000 + 500) AS INT) AS ki,
          |  IF(id % 5 = 0, NULL, id) AS n
          |FROM range(0, 4000, 1, 4)""".stripMargin)
      .write.option("parquet.block.size", 2048).parquet(dir.getPath)
    spark.read.parquet(dir.getPath).createOrReplaceTempView("b")
    for ((name, k) <- Seq("s" -> "id % 1600", "lo" -> "id - 5400", "hi" -> "id + 1400")) {
      sql(s"SELECT id, $k AS k, CAST($k AS INT) AS ki FROM range(0, 6000, 1, 3)").createOrReplaceTempView(name)
    }
    body(dir)
  }

  // Rows of b whose k is not NULL: what the pass counts under Spark's inferred isnotnull(k).
  private val keyedRows = 3900L - (0L until 3900L).count(_ % 7 == 0)

  test("BIGINT and INT keys, min and max: read from the footers, the same rows counted") {
    withSQLConf(always: _*) {
      withTables { dir =>
        assert(parquetFiles(dir).size == 4)
        val groups = parquetFiles(dir).map(footerGroups).sum
        assert(groups > 8, s"$groups row groups: the files should hold several each")
        for (k <- Seq("k", "ki")) {
          def query(side: String, op: String) =
            s"SELECT x.id, b.id FROM $side x JOIN b ON x.$k $op b.$k AND (x.id + b.id) % 1009 = 0"
          // Broad: stock Spark compares 20 million pairs each; once is enough.
          if (k == "k") {
            assertSwitch(query("s", ">"), footers = true, swapped = false, rows = keyedRows)
            assertSwitch(query("s", "<"), footers = true, swapped = false, rows = keyedRows)
          }
          assertSwitch(query("lo", ">"), footers = true, swapped = true, rows = keyedRows)
          assertSwitch(query("lo", ">="), footers = true, swapped = true, rows = keyedRows)
          assertSwitch(query("hi", "<"), footers = true, swapped = true, rows = keyedRows)
          assertSwitch(query("hi", "<="), footers = true, swapped = true, rows = keyedRows)
        }
      }
    }
  }

  test("not what the pass reads: a key expression, another filter, a cached side; the pass runs") {
    withSQLConf(always: _*) {
      withTables { _ =>
        assertSwitch("SELECT lo.id, b.id FROM lo JOIN b ON lo.k > CAST(b.ki AS BIGINT)", footers = false,
          swapped = true, rows = keyedRows)
        assertSwitch("SELECT s.id, b.id FROM s JOIN (SELECT * FROM b WHERE id % 3 = 0) b ON s.k > b.k AND (s.id + b.id) % 1009 = 0",
          footers = false, swapped = false)
        // isnotnull(n), inferred from the residual: n's NULLs leave the count to the pass. (id
        // is NULL nowhere: its isnotnull, inferred from the residuals above, kept the footers.)
        // (A side larger than lo: reading n, b is estimated larger.)
        sql("SELECT id, id - 19400 AS k FROM range(0, 20000, 1, 2)").createOrReplaceTempView("lo2")
        assertSwitch("SELECT lo2.id, b.id FROM lo2 JOIN b ON lo2.k > b.k AND lo2.id <> b.n", footers = false,
          swapped = true, rows = (0L until 3900L).count(i => i % 7 != 0 && i % 5 != 0))
        assertSwitch("SELECT lo.id, b.id FROM lo JOIN (SELECT * FROM b WHERE k < 1400) b ON lo.k > b.k",
          footers = false, swapped = true)
        sql("CACHE TABLE cb AS SELECT * FROM b")
        try assertSwitch("SELECT lo2.id, b.id FROM lo2 JOIN cb b ON lo2.k > b.k", footers = false, swapped = true,
          rows = keyedRows)
        finally sql("UNCACHE TABLE cb")
      }
    }
  }

  /** t: 20,000 rows, k = 300..20,299 (a BIGINT), ki the same as an INT; larger than the other sides. */
  private def withT(body: File => Unit): Unit = withTempPath { dir =>
    sql("SELECT id, id + 300 AS k, CAST(id + 300 AS INT) AS ki FROM range(0, 20000, 1, 2)")
      .createOrReplaceTempView("t")
    body(dir)
  }

  test("files without the column read it as NULL: rows without a key") {
    withSQLConf(always: _*) {
      withT { dir =>
        sql("SELECT id, id + 10 AS k FROM range(0, 300, 1, 1)").write.parquet(new File(dir, "a").getPath)
        sql("SELECT id FROM range(300, 500, 1, 1)").write.parquet(new File(dir, "b").getPath)
        spark.read.schema("id BIGINT, k BIGINT").parquet(new File(dir, "a").getPath, new File(dir, "b").getPath)
          .createOrReplaceTempView("mixed")
        // t.k < max(mixed.k) = 309 for 9 rows of t.
        val query = "SELECT t.id, m.id FROM t JOIN mixed m ON t.k < m.k"
        assertSwitch(query, footers = true, swapped = true, rows = 300)
        // Without Spark's inferred isnotnull(k), the pass counts the rows whose key is NULL too.
        withSQLConf(SQLConf.CONSTRAINT_PROPAGATION_ENABLED.key -> "false") {
          assertSwitch(query, footers = true, swapped = true, rows = 500)
        }
      }
    }
  }

  test("a file storing the key in another type, a file of no rows, more files than are read") {
    withSQLConf(always: _*) {
      withT { dir =>
        // A SMALLINT file read as INT: Spark widens what it reads; the statistics are not this
        // path's to widen, and the pass runs. The same values stored as INT take the footers.
        for ((stored, footers) <- Seq("SMALLINT" -> false, "INT" -> true)) {
          val path = new File(dir, stored).getPath
          sql(s"SELECT id, CAST(id + 300 AS $stored) AS k FROM range(0, 100, 1, 1)").write.parquet(path)
          spark.read.schema("id BIGINT, k INT").parquet(path).createOrReplaceTempView("n")
          assertSwitch("SELECT t.id, n.id FROM t JOIN n ON t.ki < n.k", footers = footers, swapped = false, rows = 100)
        }
        // No rows: no key, nothing counted, and no row of t kept.
        sql("SELECT id, id AS k FROM range(0)").write.parquet(new File(dir, "empty").getPath)
        spark.read.parquet(new File(dir, "empty").getPath).createOrReplaceTempView("e")
        assertSwitch("SELECT t.id, e.id FROM t JOIN e ON t.k > e.k", footers = true, swapped = true, rows = 0)
        sql(s"SELECT id, id + 10 AS k FROM range(0, 400, 1, ${FooterKeyPass.MaxFiles + 4})")
          .write.parquet(new File(dir, "many").getPath)
        spark.read.parquet(new File(dir, "many").getPath).createOrReplaceTempView("many")
        assertSwitch("SELECT t.id, m.id FROM t JOIN many m ON t.k < m.k", footers = false, swapped = false,
          rows = 400)
      }
    }
  }

  test("a table of INT and BIGINT files read as BIGINT: the pass, and Spark's widened keys") {
    assume(TestShims.parquetTypeWidening, "this Spark cannot read a Parquet column as a wider type")
    withSQLConf(always: _*) {
      withT { dir =>
        sql("SELECT id, id + 10 AS k FROM range(0, 200, 1, 1)").write.parquet(new File(dir, "f0").getPath)
        sql("SELECT id, CAST(id - 100 AS INT) AS k FROM range(200, 300, 1, 1)").write.parquet(new File(dir, "f1").getPath)
        sql(s"CREATE OR REPLACE TEMPORARY VIEW w (id BIGINT, k BIGINT) USING parquet OPTIONS (path '$dir/f*')")
        assertSwitch("SELECT t.id, w.id FROM t JOIN w ON t.k < w.k", footers = false, swapped = true, rows = 300)
        assertSwitch("SELECT t.id, w.id FROM t JOIN w ON t.k > w.k AND (t.id + w.id) % 997 = 0", footers = false,
          swapped = false)
      }
    }
  }

  test("a partitioned table: the files its partition filter keeps; a partition column as the key") {
    withSQLConf(always: _*) {
      withT { dir =>
        sql("SELECT id, id + 10 AS k, id % 3 AS p FROM range(0, 300, 1, 1)").write.partitionBy("p").parquet(dir.getPath)
        spark.read.parquet(dir.getPath).createOrReplaceTempView("pt")
        assertSwitch("SELECT t.id, x.id FROM t JOIN pt x ON t.k < x.k", footers = true, swapped = true, rows = 300)
        assertSwitch("SELECT t.id, x.id FROM t JOIN (SELECT * FROM pt WHERE p = 1) x ON t.k < x.k", footers = true,
          swapped = true, rows = 100)
        sql("SELECT id + 300 AS k FROM range(0, 300, 1, 1)").write.parquet(new File(dir, "p=7").getPath)
        spark.read.parquet(dir.getPath).createOrReplaceTempView("pt")
        assertSwitch("SELECT t.id, x.k FROM t JOIN pt x ON t.ki < x.p", footers = false, swapped = true)
      }
    }
  }

  test("dates and timestamps from 1900 on, stored in the unit Spark reads") {
    withSQLConf(always: _*) {
      withTempPath { dir =>
        def side(rows: Int, shift: Int, start: String = "2000-01-01") = {
          val d = s"date_add(DATE'$start', CAST(id + $shift AS INT))"
          val ts = s"timestamp_seconds(unix_timestamp(TIMESTAMP'$start 00:00:00') + (id + $shift) * 3600)"
          sql(s"SELECT id, $d AS d, $ts AS ts, CAST($ts AS TIMESTAMP_NTZ) AS ntz FROM range(0, $rows, 1, 1)")
        }
        // tt: 20,000 rows whose 10 lowest keys lie below the written files' greatest.
        side(20000, 290).createOrReplaceTempView("tt")
        val cases = Seq(
          ("d", Nil, true), ("ntz", Nil, true),
          ("ts", Seq(SQLConf.PARQUET_OUTPUT_TIMESTAMP_TYPE.key -> "TIMESTAMP_MICROS"), true),
          ("ts", Seq(SQLConf.PARQUET_OUTPUT_TIMESTAMP_TYPE.key -> "TIMESTAMP_MILLIS"), false),
          ("ts", Seq(SQLConf.PARQUET_OUTPUT_TIMESTAMP_TYPE.key -> "INT96"), false))
        for (((column, writeConf, footers), i) <- cases.zipWithIndex) {
          val path = new File(dir, s"c$i").getPath
          withSQLConf(writeConf: _*)(side(300, 0).write.parquet(path))
          spark.read.parquet(path).createOrReplaceTempView("w")
          assertSwitch(s"SELECT tt.id, w.id FROM tt JOIN w ON tt.$column < w.$column", footers = footers,
            swapped = true, rows = 300)
        }
        // Older than 1900: Spark may rebase what it reads; the pass reads it.
        for (column <- Seq("d", "ntz")) {
          val path = new File(dir, s"old_$column").getPath
          withSQLConf(SQLConf.PARQUET_OUTPUT_TIMESTAMP_TYPE.key -> "TIMESTAMP_MICROS")(
            side(300, 0, start = "1899-12-31").write.parquet(path))
          spark.read.parquet(path).createOrReplaceTempView("w")
          assertSwitch(s"SELECT tt.id, w.id FROM tt JOIN w ON tt.$column < w.$column", footers = false,
            swapped = true, rows = 300)
        }
      }
    }
  }

  test("files written without statistics: the pass, whichever Parquet writer Spark carries") {
    withSQLConf(always: _*) {
      withT { dir =>
        sql("SELECT id, id + 10 AS k FROM range(0, 300, 1, 1)")
          .write.option("parquet.column.statistics.enabled", "false").parquet(dir.getPath)
        // Parquet before 1.14 (Spark 3.5's) writes statistics whatever the option says.
        val hasStatistics = parquetFiles(dir).forall(footerHasMinMax)
        spark.read.parquet(dir.getPath).createOrReplaceTempView("ns")
        assertSwitch("SELECT t.id, n.id FROM t JOIN ns n ON t.k < n.k", footers = hasStatistics, swapped = true,
          rows = 300)
      }
    }
  }

  test("names as the session matches them") {
    withSQLConf(always :+ (SQLConf.CASE_SENSITIVE.key -> "false"): _*) {
      withT { dir =>
        sql("SELECT id, id + 10 AS K FROM range(0, 300, 1, 1)").write.parquet(dir.getPath)
        spark.read.parquet(dir.getPath).createOrReplaceTempView("up")
        assertSwitch("SELECT t.id, u.id FROM t JOIN up u ON t.k < u.k", footers = true, swapped = true, rows = 300)
      }
    }
  }

  private def footer(f: File) = {
    val reader = ParquetFileReader.open(HadoopInputFile.fromPath(new Path(f.getPath), spark.sessionState.newHadoopConf()))
    try reader.getFooter finally reader.close()
  }

  private def footerGroups(f: File): Int = footer(f).getBlocks.size

  // Every column of these files has values: a column chunk with statistics has its min and max.
  private def footerHasMinMax(f: File): Boolean =
    footer(f).getBlocks.asScala.forall(_.getColumns.asScala.forall(c => c.getStatistics != null &&
      c.getStatistics.hasNonNullValue))
}
