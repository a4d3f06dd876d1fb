"""Every command and snippet in the docs (README.md, docs/*.md) runs as written.

A fenced block is found by the HTML comment on the line before it, which the rendered page does
not show:

    <!-- doc-test: run expect=PiecewiseMergeJoin expect="Row(matches=50000)" -->
    ```sh
    spark-submit --packages ... app.py
    ```

- ``run``: a ``sh`` block runs with bash, a ``python`` block with python, each in a fresh
  directory (``cwd=repo``: in the repository) holding every ``file`` block; it must exit with 0
  and print each ``expect``. ``stdin=NAME`` feeds the file NAME to it, as typed at a shell's
  prompt.
- ``file=NAME``: the block is the file NAME, which the commands read (``app.py``, ...).
- ``session``: a ``python`` or ``sql`` block runs in the tests' Spark session (with the README's
  ``events`` and ``windows`` views; SQL statement by statement), and must print each ``expect``.
  A snippet that builds its session with ``getOrCreate()`` gets that one, already set up by
  ``rangejoin.configure``; this saves starting a JVM, and the deployment tests start one from
  a script that does the same.
- ``skip="why"``: not run, for the reason given.

Every ``sh``, ``python``, ``sql`` and ``scala`` block must have one of these.

Commands run as a user runs them, in a shell where the tests' virtualenv is active: ``python``,
``pip``, ``spark-submit``, ``spark-sql`` and ``pyspark`` are its own. What the machine provides
is set in a Spark configuration directory (``SPARK_CONF_DIR``), as a site would in
``spark-defaults.conf``: Ivy resolves ``--packages`` from the local Maven repository only (where
``make test`` publishes the jar), into a fresh cache, so the commands use nothing but local
files; the UI is off; and the driver JVM compiles with the JIT's first tier only, which suits
short runs. Since a JVM and a Spark start for each command, they run two at a time.
"""

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import rangejoin
from conftest import REPO_ROOT
from helpers import PMJ

DOCS = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]
CHECKED_LANGUAGES = {"sh", "bash", "python", "sql", "scala"}
MARKER = re.compile(r"^<!--\s*doc-test:(.*)-->\s*$")


@dataclass
class Block:
    path: Path
    line: int
    language: str
    text: str
    options: dict = field(default_factory=dict)
    expect: list = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(REPO_ROOT)}:{self.line}"


def parse(path: Path) -> list:
    """The fenced blocks of ``path``, with the options of their doc-test markers."""
    lines = path.read_text().splitlines()
    blocks, i = [], 0
    while i < len(lines):
        fence = re.match(r"^```(\w*)\s*$", lines[i])
        if not fence:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        block = Block(path, i + 1, fence.group(1), "\n".join(lines[i + 1:end]) + "\n")
        before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        marker = MARKER.match(before.strip())
        if marker:
            for word in shlex.split(marker.group(1)):
                key, _, value = word.partition("=")
                if key == "expect":
                    block.expect.append(value)
                else:
                    block.options[key] = value
        blocks.append(block)
        i = end + 1
    return blocks


BLOCKS = [block for path in DOCS for block in parse(path)]
RUN = [b for b in BLOCKS if "run" in b.options]
SESSION = [b for b in BLOCKS if "session" in b.options]
FILES = {b.options["file"]: b for b in BLOCKS if "file" in b.options}


def test_every_block_is_marked():
    kinds = {"run", "file", "session", "skip"}
    for block in BLOCKS:
        if block.language in CHECKED_LANGUAGES:
            assert kinds & set(block.options), f"{block.id}: a {block.language} block with no doc-test marker"
        if "skip" in block.options:
            assert block.options["skip"], f"{block.id}: skip needs a reason"
        if "run" in block.options:
            assert block.language in ("sh", "python"), block.id
            assert block.options.get("stdin") in (None, *FILES), block.id
    # The quickstart's commands are all there.
    commands = " ".join(b.text for b in RUN if b.language == "sh")
    for command in ("pip install", "spark-submit --packages", "spark-submit --jars", "spark-sql",
                    "pyspark"):
        assert command in commands, f"no doc-tested `{command}` command"
    assert any(b.language == "python" and "rangejoin.configure(" in b.text for b in SESSION)


def _environment(base: Path) -> dict:
    """The shell environment of a user with the tests' virtualenv active, on a machine whose Spark
    configuration resolves --packages from the local Maven repository only."""
    conf_dir = base / "spark-conf"
    conf_dir.mkdir(parents=True)
    m2 = Path.home() / ".m2" / "repository"
    (conf_dir / "ivysettings.xml").write_text(
        '<ivysettings>\n  <settings defaultResolver="local-m2-only"/>\n  <resolvers>\n'
        f'    <ibiblio name="local-m2-only" root="{m2.as_uri()}" m2compatible="true"/>\n'
        "  </resolvers>\n</ivysettings>\n")
    (conf_dir / "spark-defaults.conf").write_text(
        f"spark.jars.ivySettings {conf_dir / 'ivysettings.xml'}\n"
        f"spark.jars.ivy {base / 'ivy'}\n"
        "spark.ui.enabled false\n"
        "spark.ui.showConsoleProgress false\n"
        "spark.driver.host 127.0.0.1\n"
        "spark.driver.bindAddress 127.0.0.1\n"
        # Short runs: the JIT's first tier only, which halves the CPU a JVM spends starting up.
        "spark.driver.extraJavaOptions -XX:TieredStopAtLevel=1\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "SPARK_"))}
    env.pop("PYTHONPATH", None)
    venv_bin = Path(sys.executable).parent
    env["PATH"] = f"{venv_bin}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(venv_bin.parent)
    env["SPARK_CONF_DIR"] = str(conf_dir)
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    return env


def _run(block: Block, base: Path) -> subprocess.CompletedProcess:
    base.mkdir(parents=True)
    workdir = base / "work"
    workdir.mkdir()
    for name, file_block in FILES.items():
        (workdir / name).write_text(file_block.text)
    env = _environment(base)
    script = base / ("snippet.py" if block.language == "python" else "snippet.sh")
    script.write_text(block.text)
    command = ["python", str(script)] if block.language == "python" else ["bash", "-e", str(script)]
    stdin = None
    if "stdin" in block.options:
        stdin = FILES[block.options["stdin"]].text
        # Standard input is not a terminal here: ask the pyspark shell's Python to stay interactive
        # (and so run the shell's start-up) anyway, as it is at a terminal.
        env["PYSPARK_DRIVER_PYTHON_OPTS"] = "-i"
    cwd = REPO_ROOT if block.options.get("cwd") == "repo" else workdir
    return subprocess.run(command, cwd=cwd, env=env, input=stdin, capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def doc_runs(tmp_path_factory):
    """Every ``run`` block's result, by block id: those run in the repository first, one by one
    (``pip install``), then the others two at a time."""
    base = tmp_path_factory.mktemp("doc_runs")
    results = {}
    first = [b for b in RUN if b.options.get("cwd") == "repo"]
    for n, block in enumerate(first):
        results[block.id] = _run(block, base / f"repo-{n}")
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {b.id: pool.submit(_run, b, base / f"run-{n}")
                   for n, b in enumerate(RUN) if b not in first}
        results.update({block_id: future.result() for block_id, future in futures.items()})
    return results


@pytest.mark.slow  # a JVM (and a Spark, a pip install, a spark-submit, ...) per command
@pytest.mark.parametrize("block", RUN, ids=lambda b: b.id)
def test_doc_command(doc_runs, block):
    proc = doc_runs[block.id]
    report = f"{block.id}:\n{block.text}\nstdout:\n{proc.stdout[-4000:]}\nstderr:\n{proc.stderr[-4000:]}"
    assert proc.returncode == 0, report
    for text in block.expect:
        assert text in proc.stdout, f"expected {text!r} in the output of {report}"


def _statements(sql: str) -> list:
    text = "\n".join(line for line in sql.splitlines() if not line.strip().startswith("--"))
    return [statement.strip() for statement in text.split(";") if statement.strip()]


@pytest.fixture
def doc_session(spark):
    spark.range(0, 100_000).selectExpr("id AS ts").createOrReplaceTempView("events")
    spark.range(0, 100).selectExpr("id * 1000 AS start", "id * 1000 + 500 AS stop") \
        .createOrReplaceTempView("windows")
    keys = [rangejoin.ENABLED, rangejoin.BROADCAST_THRESHOLD, rangejoin.EXISTENCE_FAST_PATH,
            rangejoin.DYNAMIC_FILTER]
    yield spark
    for key in keys:
        spark.conf.unset(key)


@pytest.mark.parametrize("block", SESSION, ids=lambda b: b.id)
def test_doc_session_snippet(doc_session, block):
    spark = doc_session
    output = io.StringIO()
    if block.language == "python":
        namespace = {"__name__": "__doc_test__", "spark": spark}
        with contextlib.redirect_stdout(output):
            exec(compile(block.text, block.id, "exec"), namespace)  # noqa: S102 - the docs' code
        assert namespace["spark"] is spark
    else:
        assert block.language == "sql", block.id
        for statement in _statements(block.text):
            df = spark.sql(statement)
            output.write("\n".join(map(str, df.collect())) + "\n")
            if "RANGE_JOIN" in statement:
                plan = df._jdf.queryExecution().executedPlan().toString()
                # RANGE_JOIN(t) plans a PiecewiseMergeJoin, RANGE_JOIN(t, size) its RangeJoin bins.
                assert PMJ in plan or "RangeJoin" in plan, f"{block.id}: {statement}\n{plan}"
    for text in block.expect:
        assert text in output.getvalue(), f"expected {text!r} in the output of {block.id}:\n{output.getvalue()}"
