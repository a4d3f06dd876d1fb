"""The Python API: the bundled jar, configure(), the constants and the runtime switches."""

import copy
import importlib.metadata
import sysconfig
from pathlib import Path
from unittest import mock

import pyspark
import pytest
from pyspark.sql import SparkSession

import rangejoin
from conftest import REPO_ROOT
from helpers import BNLJ, PMJ, collect, final_plan
from rangejoin._config import OPTIONS


def _query(spark):
    spark.range(0, 50).toDF("a").createOrReplaceTempView("small")
    spark.range(0, 500).toDF("b").createOrReplaceTempView("big")
    return spark.sql("SELECT count(*) FROM small JOIN big ON small.a < big.b AND small.a + big.b <> 7")


def test_tests_use_the_installed_package():
    package_dir = Path(rangejoin.__file__).resolve().parent
    source_dir = REPO_ROOT / "python" / "rangejoin"
    assert package_dir != source_dir, f"rangejoin imported from the source tree: {package_dir}"
    assert package_dir.parent == Path(sysconfig.get_paths()["purelib"]).resolve()


def test_jar_path_is_a_jar_inside_the_package():
    path = Path(rangejoin.jar_path())
    package_dir = Path(rangejoin.__file__).resolve().parent
    assert path.is_absolute()
    assert path.is_file()
    assert path.parent == package_dir / "jars"
    line = ".".join(pyspark.__version__.split(".")[:2])
    assert path.name == f"rangejoin-spark-{line}_{rangejoin.SPARK_LINES[line]}-{rangejoin.__version__}.jar"
    # The jar registers the extension with Spark's ServiceLoader.
    import zipfile

    with zipfile.ZipFile(path) as jar:
        providers = jar.read(
            "META-INF/services/org.apache.spark.sql.SparkSessionExtensionsProvider"
        ).decode()
        assert rangejoin.EXTENSION in providers.split()
        assert "rangejoin/RangeJoinExtensions.class" in jar.namelist()


def test_jar_path_missing_jar_is_a_clear_error(monkeypatch, tmp_path):
    import rangejoin._jar as jar_module

    monkeypatch.setattr(jar_module, "__file__", str(tmp_path / "_jar.py"))
    with pytest.raises(FileNotFoundError, match="make wheel"):
        rangejoin.jar_path()


def test_jar_for_each_spark_line_and_none_for_others(monkeypatch):
    import rangejoin._jar as jar_module

    for line, scala in rangejoin.SPARK_LINES.items():
        assert Path(rangejoin.jar_path(line)).name == \
            f"rangejoin-spark-{line}_{scala}-{rangejoin.__version__}.jar"
    monkeypatch.setattr(jar_module, "_installed_pyspark_version", lambda: "3.4.4")
    with pytest.raises(rangejoin.UnsupportedSparkVersionError, match=r"Spark 3\.4\.4.*3\.5, 4\.0, 4\.1, 4\.2, 4\.3"):
        rangejoin.configure(SparkSession.Builder())


def test_configure_without_the_jar_is_a_clear_error(monkeypatch, tmp_path):
    import rangejoin._jar as jar_module

    monkeypatch.setattr(jar_module, "__file__", str(tmp_path / "_jar.py"))
    builder = SparkSession.Builder()
    with pytest.raises(FileNotFoundError, match="is not in the rangejoin package"):
        rangejoin.configure(builder)
    assert builder._options == {}, "nothing is set without the jar"


def test_constants():
    assert rangejoin.ENABLED == "spark.rangejoin.enabled"
    assert rangejoin.BROADCAST_THRESHOLD == "spark.rangejoin.broadcastThreshold"
    assert rangejoin.EXISTENCE_FAST_PATH == "spark.rangejoin.existenceFastPath.enabled"
    assert rangejoin.DYNAMIC_FILTER == "spark.rangejoin.dynamicFilter.enabled"
    assert rangejoin.EQUALITY_KEYS == "spark.rangejoin.equalityKeys.enabled"
    assert rangejoin.BINNING == "spark.rangejoin.binning.enabled"
    assert rangejoin.SIDE_SWITCH == "spark.rangejoin.sideSwitch.enabled"
    assert rangejoin.SIDE_SWITCH_MIN_SIZE == "spark.rangejoin.sideSwitch.minBufferedSize"
    assert rangejoin.SIDE_SWITCH_MAX_RATIO == "spark.rangejoin.sideSwitch.maxRowsRatio"
    assert rangejoin.SHUFFLE_MAX_PARTITION_SIZE == "spark.rangejoin.shuffle.maxPartitionSize"
    assert rangejoin.HINT == "RANGE_JOIN"
    assert rangejoin.EXTENSION == "rangejoin.RangeJoinExtensions"
    line = ".".join(pyspark.__version__.split(".")[:2])
    assert rangejoin.MAVEN_COORDINATE == \
        f"io.rangejoin:rangejoin-spark-{line}_{rangejoin.SPARK_LINES[line]}:{rangejoin.__version__}"
    assert importlib.metadata.version("spark-rangejoin") == rangejoin.__version__
    for name in rangejoin.__all__:
        assert hasattr(rangejoin, name), name
        if callable(getattr(rangejoin, name)):
            assert getattr(rangejoin, name).__doc__, f"{name} has no docstring"


def test_configure_sets_jar_and_extension():
    builder = SparkSession.Builder()
    assert rangejoin.configure(builder) is builder
    assert builder._options["spark.jars"] == rangejoin.jar_path()
    assert builder._options["spark.sql.extensions"] == rangejoin.EXTENSION


def test_configure_appends_to_existing_values_and_is_idempotent():
    builder = (
        SparkSession.Builder()
        .config("spark.jars", "/opt/a.jar,/opt/b.jar")
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
    )
    rangejoin.configure(builder)
    rangejoin.configure(builder)
    assert builder._options["spark.jars"] == f"/opt/a.jar,/opt/b.jar,{rangejoin.jar_path()}"
    assert builder._options["spark.sql.extensions"] == (
        f"io.delta.sql.DeltaSparkSessionExtension,{rangejoin.EXTENSION}"
    )


def test_configure_keeps_values_set_through_a_spark_conf():
    from pyspark import SparkConf

    conf = SparkConf(loadDefaults=False).set("spark.jars", "/opt/c.jar")
    builder = rangejoin.configure(SparkSession.Builder().config(conf=conf))
    assert builder._options["spark.jars"] == f"/opt/c.jar,{rangejoin.jar_path()}"


def test_session_was_configured(spark):
    conf = spark.sparkContext.getConf()
    assert rangejoin.jar_path() in conf.get("spark.jars").split(",")
    assert rangejoin.EXTENSION in conf.get("spark.sql.extensions").split(",")


def test_enable_disable_is_enabled(rangejoin_conf):
    spark = rangejoin_conf
    assert rangejoin.is_enabled(spark), "rangejoin is on by default"
    rangejoin.disable(spark)
    assert spark.conf.get(rangejoin.ENABLED) == "false"
    assert not rangejoin.is_enabled(spark)
    df = _query(spark)
    df.collect()
    assert PMJ not in final_plan(df)
    rangejoin.enable(spark)
    assert spark.conf.get(rangejoin.ENABLED) == "true"
    assert rangejoin.is_enabled(spark)
    df = _query(spark)
    df.collect()
    assert PMJ in final_plan(df)


def test_is_enabled_rejects_invalid_values(rangejoin_conf):
    rangejoin_conf.conf.set(rangejoin.ENABLED, "maybe")
    with pytest.raises(ValueError, match="spark.rangejoin.enabled"):
        rangejoin.is_enabled(rangejoin_conf)


def test_disabled_plans_broadcast_nested_loop_join(spark):
    rows_off, plan_off = collect(spark, lambda: _query(spark), enabled=False)
    rows_on, plan_on = collect(spark, lambda: _query(spark), enabled=True)
    assert BNLJ in plan_off and PMJ not in plan_off, plan_off
    assert PMJ in plan_on and BNLJ not in plan_on, plan_on
    expected = sum(1 for a in range(50) for b in range(500) if a < b and a + b != 7)
    assert rows_off[0][0] == rows_on[0][0] == expected


def test_sql_set_switches_per_query(rangejoin_conf):
    spark = rangejoin_conf
    spark.sql(f"SET {rangejoin.ENABLED} = false")
    df = _query(spark)
    df.collect()
    assert BNLJ in final_plan(df)
    spark.sql(f"SET {rangejoin.ENABLED} = true")
    df = _query(spark)
    df.collect()
    assert PMJ in final_plan(df)


# --- configure()'s options --------------------------------------------------------------------

def test_configure_options_set_the_keys():
    builder = rangejoin.configure(
        SparkSession.Builder(), enabled=False, broadcast_threshold="64MB",
        existence_fast_path=True, dynamic_filter=False, equality_keys=False, binning=False,
        side_switch=False, side_switch_min_size=0, side_switch_max_ratio=0.5,
        shuffle_max_partition_size=" -1 ")
    options = builder._options
    assert options[rangejoin.ENABLED] == "false"
    assert options[rangejoin.BROADCAST_THRESHOLD] == "64MB"
    assert options[rangejoin.EXISTENCE_FAST_PATH] == "true"
    assert options[rangejoin.DYNAMIC_FILTER] == "false"
    assert options[rangejoin.EQUALITY_KEYS] == "false"
    assert options[rangejoin.BINNING] == "false"
    assert options[rangejoin.SIDE_SWITCH] == "false"
    assert options[rangejoin.SIDE_SWITCH_MIN_SIZE] == "0"
    assert options[rangejoin.SIDE_SWITCH_MAX_RATIO] == "0.5"
    assert options[rangejoin.SHUFFLE_MAX_PARTITION_SIZE] == "-1"
    assert options["spark.sql.extensions"] == rangejoin.EXTENSION
    builder = rangejoin.configure(SparkSession.Builder(), broadcast_threshold=10 * 1024 * 1024)
    assert builder._options[rangejoin.BROADCAST_THRESHOLD] == "10485760"
    # An option left out, or None, sets nothing: the key keeps its default.
    builder = rangejoin.configure(SparkSession.Builder(), enabled=None)
    assert not any(key.startswith("spark.rangejoin.") for key in builder._options)


def test_configure_unknown_option_lists_the_valid_ones():
    builder = SparkSession.Builder()
    with pytest.raises(TypeError) as error:
        rangejoin.configure(builder, enable=True)
    message = str(error.value)
    assert "'enable'" in message
    for option in OPTIONS:
        assert f"{option.name} ({option.key})" in message, message
    assert builder._options == {}, "nothing is set when an option is wrong"


@pytest.mark.parametrize(
    "options, error, text",
    [
        ({"enabled": "true"}, TypeError, "takes True or False"),
        ({"dynamic_filter": 1}, TypeError, "takes True or False"),
        ({"broadcast_threshold": True}, TypeError, "number of bytes"),
        ({"broadcast_threshold": 1.5}, TypeError, "number of bytes"),
        ({"broadcast_threshold": "1.5g"}, ValueError,
         "Invalid value for spark.rangejoin.broadcastThreshold: '1.5g'. Accepted values: a size in "
         "bytes, with an optional unit (10485760, 10m, 64MB, 1g), or a negative number (-1)."),
        ({"broadcast_threshold": 2**63}, ValueError, "Accepted values"),
        ({"side_switch": "yes"}, TypeError, "takes True or False"),
        ({"side_switch_min_size": -1}, ValueError,
         "Invalid value for spark.rangejoin.sideSwitch.minBufferedSize: '-1'. Accepted values: a "
         "size in bytes of 0 or more, with an optional unit (0, 8m, 64MB)."),
        ({"side_switch_max_ratio": True}, TypeError, "takes a number (int or float)"),
        ({"side_switch_max_ratio": float("nan")}, ValueError,
         "Invalid value for spark.rangejoin.sideSwitch.maxRowsRatio: 'nan'. Accepted values: a "
         "number of 0 or more (0.25, 1, 10)."),
        ({"shuffle_max_partition_size": 1.5}, TypeError, "number of bytes"),
    ],
)
def test_configure_rejects_bad_values(options, error, text):
    builder = SparkSession.Builder()
    with pytest.raises(error) as raised:
        rangejoin.configure(builder, **options)
    assert text in str(raised.value)
    assert builder._options == {}


def test_configure_options_reach_the_session(spark):
    """The options are SQL settings of the session getOrCreate() returns (here the running one,
    which applies a builder's runtime settings)."""
    try:
        session = rangejoin.configure(
            SparkSession.builder, broadcast_threshold="-1", existence_fast_path=False).getOrCreate()
        assert session is spark
        assert spark.conf.get(rangejoin.BROADCAST_THRESHOLD) == "-1"
        df = _query(spark)
        df.collect()
        assert BNLJ in final_plan(df), "nothing is under a threshold of -1"
    finally:
        spark.conf.unset(rangejoin.BROADCAST_THRESHOLD)
        spark.conf.unset(rangejoin.EXISTENCE_FAST_PATH)


def test_configure_refuses_a_spark_connect_builder(monkeypatch):
    monkeypatch.delenv("SPARK_REMOTE", raising=False)
    builder = SparkSession.Builder().remote("sc://localhost:15002")
    with pytest.raises(rangejoin.NotInstalledError, match="Spark Connect") as error:
        rangejoin.configure(builder)
    assert "spark.sql.extensions=rangejoin.RangeJoinExtensions" in str(error.value)
    assert "the server must be started with the extension" in str(error.value)
    assert "spark.jars" not in builder._options
    monkeypatch.setenv("SPARK_REMOTE", "sc://localhost:15002")
    with pytest.raises(rangejoin.NotInstalledError, match="Spark Connect"):
        rangejoin.configure(SparkSession.Builder())


# --- sessions without rangejoin ---------------------------------------------------------------

SESSION_FUNCTIONS = [rangejoin.enable, rangejoin.disable, rangejoin.is_enabled]


def test_is_installed(spark):
    assert rangejoin.is_installed(spark)


@pytest.fixture(scope="module")
def session_without_rangejoin(spark):
    """A second session of the same SparkContext, built with no extensions at all: the jar is on
    the classpath, but the session's planner has no rangejoin strategy (as for a session started
    before rangejoin.configure). It shares the test session's SparkContext and catalog."""
    jvm = spark._jvm
    no_options = jvm.org.apache.spark.api.python.PythonUtils.toScalaMap(jvm.java.util.HashMap())
    jsession = getattr(jvm, "org.apache.spark.sql.classic.SparkSession")(
        spark._jsc.sc(), jvm.scala.Option.apply(spark._jsparkSession.sharedState()),
        jvm.scala.Option.empty(), jvm.org.apache.spark.sql.SparkSessionExtensions(),
        no_options, no_options)
    session = SparkSession(spark.sparkContext, jsparkSession=jsession)
    assert SparkSession.getActiveSession() is spark
    return session


@pytest.mark.parametrize("function", SESSION_FUNCTIONS, ids=lambda f: f.__name__)
def test_session_started_without_rangejoin(session_without_rangejoin, function):
    with pytest.raises(rangejoin.NotInstalledError) as error:
        function(session_without_rangejoin)
    message = str(error.value)
    assert "the rangejoin jar is on the classpath" in message, message
    assert "started before rangejoin.configure" in message, message
    assert "spark.stop()" in message and "rangejoin.configure(SparkSession.builder)" in message
    assert not session_without_rangejoin.conf.get(rangejoin.ENABLED, None)


def test_session_without_rangejoin_really_lacks_it(session_without_rangejoin):
    """isInstalled tells the truth: that session plans Spark's nested loop join."""
    assert not rangejoin.is_installed(session_without_rangejoin)
    df = _query(session_without_rangejoin)
    df.collect()
    assert BNLJ in final_plan(df) and PMJ not in final_plan(df)


class _JVMWithoutRangejoin:
    """The session's JVM as py4j shows it when rangejoin's jar is not on the classpath: its
    ``rangejoin`` package resolves to a package of that name with no classes."""

    def __init__(self, jvm):
        self._jvm = jvm

    def __getattr__(self, name):
        return getattr(self._jvm, "no_such_package_" + name if name == "rangejoin" else name)


@pytest.mark.parametrize("function", SESSION_FUNCTIONS, ids=lambda f: f.__name__)
def test_session_without_the_jar(spark, function):
    session = copy.copy(spark)
    session._jvm = _JVMWithoutRangejoin(spark._jvm)
    assert type(session._jvm.rangejoin.RangeJoinExtensions).__name__ == "JavaPackage"
    with pytest.raises(rangejoin.NotInstalledError) as error:
        function(session)
    message = str(error.value)
    assert "rangejoin.RangeJoinExtensions is not on the Spark driver's classpath" in message
    assert "new Python process" in message and "--packages" in message, message
    assert not rangejoin.is_installed(session)


def test_session_of_another_spark_release(spark):
    from py4j.java_gateway import JavaClass

    session = copy.copy(spark)
    extensions = mock.MagicMock()
    extensions.__class__ = JavaClass  # as py4j gives it for a class it found
    extensions.isInstalled.return_value = False
    extensions.SparkFeatureRelease.return_value = "9.1"
    session._jvm = mock.MagicMock()
    session._jvm.rangejoin.RangeJoinExtensions = extensions
    with pytest.raises(rangejoin.NotInstalledError) as error:
        rangejoin.enable(session)
    message = str(error.value)
    assert f"built for Spark 9.1.x, and this is Spark {spark.version}" in message, message
    extensions.isInstalled.assert_called_once_with(spark._jsparkSession)


class SparkSession_:  # noqa: N801 - stands in for pyspark.sql.connect.session.SparkSession
    """A Spark Connect session as rangejoin sees one: a class from pyspark.sql.connect, with no
    py4j gateway, a configuration (``settings``), and a server (of Spark ``version``) that
    answers every query with the plan ``plan``, and records each with the rangejoin setting it
    ran under. tests/test_connect.py runs the same functions against a real server."""

    def __init__(self, plan: str, version: str = "4.3.0", settings: dict = None):
        self.plan, self.version, self.settings, self.queries = plan, version, settings or {}, []
        self.conf = mock.MagicMock()
        self.conf.get.side_effect = lambda key, *default: self.settings.get(key, *default)
        self.conf.set.side_effect = self.settings.__setitem__
        self.conf.unset.side_effect = lambda key: self.settings.pop(key, None)

    def sql(self, query):
        self.queries.append((query, self.settings.get(rangejoin.ENABLED)))
        if isinstance(self.plan, Exception):
            raise self.plan
        return mock.MagicMock(collect=lambda: [(self.plan,)])


SparkSession_.__module__ = "pyspark.sql.connect.session"

WITH_RANGEJOIN = f"== Physical Plan ==\n{PMJ} Inner, BuildRight, SortedRun (id#0L < id#1L)"
WITHOUT_RANGEJOIN = f"== Physical Plan ==\n{BNLJ} BuildRight, Inner, (id#0L < id#1L)"


@pytest.mark.parametrize("settings", [{}, {rangejoin.ENABLED: "false"}], ids=["unset", "false"])
def test_spark_connect_session_probes_its_server(settings):
    """is_installed asks the server to plan a hinted range join with rangejoin enabled, and puts
    the setting back as it was (unset, or false)."""
    before = dict(settings)
    session = SparkSession_(WITH_RANGEJOIN, settings=settings)
    assert rangejoin.is_installed(session)
    [(query, enabled)] = session.queries
    assert query.startswith("EXPLAIN ") and f"{rangejoin.HINT}(b)" in query and "<" in query
    assert enabled == "true"
    assert session.settings == before
    assert not rangejoin.is_installed(SparkSession_(WITHOUT_RANGEJOIN))


def test_spark_connect_session_probe_failing_restores_the_setting():
    session = SparkSession_(RuntimeError("server gone"), settings={rangejoin.ENABLED: "false"})
    with pytest.raises(RuntimeError, match="server gone"):
        rangejoin.is_installed(session)
    assert session.settings == {rangejoin.ENABLED: "false"}


def test_spark_connect_session_with_rangejoin():
    session = SparkSession_(WITH_RANGEJOIN)
    rangejoin.disable(session)
    assert session.settings == {rangejoin.ENABLED: "false"}
    assert not rangejoin.is_enabled(session)
    rangejoin.enable(session)
    assert session.settings == {rangejoin.ENABLED: "true"}
    assert rangejoin.is_enabled(session)
    assert len(session.queries) == 4, "each call checks the server first"


@pytest.mark.parametrize(
    "function", SESSION_FUNCTIONS, ids=lambda f: f.__name__)
def test_spark_connect_session_without_rangejoin(function):
    session = SparkSession_(WITHOUT_RANGEJOIN)
    with pytest.raises(rangejoin.NotInstalledError) as error:
        function(session)
    message = str(error.value)
    assert "not installed in this Spark Connect session" in message, message
    assert "the server must be started with the extension" in message, message
    assert f"--packages {rangejoin.MAVEN_COORDINATE}" in message, message
    assert f"--conf spark.sql.extensions={rangejoin.EXTENSION}" in message, message
    assert session.settings == {}, "nothing is left set"


def test_spark_connect_server_of_another_spark_line():
    """The jar to start the server with is the server's line's, whatever this client's is."""
    with pytest.raises(rangejoin.NotInstalledError) as error:
        rangejoin.enable(SparkSession_(WITHOUT_RANGEJOIN, version="3.5.1"))
    message = str(error.value)
    assert "(Spark 3.5.1)" in message, message
    assert f"--packages io.rangejoin:rangejoin-spark-3.5_2.12:{rangejoin.__version__}" in message
    assert "rangejoin.jar_path('3.5')" in message, message


def test_not_a_session():
    with pytest.raises(TypeError, match="expected a pyspark.sql.SparkSession"):
        rangejoin.enable(SparkSession.builder)
