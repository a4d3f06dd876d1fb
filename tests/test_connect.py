"""rangejoin through Spark Connect: a Connect server started from the installed pyspark
(``sbin/start-connect-server.sh``) with rangejoin's jar and extension, and a client session of it.

The server is set up as docs/configuration.md tells a user to: ``--jars`` with the jar from
``rangejoin.jar_path()`` and ``--conf spark.sql.extensions=rangejoin.RangeJoinExtensions``. The
client sends SQL and DataFrame plans only; the checks read the plans the server shows
(``EXPLAIN``, ``DataFrame.explain()``), since a Connect client has no JVM to read them from.

The client comes from the Connect ``SparkSession.builder.remote(...)``, the builder that pyspark's
``SparkSession.builder.remote(...).getOrCreate()`` hands over to. Called directly, it leaves this
process as it was: the classic builder refuses to connect where a classic session runs (the
other tests' shared one) and sets ``SPARK_CONNECT_MODE_ENABLED`` for the whole process, which
would turn the later tests' ``pyspark.sql.functions`` into Connect's.

The server is a JVM of its own, started once for the module: marked slow. It runs in a process
group of its own, which the fixture's finalizer stops whatever happens (``spark-daemon.sh`` runs
the JVM as its child, so stopping the script alone would leave the JVM running).
"""

import contextlib
import io
import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from urllib.parse import urlparse

import pytest
from pyspark.find_spark_home import _find_spark_home

import rangejoin
from helpers import BNLJ, PMJ, canonical_rows

pytestmark = pytest.mark.slow

# Generous: the server's JVM and SparkContext start on a machine that may be busy.
SERVER_START_TIMEOUT_S = 300

# Small tables, made on the server: points a(id, v) and bands b(bid, lo, hi), with NULL keys and
# duplicate keys and bands on both sides (and bands with lo > hi, which match nothing).
VIEWS = {
    "a": "SELECT id, CASE WHEN id % 11 = 0 THEN NULL ELSE id % 17 END AS v FROM range(0, 60)",
    "b": "SELECT id AS bid, CASE WHEN id % 7 = 3 THEN NULL ELSE id % 9 END AS lo, "
         "CASE WHEN id % 10 = 4 THEN NULL ELSE id % 9 + id % 3 - 1 END AS hi FROM range(0, 25)",
}
BAND = "a.v BETWEEN b.lo AND b.hi"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _log_tail(log: Path, chars: int = 6000) -> str:
    text = log.read_text(errors="replace") if log.is_file() else "(no log)"
    return f"server log {log} (its end):\n{text[-chars:]}"


def _stop_group(proc: subprocess.Popen, timeout_s: float = 60) -> None:
    """Stop the server's process group (the script and the JVM it started): SIGTERM, which runs
    Spark's shutdown hooks, then SIGKILL for whatever is left after ``timeout_s``."""
    pgid = proc.pid  # start_new_session: the script leads a group of its own

    def alive() -> bool:
        proc.poll()
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        return True

    for sig, wait_s in ((signal.SIGTERM, timeout_s), (signal.SIGKILL, 30)):
        if not alive():
            return
        os.killpg(pgid, sig)
        deadline = time.monotonic() + wait_s
        while alive() and time.monotonic() < deadline:
            time.sleep(0.2)
    assert not alive(), f"the Connect server's process group {pgid} survived SIGKILL"


@pytest.fixture(scope="module")
def connect_server(request, tmp_path_factory):
    """A Spark Connect server with rangejoin, on a free loopback port: its ``sc://`` URL."""
    home = Path(_find_spark_home())
    script = home / "sbin" / "start-connect-server.sh"
    assert script.is_file(), f"{script} is missing: pyspark {home} has no Connect server script"
    workdir = tmp_path_factory.mktemp("connect-server")
    conf_dir = workdir / "conf"  # empty: no site's spark-defaults.conf
    conf_dir.mkdir()
    log = workdir / "server.log"
    port = _free_port()
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "SPARK_REMOTE", "SPARK_CONNECT_MODE_ENABLED",
                          "PYSPARK_SUBMIT_ARGS", "SPARK_CONF_DIR")}
    env.update({
        "SPARK_HOME": str(home),
        "SPARK_NO_DAEMONIZE": "1",  # spark-daemon.sh runs the server in the foreground
        "SPARK_LOG_DIR": str(workdir / "logs"),
        "SPARK_PID_DIR": str(workdir / "pids"),
        "SPARK_CONF_DIR": str(conf_dir),
        "SPARK_LOCAL_IP": "127.0.0.1",  # everything on loopback
    })
    command = [
        "bash", str(script),
        "--master", "local[2]",
        "--driver-memory", "1g",
        "--jars", rangejoin.jar_path(),
        "--conf", f"spark.sql.extensions={rangejoin.EXTENSION}",
        "--conf", f"spark.connect.grpc.binding.port={port}",
        "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
        "--conf", "spark.driver.host=127.0.0.1",
        "--conf", "spark.ui.enabled=false",
        "--conf", "spark.sql.shuffle.partitions=2",
        # A short run: the JIT's first tier only halves the CPU the JVM spends starting up.
        "--conf", "spark.driver.extraJavaOptions=-XX:TieredStopAtLevel=1",
    ]
    with open(log, "wb") as out:
        proc = subprocess.Popen(command, cwd=workdir, env=env, stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    request.addfinalizer(lambda: _stop_group(proc))
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    while True:
        if proc.poll() is not None:
            pytest.fail(f"the Connect server exited ({proc.returncode}) before it listened on "
                        f"port {port}\n{_log_tail(log)}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
            break
        if time.monotonic() > deadline:
            pytest.fail(f"the Connect server did not listen on port {port} within "
                        f"{SERVER_START_TIMEOUT_S} s\n{_log_tail(log)}")
        time.sleep(0.5)
    return f"sc://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def remote(request, connect_server):
    """A Spark Connect client session of the server, with the views ``a`` and ``b``."""
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    session = ConnectSession.builder.remote(connect_server).getOrCreate()
    request.addfinalizer(session.stop)
    for name, query in VIEWS.items():
        session.sql(f"CREATE OR REPLACE TEMPORARY VIEW {name} AS {query}")
    return session


@pytest.fixture
def conf_restored(remote):
    """Puts the rangejoin and threshold settings a test changes back to their defaults."""
    yield remote
    for key in (rangejoin.ENABLED, rangejoin.BROADCAST_THRESHOLD):
        remote.conf.unset(key)


def _explain(remote, query: str) -> str:
    """The physical plan the server shows for ``query`` (SQL ``EXPLAIN``)."""
    return "\n".join(str(row[0]) for row in remote.sql(f"EXPLAIN {query}").collect())


def _df_plan(df) -> str:
    """The physical plan the server shows for ``df`` (``DataFrame.explain()``, which prints)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        df.explain()
    return out.getvalue()


def _pmj_line(plan: str) -> str:
    lines = [line for line in plan.splitlines() if PMJ in line]
    assert len(lines) == 1, f"expected one {PMJ} in the plan:\n{plan}"
    return lines[0]


def _expected(remote, how: str) -> list:
    """The band join's rows, computed here from the views' rows: an inner or left join."""
    points = remote.sql("SELECT id, v FROM a").collect()
    bands = remote.sql("SELECT bid, lo, hi FROM b").collect()
    rows = []
    for p in points:
        matches = [(p.id, p.v, b.bid, b.lo, b.hi) for b in bands
                   if None not in (p.v, b.lo, b.hi) and b.lo <= p.v <= b.hi]
        rows += matches or ([(p.id, p.v, None, None, None)] if how == "LEFT" else [])
    return canonical_rows(rows)


def _assert_rangejoin_then_stock(remote, run, plan_of) -> list:
    """Run ``run()`` as planned by default (rangejoin's operator, no nested loop join), then with
    ``SET spark.rangejoin.enabled = false`` (Spark's nested loop join); assert the same rows.
    Returns rangejoin's rows, canonical."""
    plan = plan_of()
    assert PMJ in plan and BNLJ not in plan, f"expected {PMJ} and no {BNLJ}:\n{plan}"
    rows = canonical_rows(run())
    remote.sql(f"SET {rangejoin.ENABLED} = false")
    try:
        stock_plan = plan_of()
        assert BNLJ in stock_plan and PMJ not in stock_plan, \
            f"rangejoin disabled: expected Spark's {BNLJ}:\n{stock_plan}"
        stock_rows = canonical_rows(run())
    finally:
        remote.conf.unset(rangejoin.ENABLED)
    assert rows == stock_rows, f"rangejoin's rows differ from stock Spark's\n{rows}\n{stock_rows}"
    return rows


def test_the_server_has_rangejoin(remote):
    assert remote.conf.get("spark.sql.extensions") == rangejoin.EXTENSION
    jars = [Path(urlparse(jar).path) for jar in remote.conf.get("spark.jars").split(",")]
    assert jars == [Path(rangejoin.jar_path())], jars  # Spark keeps --jars as file: URLs
    assert rangejoin.is_installed(remote)
    assert remote.conf.get(rangejoin.ENABLED, None) is None, "the probe left its setting behind"
    assert rangejoin.is_enabled(remote), "rangejoin is on by default"


@pytest.mark.parametrize("how", ["INNER", "LEFT"])
def test_band_join(remote, how):
    query = f"SELECT a.id, a.v, b.bid, b.lo, b.hi FROM a {how} JOIN b ON {BAND}"
    rows = _assert_rangejoin_then_stock(
        remote, lambda: remote.sql(query).collect(), lambda: _explain(remote, query))
    assert rows and rows == _expected(remote, how)


def test_the_data_has_nulls_and_duplicates(remote):
    """What the band joins above must get right is in the data: NULL keys, and keys and bands
    that occur more than once."""
    nulls, duplicates = remote.sql("SELECT count(*) - count(v), count(v) - count(DISTINCT v) "
                                   "FROM a").collect()[0]
    assert nulls > 0 and duplicates > 0, (nulls, duplicates)
    nulls, duplicates = remote.sql(
        "SELECT count(*) - count(lo + hi), count(lo + hi) - count(DISTINCT lo, hi) "
        "FROM b").collect()[0]
    assert nulls > 0 and duplicates > 0, (nulls, duplicates)


def test_range_join_hint_in_sql(remote):
    """``RANGE_JOIN(a)`` buffers the points, the side rangejoin would otherwise stream."""
    query = f"SELECT a.id, a.v, b.bid, b.lo, b.hi FROM a JOIN b ON {BAND}"
    hinted = query.replace("SELECT", f"SELECT /*+ {rangejoin.HINT}(a) */", 1)
    assert "BuildRight" in _pmj_line(_explain(remote, query)), "unhinted, b is buffered"
    assert "BuildLeft" in _pmj_line(_explain(remote, hinted)), "the hint buffers a"
    rows = _assert_rangejoin_then_stock(
        remote, lambda: remote.sql(hinted).collect(), lambda: _explain(remote, hinted))
    assert rows == _expected(remote, "INNER")


def test_range_join_hint_in_the_dataframe_api(remote):
    """``df.hint("range_join")`` travels in the Connect plan, and buffers that side."""
    from pyspark.sql.connect import functions as CF

    def make():
        points = remote.table("a").hint("range_join")
        return points.join(remote.table("b"), CF.expr("v BETWEEN lo AND hi"))

    assert "BuildLeft" in _pmj_line(_df_plan(make())), "the hint buffers a"
    rows = _assert_rangejoin_then_stock(remote, lambda: make().collect(), lambda: _df_plan(make()))
    assert rows == _expected(remote, "INNER")


def test_the_hint_beats_a_threshold_of_minus_one(conf_restored):
    """With rangejoin's threshold at -1 only hinted sides are buffered: the hint alone makes the
    join rangejoin's, through Connect's ``spark.conf.set``."""
    remote = conf_restored
    remote.conf.set(rangejoin.BROADCAST_THRESHOLD, "-1")
    query = f"SELECT /*+ {rangejoin.HINT}(b) */ a.id, b.bid FROM a JOIN b ON {BAND}"
    assert "BuildRight" in _pmj_line(_explain(remote, query))


def test_conf_set_and_sql_set_switch_it(conf_restored):
    remote = conf_restored
    query = f"SELECT count(*) FROM a JOIN b ON {BAND}"

    def plans_with_rangejoin() -> bool:
        plan = _explain(remote, query)
        assert (PMJ in plan) != (BNLJ in plan), plan
        return PMJ in plan

    remote.conf.set(rangejoin.ENABLED, "false")
    assert not plans_with_rangejoin()
    assert not rangejoin.is_enabled(remote)
    remote.conf.set(rangejoin.ENABLED, "true")
    assert plans_with_rangejoin()
    remote.sql(f"SET {rangejoin.ENABLED} = false")
    assert remote.conf.get(rangejoin.ENABLED) == "false"
    assert not plans_with_rangejoin()
    remote.sql(f"RESET {rangejoin.ENABLED}")
    assert remote.conf.get(rangejoin.ENABLED, None) is None
    assert plans_with_rangejoin()


def test_python_api(conf_restored):
    """rangejoin.disable / enable / is_enabled / is_installed on a Connect session."""
    remote = conf_restored
    query = f"SELECT count(*) FROM a JOIN b ON {BAND}"
    rangejoin.disable(remote)
    assert remote.conf.get(rangejoin.ENABLED) == "false"
    assert not rangejoin.is_enabled(remote)
    assert rangejoin.is_installed(remote), "installed, whatever spark.rangejoin.enabled says"
    assert remote.conf.get(rangejoin.ENABLED) == "false", "the probe put the setting back"
    assert BNLJ in _explain(remote, query)
    rangejoin.enable(remote)
    assert remote.conf.get(rangejoin.ENABLED) == "true"
    assert rangejoin.is_enabled(remote)
    assert PMJ in _explain(remote, query)
