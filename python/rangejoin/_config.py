"""rangejoin's configuration keys, its hint, and the one table of options they come from.

The keys are plain Spark SQL configuration strings: the extension reads them each time it plans
a query, so they can be set on a builder, with ``spark.conf.set`` or with SQL ``SET``. The JVM
side has one table of them (``rangejoin.RangeJoinConf``: each key's default, the kind of value it
takes and what it means) and checks every value it reads. :data:`OPTIONS` is the same table seen
from Python, each key with the :func:`rangejoin.configure` option that sets it; the key
constants, configure()'s options, their checks and their error messages all come from it, and
the tests check it against the JVM's (``RangeJoinConf.describe()``), so a key added on one side
only fails them. :func:`to_conf` checks configure()'s options as the extension reads the values,
so that a typo fails at once, in Python, rather than at the session's first range join.
"""

import math
import re
import textwrap
from dataclasses import dataclass
from typing import Callable, Dict, List, Mapping, Optional, Tuple


def _trim(text: str) -> str:
    """``text`` without the characters Java's ``String.trim`` removes (code points up to space)."""
    return text.strip("".join(map(chr, range(33))))


# Sizes, as the extension reads them (RangeJoinConf.bytes): Spark's byte string
# (JavaUtils.byteStringAsBytes: digits and an optional binary unit, any case), or else a signed
# whole number of bytes; either must fit in a long.
_BYTE_STRING = re.compile(r"([0-9]+)([a-z]+)?")
_WHOLE_NUMBER = re.compile(r"[+-]?[0-9]+")
# Spark's byte units are binary: k, ki, kb and kib all mean 1024 bytes; likewise m, g, t and p.
_UNITS = {"": 1, "b": 1}
for _power, _letter in enumerate("kmgtp", start=1):
    for _suffix in ("", "i", "b", "ib"):
        _UNITS[_letter + _suffix] = 1024**_power
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1


def _bytes(text: str) -> Optional[int]:
    """The number of bytes ``text`` stands for, as the extension reads it; None if it cannot."""
    text = _trim(text)
    match = _BYTE_STRING.fullmatch(text.lower())
    if match and (match.group(2) or "") in _UNITS:
        size = int(match.group(1)) * _UNITS[match.group(2) or ""]
        if int(match.group(1)) <= _LONG_MAX and size <= _LONG_MAX:
            return size
    if _WHOLE_NUMBER.fullmatch(text) and _LONG_MIN <= int(text) <= _LONG_MAX:
        return int(text)
    return None


def _size(text: str) -> Optional[int]:
    size = _bytes(text)
    return size if size is not None and size >= 0 else None


# Numbers, as Java's Double.parseDouble reads them: decimal, with an optional exponent, or
# hexadecimal (0x1.8p1), each with an optional sign and type suffix (f, d). (It reads NaN and
# Infinity too, which no key takes.)
_DECIMAL = re.compile(r"([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)[fFdD]?")
_HEXADECIMAL = re.compile(r"([+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+)[fFdD]?")


def _ratio(text: str) -> Optional[float]:
    """The number ``text`` stands for, as the extension reads a ratio: finite and 0 or more."""
    text = _trim(text)
    decimal, hexadecimal = _DECIMAL.fullmatch(text), _HEXADECIMAL.fullmatch(text)
    try:
        ratio = (float(decimal.group(1)) if decimal else
                 float.fromhex(hexadecimal.group(1)) if hexadecimal else None)
    except OverflowError:  # a hexadecimal number too large, which Java reads as infinity
        return None
    return ratio if ratio is not None and 0 <= ratio < math.inf else None


def _boolean(text: str) -> Optional[bool]:
    return {"true": True, "false": False}.get(_trim(text).lower())


@dataclass(frozen=True)
class Kind:
    """A kind of value, as ``RangeJoinConf.Kind``: its name, what it accepts (the words of the
    error messages, the JVM's own), how the extension reads a string of it (None: it cannot), and
    the Python types :func:`rangejoin.configure` takes for it (``takes``, in its messages)."""

    name: str
    accepts: str
    read: Callable[[str], object]
    types: Tuple[type, ...]
    takes: str


BOOLEAN = Kind("boolean", "true or false", _boolean, (bool,), "True or False")
SIGNED_SIZE = Kind(
    "signed-size",
    "a size in bytes, with an optional unit (10485760, 10m, 64MB, 1g), or a negative number (-1)",
    _bytes, (int, str), "a number of bytes (int) or a size string such as '64MB'")
SIZE = Kind(
    "size", "a size in bytes of 0 or more, with an optional unit (0, 8m, 64MB)",
    _size, (int, str), "a number of bytes (int) or a size string such as '64MB'")
RATIO = Kind(
    "ratio", "a number of 0 or more (0.25, 1, 10)",
    _ratio, (int, float, str), "a number (int or float) or a string such as '0.25'")


@dataclass(frozen=True)
class Option:
    """One configuration key (a row of ``RangeJoinConf``'s table) and the :func:`rangejoin.configure`
    option that sets it: ``name``, whose upper case is the key's constant in :mod:`rangejoin`.
    ``default`` is the value the extension reads when the key is unset; None when another setting
    applies then (``doc`` says which)."""

    name: str
    key: str
    default: Optional[str]
    kind: Kind
    doc: str


_TABLE: List[Option] = []


def _option(name: str, key: str, default: Optional[str], kind: Kind, doc: str) -> str:
    _TABLE.append(Option(name, key, default, kind, doc))
    return key


ENABLED = _option(
    "enabled", "spark.rangejoin.enabled", "true", BOOLEAN,
    "plan eligible range joins as ``PiecewiseMergeJoin``; false leaves every join to Spark, as if "
    "rangejoin were not installed")

BROADCAST_THRESHOLD = _option(
    "broadcast_threshold", "spark.rangejoin.broadcastThreshold", None, SIGNED_SIZE,
    "the largest buffered side, in bytes of Spark's size estimate, that rangejoin broadcasts "
    "without a hint, as bytes or a size with a unit (``10485760``, ``10m``, ``64MB``, ``1g``); "
    "negative (``-1``) buffers hinted sides only. Unset, it is Spark's "
    "``spark.sql.autoBroadcastJoinThreshold``")

EXISTENCE_FAST_PATH = _option(
    "existence_fast_path", "spark.rangejoin.existenceFastPath.enabled", "true", BOOLEAN,
    "semi, anti and existence joins with no residual broadcast only the subquery side's "
    "extreme-key row; with equality keys too, Spark's own join runs on each key's extreme")

DYNAMIC_FILTER = _option(
    "dynamic_filter", "spark.rangejoin.dynamicFilter.enabled", "true", BOOLEAN,
    "drop streamed rows outside the buffered keys' range before the join looks at them")

EQUALITY_KEYS = _option(
    "equality_keys", "spark.rangejoin.equalityKeys.enabled", "true", BOOLEAN,
    "joins with equality keys and a range (``a.chr = b.chr AND a.x BETWEEN b.lo AND b.hi``) use "
    "an index per key over a buffered side; false leaves them to Spark")

BINNING = _option(
    "binning", "spark.rangejoin.binning.enabled", "true", BOOLEAN,
    "band and interval joins with no side to buffer run as Spark's own equi-join on bins; false "
    "leaves them to Spark (a cartesian product or nested loop join)")

SIDE_SWITCH = _option(
    "side_switch", "spark.rangejoin.sideSwitch.enabled", "true", BOOLEAN,
    "an inner range join over a large buffered side measures that side when it runs, and buffers "
    "the other side's rows that can match instead when few enough pass")

SIDE_SWITCH_MIN_SIZE = _option(
    "side_switch_min_size", "spark.rangejoin.sideSwitch.minBufferedSize", "8m", SIZE,
    "the smallest buffered side, in bytes of Spark's size estimate, whose join gets the side "
    "switch")

SIDE_SWITCH_MAX_RATIO = _option(
    "side_switch_max_ratio", "spark.rangejoin.sideSwitch.maxRowsRatio", "0.25", RATIO,
    "the side switch buffers the other side when at most this many of its rows pass per row of "
    "the buffered side")

SHUFFLE_MAX_PARTITION_SIZE = _option(
    "shuffle_max_partition_size", "spark.rangejoin.shuffle.maxPartitionSize", "64m", SIGNED_SIZE,
    "a join with equality keys whose sides are both too large to broadcast is shuffled by its "
    "keys, each task sorting its partition of the smaller side, where that side's estimated size "
    "per shuffle partition is at most this (an as-of join's: its right side's); negative (``-1``) "
    "leaves such joins to Spark")

ASOF = _option(
    "asof", "spark.rangejoin.asof.enabled", "true", BOOLEAN,
    "as-of joins (SQL ``ASOF JOIN``, ``DataFrame._joinAsOf``, pandas-on-Spark ``merge_asof``, "
    ":func:`rangejoin.asof_join`) whose right side can be broadcast, or with keys to shuffle "
    "by, search it sorted by (keys, time), O(log M) per left row; false leaves them to Spark")

#: Every configuration key with its configure() option, in the JVM's order.
OPTIONS: Tuple[Option, ...] = tuple(_TABLE)
_BY_NAME: Dict[str, Option] = {option.name: option for option in OPTIONS}
_BY_KEY: Dict[str, Option] = {option.key: option for option in OPTIONS}

#: The class to name in ``spark.sql.extensions``.
EXTENSION = "rangejoin.RangeJoinExtensions"

#: The join hint that makes a relation the buffered side and forces rangejoin for its join:
#: ``SELECT /*+ RANGE_JOIN(w) */ ...`` or ``df.hint("range_join")``.
HINT = "RANGE_JOIN"


def invalid(key: str, value: object) -> ValueError:
    """The extension's error for a value of ``key`` it cannot read (RangeJoinConf.invalid)."""
    accepted = _BY_KEY[key].kind.accepts
    return ValueError(f"Invalid value for {key}: '{value}'. Accepted values: {accepted}.")


def read(key: str, text: Optional[str]) -> object:
    """The value of ``key`` the extension reads from the string ``text`` (None: unset, so the
    key's default): a bool, a number of bytes or a float.

    Raises
    ------
    ValueError
        With the extension's message, if it cannot read ``text``.
    """
    option = _BY_KEY[key]
    value = option.kind.read(option.default if text is None else text)
    if value is None:
        raise invalid(key, text)
    return value


def _conf_string(option: Option, value: object) -> str:
    """The configuration string for one of configure()'s options, checked as the extension
    reads it."""
    kind = option.kind
    if isinstance(value, bool) != (kind is BOOLEAN) or not isinstance(value, kind.types):
        raise TypeError(
            f"rangejoin.configure({option.name}=...) takes {kind.takes} (it sets {option.key}), "
            f"not {value!r}")
    if isinstance(value, bool):
        return "true" if value else "false"
    text = _trim(value) if isinstance(value, str) else repr(value)
    if kind.read(text) is None:
        raise invalid(option.key, value)
    return text


def to_conf(options: Mapping[str, object]) -> Dict[str, str]:
    """Translate :func:`rangejoin.configure`'s keyword options into configuration strings.

    Parameters
    ----------
    options : Mapping[str, object]
        Option names (those of :data:`OPTIONS`) and values. A value of ``None`` sets nothing.

    Returns
    -------
    dict of str to str
        The configuration keys and values to set, in the order given.

    Raises
    ------
    TypeError
        For an unknown option, listing the valid ones, or a value of the wrong type.
    ValueError
        For a value the extension would reject, with the extension's message.
    """
    unknown = [name for name in options if name not in _BY_NAME]
    if unknown:
        valid = ", ".join(f"{option.name} ({option.key})" for option in OPTIONS)
        raise TypeError(
            f"rangejoin.configure() got unknown option(s) {', '.join(map(repr, unknown))}; "
            f"valid options are: {valid}"
        )
    return {_BY_NAME[name].key: _conf_string(_BY_NAME[name], value)
            for name, value in options.items() if value is not None}


def parameters_doc(indent: str) -> str:
    """configure()'s docstring entries for its options, numpydoc style, one per option."""
    entries = []
    for option in OPTIONS:
        types = [t.__name__ for t in option.kind.types]
        types = types[0] if len(types) == 1 else ", ".join(types[:-1]) + " or " + types[-1]
        if option.default is None:
            default = ""
        elif option.kind is BOOLEAN:
            default = f" (default ``{option.default == 'true'}``)"
        else:
            default = f" (default ``{option.default}``)"
        text = f":data:`{option.name.upper()}`{default}: {option.doc}."
        entries.append(f"{indent}{option.name} : {types}, optional\n{_wrap(text, indent + '    ')}")
    return "\n".join(entries)


def _wrap(text: str, indent: str, width: int = 96) -> str:
    return textwrap.fill(text, width, initial_indent=indent, subsequent_indent=indent,
                         break_on_hyphens=False, break_long_words=False)
