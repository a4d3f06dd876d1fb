"""Smoke test of the benchmark (bench.bench): at a tiny scale it runs every workload to the end
in all three engines, and their answers agree. No timing is asserted.

The benchmark runs in a subprocess, so it starts a Spark session of its own (the one conftest.py
shares is not used here). Its data and report go to a temporary directory, never to docs/. The
other tests check the benchmark's pure functions (the join operator read from a plan, the memory
claim and its report), without Spark. The ``bench`` package is imported from the repository's root
(pyproject.toml's ``pythonpath``), as ``python -m bench.bench`` runs it.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench import memory, report

REPO_ROOT = Path(__file__).resolve().parents[1]
QUERIES = ["W1 inner", "W2 EXISTS", "W2 NOT EXISTS", "W2 SEMI+residual", "W3 inner",
           "W4 left outer", "W4 inner band", "W5 inner (Parquet)",
           "W6 BETWEEN small", "W6 BETWEEN large", "W7 overlap small", "W7 overlap large",
           "W8 LEFT small", "W8 LEFT large", "W9 timestamps small", "W9 timestamps large",
           "W10 keyed BETWEEN", "W10 keyed tiny groups",
           "W11 keyed EXISTS", "W11 keyed NOT EXISTS",
           "W12 BETWEEN large", "W12 overlap large",
           "W13 returns above store average", "W13 discount above item average",
           "W13 price above category average", "W13 inventory short, per item and week",
           "W13 inventory short, per item", "W13 inventory short, too large to broadcast",
           "W14 ASOF JOIN", "W14 ASOF JOIN, no key, nothing broadcast"]


@pytest.mark.slow
def test_bench_completes_at_tiny_scale_with_agreeing_answers(tmp_path):
    pytest.importorskip("duckdb")
    out = tmp_path / "out"
    command = [
        sys.executable, "-m", "bench.bench",
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
    # The broadcasts held (bench.memory), each the side named: its rows are that table's. W10's
    # cp and ci both have 1,000 rows here, and stock Spark broadcasts cp: ci is not measured.
    sides = results["memory"]["sides"]
    assert [s["table"] for s in sides] == ["b3", "t1", "i_large"]
    assert [s["table"] for s in results["memory"]["skipped"]] == ["ci"]
    for side in sides:
        assert side["rows"] == results["manifest"]["tables"][side["table"]]["rows"]
        for engine in ("stock Spark", "rangejoin"):
            assert {"heap", "objects"} <= set(side[engine]["held"]), (side["table"], engine)
    # Each rangejoin/floor target reads rounds of the floor and rangejoin run alternately.
    for key in ("W1 inner", "W2 EXISTS", "W2 NOT EXISTS", "W2 SEMI+residual", "W3 inner", "W4 left outer"):
        (rj, floor), = queries[key]["paired_floor"]["rounds"]
        assert queries[key]["paired_floor"]["ratio"] == rj / floor, key
    assert "paired_floor" not in queries["W6 BETWEEN small"]
    # So does each close stock/rangejoin target (at most 2x) where stock Spark ran at full size.
    for key in ("W4 inner band", "W10 keyed tiny groups", "W13 inventory short, per item and week"):
        (stock, rj), = queries[key]["paired_stock"]["rounds"]
        assert queries[key]["paired_stock"]["ratio"] == stock / rj, key
    for key in ("W1 inner", "W14 ASOF JOIN", "W2 EXISTS"):
        assert "paired_stock" not in queries[key], key
    assert len(results["targets"]) >= 10
    markdown = (out / "benchmarks.md").read_text()
    assert "## Results" in markdown and "Not a full run" in markdown
    assert "## Memory: the broadcast held" in markdown


def test_join_operator_names_the_first_join_and_a_cartesian_product():
    pytest.importorskip("duckdb")
    from bench.bench import join_operator

    plan = ("*(3) Project [x#1L]\n"
            "+- CartesianProduct (x#1L >= lo#2L)\n"
            "   :- *(1) Scan\n")
    assert join_operator(plan) == "CartesianProduct (x >= lo)"
    plan = ("*(5) SortMergeJoin [rangejoin_bin#8L], [rangejoin_bin#10L], Inner\n"
            "+- BroadcastNestedLoopJoin BuildRight, Inner\n")
    assert join_operator(plan).startswith("SortMergeJoin [rangejoin_bin], [rangejoin_bin]")
    assert join_operator("*(1) Project [x#1L]\n+- Scan") is None


def test_a_floor_target_reads_the_median_of_the_paired_rounds_where_there_are_some():
    w = {"floor": {"best": 1.0}}
    q = {"key": "W2 EXISTS", "rangejoin": {"best": 3.0}, "DuckDB": {"best": 1.5}, "stock Spark": None}
    assert report.ratios(w, q)["rangejoin/floor"] == 3.0
    q["paired_floor"] = {"rounds": [[1.2, 1.0], [2.0, 1.0], [1.0, 1.0]], "ratio": 1.2}
    assert report.ratios(w, q)["rangejoin/floor"] == 1.2
    assert report.ratios(w, q)["rangejoin/DuckDB"] == 2.0


def test_a_close_stock_target_reads_the_median_of_the_paired_rounds_where_there_are_some():
    w = {"floor": {"best": 1.0}}
    q = {"key": "W13 inventory short, per item", "rangejoin": {"best": 2.0}, "DuckDB": {"best": 1.0},
         "stock Spark": {"best": 1.8}}
    assert report.ratios(w, q)["stock/rangejoin"] == 0.9
    q["paired_stock"] = {"rounds": [[2.2, 2.0], [1.9, 2.0], [2.6, 2.0]], "ratio": 1.1}
    assert report.ratios(w, q)["stock/rangejoin"] == 1.1
    results = {"workloads": [{"queries": [q, {"key": "W1 inner"}]}]}
    assert report.paired_stock_keys(results) == ["W13 inventory short, per item"]


MB = 2**20


def broadcast_side(stock_heap, stock_objects, rangejoin_heap, rangejoin_objects, spread=0.0):
    """A buffered side as bench.memory reports it: i_large, 200,000 rows under an interval
    index (key arrays 20 bytes a row), the sizes held given in MB, each engine's runs ``spread``
    MB apart."""
    def measured(heap, objects):
        return {"heap": heap * MB, "objects": objects * MB,
                "heap_runs": [heap * MB, (heap + spread) * MB], "objects_runs": [objects * MB] * 2}

    def sizes(heap, objects):
        return {"held": measured(heap, objects), "copy": measured(heap / 2, objects / 2)}
    return {"table": "i_large", "query": "W6 BETWEEN large", "rows": 200_000, "second_keys": True,
            "key_array_bytes": 4_000_000,
            "stock Spark": dict(sizes(stock_heap, stock_objects), join="BroadcastNestedLoopJoin",
                                payload="InternalRow[]"),
            "rangejoin": dict(sizes(rangejoin_heap, rangejoin_objects), join="PiecewiseMergeJoin",
                              payload="SortedBuffer", index="IntervalIndex",
                              tree=measured(6, 3.5))}


def test_key_arrays_are_8_bytes_a_row_16_under_an_interval_index_4_more_with_origins():
    assert memory.key_array_bytes(1_000_000, second_keys=False, origins=False) == 8_000_000
    assert memory.key_array_bytes(200_000, second_keys=True, origins=False) == 3_200_000
    assert memory.key_array_bytes(200_000, second_keys=True, origins=True) == 4_000_000


def test_broadcast_memory_holds_rangejoin_to_stock_plus_its_key_arrays():
    # 5.5 MB over stock's heap, 3 MB over its objects: the key arrays (3.81 MB) cover the second.
    side = broadcast_side(22.0, 21.0, 27.5, 24.0)
    heap = report.broadcast_memory(side)
    assert heap == {"difference": 5.5 * MB, "allowance": 4_000_000, "noise": 0, "met": False}
    assert report.broadcast_memory(side, count="objects")["met"] is True
    assert report.broadcast_memory(side, measure="copy")["difference"] == 2.75 * MB
    row = report.memory_rows({"sides": [side]})[0]
    assert row == ["i_large (W6 BETWEEN large; stock: BroadcastNestedLoopJoin, InternalRow[])",
                   "200,000", "IntervalIndex", "22.0 MB (21.0 MB)", "27.5 MB (24.0 MB)", "3.81 MB",
                   "+5.50 MB (+3.00 MB)", "NO (objects: yes)"]
    # A target per side, in G1's count; within it, no note.
    targets = report.evaluate({"workloads": [], "memory": {"sides": [side, broadcast_side(22, 21, 23, 22)]}})
    assert [(t["query"], t["met"]) for t in targets] == [("W6 BETWEEN large", False), ("W6 BETWEEN large", True)]
    assert targets[0]["target"] == "i_large's broadcast held ≤ stock's + key arrays"
    assert report.memory_rows({"sides": [broadcast_side(22, 21, 23, 22)]})[0][-1] == "yes"


def test_a_difference_within_the_runs_spread_holds_to_it():
    # 5.5 MB over stock's heap, but the runs of each engine 2 MB apart: within 3.81 + 2 MB.
    side = broadcast_side(22.0, 21.0, 27.5, 24.0, spread=2.0)
    assert report.broadcast_memory(side) == {"difference": 5.5 * MB, "allowance": 4_000_000,
                                             "noise": 2 * MB, "met": True}
    assert report.memory_rows({"sides": [side]})[0][-1] == "yes, to the runs' spread (2.00 MB)"


def test_sizes_below_a_megabyte_are_in_kilobytes():
    assert report.fmt_size(12_000) == "11.7 KB"
    assert report.fmt_size(1_500) == "1.46 KB"
    assert report.fmt_size(-0.5 * MB, sign=True) == "-512.0 KB"
    assert report.fmt_size(96.44 * MB) == "96.4 MB"
    assert report.fmt_size(3.814 * MB, sign=True) == "+3.81 MB"


def test_memory_section_says_how_it_was_measured_and_shows_both_tables():
    memory = {"repeat": 3, "warm": True, "region_bytes": 2 * MB, "sides": [broadcast_side(22, 21, 27.5, 24)],
              "known_object": {"bytes": 128 * MB, "heap": 128 * MB, "objects": 128 * MB}}
    text = "\n".join(report.memory_markdown(memory))
    assert ".venv/bin/python -m bench.memory" in text and "3 times each after a warm-up round" in text
    assert text.count("| side | rows | index |") == 2  # the broadcasts held, the deserialized copies
    assert "regions (2.00 MB here)" in text
    assert "i_large 6.00 MB (3.50 MB) (in neither table" in text
    assert "Sanity check: a long[] of 128.0 MB measured at 128.0 MB (128.0 MB)." in text


def test_a_run_keeps_the_sections_written_by_hand_before_workloads_and_data():
    previous = ("# Benchmarks\n\nold intro\n\n## Results\n\nold numbers\n\n## As-of joins\n\nwritten by hand\n"
                "| a | b |\n\n## Workloads and data\n\nold data\n")
    generated = "# Benchmarks\n\nnew intro\n\n## Results\n\nnew numbers\n\n## Workloads and data\n\nnew data\n"
    assert report.carry_over(previous, generated) == (
        "# Benchmarks\n\nnew intro\n\n## Results\n\nnew numbers\n\n## As-of joins\n\nwritten by hand\n"
        "| a | b |\n\n## Workloads and data\n\nnew data\n")
    # Nothing to keep: the run's own text; a report without the last section: kept at its end.
    assert report.carry_over(generated, generated) == generated
    assert report.carry_over("## As-of joins\nby hand\n", "## Results\n\nnew\n") == (
        "## Results\n\nnew\n\n## As-of joins\nby hand\n\n")


def test_the_sections_written_by_hand_in_the_docs_are_the_as_of_study():
    doc = (REPO_ROOT / "docs" / "benchmarks.md").read_text()
    generated_headings = {"## Results", "## Targets", "## Join operators", "## Memory: the broadcast held",
                          "## Parquet row groups read (W5, and W1)", "## Workloads and data",
                          "## Memory: a 1M-row buffered side (W3)"}
    by_hand = [h for h, _ in report.sections(doc) if h not in generated_headings]
    assert by_hand == ["## As-of joins: trades x quotes (issue 26)"]
