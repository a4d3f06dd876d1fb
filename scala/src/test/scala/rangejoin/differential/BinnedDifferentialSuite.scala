package rangejoin.differential

import rangejoin.RangeJoinConf

/**
 * Differential tests of the binned rewrite (BinnedRangeJoin): every generated case
 * ([[BinnedCases]]) runs with broadcasting off, with rangejoin off (stock Spark: a cartesian
 * product) and on, and must give the same multiset of rows, or raise an error of the same
 * condition; where both sides have rows, rangejoin's plan must be a shuffled equi-join on bins
 * ([[BinnedCase.planProblems]]).
 */
object BinnedDifferentialSuites {
  val all: Seq[BinnedCase] = BinnedCases.generate()
}

class BinnedDifferentialSuite extends DifferentialSuite(BinnedDifferentialSuites.all)

class BinnedDifferentialAqeOffSuite extends DifferentialSuite(BinnedDifferentialSuites.all.filter(_.index % 4 == 1)) with AqeOff

/** The bins on Spark's own shuffled joins (sort-merge): rangejoin's shuffled index switched off. */
class BinnedDifferentialSparkJoinSuite extends DifferentialSuite(BinnedDifferentialSuites.all.filter(_.index % 4 == 2)) {
  override def variant: Seq[(String, String)] = Seq(RangeJoinConf.ShuffleMaxPartitionSize -> "-1")
}
