package rangejoin.differential

import java.io.File
import java.nio.file.Files

import scala.collection.mutable
import scala.util.{Failure, Success, Try}

import org.apache.spark.{SparkConf, SparkThrowable}
import org.apache.spark.network.util.JavaUtils
import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.execution.FileSourceScanExec
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.DataType

import rangejoin.RangeJoinConf
import rangejoin.features.RangeJoinQueries
import rangejoin.{TestFeatureShims, TestShims}
/**
 * Range joins whose streamed side is a Parquet or ORC file scan, with rangejoin on and off.
 *
 * rangejoin's dynamic filter bounds the streamed keys by the buffered side's extreme key and
 * pushes that bound into the file scan, which then skips row groups by their statistics; on
 * semi, anti and (NOT) EXISTS joins with no residual the existence fast path answers by that bound
 * alone. File statistics are lossy (-0.0 and 0.0, NaN, timestamps stored in milliseconds, decimals
 * as binary, strings compared under a collation the format does not know), and a filter pushed
 * below an operator changes what that operator sees (row positions, random values, errors). Each
 * of those lost or changed rows once, so here every encoding Spark writes, in files of many small
 * row groups with edge values that make their statistics lossy, is joined through every join form
 * that takes the filter or the fast path, and each answer must be stock Spark's.
 *
 * The reference is stock Spark (spark.rangejoin.enabled=false) with Parquet and ORC filter
 * pushdown off: Spark's own pushdown of literal filters loses -0.0 rows (a Parquet dictionary, ORC
 * statistics), so an answer read through statistics is not trusted as the reference. The joins
 * here push nothing in stock Spark (a control below checks that pushdown does not change its
 * answers); rangejoin runs with every default: pushdown, the dynamic filter and the fast path on.
 * An outcome is the sorted rendered rows or the error condition, and the rangejoin run must have
 * planned a PiecewiseMergeJoin, or the query tests nothing.
 */
class FileScanDifferentialSuite extends RangeJoinQueries with SharedAcrossSmokeLines {

  import FileScanDifferentialSuite._

  // Spark's tests validate the plan after every optimizer rule; this suite plans hundreds of
  // queries whose plans other suites check.
  override protected def sparkConf: SparkConf =
    super.sparkConf.set(SQLConf.PLAN_CHANGE_VALIDATION.key, "false")

  private var root: File = _
  private val written = mutable.Map.empty[Encoding, String]

  // The fast tier (Tier) checks a slice of the encodings and evolved tables, each with a slice
  // of its queries; the full tier every encoding and table, each with a tenth of its queries.
  private val encodings = Tier.sample(FileScanData.encodings, slice = 6)
  private val evolvedTables = Tier.sample(EvolvedTables.tables, slice = 4)

  override def beforeAll(): Unit = {
    super.beforeAll()
    root = Files.createTempDirectory("filescan-differential").toFile
  }

  override def afterAll(): Unit = {
    try JavaUtils.deleteRecursively(root) finally super.afterAll()
  }

  private def dirOf(name: String): String = new File(root, name).getCanonicalPath

  /** The encoding's table, written once (with its write settings) and read back as a view. */
  private def table(e: Encoding): String = {
    val index = FileScanData.encodings.indexOf(e)
    val view = s"s$index"
    if (!written.contains(e)) {
      val dir = dirOf(view)
      val rows = FileScanData.rows(spark, e)
      withSQLConf(e.writeConf: _*)(FileScanData.write(rows, e.format, dir))
      val read = spark.read.format(e.format).load(dir)
      // Parquet keeps a string's collation in Spark's metadata, ORC does not (see encodings).
      val keyed = if (read.schema("k").dataType == rows.schema("k").dataType) read
        else read.selectExpr("id", s"CAST(k AS ${e.domain.sqlType}) AS k")
      keyed.createOrReplaceTempView(view)
      written(e) = dir
    }
    view
  }

  // ---------------------------------------------------------------------------------------------
  // Outcomes

  private val reference = Seq(RangeJoinConf.Enabled -> "false",
    SQLConf.PARQUET_FILTER_PUSHDOWN_ENABLED.key -> "false", SQLConf.ORC_FILTER_PUSHDOWN_ENABLED.key -> "false")
  // rangejoin with the dynamic filter and the existence fast path: its defaults, stated.
  private val rangejoinOn = Seq(RangeJoinConf.Enabled -> "true", RangeJoinConf.DynamicFilter -> "true",
    RangeJoinConf.ExistenceFastPath -> "true")
  private val pushdownOff = Seq(
    SQLConf.PARQUET_FILTER_PUSHDOWN_ENABLED.key -> "false", SQLConf.ORC_FILTER_PUSHDOWN_ENABLED.key -> "false")

  /** The query's outcome under `conf`, and its DataFrame (to read the executed plan from). */
  private def run(query: String, conf: Seq[(String, String)]): (Outcome, Option[DataFrame]) =
    withConf(conf: _*) {
      Try(sql(query)) match {
        case Failure(e) => (raised(e), None)
        case Success(df) =>
          val outcome = Try(df.collect().toSeq) match {
            case Success(rows) => Rows(rows.map(render).sorted)
            case Failure(e) => raised(e)
          }
          (outcome, Some(df))
      }
    }

  /**
   * Why rangejoin's run of `query` (under `conf` on top of its defaults) is wrong against the
   * reference (or against `expectedConf`'s run), or None: a different outcome, or no range join.
   * Where both raise the same error, nothing was compared: only queries meant to may raise.
   */
  private def mismatch(
      query: String,
      conf: Seq[(String, String)],
      expectedConf: Seq[(String, String)],
      mustPlan: Boolean,
      mayRaise: Boolean): Option[String] = {
    val (expected, _) = run(query, expectedConf)
    val (actual, df) = run(query, rangejoinOn ++ conf)
    val planned = df.exists(d => Try(rangeJoins(d).nonEmpty).getOrElse(false))
    val differs = (expected, actual) match {
      case (r: Raised, _) if !mayRaise => Some(s"  stock raised ${brief(r)}: the case itself is broken")
      case (Rows(a), Rows(b)) if a == b => None
      case (Raised(a, _), Raised(b, _)) if a == b => None
      case (Rows(a), Rows(b)) =>
        Some(s"  stock ${a.size} rows, rangejoin ${b.size} rows\n" +
          s"  only in stock:     ${a.diff(b).take(6).mkString(" ")}\n" +
          s"  only in rangejoin: ${b.diff(a).take(6).mkString(" ")}")
      case (a, b) => Some(s"  stock: ${brief(a)}\n  rangejoin: ${brief(b)}")
    }
    val notPlanned = if (mustPlan && !planned) Some("  rangejoin planned no PiecewiseMergeJoin") else None
    val problems = differs.toSeq ++ notPlanned
    if (problems.isEmpty) None else Some((query +: problems).mkString("\n"))
  }

  /** Runs every query; fails listing the first ones that differ, with how many did. */
  private def checkAll(queries: Seq[String], conf: Seq[(String, String)] = Nil,
      expectedConf: Seq[(String, String)] = reference, mustPlan: Boolean = true,
      mayRaise: Boolean = false): Unit = {
    val run = if (exhaustive) queries else Tier.sample(queries, slice = 8, full = Tier.tenth(queries.size))
    val failures = run.flatMap(mismatch(_, conf, expectedConf, mustPlan, mayRaise))
    info(s"${run.size} queries, ${failures.size} differ")
    if (failures.nonEmpty) {
      val shown = if (exhaustive) failures.size else 6
      fail(s"${failures.size} of ${run.size} queries differ:\n\n${failures.take(shown).mkString("\n\n")}")
    }
  }

  // ---------------------------------------------------------------------------------------------
  // The files

  test("each streamed table is one file of many row groups with distinct statistics") {
    for (e <- encodings) {
      table(e)
      val layout = FileScanData.layoutOnDisk(spark, written(e), e.format)
      val g = FileScanData.rowGroup(e.format)
      assert(layout.rowGroups.size >= 6 && layout.rowGroups.forall(_ <= g), s"${e.name}: ${layout.rowGroups}")
      // Parquet has statistics per row group, ORC per stripe (and per row group in its index).
      // Parquet keeps no min/max (nor a column index) for INT96, whose byte order is not the
      // timestamps' order.
      if (e.label != "INT96") {
        assert(layout.statistics.distinct.size >= 3, s"${e.name}: ${layout.statistics}")
        if (e.format == "parquet" && TestFeatureShims.parquetRowGroupRowLimit)
          assert(layout.pages >= 2, s"${e.name}: a single column index page")
      }
      val rows = FileScanData.layoutOf(e)
      val nulls = rows.count(_.isEmpty).toDouble / rows.size
      assert(nulls > 0.08 && nulls < 0.25, s"${e.name}: $nulls NULL")
      // Every value was written, each many times (none lost to the layout).
      assert(rows.flatten.distinct.size == e.domain.values.size, e.name)
      // And every row reads back, its key of the domain's type.
      val read = spark.table(table(e))
      assert(read.schema("k").dataType == DataType.fromDDL(e.domain.sqlType), e.name)
      assert(read.count() == rows.size, e.name)
    }
    // Statistics really skip: a selective literal filter reads fewer rows than the table has.
    for (e <- FileScanData.encodings.filter(_.domain == FileScanData.int)) {
      val df = sql(s"SELECT * FROM ${table(e)} WHERE k > 1000")
      df.collect()
      val read = collect(df.queryExecution.executedPlan) {
        case s: FileSourceScanExec => s.metrics("numOutputRows").value
      }.sum
      assert(read < FileScanData.layoutOf(e).size / 2, s"${e.name}: the scan read $read rows")
    }
  }

  // ---------------------------------------------------------------------------------------------
  // The reported cases, as reported

  // Reported case 1: -0.0 in a file whose statistics (or dictionary) say nothing above -0.0; the
  // bound of `d >= b` is min(b) = 0.0 and -0.0 >= 0.0 holds. Stock counts 3, rangejoin counted 1.
  test("reported case 1: -0.0 doubles against a 0.0 bound, Parquet and ORC") {
    withTempView("bz") {
      sql("CREATE OR REPLACE TEMP VIEW bz(b) AS VALUES (0.0D), (1.0D)")
      val queries = for (format <- Seq("parquet", "orc")) yield {
        val dir = dirOf(s"negzero_$format")
        sql("SELECT CAST('-0.0' AS DOUBLE) AS d FROM range(3)").write.format(format).save(dir)
        spark.read.format(format).load(dir).createOrReplaceTempView(s"p_$format")
        Seq(s"SELECT count(*) FROM p_$format p JOIN bz ON p.d >= bz.b",
          s"SELECT p.d, bz.b FROM p_$format p JOIN bz ON p.d >= bz.b",
          s"SELECT * FROM p_$format p WHERE EXISTS (SELECT 1 FROM bz WHERE p.d >= bz.b)")
      }
      checkAll(queries.flatten)
    }
  }

  // Reported case 2: TIMESTAMP_MILLIS statistics hold milliseconds; the bound .0015 (a
  // sub-millisecond part) of `t < b` is truncated to .001 for the file, and t = .001 is lost.
  test("reported case 2: TIMESTAMP_MILLIS Parquet against a sub-millisecond bound") {
    withTempView("tb") {
      val dir = dirOf("millis")
      withSQLConf(SQLConf.PARQUET_OUTPUT_TIMESTAMP_TYPE.key -> "TIMESTAMP_MILLIS") {
        sql("SELECT id, TIMESTAMP'2020-01-01 00:00:00.001' AS t FROM range(5)").write.parquet(dir)
      }
      spark.read.parquet(dir).createOrReplaceTempView("pt")
      sql("CREATE OR REPLACE TEMP VIEW tb(b) AS VALUES (TIMESTAMP'2020-01-01 00:00:00.0015')")
      checkAll(Seq(
        "SELECT pt.id, pt.t, tb.b FROM pt JOIN tb ON pt.t < tb.b",
        "SELECT * FROM pt WHERE EXISTS (SELECT 1 FROM tb WHERE pt.t < tb.b)",
        "SELECT * FROM pt LEFT SEMI JOIN tb ON pt.t < tb.b",
        // The buffered side is preserved: a lost streamed row shows as tb's row padded with NULLs.
        "SELECT /*+ RANGE_JOIN(tb) */ pt.id, pt.t, tb.b FROM pt RIGHT JOIN tb ON pt.t < tb.b"))
    }
  }

  // Reported case 3: the bound pushed below operators that must see every row: row positions
  // (monotonically_increasing_id, rand's sequence), a random filter, and an expression that raises
  // DIVIDE_BY_ZERO on a row (v = 3) the bound would skip.
  test("reported case 3: the bound is not pushed below operators that see every row") {
    val pv = bigTable("parquet")
    withTempView("bb") {
      sql("CREATE OR REPLACE TEMP VIEW bb(y) AS VALUES (15000), (16000)")
      // ANSI mode (Spark's default) makes 10 / 0 raise.
      withSQLConf(SQLConf.ANSI_ENABLED.key -> "true") {
        checkAll(Seq(
          s"SELECT q.v, q.mid, bb.y FROM (SELECT v, monotonically_increasing_id() AS mid FROM $pv) q JOIN bb ON q.v > bb.y",
          s"SELECT q.v, q.r, bb.y FROM (SELECT v, rand(7) AS r FROM $pv) q JOIN bb ON q.v > bb.y",
          s"SELECT q.v, q.id, bb.y FROM (SELECT v, id FROM $pv WHERE rand(3) < 0.5) q JOIN bb ON q.v > bb.y",
          s"SELECT q.v, q.id, bb.y FROM (SELECT v, id FROM $pv WHERE 10 / (v - 3) > -100) q JOIN bb ON q.v > bb.y"),
          mayRaise = true)
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Every encoding, every join form and operator

  for ((e, index) <- FileScanData.encodings.zipWithIndex if encodings.contains(e)) {
    test(s"${e.name}: every join form, operator and bound agrees with stock Spark") {
      val s = Streamed(s"${table(e)} s", key = "k", id = "id")
      checkAll(queriesFor(s, e.domain, index, e.everyOperator))
    }
  }

  /** The queries of one encoding's table: the rotation below, or every combination (see `exhaustive`). */
  private def queriesFor(s: Streamed, domain: KeyDomain, seed: Int, everyOperator: Boolean): Seq[String] =
    if (exhaustive) {
      // Every operator with every bound, in the three forms that use the bound differently: the
      // filter before the join loop, the fast path's filter as the answer, and its negation.
      for (o <- Ops.indices; b <- domain.bounds.indices; f <- Seq(0, 2, 3)) yield
        query(s, domain, Forms.filtered(f), o, b, flipped = (o + b + f) % 2 == 1)
    } else rotated(s, domain, seed, everyOperator)

  /**
   * Every bound with one of `<`, `<=` (the bound is the buffered keys' maximum) and one of `>`,
   * `>=` (their minimum), strict and inclusive in turn, or with all four. Join forms rotate through
   * the filtered forms, and every other pair of queries writes the comparison as `b.k op' s.k`;
   * `seed` shifts the rotation, so that encodings of one key type pair them differently. Then one
   * control form.
   */
  private def rotated(s: Streamed, domain: KeyDomain, seed: Int, everyOperator: Boolean): Seq[String] = {
    val pairs = for (b <- domain.bounds.indices; upper <- Seq(false, true);
        strict <- if (everyOperator) Seq(true, false) else Seq((b + seed + (if (upper) 1 else 0)) % 2 == 0))
      yield (b, Ops.indexOf((upper, strict) match {
        case (false, true) => "<"
        case (false, false) => "<="
        case (true, true) => ">"
        case (true, false) => ">="
      }))
    val filtered = pairs.zipWithIndex.map { case ((b, o), i) =>
      query(s, domain, Forms.filtered((i + seed) % Forms.filtered.size), o, b, flipped = (i / 2 + seed) % 2 == 1)
    }
    val control = query(s, domain, Forms.controls(seed % Forms.controls.size), (seed + seed / 4) % Ops.size,
      seed % domain.bounds.size, flipped = seed % 3 == 0)
    filtered :+ control
  }

  private def query(s: Streamed, domain: KeyDomain, form: Form, op: Int, bound: Int, flipped: Boolean): String = {
    val values = domain.bounds(bound).map(v => s"(${domain.typed(v)})").mkString(", ")
    s"WITH b(k) AS (VALUES $values) " + form.sql(s, condition(s, Ops(op), flipped))
  }

  // ---------------------------------------------------------------------------------------------
  // Operators between the scan and the join

  private val bigWritten = mutable.Map.empty[String, String]

  /** 20,000 rows, v = id ascending, in about ten row groups or stripes. */
  private def bigTable(format: String): String = bigWritten.getOrElseUpdate(format, {
    val dir = dirOf(s"big_$format")
    val rows = spark.range(0, 20000, 1, 1).selectExpr("id", "CAST(id AS INT) AS v")
    val options = if (format == "parquet") TestFeatureShims.parquetRowGroupOptions(2000)
      else Map("orc.row.index.stride" -> "1024", "orc.stripe.row.count" -> "2048")
    rows.write.options(options).format(format).save(dir)
    val groups = FileScanData.layoutOnDisk(spark, dir, format, column = "v").rowGroups
    assert(groups.size >= 8, s"$format: $groups")
    val view = s"pv_$format"
    spark.read.format(format).load(dir).createOrReplaceTempView(view)
    view
  })

  /** What may sit between the scan and the join: the projection's `x`, and whether it is safe. */
  private def operators(pv: String): Seq[Streamed] = Seq(
    Streamed(s"(SELECT v, monotonically_increasing_id() AS x FROM $pv) s", "v", "x"),
    Streamed(s"(SELECT v, rand(7) AS x FROM $pv) s", "v", "x"),
    Streamed(s"(SELECT v, id AS x FROM $pv WHERE rand(3) < 0.5) s", "v", "x"),
    // Raises DIVIDE_BY_ZERO on v = 3 (ANSI mode, the default): both must raise it.
    Streamed(s"(SELECT v, id AS x FROM $pv WHERE 10 / (v - 3) > -100) s", "v", "x"),
    // Safe operators: the bound may go below them, and the answers must still agree.
    Streamed(s"(SELECT v, id AS x FROM $pv WHERE v % 2 = 0) s", "v", "x"),
    Streamed(s"(SELECT v, v + 1 AS x, id FROM $pv) s", "v", "x"))

  private val bigBounds = KeyDomain("int", "INT", Nil, Seq(Seq("15000", "16000"), Seq("5000"), Seq("2")))

  for (format <- Seq("parquet", "orc")) {
    test(s"$format: operators between the scan and the join see the rows stock Spark's see") {
      val pv = bigTable(format)
      // Each operator with each comparison, in four join forms; `>` and `>=` skip the row
      // groups at the start (row positions, v = 3), `<` and `<=` those at the end.
      val queries = for ((s, i) <- operators(pv).zipWithIndex; o <- Ops.indices) yield
        query(s, bigBounds, Forms.filtered((i + 2 * o) % Forms.filtered.size), o, (i + o) % bigBounds.bounds.size,
          flipped = (i + o) % 2 == 1)
      // ANSI mode (Spark's default) makes 10 / 0 raise.
      withSQLConf(SQLConf.ANSI_ENABLED.key -> "true")(checkAll(queries, mayRaise = true))
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Schema evolution: files of one table written with other types than the table's

  /** The evolved table's files, written once per format, and its view. */
  private def evolved(t: EvolvedTable, format: String): String = {
    val view = s"e${EvolvedTables.tables.indexOf(t)}_$format"
    if (!spark.catalog.tableExists(view)) {
      val dir = dirOf(view)
      for ((f, i) <- t.files.zipWithIndex) {
        val sub = if (t.partitioned) s"p=$i" else s"f$i"
        withSQLConf(f.writeConf: _*)(FileScanData.write(sql(f.select).repartition(1), format, s"$dir/$sub"))
      }
      if (t.mergeSchema) {
        spark.read.option("mergeSchema", "true").format(format).load(s"$dir/f*").createOrReplaceTempView(view)
      } else {
        val path = if (t.partitioned) dir else s"$dir/f*"
        sql(s"CREATE TEMPORARY VIEW $view (${t.schema}) USING $format OPTIONS (path '$path')")
      }
    }
    view
  }

  /**
   * Every bound of the table with `<` or `<=` and with `>` or `>=`, join forms in rotation, read
   * by the vectorized reader and by the row-based one in turn.
   */
  private def evolvedQueries(t: EvolvedTable, format: String): Seq[(String, Seq[(String, String)])] = {
    val s = Streamed(s"${evolved(t, format)} s", key = "k", id = "id")
    val keyType = spark.table(evolved(t, format)).schema("k").dataType.sql
    val domain = KeyDomain(t.name, keyType, Nil, t.bounds.map(b => Seq(s"'$b'")))
    val seed = EvolvedTables.tables.indexOf(t)
    for (b <- t.bounds.indices; upper <- Seq(false, true)) yield {
      val i = 2 * b + (if (upper) 1 else 0)
      // Ops: "<", "<=", ">", ">="; strict and inclusive in turn.
      val op = (if (upper) 2 else 0) + (b + seed) % 2
      val vectorized = (b + seed) % 2 == 0
      val readers = Seq(SQLConf.PARQUET_VECTORIZED_READER_ENABLED.key -> vectorized.toString,
        SQLConf.ORC_VECTORIZED_READER_ENABLED.key -> vectorized.toString)
      query(s, domain, Forms.filtered((i + seed) % Forms.filtered.size), op, b, flipped = i % 3 == 2) -> readers
    }
  }

  for (format <- Seq("parquet", "orc"); t <- evolvedTables) {
    test(s"$format, schema evolution, ${t.name}: every join form agrees with stock Spark") {
      assume(format != "parquet" || TestShims.parquetTypeWidening,
        "this Spark cannot read a Parquet column as a wider type: stock Spark fails these cases")
      val queries = evolvedQueries(t, format)
      val failures = Tier.sample(queries, slice = 8, full = Tier.tenth(queries.size)).flatMap { case (q, readers) =>
        mismatch(q, readers, reference ++ readers, mustPlan = true, mayRaise = t.mayRaise)
      }
      assert(failures.isEmpty, failures.mkString("\n\n"))
    }
  }

  // Those tables are the case only if stock Spark's own pushdown of the same bound loses rows
  // or raises on them, as reported: the gate is what keeps rangejoin's answer.
  test("control: Spark's own pushdown of a bound is wrong on an evolved Parquet table") {
    assume(TestShims.parquetTypeWidening, "this Spark cannot read a Parquet column as a wider type")
    val view = evolved(EvolvedTables.tables.head, "parquet")
    val query = s"SELECT count(*) FROM $view WHERE k < CAST(21474836.48 AS DECIMAL(12,2))"
    val answers = Seq("true", "false").map { pushdown =>
      withSQLConf(SQLConf.PARQUET_FILTER_PUSHDOWN_ENABLED.key -> pushdown)(sql(query).head().getLong(0))
    }
    assert(answers == Seq(0L, 857L), answers)
  }

  // The gate decides per file: a file in the table's types still skips its row groups.
  test("a bound reaches the files stored in the table's types, not the others") {
    assume(TestShims.parquetTypeWidening, "this Spark cannot read a Parquet column as a wider type")
    val view = evolved(EvolvedTables.tables.find(_.name == "int as bigint").get, "parquet")
    val df = assertAsStock(s"SELECT s.id FROM $view s JOIN (VALUES (-190L)) b(k) ON s.k < b.k")
    assert(rangeJoins(df).nonEmpty)
    val scanned = collect(df.queryExecution.executedPlan) {
      case scan: FileSourceScanExec => scan.metrics("numOutputRows").value
    }.sum
    // The INT file (1000 rows) is read whole; the BIGINT file only where its statistics allow.
    assert(scanned >= 1000 && scanned < 1500, scanned)
  }

  // The one difference docs/semantics.md names: a row group the pushed bound excludes is never
  // decoded, so damage inside it raises nothing, as with Spark's own pushed filters. Here the
  // last row group's first page header is overwritten: stock Spark (pushdown off) fails reading
  // it, rangejoin skips that row group and answers what the intact file answers.
  test("the documented difference: damage in a row group the bound excludes raises no error") {
    val dir = dirOf("damaged")
    spark.range(0, 1000, 1, 1).selectExpr("id AS k").write
      .options(TestFeatureShims.parquetRowGroupOptions(100)).option("compression", "none").parquet(dir)
    val file = new File(dir).listFiles().filter(_.getName.endsWith(".parquet")).head
    spark.read.parquet(dir).createOrReplaceTempView("damaged")
    val query = "SELECT d.k FROM damaged d JOIN (VALUES (50L)) b(k) ON d.k < b.k"
    val intact = run(query, reference)._1
    assert(intact == Rows((0 until 50).map(k => s"[$k]").sorted))
    val reader = org.apache.parquet.hadoop.ParquetFileReader.open(
      org.apache.parquet.hadoop.util.HadoopInputFile.fromPath(
        new org.apache.hadoop.fs.Path(file.getCanonicalPath), spark.sessionState.newHadoopConf()))
    val lastChunk = try reader.getRowGroups.get(reader.getRowGroups.size - 1).getColumns.get(0)
      finally reader.close()
    val bytes = Files.readAllBytes(file.toPath)
    java.util.Arrays.fill(bytes, lastChunk.getStartingPos.toInt, lastChunk.getStartingPos.toInt + 16, 0xff.toByte)
    Files.write(file.toPath, bytes)
    spark.catalog.refreshByPath(dir)
    assert(run(query, reference)._1.isInstanceOf[Raised], "stock Spark read the damaged row group")
    val (answer, df) = run(query, rangejoinOn)
    assert(df.exists(d => rangeJoins(d).nonEmpty) && answer == intact, answer)
  }

  // ---------------------------------------------------------------------------------------------
  // Controls

  /**
   * A sample of the encodings' queries: every `n`th encoding from `offset`, every `n`th query (in
   * the fast tier, of the encodings it checks).
   */
  private def sample(n: Int, offset: Int): Seq[String] =
    FileScanData.encodings.zipWithIndex.filter { case (e, i) =>
      if (Tier.fast) encodings.indexOf(e) % n == offset else i % n == offset
    }.flatMap { case (e, index) =>
      queriesFor(Streamed(s"${table(e)} s", "k", "id"), e.domain, index, e.everyOperator).zipWithIndex.collect {
        case (q, i) if i % n == index % n => q
      }
    }

  // The joins above push nothing in stock Spark, so its answer must not depend on pushdown. Were
  // it to, the reference (pushdown off) would be checking Spark rather than rangejoin.
  test("control: stock Spark answers these joins alike with pushdown on and off") {
    checkAll(sample(4, 0), conf = Seq(RangeJoinConf.Enabled -> "false"), mustPlan = false)
  }

  // With pushdown off only the filter in generated code and the fast path remain: whether those
  // are right, apart from what file statistics do to the bound.
  test("control: with file filter pushdown off, rangejoin answers as stock Spark") {
    checkAll(sample(4, 1), conf = pushdownOff)
  }
}

object FileScanDifferentialSuite {

  /**
   * RANGEJOIN_FILESCAN_QUERIES=all runs every operator with every bound of every encoding (in
   * three join forms) instead of the rotation: some 3,000 queries, half an hour.
   */
  val exhaustive: Boolean = sys.env.get("RANGEJOIN_FILESCAN_QUERIES").contains("all")

  /** The streamed relation as it appears in FROM (aliased `s`), its key and its id column. */
  final case class Streamed(relation: String, key: String, id: String)

  val Ops: Seq[String] = Seq("<", "<=", ">", ">=")
  private val flip = Map("<" -> ">", "<=" -> ">=", ">" -> "<", ">=" -> "<=")

  /** `s.key op b.k`, or the same comparison written the other way round. */
  def condition(s: Streamed, op: String, flipped: Boolean): String =
    if (flipped) s"b.k ${flip(op)} s.${s.key}" else s"s.${s.key} $op b.k"

  /** A join of the streamed relation `s` with the buffered `b(k)`, on a condition. */
  final case class Form(name: String, template: (Streamed, String) => String) {
    def sql(s: Streamed, condition: String): String = template(s, condition)
  }

  object Forms {
    private def pairs(s: Streamed) = s"s.${s.id}, s.${s.key}, b.k"
    private def own(s: Streamed) = s"s.${s.id}, s.${s.key}"

    /** The forms the dynamic filter or the fast path applies to. */
    val filtered: Seq[Form] = Seq(
      Form("inner", (s, c) => s"SELECT /*+ BROADCAST(b) */ ${pairs(s)} FROM ${s.relation} JOIN b ON $c"),
      Form("inner with residual", (s, c) =>
        s"SELECT /*+ BROADCAST(b) */ ${pairs(s)} FROM ${s.relation} JOIN b ON $c AND s.${s.id} % 3 <> 0"),
      Form("left semi", (s, c) => s"SELECT ${own(s)} FROM ${s.relation} LEFT SEMI JOIN b ON $c"),
      Form("left anti", (s, c) => s"SELECT ${own(s)} FROM ${s.relation} LEFT ANTI JOIN b ON $c"),
      Form("exists", (s, c) => s"SELECT ${own(s)} FROM ${s.relation} WHERE EXISTS (SELECT 1 FROM b WHERE $c)"),
      Form("not exists", (s, c) =>
        s"SELECT ${own(s)} FROM ${s.relation} WHERE NOT EXISTS (SELECT 1 FROM b WHERE $c)"),
      // The buffered side is preserved, the streamed side filtered: a lost streamed row shows as
      // b's row padded with NULLs.
      Form("right join, RANGE_JOIN(b)", (s, c) =>
        s"SELECT /*+ RANGE_JOIN(b) */ ${pairs(s)} FROM ${s.relation} RIGHT JOIN b ON $c"),
      Form("left semi with residual", (s, c) =>
        s"SELECT ${own(s)} FROM ${s.relation} LEFT SEMI JOIN b ON $c AND s.${s.id} % 3 <> 0"))

    /** Forms that must not filter the file side at all: every streamed row is output. */
    val controls: Seq[Form] = Seq(
      Form("exists or", (s, c) =>
        s"SELECT ${own(s)} FROM ${s.relation} WHERE EXISTS (SELECT 1 FROM b WHERE $c) OR s.${s.id} % 5 = 0"),
      Form("left join, BROADCAST(b)", (s, c) =>
        s"SELECT /*+ BROADCAST(b) */ ${pairs(s)} FROM ${s.relation} LEFT JOIN b ON $c"),
      Form("left join, BROADCAST(s)", (s, c) =>
        s"SELECT /*+ BROADCAST(s) */ ${pairs(s)} FROM ${s.relation} LEFT JOIN b ON $c"),
      Form("left anti with residual", (s, c) =>
        s"SELECT ${own(s)} FROM ${s.relation} LEFT ANTI JOIN b ON $c AND s.${s.id} % 3 <> 0"))
  }

  /** A row rendered so that -0.0 and 0.0, NaN, '' and NULL stay distinct. */
  def render(row: Row): String = row.toSeq.map {
    case null => "NULL"
    case s: String => s"'$s'"
    case v => v.toString // Double/Float print NaN and -0.0 as themselves
  }.mkString("[", ", ", "]")

  /** The error condition of the first throwable in the cause chain that has one. */
  def raised(e: Throwable): Raised = {
    val chain = Iterator.iterate(e)(_.getCause).takeWhile(_ != null).toSeq
    val condition = chain.collectFirst {
      case t: SparkThrowable if TestShims.condition(t) != null => TestShims.condition(t)
    }.getOrElse(chain.last.getClass.getName)
    Raised(condition, e.getMessage)
  }

  def brief(o: Outcome): String = o match {
    case Rows(rows) => s"${rows.size} rows: ${rows.take(6).mkString(" ")}"
    case Raised(condition, message) => s"$condition (${Option(message).map(_.linesIterator.next()).getOrElse("")})"
  }
}
