package rangejoin.differential

import org.apache.spark.SparkFunSuite
import org.apache.spark.sql.internal.SQLConf
import org.scalatest.funsuite.AnyFunSuite

import rangejoin.RangeJoinConf
/**
 * Differential tests: every generated case ([[Cases]]) runs with rangejoin off and on, and must
 * give the same answer ([[DifferentialRunner]]). The full set runs on a local session; subsets
 * run with adaptive execution off, with code generation off (whole-stage and expressions), with
 * ANSI mode off, and across executor JVMs.
 */
object DifferentialSuites {
  /** 11 join forms x 4 operators x 2 orientations x 7 variants. */
  val all: Seq[Case] = Cases.generate(variants = 7)
  def every(n: Int, offset: Int): Seq[Case] = all.filter(_.index % n == offset)
}

abstract class LocalDifferentialSuite(cases: Seq[Case], conf: (String, String)*)
  extends SparkFunSuite with LocalDifferentialSession {

  protected lazy val runner = new DifferentialRunner(spark)

  override protected def validatePlanChanges: Boolean = true

  override protected def summary: String = runner.summary(getClass.getSimpleName)

  cases.foreach { c => test(c.toString)(runner.check(c, conf)) }
}

class DifferentialSuite extends LocalDifferentialSuite(DifferentialSuites.all)

class DifferentialAqeOffSuite extends LocalDifferentialSuite(
  DifferentialSuites.every(3, 0), SQLConf.ADAPTIVE_EXECUTION_ENABLED.key -> "false")

class DifferentialCodegenOffSuite extends LocalDifferentialSuite(
  DifferentialSuites.every(3, 1),
  SQLConf.WHOLESTAGE_CODEGEN_ENABLED.key -> "false",
  SQLConf.CODEGEN_FACTORY_MODE.key -> "NO_CODEGEN")

class DifferentialAnsiOffSuite extends LocalDifferentialSuite(
  DifferentialSuites.every(5, 2), SQLConf.ANSI_ENABLED.key -> "false")

/**
 * Every inner join, with the side switch planned for every one it can take, however small its sides, and
 * buffering the other side whenever it can: the swapped join on every shape of data (the choice
 * itself: features.SideSwitchSuite).
 */
class DifferentialSideSwitchSuite extends LocalDifferentialSuite(
  DifferentialSuites.all.filter(_.form == JoinForm.Inner), RangeJoinConf.SideSwitchMinSize -> "0",
  RangeJoinConf.SideSwitchMaxRatio -> "1000") {
  // Registered after the cases, so it runs after them.
  test("the switch ran, and buffered the other side") {
    assert(runner.switches.swapped > 0,
      s"${runner.switches.switched} switched, ${runner.switches.swapped} swapped")
  }
}

/**
 * The same cases on `local-cluster[2,1,1024]`: two executor JVMs, so broadcasts, task closures and
 * the merged marks of the buffered side really cross processes. AQE on and off.
 */
class DistributedDifferentialSuite extends AnyFunSuite with ClusterDifferentialSession {

  private lazy val runner = new DifferentialRunner(spark)

  override protected def summary: Option[String] = Some(runner.summary(getClass.getSimpleName))

  for ((aqe, offset) <- Seq("true" -> 0, "false" -> 3); c <- DifferentialSuites.every(6, offset)) {
    test(s"AQE $aqe: $c")(runner.check(c, Seq(SQLConf.ADAPTIVE_EXECUTION_ENABLED.key -> aqe)))
  }
  // The inner cases with the side switch on every join it can take, swapping whenever it can:
  // the pass over the keys, the filtered side's broadcast and the streamed large side, across JVMs.
  private val inner = DifferentialSuites.all.filter(_.form == JoinForm.Inner)
  for ((aqe, offset) <- Seq("true" -> 0, "false" -> 1); c <- inner.zipWithIndex.collect { case (c, i) if i % 2 == offset => c }) {
    test(s"side switch, AQE $aqe: $c")(runner.check(c, Seq(SQLConf.ADAPTIVE_EXECUTION_ENABLED.key -> aqe,
      RangeJoinConf.SideSwitchMinSize -> "0", RangeJoinConf.SideSwitchMaxRatio -> "1000")))
  }
  // Registered after the cases, so it runs after them.
  test("the side switch buffered the other side across executors") {
    assert(runner.switches.swapped > 0, s"${runner.switches.switched} switched, ${runner.switches.swapped} swapped")
  }
}
