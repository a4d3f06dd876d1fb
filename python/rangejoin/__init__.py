"""rangejoin: fast range (inequality) joins for Apache Spark.

rangejoin is a Spark SQL extension (:data:`EXTENSION`) that plans joins such as
``t1 JOIN t2 ON t1.v1 > t2.v1 AND <residual>`` as a ``PiecewiseMergeJoin``: the broadcast side is
sorted once and each row of the other side finds its matches by binary search, where Spark would
compare every pair of rows in a ``BroadcastNestedLoopJoin``. This package bundles the extension's
jar and sets a ``SparkSession`` up to use it::

    from pyspark.sql import SparkSession
    import rangejoin

    spark = rangejoin.configure(SparkSession.builder.appName("app")).getOrCreate()
    spark.sql("SELECT * FROM a JOIN b ON a.t < b.t AND a.id <> b.id").explain()

rangejoin is on by default once loaded; :func:`disable` and :func:`enable` switch it per session
at run time (the SQL configuration :data:`ENABLED`). Its configuration keys are :data:`ENABLED`,
:data:`BROADCAST_THRESHOLD`, :data:`EXISTENCE_FAST_PATH`, :data:`DYNAMIC_FILTER`,
:data:`EQUALITY_KEYS`, :data:`BINNING`, the side switch's :data:`SIDE_SWITCH`,
:data:`SIDE_SWITCH_MIN_SIZE` and :data:`SIDE_SWITCH_MAX_RATIO`, and the shuffled join's
:data:`SHUFFLE_MAX_PARTITION_SIZE`, and the as-of joins' :data:`ASOF`; each is set by the :func:`configure` option of its name in
lower case (``broadcast_threshold="64MB"``), with ``spark.conf.set`` or with SQL ``SET``. The join
hint :data:`HINT` (``/*+ RANGE_JOIN(t) */``) makes ``t`` the buffered side.

The wheel carries a jar per Spark line (:data:`SPARK_LINES`: 3.5 to 4.3); :func:`configure` and
:func:`jar_path` pick the installed pyspark's, and raise :class:`UnsupportedSparkVersionError` for a
pyspark of any other line.

:func:`asof_join` joins each left row with the right row nearest in time (pandas ``merge_asof``'s
names, on Spark's ``DataFrame._joinAsOf``), and :func:`asof_sql` switches Spark's SQL ``ASOF JOIN``
syntax (:data:`ASOF_SQL`) on; rangejoin runs both as ``PiecewiseMergeAsOfJoin``.
"""

from rangejoin._config import (
    ASOF,
    BINNING,
    BROADCAST_THRESHOLD,
    DYNAMIC_FILTER,
    ENABLED,
    EQUALITY_KEYS,
    EXISTENCE_FAST_PATH,
    EXTENSION,
    HINT,
    SHUFFLE_MAX_PARTITION_SIZE,
    SIDE_SWITCH,
    SIDE_SWITCH_MAX_RATIO,
    SIDE_SWITCH_MIN_SIZE,
)
from rangejoin._asof import ASOF_SQL, asof_join, asof_sql
from rangejoin._jar import (
    MAVEN_COORDINATE,
    SCALA_BINARY_VERSION,
    SPARK_LINES,
    UnsupportedSparkVersionError,
    jar_path,
)
from rangejoin._session import (
    NotInstalledError,
    configure,
    disable,
    enable,
    is_enabled,
    is_installed,
)
from rangejoin._version import __version__

__all__ = [
    "__version__",
    "ASOF",
    "ASOF_SQL",
    "BINNING",
    "BROADCAST_THRESHOLD",
    "DYNAMIC_FILTER",
    "ENABLED",
    "EQUALITY_KEYS",
    "EXISTENCE_FAST_PATH",
    "EXTENSION",
    "HINT",
    "MAVEN_COORDINATE",
    "SCALA_BINARY_VERSION",
    "SPARK_LINES",
    "SHUFFLE_MAX_PARTITION_SIZE",
    "SIDE_SWITCH",
    "SIDE_SWITCH_MAX_RATIO",
    "SIDE_SWITCH_MIN_SIZE",
    "NotInstalledError",
    "UnsupportedSparkVersionError",
    "asof_join",
    "asof_sql",
    "configure",
    "disable",
    "enable",
    "is_enabled",
    "is_installed",
    "jar_path",
]
