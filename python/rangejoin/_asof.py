"""As-of joins with pandas ``merge_asof``'s names, on Spark's own as-of join.

:func:`asof_join` is a thin layer over ``DataFrame._joinAsOf`` (the call pandas-on-Spark's
``merge_asof`` makes): it names the columns, builds the ``by`` condition and the tolerance, and
renames overlapping output columns with ``suffixes``. With the extension loaded, Spark's as-of
join runs as ``PiecewiseMergeAsOfJoin`` (the right side sorted once by (keys, time), a binary
search per left row) when the right side can be broadcast; otherwise Spark runs it its own way.
The answers are Spark's either way (docs/semantics.md, "As-of joins").
"""

import datetime
import decimal
from functools import reduce
from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Tuple, Union

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, DataFrame, SparkSession

#: Spark's switch for SQL's ``ASOF JOIN ... MATCH_CONDITION`` syntax.
ASOF_SQL = "spark.sql.join.asofJoin.enabled"

_DIRECTIONS = ("backward", "forward", "nearest")


def _names(value: Union[None, str, Sequence[str]]) -> List[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def _tolerance(value: Any) -> Optional["Column"]:
    """A tolerance as Spark's as-of join takes it: a literal Column of the time's unit."""
    from pyspark.sql import Column
    from pyspark.sql import functions as F

    if value is None or isinstance(value, Column):
        return value
    if isinstance(value, bool) or not isinstance(
            value, (int, float, decimal.Decimal, datetime.timedelta)):
        raise TypeError(
            "tolerance must be a number, a datetime.timedelta or a pyspark Column, "
            f"not {value!r}")
    return F.lit(value)


def asof_join(
    left: "DataFrame",
    right: "DataFrame",
    on: Optional[str] = None,
    *,
    left_on: Optional[str] = None,
    right_on: Optional[str] = None,
    by: Union[None, str, Sequence[str]] = None,
    left_by: Union[None, str, Sequence[str]] = None,
    right_by: Union[None, str, Sequence[str]] = None,
    tolerance: Any = None,
    allow_exact_matches: bool = True,
    direction: str = "backward",
    suffixes: Tuple[str, str] = ("_x", "_y"),
    how: str = "left",
) -> "DataFrame":
    """Join each row of ``left`` with the row of ``right`` nearest in time, as pandas
    ``merge_asof`` does, on Spark's as-of join.

    Parameters
    ----------
    left, right : DataFrame
        The two sides; ``right`` is the one searched (rangejoin broadcasts it when it is small
        enough: ``spark.rangejoin.broadcastThreshold``).
    on : str, optional
        The time column of both sides; or ``left_on`` and ``right_on``.
    left_on, right_on : str, optional
        The time column of each side, when their names differ.
    by : str or list of str, optional
        Columns of both sides that must be equal; or ``left_by`` and ``right_by``.
    tolerance : number, datetime.timedelta or Column, optional
        How far the matched time may be from the left one (inclusive; exclusive when
        ``allow_exact_matches`` is false, as in Spark).
    allow_exact_matches : bool
        Whether a right row of exactly the left row's time matches.
    direction : str
        ``"backward"`` (the latest right time at or before), ``"forward"`` (the earliest at or
        after) or ``"nearest"`` (either; the earlier of two as near).
    suffixes : tuple of str
        Added to the names of overlapping columns, left's then right's.
    how : str
        ``"left"`` (pandas' only kind: every left row, with NULLs where nothing matches) or
        ``"inner"``.

    Returns
    -------
    DataFrame
        The left columns, then the right ones except ``on``'s and ``by``'s (when shared by
        name), overlapping names suffixed.

    Examples
    --------
    >>> quotes_at_trade = rangejoin.asof_join(
    ...     trades, quotes, on="ts", by="sym", tolerance=datetime.timedelta(seconds=5))
    """
    left_time = left_on or on
    right_time = right_on or on
    if left_time is None or right_time is None:
        raise TypeError("asof_join needs on=, or left_on= and right_on=")
    if direction not in _DIRECTIONS:
        raise ValueError(f"direction must be one of {_DIRECTIONS}, not {direction!r}")
    if how not in ("left", "inner"):
        raise ValueError(f"how must be 'left' or 'inner', not {how!r}")
    lby = _names(left_by if left_by is not None else by)
    rby = _names(right_by if right_by is not None else by)
    if len(lby) != len(rby):
        raise ValueError("left_by and right_by must name as many columns")

    l_df = left.alias("__asof_left")
    r_df = right.alias("__asof_right")
    keys = [l_df[a] == r_df[b] for a, b in zip(lby, rby)]
    joined = l_df._joinAsOf(
        r_df,
        leftAsOfColumn=l_df[left_time],
        rightAsOfColumn=r_df[right_time],
        on=[reduce(lambda a, b: a & b, keys)] if keys else None,
        how=how,
        tolerance=_tolerance(tolerance),
        allowExactMatches=allow_exact_matches,
        direction=direction,
    )
    shared = set(rby if by is not None else []) | ({right_time} if on is not None else set())
    right_columns = [c for c in right.columns if c not in shared]
    selected = [l_df[c].alias(c + suffixes[0] if c in right_columns else c) for c in left.columns]
    selected += [r_df[c].alias(c + suffixes[1] if c in left.columns else c) for c in right_columns]
    return joined.select(selected)


def asof_sql(spark: "SparkSession", enabled: bool = True) -> None:
    """Switch Spark's SQL ``ASOF JOIN`` syntax on (or off) for ``spark``:
    ``l [LEFT] ASOF JOIN r MATCH_CONDITION (l.t >= r.t) [ON l.k = r.k]``. Spark's parser refuses
    it otherwise. rangejoin plans it as ``PiecewiseMergeAsOfJoin`` when ``r`` can be broadcast.

    Raises
    ------
    UnsupportedSparkVersionError
        When switching it on in a Spark before 4.3, whose parser has no ``ASOF JOIN``
        (:func:`asof_join`, on ``DataFrame._joinAsOf``, works on every line).
    """
    if enabled:
        release = tuple(int(part) for part in spark.version.split(".")[:2])
        if release < (4, 3):
            from rangejoin._jar import UnsupportedSparkVersionError

            raise UnsupportedSparkVersionError(
                f"SQL's ASOF JOIN is Spark 4.3's; this is Spark {spark.version}, whose parser has no "
                "ASOF JOIN. Use rangejoin.asof_join (DataFrame._joinAsOf), which rangejoin runs as "
                "PiecewiseMergeAsOfJoin on every Spark line."
            )
    spark.conf.set(ASOF_SQL, "true" if enabled else "false")
