package rangejoin.differential

import org.apache.spark.SparkFunSuite
import org.apache.spark.sql.internal.SQLConf
import org.scalactic.source.Position
import org.scalatest.Tag
import org.scalatest.funsuite.AnyFunSuite

import rangejoin.RangeJoinConf

/**
 * The test tiers, `-Drangejoin.tests` (RANGEJOIN_TESTS):
 *  - `fast` (`make test-fast`, and every Spark line but 4.3 in `make test`): a slice of each
 *    differential family, every n-th case, spread over its cases so that every join form, key
 *    type and shape the family rotates through still occurs;
 *  - `full` (`make test` on Spark 4.3): of each family a seeded tenth of the cases, of its
 *    variants (AQE, code generation or ANSI off) and of each local-cluster suite a twentieth (the
 *    keyed families and the plain side-switch cases across executors a tenth, whose fewer
 *    cases planned no range join or swapped no side; of the as-of family a twentieth, across
 *    executors a fixed few), drawn at random so that no dimension their order rotates through
 *    is dropped;
 *  - `all` (`make test-all`): every case of every family.
 */
object Tier {
  private val name: String = sys.props.getOrElse("rangejoin.tests", "full")
  /**
   * The smoke tier: the fast tier's suites with a third of each slice (the Spark lines 4.0-4.2),
   * shared between the three lines ([[acrossSmokeLines]], [[SharedAcrossSmokeLines]]).
   */
  val smoke: Boolean = name == "smoke"
  val fast: Boolean = name == "fast" || smoke
  val all: Boolean = name == "all"

  /**
   * `cases`; in the fast tier about `slice` of them, every n-th (the smoke tier a third as many);
   * in the full tier at most `full`.
   */
  def sample[C](cases: Seq[C], slice: Int = 30, full: Int = Int.MaxValue): Seq[C] =
    if (fast) {
      val size = if (smoke) math.max(2, slice / 3) else slice
      if (cases.size <= size) cases
      else {
        val n = (cases.size + size - 1) / size
        cases.indices.collect { case i if i % n == 0 => cases(i) }
      }
    } else if (all || cases.size <= full) cases
    else {
      val kept = new scala.util.Random(cases.size).shuffle(cases.indices.toVector).take(full).toSet
      cases.indices.collect { case i if kept(i) => cases(i) }
    }

  /**
   * `cases`, but in the smoke tier only this Spark line's turn of them: the three smoke lines
   * (4.0, 4.1 and 4.2, by minor version) take every third case each, so that together they run
   * every case. For a unit suite's loop over key types that is costly on every line, or a suite's
   * tests ([[SharedAcrossSmokeLines]]).
   */
  def acrossSmokeLines[C](cases: Seq[C]): Seq[C] = cases.indices.collect { case i if smokeTurn(i) => cases(i) }

  /** Whether the `i`-th of a loop's cases (or a suite's tests) runs on this line: [[acrossSmokeLines]]. */
  def smokeTurn(i: Int): Boolean = !smoke || i % 3 == lineTurn

  /** This line's turn among the smoke lines: its Spark minor version, modulo 3. */
  private lazy val lineTurn: Int = org.apache.spark.SPARK_VERSION.split('.')(1).toInt % 3

  /**
   * A tenth of `size`, rounded up: the full tier's share of each family's own suite (and of the
   * few local-cluster slices a twentieth leaves without a planned range join). A prefix of one
   * seeded shuffle, so a smaller share is a subset of a larger one.
   */
  def tenth(size: Int): Int = share(size, 10)

  /**
   * A twentieth of `size`, rounded up: the full tier's share of a family's cases under a variant
   * (AQE, code generation or ANSI off) and on `local-cluster`. Those re-run a subset of cases the
   * family's own suite samples a tenth of; what they add (a setting, crossing processes) any of
   * their cases shows.
   */
  def twentieth(size: Int): Int = share(size, 20)

  /** A quarter of `size`, rounded up: the full tier's share of a slice few of whose cases swap sides. */
  def quarter(size: Int): Int = share(size, 4)

  private def share(size: Int, n: Int): Int = (size + n - 1) / n
}

/**
 * A suite whose tests the smoke lines share: each smoke line registers every third of them
 * ([[Tier.smokeTurn]]), the other tiers every one. The differential suites' cases and the planning
 * suite's hand-written tests: the three lines together run the smoke tier's whole slice, each
 * line a third of it, which still plans and answers every family on that line's Spark. And the
 * unit suites of the execution core whose code reads nothing of a line's own (search, sort,
 * index, driver, grid): 4.3 and 3.5, both Scala versions, run them whole.
 */
trait SharedAcrossSmokeLines extends AnyFunSuite {
  private var registered = 0

  override protected def test(testName: String, testTags: Tag*)(testFun: => Any)(implicit pos: Position): Unit = {
    val mine = Tier.smokeTurn(registered)
    registered += 1
    if (mine) super.test(testName, testTags: _*)(testFun)
  }
}

/**
 * A suite's settings beyond its cases' own. The variants below stack (`with AqeOff with
 * AnsiOff`), as Spark's Enable/DisableAdaptiveExecutionSuite mix a setting into any suite.
 */
trait Variant {
  def variant: Seq[(String, String)] = Nil
}

trait AqeOff extends Variant {
  abstract override def variant: Seq[(String, String)] =
    super.variant :+ (SQLConf.ADAPTIVE_EXECUTION_ENABLED.key -> "false")
}

/** Whole-stage and expression code generation off: the interpreted paths. */
trait CodegenOff extends Variant {
  abstract override def variant: Seq[(String, String)] = super.variant ++ Seq(
    SQLConf.WHOLESTAGE_CODEGEN_ENABLED.key -> "false",
    SQLConf.CODEGEN_FACTORY_MODE.key -> "NO_CODEGEN")
}

trait AnsiOff extends Variant {
  abstract override def variant: Seq[(String, String)] = super.variant :+ (SQLConf.ANSI_ENABLED.key -> "false")
}

/**
 * The side switch planned for every inner join it can take, however small its sides, and
 * buffering the other side whenever it can: the swapped join on every shape of data (the choice
 * itself: features.SideSwitchSuite). A test registered after the cases asserts that it swapped.
 */
trait SideSwitchEverywhere extends Variant { this: DifferentialSuite =>
  abstract override def variant: Seq[(String, String)] = super.variant ++ SideSwitchEverywhere.conf

  test("the switch ran, and buffered the other side") {
    assert(runner.switches.swapped > 0, s"${runner.switches.switched} switched, ${runner.switches.swapped} swapped")
  }
}

object SideSwitchEverywhere {
  val conf: Seq[(String, String)] = Seq(RangeJoinConf.SideSwitchMinSize -> "0", RangeJoinConf.SideSwitchMaxRatio -> "1000")
}

/**
 * A differential family's cases on the shared local session, each run with rangejoin off and on
 * by the one [[DifferentialRunner]], under the suite's [[Variant]].
 */
abstract class DifferentialSuite(cases: Seq[DifferentialCase])
  extends SparkFunSuite with LocalDifferentialSession with Variant with SharedAcrossSmokeLines {

  lazy val runner = new DifferentialRunner(spark)

  override protected def summary: String = runner.summary(getClass.getSimpleName)

  /**
   * Whether the full tier runs a share of the cases (every suite's but a slice that no other
   * suite of the family covers); `make test-all` runs them all.
   */
  protected def sampledInFullTier: Boolean = true

  /** The full tier's share: a tenth of a family's own cases, a twentieth under a setting off. */
  private def fullShare(size: Int): Int = this match {
    case _: AqeOff | _: CodegenOff | _: AnsiOff => Tier.twentieth(size)
    case _ => Tier.tenth(size)
  }

  Tier.sample(cases, full = if (sampledInFullTier) fullShare(cases.size) else Int.MaxValue)
    .foreach { c => test(c.toString)(runner.check(c, variant)) }
}

/**
 * A differential family's cases on `local-cluster[2,1,1024]`: two executor JVMs, so broadcasts,
 * task closures, shuffles and the merged marks of a buffered side really cross processes.
 * `check` registers cases under a label and settings (adaptive execution on and off, typically).
 */
abstract class DistributedDifferentialSuite extends AnyFunSuite with ClusterDifferentialSession {

  lazy val runner = new DifferentialRunner(spark)

  override protected def summary: Option[String] = Some(runner.summary(getClass.getSimpleName))

  // The full tier a seeded twentieth, as the local suites' variants.
  protected def check(label: String, cases: Seq[DifferentialCase], conf: (String, String)*): Unit =
    checkShare(label, cases, Tier.twentieth, conf: _*)

  /** As `check`, the full tier running `share(cases.size)` of the cases. */
  protected def checkShare(label: String, cases: Seq[DifferentialCase], share: Int => Int, conf: (String, String)*): Unit =
    Tier.sample(cases, full = share(cases.size)).foreach { c => test(s"$label: $c")(runner.check(c, conf)) }

  /** Every other case with adaptive execution on, the rest with it off; `label` tells apart several calls. */
  protected def checkAqeOnAndOff(cases: Seq[DifferentialCase], conf: (String, String)*): Unit =
    checkAqeOnAndOff("", cases, conf: _*)

  protected def checkAqeOnAndOff(label: String, cases: Seq[DifferentialCase], conf: (String, String)*): Unit =
    checkAqeOnAndOffShare(label, cases, Tier.twentieth, conf: _*)

  /** As `checkAqeOnAndOff`, the full tier running `share` of each half. */
  protected def checkAqeOnAndOffShare(label: String, cases: Seq[DifferentialCase], share: Int => Int,
      conf: (String, String)*): Unit =
    for ((aqe, offset) <- Seq("true" -> 0, "false" -> 1)) {
      checkShare(s"${label}AQE $aqe", cases.indices.collect { case i if i % 2 == offset => cases(i) }, share,
        conf :+ (SQLConf.ADAPTIVE_EXECUTION_ENABLED.key -> aqe): _*)
    }
}

/**
 * The plain family: every generated case ([[Cases]]: 11 join forms x 4 operators x 2
 * orientations x 7 variants) with rangejoin off and on; subsets with adaptive execution off,
 * with code generation off, with ANSI mode off, with the side switch everywhere, and across
 * executor JVMs.
 */
object PlainCases {
  val all: Seq[Case] = Cases.generate(variants = 7)
  def every(n: Int, offset: Int): Seq[Case] = all.filter(_.index % n == offset)
  def inner: Seq[Case] = all.filter(_.form == JoinForm.Inner)
}

class PlainDifferentialSuite extends DifferentialSuite(PlainCases.all)

class PlainDifferentialAqeOffSuite extends DifferentialSuite(PlainCases.every(3, 0)) with AqeOff

class PlainDifferentialCodegenOffSuite extends DifferentialSuite(PlainCases.every(3, 1)) with CodegenOff

class PlainDifferentialAnsiOffSuite extends DifferentialSuite(PlainCases.every(5, 2)) with AnsiOff

class PlainDifferentialSideSwitchSuite extends DifferentialSuite(PlainCases.inner) with SideSwitchEverywhere

class PlainDistributedSuite extends DistributedDifferentialSuite {
  // In the full tier a dozen range joins, then six inner joins under the side switch.
  checkAqeOnAndOff(PlainCases.every(3, 0))
  // The inner cases with the side switch on every join it can take, swapping whenever it can:
  // the pass over the keys, the filtered side's broadcast and the streamed large side, across JVMs
  // (a tenth: fewer may swap none, which the test below asserts).
  checkAqeOnAndOffShare("side switch, ", PlainCases.inner, Tier.tenth, SideSwitchEverywhere.conf: _*)
  // Registered after the cases, so it runs after them.
  test("the side switch buffered the other side across executors") {
    assert(runner.switches.swapped > 0, s"${runner.switches.switched} switched, ${runner.switches.swapped} swapped")
  }
}
