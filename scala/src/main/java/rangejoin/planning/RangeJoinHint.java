package rangejoin.planning;

import java.io.ObjectStreamException;
import java.io.Serializable;

import org.apache.spark.sql.catalyst.plans.logical.JoinStrategyHint;

/**
 * The join strategy a {@code /*+ RANGE_JOIN(t) *}{@code /} hint asks for: plan the join as a
 * PiecewiseMergeJoin with {@code t} buffered.
 *
 * <p>Spark carries join hints from the hinted relation to its join as a {@code JoinStrategyHint}
 * inside a {@code HintInfo}, and merges, reports and prints them on the way. Its hint class is a
 * Scala {@code sealed} class, which Scala code outside Spark's file cannot extend; the JVM has no
 * such restriction, so this one subclass is written in Java. Spark's own planning never matches
 * it: its strategies test for their own hints by equality.
 */
public final class RangeJoinHint extends JoinStrategyHint implements Serializable {

  private static final long serialVersionUID = 1L;

  /** The hint's name in SQL and in {@code Dataset.hint}. */
  public static final String NAME = "RANGE_JOIN";

  public static final RangeJoinHint INSTANCE = new RangeJoinHint();

  private RangeJoinHint() {}

  @Override
  public String displayName() {
    return "range_join";
  }

  @Override
  @SuppressWarnings("unchecked")
  public scala.collection.immutable.Set<String> hintAliases() {
    return (scala.collection.immutable.Set<String>) (Object)
        scala.collection.immutable.Set$.MODULE$.empty().$plus(NAME);
  }

  private Object readResolve() throws ObjectStreamException {
    return INSTANCE;
  }
}
