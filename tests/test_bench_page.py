"""BENCHMARKS.md is a product page: what tools/bench_page.py writes from the stored measurements now, short
enough to read (under 15 kB), with the per-case op-graph table beside it in docs/model-accuracy.md."""

from pathlib import Path

import pytest

from tools import bench_page

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow  # doc sync: regenerates BENCHMARKS.md
def test_benchmarks_page_is_what_the_measurements_give():
    assert bench_page.main(["--check"]) == 0, "python3 -m tools.bench_page rewrites BENCHMARKS.md"


def test_benchmarks_page_is_short_and_names_its_sources():
    text = (ROOT / "BENCHMARKS.md").read_text()
    assert len(text.encode()) < 15_000
    for path in (bench_page.H100_PROBE, bench_page.H200_PROBE, bench_page.H200_NODE, bench_page.MEMORY_V2,
                 bench_page.H200_MULTIGPU, bench_page.COLD_START):
        assert path.is_file() and str(path.relative_to(ROOT)) in text


@pytest.mark.slow  # doc sync: regenerates BENCHMARKS.md
def test_a_changed_measurement_changes_the_page(monkeypatch, tmp_path):
    """The check can fail: the page follows the result files, it is not a copy kept by hand."""
    cold = tmp_path / "cold.json"
    import json

    d = json.loads(bench_page.COLD_START.read_text())
    cold.write_text(json.dumps({**d, "seconds": [0.99] * len(d["seconds"])}))
    monkeypatch.setattr(bench_page, "COLD_START", cold)
    changed = bench_page.page()
    assert "median 0.99 s" in changed
    monkeypatch.setattr(bench_page, "page", lambda: changed)  # the same text, not built a second time
    assert bench_page.main(["--check"]) == 1
