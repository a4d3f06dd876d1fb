"""rangejoin outside the shared test session: on executor JVMs of a local cluster, installed from
the wheel into a brand-new virtualenv, and given to spark-submit with --packages (resolved from
the local Maven repository only) or --jars.

Each runs a Python script in a subprocess, since a Python process can hold one SparkContext only.
The script prints one JSON line, which the test checks. Those start a JVM of their own (or a
cluster, or a virtualenv) each: they are marked slow.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from pyspark.find_spark_home import _find_spark_home

import rangejoin
from conftest import REPO_ROOT

# The range joins every job here runs, as a function the job's script defines: the demo query on
# small tables, and an outer join whose buffered side (t1) is preserved (its unmatched rows are
# found by merging per-task match marks, so rangejoin's classes run in every task).
JOINS = textwrap.dedent(
    """
    def run_joins(spark):
        spark.range(1, 201, numPartitions=2).toDF("v1").createOrReplaceTempView("t1")
        spark.range(1, 20001, numPartitions=4).toDF("v1").createOrReplaceTempView("t2")
        inner = spark.sql(
            "SELECT count(*) FROM t1 JOIN t2 ON t1.v1 > t2.v1 AND (t1.v1 + t2.v1) % 2 = 0")
        outer = spark.sql(
            "SELECT count(*) FROM t2 RIGHT JOIN t1 ON t1.v1 > t2.v1 + 150 AND t2.v1 % 7 <> 0")
        counts = [df.collect()[0][0] for df in (inner, outer)]
        plans = [df._jdf.queryExecution().executedPlan().toString().split("== Initial Plan ==")[0]
                 for df in (inner, outer)]
        return {"inner_count": counts[0], "outer_count": counts[1], "plans": plans}
    """
)

SCRIPT = JOINS + textwrap.dedent(
    """
    import json, sys
    from pyspark.sql import SparkSession
    import rangejoin

    master = sys.argv[1]
    builder = (
        SparkSession.builder.master(master)
        .appName("rangejoin-deployment-test")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
    )
    spark = rangejoin.configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    try:
        print(json.dumps({
            **run_joins(spark),
            "rangejoin_file": rangejoin.__file__,
            "jar": rangejoin.jar_path(),
            "executors": spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1,
        }))
    finally:
        spark.stop()
    """
)

EXPECTED_INNER = sum((a - 1) // 2 for a in range(1, 201))
# For t1.v1 = a: the b in [1, a - 151] that are not multiples of 7, or one NULL-padded row.
EXPECTED_OUTER = sum(
    max(1, max(0, a - 151) - max(0, a - 151) // 7) for a in range(1, 201)
)
assert EXPECTED_OUTER == sum(
    max(1, sum(1 for b in range(1, 400) if a > b + 150 and b % 7 != 0)) for a in range(1, 201)
)


def _run(python, master, cwd, env):
    script = Path(cwd) / "rangejoin_check.py"
    script.write_text(SCRIPT)
    proc = subprocess.run(
        [str(python), str(script), master],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=900,
    )
    assert proc.returncode == 0, f"script failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr[-5000:]}"
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert lines, f"no result printed:\n{proc.stdout}\n{proc.stderr[-5000:]}"
    return json.loads(lines[-1])


def _check(result):
    for plan in result["plans"]:
        assert "PiecewiseMergeJoin" in plan, plan
        assert "BroadcastNestedLoopJoin" not in plan, plan
    assert result["inner_count"] == EXPECTED_INNER
    assert result["outer_count"] == EXPECTED_OUTER


def _base_env():
    env = dict(os.environ)
    for key in ("PYTHONPATH", "SPARK_HOME", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "PYSPARK_SUBMIT_ARGS"):
        env.pop(key, None)
    # Everything, driver and executors, talks over loopback only.
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    return env


@pytest.mark.slow
def test_local_cluster_executors_load_the_jar(tmp_path):
    """On local-cluster, tasks run in separate executor JVMs: they get the jar via spark.jars."""
    env = _base_env()
    # A local cluster's workers start executor JVMs from SPARK_HOME: pyspark's own package.
    env["SPARK_HOME"] = _find_spark_home()
    env["SPARK_SCALA_VERSION"] = "2.13"
    result = _run(sys.executable, "local-cluster[2,1,1024]", tmp_path, env)
    _check(result)
    assert result["executors"] == 2
    assert result["jar"] == rangejoin.jar_path()


def test_wheel_carries_the_jar_the_license_and_type_marker():
    """The wheel holds the extension's jar, py.typed (PEP 561: type checkers read the package's
    annotations) and the Apache-2.0 LICENSE that its metadata declares."""
    import zipfile

    wheel = REPO_ROOT / "dist" / f"spark_rangejoin-{rangejoin.__version__}-py3-none-any.whl"
    assert wheel.is_file(), f"{wheel} is missing: run `make wheel` first"
    names = zipfile.ZipFile(wheel).namelist()
    assert "rangejoin/py.typed" in names, names
    for line, scala in rangejoin.SPARK_LINES.items():  # a jar per Spark line
        jar = f"rangejoin/jars/rangejoin-spark-{line}_{scala}-{rangejoin.__version__}.jar"
        assert jar in names, names
    licenses = [n for n in names if n.endswith("/LICENSE") and ".dist-info/" in n]
    assert licenses, names
    text = zipfile.ZipFile(wheel).read(licenses[0]).decode()
    assert "Apache License" in text and "Version 2.0" in text
    metadata = zipfile.ZipFile(wheel).read(
        next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "License-Expression: Apache-2.0" in metadata, metadata[:1000]


# The range joins a user moving between clusters runs, each with rangejoin on and off in one
# session: every answer must be stock Spark's, and rangejoin must plan each (EXPLAIN names
# PiecewiseMergeJoin, or RangeJoin for the bins and the keyed existence rewrite).
LINE_SCRIPT = textwrap.dedent(
    """
    import json, sys
    from pyspark.sql import SparkSession
    import rangejoin

    builder = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
    )
    spark = rangejoin.configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    spark.sql("SELECT id AS pid, IF(id % 41 = 0, NULL, (id * 7919) % 3000 - 50) AS x, id % 5 AS k "
              "FROM range(0, 2000, 1, 3)").createOrReplaceTempView("pts")
    spark.sql("SELECT id AS iid, (id * 104729) % 3000 AS lo, (id * 104729) % 3000 + id % 30 AS hi, "
              "id % 5 AS k FROM range(0, 300, 1, 2)").createOrReplaceTempView("ivs")
    queries = {
        "single inequality": "SELECT p.pid, i.iid FROM pts p JOIN ivs i ON p.x > i.hi + 2900",
        "band": "SELECT p.pid, i.iid FROM pts p JOIN ivs i ON p.x BETWEEN i.lo AND i.hi",
        "band, RANGE_JOIN hint": "SELECT /*+ RANGE_JOIN(i) */ p.pid, i.iid FROM pts p "
                                 "LEFT JOIN ivs i ON p.x >= i.lo AND p.x < i.hi",
        "overlap": "SELECT a.iid, b.iid FROM ivs a JOIN ivs b ON a.lo < b.hi AND b.lo < a.hi",
        "full outer": "SELECT p.pid, i.iid FROM pts p FULL JOIN ivs i ON p.x > i.hi + 2950",
        "keyed": "SELECT /*+ RANGE_JOIN(i) */ p.pid, i.iid FROM pts p JOIN ivs i "
                 "ON p.k = i.k AND p.x BETWEEN i.lo AND i.hi",
        "not exists": "SELECT p.pid FROM pts p WHERE NOT EXISTS "
                      "(SELECT 1 FROM ivs i WHERE i.k = p.k AND i.lo > p.x)",
        "bins": "SELECT p.pid, i.iid FROM pts p JOIN ivs i ON p.x >= i.lo AND p.x <= i.hi",
    }
    no_broadcast = {"spark.sql.autoBroadcastJoinThreshold": "-1", rangejoin.BROADCAST_THRESHOLD: "-1"}
    result = {"version": spark.version, "jar": rangejoin.jar_path(), "rangejoin_file": rangejoin.__file__,
              "checks": {}}
    try:
        for name, query in queries.items():
            confs = no_broadcast if name == "bins" else {}
            for key, value in confs.items():
                spark.conf.set(key, value)
            answers, plans = [], []
            for enabled in (False, True):
                spark.conf.set(rangejoin.ENABLED, str(enabled).lower())
                df = spark.sql(query)
                answers.append(sorted(map(str, df.collect())))
                plans.append(df._jdf.queryExecution().toString())
            for key in confs:
                spark.conf.unset(key)
            result["checks"][name] = {
                "rows": len(answers[0]),
                "same": answers[0] == answers[1],
                "stock_plans_rangejoin": "RangeJoin" in plans[0] or "PiecewiseMerge" in plans[0],
                "planned": "RangeJoin" in plans[1] or "PiecewiseMerge" in plans[1],
                "plan": plans[1][-3000:],
            }
        print(json.dumps(result))
    finally:
        spark.stop()
    """
)


# Every line's oldest or newest patch release. `make test` (the full tier) takes the two ends:
# 3.5.0, the oldest patch of the oldest line (its jar is compiled against 3.5.9, in Scala 2.12),
# and 4.3.0; `make test-all` (RANGEJOIN_TESTS=all) every one. Each line's own Spark runs the
# ScalaTest fast tier in `make test` whichever venvs run here.
LINE_PYSPARKS = (["3.5.0", "3.5.9", "4.0.5", "4.1.4", "4.2.1", "4.3.0"]
                 if os.environ.get("RANGEJOIN_TESTS") == "all" else ["3.5.0", "4.3.0"])


@pytest.mark.slow
@pytest.mark.parametrize("pyspark_version", LINE_PYSPARKS)
def test_fresh_virtualenv_with_each_spark_line(tmp_path, pyspark_version):
    """pip install the wheel and a pyspark of any Spark line into a new virtualenv: that is all
    a user needs; ``configure`` picks the line's jar (3.5's is Scala 2.12), and the README's
    shapes of range join are rangejoin's and answer as stock Spark, on that Spark."""
    wheel = REPO_ROOT / "dist" / f"spark_rangejoin-{rangejoin.__version__}-py3-none-any.whl"
    assert wheel.is_file(), f"{wheel} is missing: run `make wheel` first"
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    # This process's pip installs into the new environment (pip --python), saving a pip bootstrap;
    # --no-compile: the check runs each module once, and pyspark's thousands need no .pyc first.
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-compile",
         "--disable-pip-version-check", f"pyspark=={pyspark_version}", str(wheel)],
        check=True, timeout=900,
    )
    script = tmp_path / "line_check.py"
    script.write_text(LINE_SCRIPT)
    proc = subprocess.run([str(python), str(script)], cwd=tmp_path, env=_base_env(),
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"script failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr[-5000:]}"
    result = json.loads([line for line in proc.stdout.splitlines() if line.startswith("{")][-1])
    assert result["version"] == pyspark_version
    assert Path(result["rangejoin_file"]).resolve().is_relative_to(venv.resolve())
    line = ".".join(pyspark_version.split(".")[:2])
    assert Path(result["jar"]).resolve().is_relative_to(venv.resolve())
    assert Path(result["jar"]).name.startswith(f"rangejoin-spark-{line}_{rangejoin.SPARK_LINES[line]}-")
    for name, check in result["checks"].items():
        assert check["same"], f"{name}: rangejoin's answer is not stock Spark's on {pyspark_version}"
        assert check["rows"] > 0, name
        assert not check["stock_plans_rangejoin"], name
        assert check["planned"], f"{name}: not planned by rangejoin on {pyspark_version}\n{check['plan']}"


# The job spark-submit runs: it names nothing of rangejoin's (no import, no jar), so rangejoin can
# only come from the command line. It reports where the class of the planner strategy came from.
SUBMIT_SCRIPT = JOINS + textwrap.dedent(
    """
    import json
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    try:
        result = run_joins(spark)
        strategies = spark._jsparkSession.sessionState().planner().extraPlanningStrategies()
        jars = [strategies.apply(i).getClass().getProtectionDomain().getCodeSource()
                .getLocation().toString() for i in range(strategies.size())
                if strategies.apply(i).getClass().getName().startswith("rangejoin.")]
        print(json.dumps({**result, "jars": jars}))
    finally:
        spark.stop()
    """
)

IVY_SETTINGS = """<ivysettings>
  <settings defaultResolver="{name}"/>
  <resolvers>
    <ibiblio name="{name}" root="{root}" m2compatible="true"/>
  </resolvers>
</ivysettings>
"""


def _java_url(path) -> str:
    """``path`` as java.net.URL prints a file's location: file:/dir/name."""
    return "file:" + str(Path(path).resolve())


def _spark_submit(tmp_path, *options):
    """Runs SUBMIT_SCRIPT with ``spark-submit <options> --conf spark.sql.extensions=... job.py``;
    returns (its result, its stderr)."""
    script = tmp_path / "job.py"
    script.write_text(SUBMIT_SCRIPT)
    env = _base_env()
    env["PYSPARK_PYTHON"] = sys.executable
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "spark-submit"),
         "--master", "local[2]",
         *options,
         "--conf", f"spark.sql.extensions={rangejoin.EXTENSION}",
         "--conf", "spark.driver.host=127.0.0.1",
         "--conf", "spark.ui.enabled=false",
         # A short run: the JIT's first tier only halves the CPU the JVM spends starting up.
         "--conf", "spark.driver.extraJavaOptions=-XX:TieredStopAtLevel=1",
         str(script)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900,
    )
    assert proc.returncode == 0, f"spark-submit failed:\n{proc.stdout}\n{proc.stderr[-5000:]}"
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert lines, f"no result printed:\n{proc.stdout}\n{proc.stderr[-5000:]}"
    result = json.loads(lines[-1])
    _check(result)
    return result, proc.stderr


@pytest.mark.slow
def test_spark_submit_packages_resolves_from_the_local_maven_repository_only(tmp_path):
    """`spark-submit --packages io.rangejoin:...` after `make publish-local`, with Ivy settings
    whose only resolver is the local Maven repository: nothing but local files can be used."""
    group, artifact_version = rangejoin.MAVEN_COORDINATE.split(":", 1)
    artifact, version = artifact_version.split(":")
    m2 = Path.home() / ".m2" / "repository"
    published = m2 / group.replace(".", "/") / artifact / version
    assert (published / f"{artifact}-{version}.jar").is_file(), \
        f"{published} has no jar: `make test` publishes it (or run `make publish-local`)"
    resolver = "rangejoin-test-local-m2-only"
    settings = tmp_path / "ivysettings.xml"
    settings.write_text(IVY_SETTINGS.format(name=resolver, root=m2.as_uri()))
    ivy = tmp_path / "ivy"  # a fresh Ivy home and cache: the jar must come from ~/.m2
    result, stderr = _spark_submit(
        tmp_path,
        "--packages", rangejoin.MAVEN_COORDINATE,
        "--conf", f"spark.jars.ivySettings={settings}",
        "--conf", f"spark.jars.ivy={ivy}",
    )
    assert f"found {group}#{artifact};{version} in {resolver}" in stderr, stderr[-3000:]
    downloads = [line for line in stderr.splitlines() if line.startswith("downloading ")]
    assert downloads and all(line.startswith(f"downloading {_java_url(m2)}/")
                             for line in downloads), downloads
    # The planner's rangejoin strategy was loaded from the jar Ivy retrieved from ~/.m2.
    assert result["jars"] and all(jar.startswith(_java_url(ivy) + "/")
                                  for jar in result["jars"]), result["jars"]


@pytest.mark.slow
def test_spark_submit_jars(tmp_path):
    """`spark-submit --jars <the jar>`: here, the jar inside the installed wheel."""
    result, _ = _spark_submit(tmp_path, "--jars", rangejoin.jar_path())
    # Every rangejoin planner strategy (range joins, as-of joins) came from that one jar.
    assert result["jars"] and set(result["jars"]) == {_java_url(rangejoin.jar_path())}, result["jars"]
