"""Smoke test of the benchmark (bench/bench.py): at a tiny scale it runs every workload to the end
in all three engines, and their answers agree. No timing is asserted.

The benchmark runs in a subprocess, so it starts a Spark session of its own (the one conftest.py
shares is not used here). Its data and report go to a temporary directory, never to docs/.
"""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
QUERIES = ["W1 inner", "W2 EXISTS", "W2 NOT EXISTS", "W2 SEMI+residual", "W3 inner",
           "W4 left outer", "W5 inner (Parquet)",
           "W6 BETWEEN small", "W6 BETWEEN large", "W7 overlap small", "W7 overlap large",
           "W8 LEFT small", "W8 LEFT large", "W9 timestamps small", "W9 timestamps large",
           "W10 keyed BETWEEN", "W10 keyed tiny groups",
           "W11 keyed EXISTS", "W11 keyed NOT EXISTS",
           "W12 BETWEEN large", "W12 overlap large",
           "W13 returns above store average", "W13 discount above item average",
           "W13 price above category average", "W13 inventory short, per item and week",
           "W13 inventory short, per item", "W13 inventory short, too large to broadcast"]


def test_bench_completes_at_tiny_scale_with_agreeing_answers(tmp_path):
    pytest.importorskip("duckdb")
    out = tmp_path / "out"
    command = [
        sys.executable, str(REPO_ROOT / "bench" / "bench.py"),
        "--scale", "0.001", "--repeat", "1", "--no-warmup", "--no-chart",
        "--data-dir", str(tmp_path / "data"), "--out-dir", str(out),
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("RANGEJOIN_BENCH_")}
    # About a minute on an idle 2-core machine; the bound is for a busy one.
    proc = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env,
                          cwd=REPO_ROOT)
    assert proc.returncode == 0, f"{proc.stdout[-6000:]}\n{proc.stderr[-4000:]}"

    results = json.loads((out / "results.json").read_text())
    queries = {q["key"]: q for w in results["workloads"] for q in w["queries"]}
    assert list(queries) == QUERIES
    for key, q in queries.items():
        # The benchmark itself stops with an error on any disagreement; check it again here.
        answers = {tuple(q["rangejoin"]["answer"])}
        for engine in ("DuckDB", "stock Spark"):
            if not q[engine]["reduced"]:
                answers.add(tuple(q[engine]["answer"]))
        assert len(answers) == 1, (key, answers)
        assert q["answers_checked"], key
    assert queries["W1 inner"]["rangejoin"]["answer"] == [249_500]
    assert queries["W5 inner (Parquet)"]["rangejoin"]["answer"] == [249_500]
    # The metrics the report is built on were read.
    for engine in ("rangejoin", "stock Spark"):
        assert queries["W5 inner (Parquet)"][engine]["scan_rows"]["t2_rg"] is not None
    assert queries["W3 inner"]["memory"]["rangejoin"]["sampled_peak"] > 0
    assert len(results["targets"]) >= 10
    report = (out / "benchmarks.md").read_text()
    assert "## Results" in report and "Not a full run" in report


def test_join_operator_names_the_first_join_and_a_cartesian_product():
    pytest.importorskip("duckdb")
    # bench.py imports its neighbours (report, workloads, ...) as top-level modules.
    sys.path.insert(0, str(REPO_ROOT / "bench"))
    try:
        spec = importlib.util.spec_from_file_location("rangejoin_bench", REPO_ROOT / "bench" / "bench.py")
        bench = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(bench)
    finally:
        sys.path.remove(str(REPO_ROOT / "bench"))
    join_operator = bench.join_operator
    plan = ("*(3) Project [x#1L]\n"
            "+- CartesianProduct (x#1L >= lo#2L)\n"
            "   :- *(1) Scan\n")
    assert join_operator(plan) == "CartesianProduct (x >= lo)"
    plan = ("*(5) SortMergeJoin [rangejoin_bin#8L], [rangejoin_bin#10L], Inner\n"
            "+- BroadcastNestedLoopJoin BuildRight, Inner\n")
    assert join_operator(plan).startswith("SortMergeJoin [rangejoin_bin], [rangejoin_bin]")
    assert join_operator("*(1) Project [x#1L]\n+- Scan") is None
