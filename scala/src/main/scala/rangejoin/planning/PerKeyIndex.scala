package rangejoin.planning

import org.apache.spark.sql.catalyst.expressions.Expression

import rangejoin.condition.CannotFail
import rangejoin.shims.SessionShims

/**
 * The rules a join's equality keys must meet for the per-key index, in one place: the strategy
 * applies them to the joins it plans, and the keyed existence rewrite to decide which joins it
 * leaves to the strategy.
 */
private[rangejoin] object PerKeyIndex {

  /**
   * Whether the per-key index may take equality (and range) keys: none may fail, since the index
   * evaluates them on every row of each side, as BroadcastHashJoin does, where Spark may plan a
   * join that evaluates fewer (an empty side); and each compares by its bytes, since the index
   * groups keys by them: a collation that calls unequal bytes equal (UTF8_LCASE) would split one
   * key (found by the keyed EXISTS differential suite).
   */
  def keysQualify(keys: Seq[Expression]): Either[String, Unit] = for {
    _ <- Either.cond(keys.forall(CannotFail(_)), (), "an equi-join key can fail")
    _ <- Either.cond(keys.forall(k => SessionShims.isBinaryStable(k.dataType)), (),
      "an equi-join key's collation compares unequal bytes as equal")
  } yield ()
}
