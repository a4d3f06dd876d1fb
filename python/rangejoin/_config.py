"""rangejoin's configuration keys, its hint, and the translation of ``configure``'s options.

The keys are plain Spark SQL configuration strings: the extension reads them each time it plans
a query, so they can be set on a builder, with ``spark.conf.set`` or with SQL ``SET``. The JVM
side checks every value it reads; :func:`to_conf` checks the options given to
:func:`rangejoin.configure` the same way, so that a typo fails at once, in Python, rather than at
the session's first range join.
"""

import re
from typing import Dict, Mapping, Optional

#: Plan eligible range joins as ``PiecewiseMergeJoin`` (default ``true``); ``false`` leaves
#: every join to Spark, as if rangejoin were not installed.
ENABLED = "spark.rangejoin.enabled"

#: The largest buffered side, in bytes of Spark's size estimate, that rangejoin broadcasts
#: without a hint. Unset, it is Spark's ``spark.sql.autoBroadcastJoinThreshold``. Accepts bytes
#: or a size with a unit (``10485760``, ``10m``, ``64MB``, ``1g``); negative (``-1``) buffers
#: hinted sides only.
BROADCAST_THRESHOLD = "spark.rangejoin.broadcastThreshold"

#: Semi, anti and existence joins with no residual broadcast only the subquery side's
#: extreme-key row; with equality keys too, Spark's own join runs on each key's extreme
#: (default ``true``).
EXISTENCE_FAST_PATH = "spark.rangejoin.existenceFastPath.enabled"

#: Drop streamed rows outside the buffered keys' range before the join looks at them
#: (default ``true``).
DYNAMIC_FILTER = "spark.rangejoin.dynamicFilter.enabled"

#: Joins with equality keys and a range (``a.chr = b.chr AND a.x BETWEEN b.lo AND b.hi``) use an
#: index per key over a buffered side (default ``true``); ``false`` leaves them to Spark.
EQUALITY_KEYS = "spark.rangejoin.equalityKeys.enabled"

#: Band and interval joins with no side to buffer run as Spark's own equi-join on bins
#: (default ``true``); ``false`` leaves them to Spark (a cartesian product or nested loop join).
BINNING = "spark.rangejoin.binning.enabled"

#: An inner range join over a large buffered side measures that side when it runs, and buffers
#: the other side's rows that can match instead when few enough pass (default ``true``).
SIDE_SWITCH = "spark.rangejoin.sideSwitch.enabled"

#: The smallest buffered side, in bytes of Spark's size estimate, whose join gets the side switch
#: (default ``8m``).
SIDE_SWITCH_MIN_SIZE = "spark.rangejoin.sideSwitch.minBufferedSize"

#: The side switch buffers the other side when at most this many of its rows pass per row of
#: the buffered side (default ``0.25``).
SIDE_SWITCH_MAX_RATIO = "spark.rangejoin.sideSwitch.maxRowsRatio"

#: A join with equality keys whose sides are both too large to broadcast is shuffled by its keys,
#: each task sorting its partition of the smaller side, where that side's estimated size per
#: shuffle partition is at most this (default ``64m``); ``-1`` leaves such joins to Spark.
SHUFFLE_MAX_PARTITION_SIZE = "spark.rangejoin.shuffle.maxPartitionSize"

#: The class to name in ``spark.sql.extensions``.
EXTENSION = "rangejoin.RangeJoinExtensions"

#: The join hint that makes a relation the buffered side and forces rangejoin for its join:
#: ``SELECT /*+ RANGE_JOIN(w) */ ...`` or ``df.hint("range_join")``.
HINT = "RANGE_JOIN"

# configure()'s keyword options and the keys they set.
OPTIONS: Dict[str, str] = {
    "enabled": ENABLED,
    "broadcast_threshold": BROADCAST_THRESHOLD,
    "existence_fast_path": EXISTENCE_FAST_PATH,
    "dynamic_filter": DYNAMIC_FILTER,
    "equality_keys": EQUALITY_KEYS,
    "binning": BINNING,
}

_BOOLEAN_KEYS = (ENABLED, EXISTENCE_FAST_PATH, DYNAMIC_FILTER, EQUALITY_KEYS, BINNING)

# What the JVM accepts for BROADCAST_THRESHOLD (RangeJoinConf.broadcastThreshold): Spark's byte
# string (JavaUtils.byteStringAsBytes: digits and an optional binary unit, any case), or else a
# signed whole number of bytes; either must fit in a long.
_BYTE_STRING = re.compile(r"([0-9]+)([a-z]+)?")
_WHOLE_NUMBER = re.compile(r"[+-]?[0-9]+")
# Spark's byte units are binary: k, ki, kb and kib all mean 1024 bytes; likewise m, g, t and p.
_UNITS = {"": 1, "b": 1}
for _power, _letter in enumerate("kmgtp", start=1):
    for _suffix in ("", "i", "b", "ib"):
        _UNITS[_letter + _suffix] = 1024**_power
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1


def _size_in_bytes(text: str) -> Optional[int]:
    """The number of bytes ``text`` stands for, as the extension reads it; None if it cannot."""
    text = text.strip()
    match = _BYTE_STRING.fullmatch(text.lower())
    if match and (match.group(2) or "") in _UNITS:
        size = int(match.group(1)) * _UNITS[match.group(2) or ""]
        if int(match.group(1)) <= _LONG_MAX and size <= _LONG_MAX:
            return size
    if _WHOLE_NUMBER.fullmatch(text) and _LONG_MIN <= int(text) <= _LONG_MAX:
        return int(text)
    return None


_ACCEPTED = {
    ENABLED: "true or false",
    EXISTENCE_FAST_PATH: "true or false",
    DYNAMIC_FILTER: "true or false",
    EQUALITY_KEYS: "true or false",
    BINNING: "true or false",
    BROADCAST_THRESHOLD: (
        "a size in bytes, with an optional unit (10485760, 10m, 64MB, 1g), or -1 to buffer "
        "hinted sides only"
    ),
}


def _invalid(key: str, value: object) -> ValueError:
    # The JVM's message for the same mistake (RangeJoinConf.invalid), so both read alike.
    return ValueError(f"Invalid value for {key}: '{value}'. Accepted values: {_ACCEPTED[key]}.")


def _value(option: str, key: str, value: object) -> str:
    """The configuration string for one of configure()'s options."""
    if key in _BOOLEAN_KEYS:
        if not isinstance(value, bool):
            raise TypeError(
                f"rangejoin.configure({option}=...) takes True or False (it sets {key}), "
                f"not {value!r}"
            )
        return "true" if value else "false"
    # BROADCAST_THRESHOLD
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TypeError(
            f"rangejoin.configure({option}=...) takes a number of bytes (int) or a size string "
            f"such as '64MB' (it sets {key}), not {value!r}"
        )
    if _size_in_bytes(str(value)) is None:
        raise _invalid(key, value)
    return str(value).strip()


def to_conf(options: Mapping[str, object]) -> Dict[str, str]:
    """Translate :func:`rangejoin.configure`'s keyword options into configuration strings.

    Parameters
    ----------
    options : Mapping[str, object]
        Option names (the keys of ``OPTIONS``) and values. A value of ``None`` sets nothing.

    Returns
    -------
    dict of str to str
        The configuration keys and values to set, in the order given.

    Raises
    ------
    TypeError
        For an unknown option, listing the valid ones, or a value of the wrong type.
    ValueError
        For a size string the extension would reject.
    """
    unknown = [name for name in options if name not in OPTIONS]
    if unknown:
        valid = ", ".join(f"{name} ({key})" for name, key in OPTIONS.items())
        raise TypeError(
            f"rangejoin.configure() got unknown option(s) {', '.join(map(repr, unknown))}; "
            f"valid options are: {valid}"
        )
    conf: Dict[str, str] = {}
    for name, value in options.items():
        if value is not None:
            conf[OPTIONS[name]] = _value(name, OPTIONS[name], value)
    return conf

