"""The HTML report: self-contained, escaped, charts built from the saved results; and, where a
Chromium binary exists, that it opens headless with no console errors and renders its charts."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("plotly")
pytest.importorskip("jinja2")

from fake_prices import SNAPSHOT

from gpuadvisor.advisor import Targets, advise
from gpuadvisor.advisor.market import offers_for
from gpuadvisor.catalog import load_catalog
from gpuadvisor.cli import main
from gpuadvisor.core import results
from gpuadvisor.report import build_report
from gpuadvisor.workload import ModelSpec, make_workload

DATA = Path(__file__).parent / "data"
FAKE = DATA / "fake-probe.json"
REAL = DATA / "h100-probe.json"
XSS = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.fixture(scope="module")
def run():
    return results.load(FAKE)


@pytest.fixture(scope="module")
def workload():
    return make_workload("llama-3-8b", mode="training", batch=1, train_tokens=1e9)


def decide(workload, catalog, targets=None, local=("H100 SXM5 80GB",)):
    """The advisor's decision with the in-test price snapshot (not the shipped one)."""
    offers, info = offers_for(snapshot=SNAPSHOT)
    return advise(workload, catalog, targets, offers=offers, prices=info, local_cards=local)


@pytest.fixture(scope="module")
def advice_48h(workload, catalog):
    """The decision for the training workload within 48 h: the report below and the tests that read it."""
    return decide(workload, catalog, Targets(deadline_h=48))


@pytest.fixture(scope="module")
def html(run, workload, catalog, advice_48h) -> str:
    return build_report(run, workload, catalog, advice=advice_48h)


def figures_of(html: str) -> dict:
    m = re.search(r'<script id="gpuadvisor-figures" type="application/json">(.*?)</script>', html, re.S)
    assert m, "figure data block missing"
    return json.loads(m.group(1))


def test_plotly_inlined_once_and_nothing_fetched(html):
    import plotly.offline

    js = plotly.offline.get_plotlyjs()
    assert html.count(js[:200]) == 1  # the bundle, once
    outside = html.replace(js, "")
    assert not re.search(r'<(script|link|img|iframe)[^>]+(src|href)=["\']?(https?:)?//', outside)
    assert "cdn.plot.ly" not in outside
    assert "Content-Security-Policy" in outside and "default-src 'none'" in outside


def test_sections_and_charts(html, run):
    figs = figures_of(html)
    titles = [f["layout"]["title"]["text"] for f in figs.values()]
    assert titles.count("Measured as % of datasheet") == len(run.devices)
    assert titles.count("Roofline from measured ceilings") == len(run.devices)
    assert "Vector add: CPU vs GPU" in titles and "Matmul: CPU vs GPU" in titles
    assert any(t.startswith("Memory") for t in titles)
    assert "Cost versus time: every option, the frontier and the picks" in titles
    for cid in figs:
        assert f'id="{cid}"' in html
    for text in (
        "GPU 0: NVIDIA H100 80GB HBM3",
        "memory.triad",
        "86.2%",
        "throttled: sw_thermal_slowdown",
        "Workload: llama-3-8b",
        "Decision: rent or buy, and what binds",
        "optimizer states",
    ):
        assert text in html


def test_decision_shows_picks_frontier_and_price_source(html, advice_48h):
    advice = advice_48h
    assert advice.picks and advice.frontier
    # the snapshot's source and date, the targets, every pick with its line (what binds)
    assert "rental prices: fake snapshot for tests, 2026-11-01 (13 offers, on-demand)" in html
    assert "1e+09 tokens, within 2 days" in html
    for pick in advice.picks.values():
        if pick.name != "cheapest":  # always the same option as the cheapest rental or purchase
            assert f'<td class="pick">{pick.title}</td>' in html
        assert "Binds:" in pick.line
    chart = next(f for f in figures_of(html).values() if f["layout"]["title"]["text"].startswith("Cost versus time"))
    line = next(t for t in chart["data"] if t["name"].startswith("frontier"))
    want = sorted(advice.frontier, key=lambda o: o.time_s)
    assert line["x"] == pytest.approx([o.time_s / 3600 for o in want])  # training: hours
    assert line["y"] == pytest.approx([o.job_usd for o in want])
    points = sum(len(t["x"]) for t in chart["data"] if t["mode"] == "markers")
    assert points == sum(1 for o in advice.options if o.fits and o.cost is not None and o.time_s is not None)
    labels = " ".join(a["text"] for a in chart["layout"]["annotations"])
    assert "cheapest rent" in labels and "best value" in labels
    assert chart["layout"]["xaxis"]["type"] == "log" and chart["layout"]["yaxis"]["title"]["text"].startswith("$")


def test_nothing_meets_says_what_it_would_take(workload, catalog):
    advice = decide(workload, catalog, Targets(deadline_h=0.01))
    assert not advice.met and advice.closest is not None
    html = build_report(None, workload, catalog, advice=advice)
    assert "Nothing evaluated meets every target." in html and "It would take" in html
    assert '<td class="pick">closest</td>' in html


def test_serving_frontier_axes(catalog):
    w = make_workload("llama-3-8b")
    html = build_report(None, w, catalog, advice=decide(w, catalog, Targets(tokens_per_s=30)))
    chart = next(f for f in figures_of(html).values() if f["layout"]["title"]["text"].startswith("Cost versus time"))
    assert chart["layout"]["xaxis"]["title"]["text"].startswith("ms per output token")
    assert chart["layout"]["yaxis"]["title"]["text"].startswith("$ per hour")
    assert "$/1M tok" in html and "your H100 SXM5 80GB" in html


def test_roofline_uses_measured_ceilings(html):
    roof = next(f for f in figures_of(html).values() if f["layout"]["title"]["text"].startswith("Roofline"))
    names = [t["name"] for t in roof["data"]]
    assert any(n.startswith("memory: 2,990 GB/s") for n in names)  # the best of copy/triad/d2d
    bf16 = next(t for t in roof["data"] if t["name"].startswith("BF16 tensor"))
    assert bf16["y"] == [762.0, 762.0]
    assert bf16["x"][0] == pytest.approx(762.0 / 2.99)  # ridge = peak / bandwidth (TB/s)


def test_user_text_is_escaped(run, catalog):
    evil_model = ModelSpec.from_params(7e9, name=XSS)
    w = make_workload(evil_model)
    evil_run = run.model_copy(deep=True)
    evil_run.devices[0].name = XSS
    evil_run.devices[0].flags = [f"busy: {XSS}"]
    html = build_report(evil_run, w, catalog, title=f"title {XSS}")
    js_free = html.split('<script id="gpuadvisor-figures"')[0]
    assert XSS not in js_free
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    # inside the JSON figure block "<" is escaped too, so "</script>" cannot close the block
    block = html.split('<script id="gpuadvisor-figures" type="application/json">')[1].split("</script>")[0]
    assert "<" not in block


def test_probe_only_and_workload_only(run, workload, catalog):
    probe_only = build_report(run, None, catalog)
    assert "Roofline" in probe_only and "Workload:" not in probe_only
    wl_only = build_report(None, workload, catalog)
    assert "Workload: llama-3-8b" in wl_only and "Roofline" not in wl_only


def test_no_gpu_result(run, catalog):
    host_only = run.model_copy(update={"devices": [], "gpu_found": False, "message": "no NVIDIA GPU found"})
    html = build_report(host_only, None, catalog)
    assert "no NVIDIA GPU found" in html and "NumPy triad" in html


@pytest.mark.skipif(not REAL.exists(), reason="no saved real-GPU result yet")
def test_real_result_renders(catalog):
    html = build_report(results.load(REAL), None, catalog)
    assert "Roofline from measured ceilings" in html


def test_cli_writes_and_refuses_to_overwrite(tmp_path, capsys):
    out = tmp_path / "r.html"
    args = ["report", "--probe", str(FAKE), "--model", "7b", "-o", str(out)]
    assert main(args) == 0
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    out.write_text("other", encoding="utf-8")
    assert main(args) == 2
    assert "--force" in capsys.readouterr().err
    assert main([*args, "--force"]) == 0


def test_cli_default_output_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["report", "--probe", str(FAKE)]) == 0
    assert (tmp_path / "reports" / "nvidia-h100-80gb-hbm3.html").is_file()


@pytest.mark.parametrize(
    ("args", "expect"),
    [
        (["report"], "nothing to report"),
        (["report", "--model", "no-such-model-zz"], "unknown model"),
        (["report", "--model", "7b", "--tok-s", "0"], "--tok-s"),
        (["report", "--model", "7b", "--deadline", "soon"], "--deadline"),
        (["report", "--probe", "/nonexistent.json"], "not found"),
        (["report", "--model", "7b", "-o", "out.txt"], "must end in .html"),
    ],
)
def test_cli_usage_errors(args, expect, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert expect in err and err.count("\n") == 1


# ------------------------------------------------------------------ headless Chromium


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.mark.slow
def test_opens_in_headless_chromium_without_console_errors(html, tmp_path):
    browser = _chromium()
    if browser is None:
        pytest.skip("no chromium binary found (apt-get install chromium)")
    page = tmp_path / "report.html"
    page.write_text(html, encoding="utf-8")
    proc = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=10000",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    console = [ln for ln in proc.stderr.splitlines() if "CONSOLE" in ln or "Uncaught" in ln]
    assert not console, "\n".join(console)
    dom = proc.stdout
    n_charts = len(figures_of(html))
    m = re.search(r'data-charts-rendered="(\d+)"', dom)
    assert m and int(m.group(1)) == n_charts
    assert dom.count('class="main-svg"') >= n_charts  # plotly drew an SVG for every chart


def test_presentation_shared_by_tui_and_report(advice_48h):
    """Labels, pick names and columns the TUI and the report share (gpuadvisor.presentation)."""
    from gpuadvisor import presentation as pres
    from gpuadvisor.report.figures import _log_ticks

    advice = advice_48h
    assert pres.money(None) == "-" and pres.money(0.004) == "<$0.01" and pres.money(1234.5) == "$1,234"
    rent = next(o for o in advice.options if o.hardware.kind == "rent" and o.hardware.gpus == 4)
    assert pres.short_label(rent) == f"4x {rent.hardware.card} · {rent.hardware.provider}"
    shown = pres.shown_options(advice)
    assert {id(o) for o in advice.frontier} <= {id(o) for o in shown}
    assert all(id(p.option) in {id(o) for o in shown} for p in advice.picks.values())
    costs = [o.cost for o in shown if o.cost is not None]
    assert costs == sorted(costs)
    for compact in (False, True):
        cols = pres.columns(advice, compact=compact)
        assert all(len(pres.option_cells(advice, o, compact=compact)) == len(cols) for o in shown)
    ticks = _log_ticks(3.2, 480, "$")
    assert ticks["tickvals"][0] <= 3.2 and ticks["tickvals"][-1] >= 480
    assert "$5" in ticks["ticktext"] and "$200" in ticks["ticktext"] and "$0.5" not in ticks["ticktext"]


def test_cpu_only_report_labels_its_charts_and_shows_spread():
    """On a machine without a GPU the crossover charts are CPU timings, titled and with a legend,
    and host figures carry their spread (a large one flagged)."""
    from gpuadvisor.catalog import load_catalog as _load
    from gpuadvisor.core import results as _results
    from gpuadvisor.report import build_report as _build

    run = _results.load(Path(__file__).parent / "data" / "cpu-only-probe.json")
    html = _build(run, None, _load())
    assert "CPU timings (no GPU here)" in html and "on the CPU (no GPU measured)" in html
    assert "CPU vs GPU crossover" not in html
    assert "spread over repeats" in html and "±" in html
    assert '"showlegend":true' in html.replace(" ", "")
