"""Setting rangejoin up on a SparkSession builder, and switching it on and off at run time."""

import inspect
import os
import re
from typing import TYPE_CHECKING, Any, Optional, Union

from rangejoin._config import ENABLED, EXTENSION, parameters_doc, read, to_conf
from rangejoin._jar import (
    MAVEN_COORDINATE,
    UnsupportedSparkVersionError,
    jar_path,
    maven_coordinate,
    spark_line,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_JARS = "spark.jars"
_EXTENSIONS = "spark.sql.extensions"

#: The operator rangejoin plans range joins as, which a plan names when rangejoin planned it.
_OPERATOR = "PiecewiseMergeJoin"

#: The query a Spark Connect session's server plans to show whether it has rangejoin: the hint
#: makes ``b`` the buffered side whatever the size thresholds say, so any server with the
#: extension plans it as rangejoin's operator, and one without it plans Spark's own join.
_PROBE = "EXPLAIN SELECT /*+ RANGE_JOIN(b) */ * FROM range(2) a JOIN range(2) b ON a.id < b.id"


class NotInstalledError(RuntimeError):
    """rangejoin cannot be used from this session: its extension is not in the session's planner.

    Raised by the functions that take a session (:func:`enable`, :func:`disable`,
    :func:`is_enabled`), and by :func:`configure` for a builder bound for a Spark Connect server
    (whose classpath and extensions are the server's, set when it starts), with a message saying
    why and what to do: the jar is not on the driver's classpath, the session was started before
    :func:`configure`, the jar is built for another Spark release, or the Spark Connect server
    was started without the extension.
    """


def _append(current: "str | None", item: str) -> str:
    """Append ``item`` to the comma-separated list ``current``, unless it is already there."""
    items = [part.strip() for part in (current or "").split(",") if part.strip()]
    if item not in items:
        items.append(item)
    return ",".join(items)


def _connect_message(subject: str, coordinate: str = MAVEN_COORDINATE,
                     jar: str = "rangejoin.jar_path()") -> str:
    """What to do when a Spark Connect server has no rangejoin: the extension runs in the
    server's driver, so the server is what must be started with it; a client cannot add it."""
    return (
        f"{subject}. rangejoin runs inside the Spark driver, which for Spark Connect is the "
        "server's: the server must be started with the extension, as its clients cannot load "
        f"it. Start it with --packages {coordinate} (or --jars with the jar from {jar}) and "
        f"--conf {_EXTENSIONS}={EXTENSION}. Its range joins then use rangejoin, and a client "
        "switches it with rangejoin.disable(spark) and rangejoin.enable(spark), "
        f"spark.conf.set('{ENABLED}', 'false') or SQL SET {ENABLED} = false."
    )


def _is_connect(obj: Any) -> bool:
    """Whether ``obj`` is one of PySpark's Spark Connect classes (without importing them)."""
    return any(cls.__module__.startswith("pyspark.sql.connect") for cls in type(obj).__mro__)


def configure(
    builder: "SparkSession.Builder",
    *,
    enabled: Optional[bool] = None,
    broadcast_threshold: Optional[Union[int, str]] = None,
    existence_fast_path: Optional[bool] = None,
    dynamic_filter: Optional[bool] = None,
    equality_keys: Optional[bool] = None,
    binning: Optional[bool] = None,
    side_switch: Optional[bool] = None,
    side_switch_min_size: Optional[Union[int, str]] = None,
    side_switch_max_ratio: Optional[Union[int, float, str]] = None,
    shuffle_max_partition_size: Optional[Union[int, str]] = None,
    asof: Optional[bool] = None,
    **unknown: Any,
) -> "SparkSession.Builder":
    """Set up a ``SparkSession.Builder`` to use rangejoin, and return the same builder.

    The jar bundled in this package (:func:`jar_path`) is appended to ``spark.jars`` and
    :data:`EXTENSION` to ``spark.sql.extensions``. Values already set on this builder for either
    key are kept: rangejoin's entry is added after them, comma-separated, and only once, so
    calling :func:`configure` twice on the same builder changes nothing the second time. The
    keyword options, one per configuration key (its constant's name in lower case), set those
    keys on the builder (an option left at ``None`` sets nothing, so the key keeps its default);
    they can be changed later in the session with ``spark.conf.set`` or SQL ``SET``.

    Call it before the session's JVM starts, i.e. before the first ``getOrCreate()`` of the
    Python process: ``spark.jars`` puts the jar on the driver's classpath only when the driver
    JVM is launched, and on executors' classpaths only when the ``SparkContext`` starts. A builder
    applied to an already running ``SparkContext`` cannot load rangejoin into it.

    Only values set on this builder are appended to. ``spark.jars`` set elsewhere, e.g. in
    ``spark-defaults.conf``, is replaced by the builder's value, as with any builder option.

    Parameters
    ----------
    builder : SparkSession.Builder
        The builder to configure, e.g. ``SparkSession.builder.appName("app")``.

    Returns
    -------
    SparkSession.Builder
        ``builder`` itself, for chaining.

    Raises
    ------
    TypeError
        For an unknown option (the message lists the valid ones), or a value of the wrong type.
    ValueError
        For a value the extension would reject (a size or ratio out of range, a size string it
        cannot read), with the extension's message.
    FileNotFoundError
        If the jar is not in the package (see :func:`jar_path`).
    NotInstalledError
        If ``builder`` is set to connect to a Spark Connect server (``spark.remote`` or
        ``SPARK_REMOTE``), whose classpath and extensions are set when the server starts, not
        by its clients (the message says how to start it).

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> import rangejoin
    >>> builder = SparkSession.builder.master("local[2]")
    >>> spark = rangejoin.configure(builder, broadcast_threshold="64MB").getOrCreate()
    """
    given = locals()
    conf = to_conf({**{name: given[name] for name in _OPTION_NAMES}, **unknown})
    options = getattr(builder, "_options", {})
    remote = options.get("spark.remote", os.environ.get("SPARK_REMOTE"))
    if _is_connect(builder) or (remote is not None and str(remote).startswith("sc://")):
        raise NotInstalledError(_connect_message(
            f"This builder connects to a Spark Connect server (spark.remote={remote})"))
    builder.config(_JARS, _append(options.get(_JARS), jar_path()))
    builder.config(_EXTENSIONS, _append(options.get(_EXTENSIONS), EXTENSION))
    for key, value in conf.items():
        builder.config(key, value)
    return builder


# configure()'s keyword options are the table's (rangejoin._config.OPTIONS; the tests check the
# signature against it), and so are its Parameters entries after ``builder``'s, added here.
_OPTION_NAMES = [name for name in inspect.signature(configure).parameters
                 if name not in ("builder", "unknown")]
_returns = re.search(r"\n\n( *)Returns\n", configure.__doc__)  # its indentation: 3.13 strips it
configure.__doc__ = (configure.__doc__[:_returns.start()] + "\n" + parameters_doc(_returns.group(1))
                     + configure.__doc__[_returns.start():])


def _connect_plans_with_rangejoin(spark: "SparkSession") -> bool:
    """Whether the Spark Connect server of the session ``spark`` plans with rangejoin.

    A Connect client has no JVM to ask for the session's planner strategies, but the server
    shows its plans: it plans :data:`_PROBE` with :data:`ENABLED` true (set for the probe only,
    and put back as it was, set or unset, whatever happens), and the plan names rangejoin's
    operator exactly when the server's session has the extension.
    """
    previous = spark.conf.get(ENABLED, None)
    spark.conf.set(ENABLED, "true")
    try:
        plan = "\n".join(str(row[0]) for row in spark.sql(_PROBE).collect())
    finally:
        if previous is None:
            spark.conf.unset(ENABLED)
        else:
            spark.conf.set(ENABLED, previous)
    return _OPERATOR in plan


def _check_connect_installed(spark: "SparkSession") -> None:
    """Raise :class:`NotInstalledError` unless the Spark Connect server of ``spark`` plans with
    rangejoin; the message names the jar for the server's Spark line, which is what counts."""
    if _connect_plans_with_rangejoin(spark):
        return
    running = str(spark.version)
    try:
        line = spark_line(running)
        coordinate, jar = maven_coordinate(line), f"rangejoin.jar_path('{line}')"
    except UnsupportedSparkVersionError:
        coordinate, jar = MAVEN_COORDINATE, "rangejoin.jar_path()"
    raise NotInstalledError(_connect_message(
        f"rangejoin is not installed in this Spark Connect session: its server (Spark "
        f"{running}) plans range joins without it, so the server was started without the "
        "extension or with a jar for another Spark release", coordinate, jar))


def _check_installed(spark: "SparkSession") -> None:
    """Raise :class:`NotInstalledError`, saying why and what to do, unless rangejoin plans in
    ``spark``."""
    if _is_connect(spark):
        _check_connect_installed(spark)
        return
    jvm = getattr(spark, "_jvm", None)
    jsession = getattr(spark, "_jsparkSession", None)
    if jvm is None or jsession is None:
        raise TypeError(f"expected a pyspark.sql.SparkSession, got {type(spark).__name__}")

    from py4j.java_gateway import JavaClass

    extensions = jvm.rangejoin.RangeJoinExtensions
    if not isinstance(extensions, JavaClass):
        # py4j gives a JavaPackage for a name that is no class it can load.
        raise NotInstalledError(
            f"rangejoin is not installed in this session: the class {EXTENSION} is not on the "
            "Spark driver's classpath, so neither is the rangejoin jar. Create the session with "
            "rangejoin.configure(SparkSession.builder).getOrCreate() in a new Python process "
            "(the jar joins the driver's classpath only when its JVM starts), or start Spark "
            f"with --packages {MAVEN_COORDINATE} (or --jars with the jar from "
            f"rangejoin.jar_path()) and --conf {_EXTENSIONS}={EXTENSION}."
        )
    if not extensions.isInstalled(jsession):
        built_for = str(extensions.SparkFeatureRelease())
        running = str(spark.version)
        if running.split(".")[:2] != built_for.split(".")[:2]:
            raise NotInstalledError(
                f"rangejoin is not installed in this session: the rangejoin jar is built for "
                f"Spark {built_for}.x, and this is Spark {running}, so the extension refused to "
                f"load. Use rangejoin's jar for Spark {'.'.join(running.split('.')[:2])} "
                "(rangejoin.configure picks the installed pyspark's)."
            )
        raise NotInstalledError(
            "rangejoin is not installed in this session: the rangejoin jar is on the classpath, "
            "but the session's planner does not have rangejoin's strategy: the session was "
            "started before rangejoin.configure (or without spark.sql.extensions="
            f"{EXTENSION}). Stop it with spark.stop() (or restart the Python process), then "
            "build a new one with rangejoin.configure(SparkSession.builder).getOrCreate()."
        )


def is_installed(spark: "SparkSession") -> bool:
    """Return whether rangejoin's strategy is in ``spark``'s planner.

    For a Spark Connect session, whose planner is the server's and out of this process's reach,
    the server plans a small range join (``EXPLAIN``, with :data:`ENABLED` true for that query
    only, then put back), and the answer is whether the plan names ``PiecewiseMergeJoin``: a few
    round trips to the server, which :func:`enable`, :func:`disable` and :func:`is_enabled` make
    too, as they check it first.

    Parameters
    ----------
    spark : SparkSession
        A classic session, or a Spark Connect one.

    Returns
    -------
    bool
        ``True`` if ``spark`` plans with rangejoin (whatever :data:`ENABLED` says); ``False`` if
        the jar is not on its classpath or the session (or the Spark Connect server) was started
        without the extension.
    """
    if _is_connect(spark):
        return _connect_plans_with_rangejoin(spark)
    try:
        _check_installed(spark)
    except NotInstalledError:
        return False
    return True


def enable(spark: "SparkSession") -> None:
    """Let rangejoin plan the eligible range joins of ``spark``'s next queries (the default).

    Sets the runtime SQL configuration :data:`ENABLED` to ``true`` for this session.

    Parameters
    ----------
    spark : SparkSession
        A session with rangejoin installed (see :func:`configure`), or a Spark Connect session
        whose server was started with it (checked by :func:`is_installed`'s probe).

    Raises
    ------
    NotInstalledError
        If ``spark`` (or its Spark Connect server) does not have rangejoin (the message says why
        and what to do).
    """
    _set_enabled(spark, True)


def disable(spark: "SparkSession") -> None:
    """Leave every join of ``spark``'s next queries to Spark's own planning.

    Sets the runtime SQL configuration :data:`ENABLED` to ``false`` for this session.

    Parameters
    ----------
    spark : SparkSession
        A session with rangejoin installed (see :func:`configure`), or a Spark Connect session
        whose server was started with it (checked by :func:`is_installed`'s probe).

    Raises
    ------
    NotInstalledError
        If ``spark`` (or its Spark Connect server) does not have rangejoin (the message says why
        and what to do).
    """
    _set_enabled(spark, False)


def _set_enabled(spark: "SparkSession", enabled: bool) -> None:
    _check_installed(spark)
    spark.conf.set(ENABLED, "true" if enabled else "false")


def is_enabled(spark: "SparkSession") -> bool:
    """Return whether rangejoin plans range joins in ``spark`` (:data:`ENABLED`, default true).

    Parameters
    ----------
    spark : SparkSession
        A session with rangejoin installed (see :func:`configure`), or a Spark Connect session
        whose server was started with it (checked by :func:`is_installed`'s probe).

    Returns
    -------
    bool
        The value of :data:`ENABLED` for this session.

    Raises
    ------
    NotInstalledError
        If ``spark`` (or its Spark Connect server) does not have rangejoin (the message says why
        and what to do).
    ValueError
        If :data:`ENABLED` is set to something other than ``true`` or ``false`` (which the
        extension itself rejects when it plans a query).
    """
    _check_installed(spark)
    return read(ENABLED, spark.conf.get(ENABLED, None))

