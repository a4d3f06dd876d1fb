package rangejoin.planning;

import java.io.Serializable;
import java.util.Objects;

import org.apache.spark.sql.catalyst.plans.logical.JoinStrategyHint;

/**
 * The join strategy {@code /*+ RANGE_JOIN(t, 100) *}{@code /} asks for: a range join too large to
 * broadcast, run as an equi-join on bins of the given size (BinnedRangeJoin). Unlike
 * {@link RangeJoinHint} it does not ask for {@code t} to be buffered. Written in Java for the
 * reason RangeJoinHint is.
 */
public final class RangeJoinBinHint extends JoinStrategyHint implements Serializable {

  private static final long serialVersionUID = 1L;

  private final double binSize;

  public RangeJoinBinHint(double binSize) {
    this.binSize = binSize;
  }

  /** The bin size as written: in the join keys' units, seconds for timestamps. */
  public double binSize() {
    return binSize;
  }

  @Override
  public String displayName() {
    return "range_join(bin size " + binSize + ")";
  }

  @Override
  @SuppressWarnings("unchecked")
  public scala.collection.immutable.Set<String> hintAliases() {
    return (scala.collection.immutable.Set<String>) (Object)
        scala.collection.immutable.Set$.MODULE$.empty().$plus(RangeJoinHint.NAME);
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof RangeJoinBinHint && ((RangeJoinBinHint) other).binSize == binSize;
  }

  @Override
  public int hashCode() {
    return Objects.hash(binSize);
  }

  @Override
  public String toString() {
    return displayName();
  }
}
