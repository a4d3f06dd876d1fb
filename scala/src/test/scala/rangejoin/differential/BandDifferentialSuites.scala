package rangejoin.differential

/**
 * Differential tests of band and interval joins: two range conjuncts bounding one side from both
 * directions, which rangejoin searches as a band (BandRun: both bounds on one buffered key) or an
 * interval index (IntervalIndex: bounds on two buffered keys) rather than as one sorted run.
 * Every generated case ([[BandCases]]) runs with rangejoin off and on, and must give the same
 * answer, or raise an error of the same condition ([[DifferentialRunner]]); where rangejoin
 * must take the join, its plan must name the index the band calls for.
 *
 * Why generated: a band's answer depends on both bounds' strictness, NULL at either end, empty,
 * inverted and equal intervals, -0.0 and NaN, which side is buffered (the index follows it), the
 * join type (what unmatched rows of either side emit), how the band is written (BETWEEN, either
 * order, operands flipped) and what else the condition holds (a residual evaluated only on the
 * band's candidates, or written first, which decides whether the band may drive at all). Fixed
 * queries (features/BandJoinSuite) cover each once; here they meet in hundreds of combinations,
 * including the overflow family (`l.x >= r.x AND l.x < r.x + 3` near Int/Long MaxValue, ANSI on),
 * where rangejoin evaluating a failing key on rows Spark never pairs would raise where Spark does
 * not.
 *
 * The full set runs on a local session; subsets run with adaptive execution off, with code
 * generation off (whole-stage and expressions), with ANSI mode off, and across executor JVMs.
 */
object BandDifferentialSuites {
  /**
   * 9 join forms x 8 band shapes x 5 variants, 9 join forms x 12 overflow cases, and the cases
   * found to differ from stock Spark, reduced.
   */
  val all: Seq[BandCase] = BandCases.generate(variants = 5, overflowVariants = 12) ++ BandCases.reported
  def every(n: Int, offset: Int): Seq[BandCase] = all.filter(_.index % n == offset)
}

class BandDifferentialSuite extends DifferentialSuite(BandDifferentialSuites.all)

class BandDifferentialAqeOffSuite extends DifferentialSuite(BandDifferentialSuites.every(3, 0)) with AqeOff

class BandDifferentialCodegenOffSuite extends DifferentialSuite(BandDifferentialSuites.every(3, 1)) with CodegenOff

/** Without ANSI, integer and decimal arithmetic wraps or gives NULL: more keys cannot fail. */
class BandDifferentialAnsiOffSuite extends DifferentialSuite(BandDifferentialSuites.every(5, 2)) with AnsiOff

/** Every inner band join, with the side switch on every one it can take, swapping whenever it can. */
class BandDifferentialSideSwitchSuite
  extends DifferentialSuite(BandDifferentialSuites.all.filter(_.form == BandForm.Inner)) with SideSwitchEverywhere

/**
 * A third of the cases on `local-cluster[2,1,1024]`: broadcasts of the sorted buffered side (with
 * its interval tree), task closures and the merged marks of the buffered side really cross
 * processes. AQE on and off; every other inner band case with the side switch everywhere (of
 * those the full tier a quarter: few of them swap, and a sixth swapped none).
 */
class BandDistributedSuite extends DistributedDifferentialSuite {
  checkAqeOnAndOff(BandDifferentialSuites.every(3, 0))
  checkShare("side switch", BandDifferentialSuites.all.filter(_.form == BandForm.Inner)
    .zipWithIndex.collect { case (c, i) if i % 2 == 0 => c }, Tier.quarter, SideSwitchEverywhere.conf: _*)
  // Registered after the cases, so it runs after them.
  test("the side switch buffered the other side across executors") {
    assert(runner.switches.swapped > 0, s"${runner.switches.switched} switched, ${runner.switches.swapped} swapped")
  }
}
