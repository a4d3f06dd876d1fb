"""Setting rangejoin up on a SparkSession builder, and switching it on and off at run time."""

import inspect
import os
import re
from typing import TYPE_CHECKING, Any, Optional, Union

from rangejoin._config import ENABLED, EXTENSION, parameters_doc, read, to_conf
from rangejoin._jar import MAVEN_COORDINATE, jar_path

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_JARS = "spark.jars"
_EXTENSIONS = "spark.sql.extensions"


class NotInstalledError(RuntimeError):
    """rangejoin cannot be used from this session: its extension is not in the session's planner.

    Raised by the functions that take a session (:func:`enable`, :func:`disable`,
    :func:`is_enabled`; :func:`is_installed` for a Spark Connect session), and by
    :func:`configure` for a builder bound for a Spark Connect server, with a message saying why
    and what to do: the jar is not on the driver's classpath, the session was started before
    :func:`configure`, the jar is built for another Spark release, or the session is a Spark
    Connect client.
    """


def _append(current: "str | None", item: str) -> str:
    """Append ``item`` to the comma-separated list ``current``, unless it is already there."""
    items = [part.strip() for part in (current or "").split(",") if part.strip()]
    if item not in items:
        items.append(item)
    return ",".join(items)


def _connect_message(subject: str) -> str:
    return (
        f"{subject}; rangejoin's Python functions need a classic SparkSession, whose Spark "
        "driver this Python process talks to through py4j, since the extension runs inside the "
        "driver. With Spark Connect, the server must be started with the extension: start it "
        f"with --packages {MAVEN_COORDINATE} (or --jars with the jar from rangejoin.jar_path()) "
        f"and --conf {_EXTENSIONS}={EXTENSION}. Its range joins then use rangejoin, and a client "
        f"switches it with spark.conf.set('{ENABLED}', 'false') or SQL SET {ENABLED} = false."
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
        ``SPARK_REMOTE``), whose classpath and extensions this process cannot set.

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


def _check_installed(spark: "SparkSession") -> None:
    """Raise :class:`NotInstalledError`, saying why and what to do, unless rangejoin plans in
    ``spark``."""
    if _is_connect(spark):
        raise NotInstalledError(_connect_message("This session is a Spark Connect session"))
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

    Parameters
    ----------
    spark : SparkSession
        A classic (not Spark Connect) session.

    Returns
    -------
    bool
        ``True`` if ``spark`` plans with rangejoin (whatever :data:`ENABLED` says); ``False`` if
        the jar is not on its classpath or the session was started without the extension.

    Raises
    ------
    NotInstalledError
        For a Spark Connect session, which cannot tell from here.
    """
    try:
        _check_installed(spark)
    except NotInstalledError:
        if _is_connect(spark):
            raise
        return False
    return True


def enable(spark: "SparkSession") -> None:
    """Let rangejoin plan the eligible range joins of ``spark``'s next queries (the default).

    Sets the runtime SQL configuration :data:`ENABLED` to ``true`` for this session.

    Parameters
    ----------
    spark : SparkSession
        A classic session with rangejoin installed (see :func:`configure`).

    Raises
    ------
    NotInstalledError
        If ``spark`` does not have rangejoin (the message says why and what to do), or is a
        Spark Connect session.
    """
    _set_enabled(spark, True)


def disable(spark: "SparkSession") -> None:
    """Leave every join of ``spark``'s next queries to Spark's own planning.

    Sets the runtime SQL configuration :data:`ENABLED` to ``false`` for this session.

    Parameters
    ----------
    spark : SparkSession
        A classic session with rangejoin installed (see :func:`configure`).

    Raises
    ------
    NotInstalledError
        If ``spark`` does not have rangejoin (the message says why and what to do), or is a
        Spark Connect session.
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
        A classic session with rangejoin installed (see :func:`configure`).

    Returns
    -------
    bool
        The value of :data:`ENABLED` for this session.

    Raises
    ------
    NotInstalledError
        If ``spark`` does not have rangejoin (the message says why and what to do), or is a
        Spark Connect session.
    ValueError
        If :data:`ENABLED` is set to something other than ``true`` or ``false`` (which the
        extension itself rejects when it plans a query).
    """
    _check_installed(spark)
    return read(ENABLED, spark.conf.get(ENABLED, None))

