"""The Python API: the bundled jar, configure(), the constants and the runtime switches."""

import importlib.metadata
import sysconfig
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

import rangejoin
from conftest import REPO_ROOT
from helpers import BNLJ, PMJ, collect, final_plan


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
    assert path.name == f"rangejoin-spark_2.13-{rangejoin.__version__}.jar"
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


def test_constants():
    assert rangejoin.ENABLED == "spark.rangejoin.enabled"
    assert rangejoin.EXTENSION == "rangejoin.RangeJoinExtensions"
    assert rangejoin.MAVEN_COORDINATE == f"io.rangejoin:rangejoin-spark_2.13:{rangejoin.__version__}"
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
