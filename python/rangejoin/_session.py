"""Setting rangejoin up on a SparkSession builder, and switching it on and off at run time."""

from typing import TYPE_CHECKING

from rangejoin._jar import jar_path

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: The runtime SQL configuration key that switches rangejoin's planning on (the default) or off.
#: It is read each time a query is planned, so setting it affects the next query of that session.
ENABLED = "spark.rangejoin.enabled"

#: The class to name in ``spark.sql.extensions``.
EXTENSION = "rangejoin.RangeJoinExtensions"

_JARS = "spark.jars"
_EXTENSIONS = "spark.sql.extensions"


def _append(current: "str | None", item: str) -> str:
    """Append ``item`` to the comma-separated list ``current``, unless it is already there."""
    items = [part.strip() for part in (current or "").split(",") if part.strip()]
    if item not in items:
        items.append(item)
    return ",".join(items)


def configure(builder: "SparkSession.Builder") -> "SparkSession.Builder":
    """Set up a ``SparkSession.Builder`` to use rangejoin, and return the same builder.

    The jar bundled in this package (:func:`jar_path`) is appended to ``spark.jars`` and
    :data:`EXTENSION` to ``spark.sql.extensions``. Values already set on this builder for either
    key are kept: rangejoin's entry is added after them, comma-separated, and only once, so
    calling :func:`configure` twice on the same builder changes nothing the second time.

    Call it before the session's JVM starts, i.e. before the first ``getOrCreate()`` of the
    Python process: ``spark.jars`` puts the jar on the driver's classpath only when the driver
    JVM is launched, and on executors' classpaths only when the ``SparkContext`` starts. A builder
    applied to an already running ``SparkContext`` cannot load rangejoin into it.

    Only values set on this builder are appended to. ``spark.jars`` set elsewhere, e.g. in
    ``spark-defaults.conf``, is replaced by the builder's value, as with any builder option.

    Example
    -------
    >>> from pyspark.sql import SparkSession
    >>> import rangejoin
    >>> spark = rangejoin.configure(SparkSession.builder.master("local[2]")).getOrCreate()

    Parameters
    ----------
    builder : SparkSession.Builder
        The builder to configure, e.g. ``SparkSession.builder.appName("app")``.

    Returns
    -------
    SparkSession.Builder
        ``builder`` itself, for chaining.
    """
    options = getattr(builder, "_options", {})
    builder.config(_JARS, _append(options.get(_JARS), jar_path()))
    builder.config(_EXTENSIONS, _append(options.get(_EXTENSIONS), EXTENSION))
    return builder


def enable(spark: "SparkSession") -> None:
    """Let rangejoin plan the eligible range joins of ``spark``'s next queries (the default).

    Sets the runtime SQL configuration :data:`ENABLED` to ``true`` for this session.
    """
    spark.conf.set(ENABLED, "true")


def disable(spark: "SparkSession") -> None:
    """Leave every join of ``spark``'s next queries to Spark's own planning.

    Sets the runtime SQL configuration :data:`ENABLED` to ``false`` for this session.
    """
    spark.conf.set(ENABLED, "false")


def is_enabled(spark: "SparkSession") -> bool:
    """Return whether rangejoin plans range joins in ``spark`` (:data:`ENABLED`, default true).

    This reads the configuration only: it does not check that the extension is loaded.

    Raises
    ------
    ValueError
        If :data:`ENABLED` is set to something other than ``true`` or ``false`` (which the
        extension itself rejects when it plans a query).
    """
    value = str(spark.conf.get(ENABLED, "true")).strip().lower()
    if value not in ("true", "false"):
        raise ValueError(f"Invalid value for {ENABLED}: {value!r}. Use true or false.")
    return value == "true"
