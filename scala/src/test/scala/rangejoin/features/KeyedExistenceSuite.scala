package rangejoin.features

import org.apache.spark.sql.catalyst.plans.logical.Aggregate

import rangejoin.RangeJoinConf
import rangejoin.planning.KeyedExistence
/**
 * The keyed existence rewrite as a rule: where it shows, the settings that switch it off, that it
 * is idempotent (the optimizer's fixed-point batches run it again on its own output), and Spark's
 * max and min agreeing with its comparisons on NaN and signed zeros.
 */
class KeyedExistenceSuite extends RangeJoinQueries {

  override def beforeAll(): Unit = {
    super.beforeAll()
    sql("""CREATE OR REPLACE TEMP VIEW kp(id, chr, x) AS VALUES (1, 'a', 1.0D), (2, 'a', CAST('NaN' AS DOUBLE)),
          |  (3, 'b', -0.0D), (4, 'b', 0.0D), (5, NULL, 2.0D), (6, 'c', 1.0D)""".stripMargin)
    sql("""CREATE OR REPLACE TEMP VIEW ki(id, chr, lo) AS VALUES (1, 'a', CAST('NaN' AS DOUBLE)), (2, 'a', 3.0D),
          |  (3, 'b', 0.0D), (4, 'b', -0.0D), (5, NULL, 9.0D), (6, 'c', NULL)""".stripMargin)
  }

  private val exists = "SELECT * FROM kp p WHERE EXISTS (SELECT 1 FROM ki i WHERE i.chr = p.chr AND i.lo > p.x)"

  private def aggregates(query: String) = sql(query).queryExecution.optimizedPlan.collect {
    case a: Aggregate if a.aggregateExpressions.exists(_.name.startsWith("RangeJoin")) => a
  }

  // The views are tiny: rangejoin would buffer them and leave the join to its per-key index
  // (tested last); with no side to buffer, the rewrite is what runs.
  private val unbuffered = RangeJoinConf.BroadcastThreshold -> "-1"

  test("EXPLAIN shows the aggregate's RangeJoinMax column; the answer is stock Spark's") (withSQLConf(unbuffered) {
    assertAsStock(exists)
    val explained = sql(s"EXPLAIN EXTENDED $exists").collect().map(_.getString(0)).mkString
    assert(explained.contains(s"AS ${KeyedExistence.MaxName}"), explained)
    assert(aggregates(exists).size == 1)
    val min = "SELECT * FROM kp p WHERE NOT EXISTS (SELECT 1 FROM ki i WHERE i.chr = p.chr AND i.lo <= p.x)"
    assertAsStock(min)
    assert(sql(min).queryExecution.optimizedPlan.toString.contains(KeyedExistence.MinName))
  })

  test("spark.rangejoin.enabled and existenceFastPath.enabled switch it off; a bad value fails the query") {
    withSQLConf(RangeJoinConf.Enabled -> "false") { assert(aggregates(exists).isEmpty) }
    withSQLConf(RangeJoinConf.ExistenceFastPath -> "false") { assert(aggregates(exists).isEmpty) }
    withSQLConf(RangeJoinConf.ExistenceFastPath -> "maybe") {
      assert(intercept[IllegalArgumentException](sql(exists).queryExecution.optimizedPlan)
        .getMessage.contains(RangeJoinConf.ExistenceFastPath))
    }
  }

  test("the rule leaves its own output unchanged") (withSQLConf(unbuffered) {
    val once = sql("SELECT * FROM kp p LEFT ANTI JOIN ki i ON i.chr = p.chr AND p.x < i.lo")
      .queryExecution.optimizedPlan
    assert(once.exists(_.isInstanceOf[Aggregate]))
    assert(KeyedExistence(once) == once)
  })

  test("max and min order NaN and signed zeros as the comparisons do") (withSQLConf(unbuffered) {
    // NaN is the largest double and equal to itself; -0.0 equals 0.0: one group's max is NaN,
    // the other's max or min either zero, and every comparison with them is Spark's.
    for (op <- Seq("<", "<=", ">", ">=")) {
      assertAsStock(s"SELECT * FROM kp p WHERE EXISTS (SELECT 1 FROM ki i WHERE i.chr = p.chr AND p.x $op i.lo)")
      assertAsStock(s"SELECT * FROM kp p WHERE NOT EXISTS (SELECT 1 FROM ki i WHERE i.chr <=> p.chr AND i.lo $op p.x)")
    }
  })

  test("a side rangejoin buffers, keys that cannot fail: left to the per-key index, which costs what a hash join does") {
    val df = assertAsStock(exists)
    assert(aggregates(exists).isEmpty)
    val plan = df.queryExecution.executedPlan.toString
    assert(plan.contains("PiecewiseMergeJoin") && plan.contains("per key"), plan)
    // A left range key that may fail (ANSI): the index would evaluate it on every row.
    val failing = "SELECT * FROM kp p WHERE EXISTS (SELECT 1 FROM ki i WHERE i.chr = p.chr AND i.lo > CAST(p.id * 2 AS DOUBLE))"
    assertAsStock(failing)
    assert(aggregates(failing).size == 1)
  }

  test("NOT IN over values and columns that cannot be NULL: Spark keys its anti join on plain equality, left to the per-key index") {
    // VALUES columns are non-nullable where no row holds a NULL: id is, chr and lo are not.
    val notIn = "SELECT * FROM kp p WHERE p.id NOT IN (SELECT i.id FROM ki i WHERE i.lo > p.x)"
    val df = assertAsStock(notIn)
    assert(aggregates(notIn).isEmpty)
    val plan = df.queryExecution.executedPlan.toString
    assert(plan.contains("PiecewiseMergeJoin") && plan.contains("per key") && plan.contains("LeftAnti"), plan)
    // A column that may be NULL makes the anti join null-aware, which is no join key: rewritten.
    val nullable = "SELECT * FROM kp p WHERE p.chr NOT IN (SELECT i.chr FROM ki i WHERE i.lo > p.x)"
    assertAsStock(nullable)
    assert(aggregates(nullable).size == 1)
  }
}
