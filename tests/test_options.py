"""The one table of options (``rangejoin._config.OPTIONS``) against everything else that describes
the configuration keys: the JVM's own table (``RangeJoinConf``), the package's constants,
configure()'s signature, the tables of docs/configuration.md and the README, and how the extension
reads each kind of value. A key added on one side only fails here."""

import inspect
import typing

import pytest
from pyspark.sql import SparkSession

import rangejoin
from conftest import REPO_ROOT
from helpers import sql_conf
from rangejoin._config import OPTIONS, invalid, read


def test_the_table_is_the_jvms(spark):
    rows = spark._jvm.rangejoin.RangeJoinConf.describe()
    jvm = [(str(row[0]), str(row[1]) or None, str(row[2])) for row in rows]
    assert [(option.key, option.default, option.kind.name) for option in OPTIONS] == jvm


def test_every_key_is_a_constant_of_the_package():
    for option in OPTIONS:
        constant = option.name.upper()
        assert getattr(rangejoin, constant) == option.key, constant
        assert constant in rangejoin.__all__, constant
        assert f":data:`{constant}`" in rangejoin.__doc__, constant


def test_configure_takes_one_option_per_key():
    parameters = inspect.signature(rangejoin.configure).parameters.values()
    options = [p for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY]
    assert [p.name for p in options] == [option.name for option in OPTIONS]
    for parameter, option in zip(options, OPTIONS):
        assert parameter.default is None, parameter
        types = set(typing.get_args(parameter.annotation)) - {type(None)}
        assert types == set(option.kind.types), parameter
        assert f"\n    {option.name} : " in rangejoin.configure.__doc__, option.name


def _table(path, header):
    """The rows of the Markdown table whose header line is ``header``: {first cell: other cells}."""
    lines = path.read_text().splitlines()
    rows = {}
    for line in lines[lines.index(header) + 2:]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        rows[cells[0].strip("`")] = cells[1:]
    return rows


DOCS_TABLES = {
    "docs/configuration.md": "| key | default | accepted values | `configure` option |",
    "README.md": "| key | default | |",
}


@pytest.mark.parametrize("path", list(DOCS_TABLES))
def test_the_docs_have_a_row_per_key(path):
    rows = _table(REPO_ROOT / path, DOCS_TABLES[path])
    assert list(rows) == [option.key for option in OPTIONS]
    for option in OPTIONS:
        default = rows[option.key][0]
        if option.default is None:
            assert default.startswith("unset"), (option.key, default)
        else:
            assert default == f"`{option.default}`", (option.key, default)
        if path == "docs/configuration.md":
            assert rows[option.key][2].startswith(f"`{option.name}`"), (option.key, rows[option.key])


def test_the_docs_quote_the_error_as_it_reads():
    message = str(invalid(rangejoin.BROADCAST_THRESHOLD, "lots"))
    assert message in (REPO_ROOT / "docs" / "configuration.md").read_text()


# --- each kind of value, read as the extension reads it -----------------------------------------

QUERY = "SELECT count(*) FROM small JOIN big ON small.a < big.b AND small.a + big.b <> 7"
# The side switch is planned over big (4,000 bytes) when it is the buffered side.
SWITCHED = "SELECT count(*) FROM small JOIN big ON small.a > big.b AND (small.a + big.b) % 3 = 0"
SWITCH = {rangejoin.BROADCAST_THRESHOLD: "10k"}

# Per kind: a key of that kind, the settings and query whose planning reads it, and values, some
# the extension reads and some it rejects.
KINDS = {
    "boolean": (rangejoin.ENABLED, {}, QUERY, ["true", "FALSE", " True ", "yes", "1", "", "t"]),
    "signed-size": (rangejoin.BROADCAST_THRESHOLD, {}, QUERY, [
        "10485760", "10m", "64MB", "1g", "1G", "2kib", "7b", " 3k ", "0", "-1", "+5",
        "9223372036854775807", "8589934591g", "8589934592g", "1.5g", "10 m", "-1m", "1bb", "lots",
        "", "99999999999999999999", "1e6"]),
    "size": (rangejoin.SIDE_SWITCH_MIN_SIZE, SWITCH, SWITCHED,
             ["0", "8m", "64MB", " 1k ", "+5", "-1", "-1m", "1.5g", "lots"]),
    "ratio": (rangejoin.SIDE_SWITCH_MAX_RATIO, dict(SWITCH, **{rangejoin.SIDE_SWITCH_MIN_SIZE: "0"}),
              SWITCHED, ["0.25", "0", "10", " 2 ", "1e3", ".5", "1.", "1.5d", "0x1p-2", "-0", "-1",
                         "NaN", "Infinity", "1e400", "0x1p2000", "1_0", "abc", ""]),
}


@pytest.fixture(scope="module")
def tables(spark):
    spark.range(0, 50).toDF("a").createOrReplaceTempView("small")
    spark.range(0, 500).toDF("b").createOrReplaceTempView("big")
    yield spark


def test_every_kind_is_tried():
    assert set(KINDS) == {option.kind.name for option in OPTIONS}


@pytest.mark.parametrize("kind, value", [(kind, value) for kind, (*_, values) in KINDS.items()
                                         for value in values])
def test_python_reads_each_kind_as_the_extension_does(tables, kind, value):
    key, conf, query, _ = KINDS[kind]
    try:
        read(key, value)
        python_error = None
    except ValueError as error:
        python_error = str(error)
    with sql_conf(tables, {**conf, key: value}):
        try:
            tables.sql(query)._jdf.queryExecution().executedPlan()
            jvm_error = None
        except Exception as error:  # py4j wraps the JVM's IllegalArgumentException
            jvm_error = str(error)
            assert f"Invalid value for {key}" in jvm_error, jvm_error
    assert (python_error is None) == (jvm_error is None), (python_error, jvm_error)
    if python_error:
        assert python_error in jvm_error, (python_error, jvm_error)
    # configure() takes the same strings, but for booleans, which it takes as True or False.
    if kind != "boolean":
        option = next(option.name for option in OPTIONS if option.key == key)
        try:
            rangejoin.configure(SparkSession.Builder(), **{option: value})
            assert python_error is None
        except ValueError as error:
            assert str(error) == python_error
