"""The report's node section: topology and P2P heatmaps and the NCCL chart from the interconnect probe,
health per GPU; absent for a result without those probes."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuadvisor.core import results

pytest.importorskip("plotly", reason="the report needs plotly")
DATA = Path(__file__).parent / "data"


def test_node_view_charts_and_tables():
    from gpuadvisor.report.interconnect import node_view

    figs = []

    def add(fig):
        if fig is None:
            return None
        figs.append(fig)
        return f"chart-{len(figs)}"

    v = node_view(results.load(DATA / "fake-probe.json"), add)
    assert (v["chart_topology"], v["chart_p2p"], v["chart_nccl"]) == ("chart-1", "chart-2", "chart-3")
    topo, p2p, nccl = figs
    assert topo.data[0].text[0][1] == "NV18" and topo.data[0].z[0][1] == 450.0
    assert p2p.data[0].z[0][1] == 392.0 and p2p.data[0].z[1][0] == 391.0
    names = [t.name for t in nccl.data]
    assert "all-reduce: CuPy NCCL" in names and "all-reduce: torch.distributed (reference)" in names
    assert v["pairs"][0]["label"] == "NV18" and "450" in v["pairs"][0]["rate"]
    assert any(r["key"] == "interconnect.allreduce_busbw_1g" and "(1.00×)" in r["ref"] for r in v["nccl"])
    assert [h["gpu"] for h in v["health"]] == ["GPU 0", "GPU 1"] and v["health"][0]["xid"] == "none"


def test_report_has_a_node_section_only_with_node_probes():
    from gpuadvisor.report import build_report

    html = build_report(results.load(DATA / "fake-probe.json"), None, None)
    assert 'id="node"' in html and 'href="#node"' in html and "NCCL bus bandwidth by message size" in html
    html = build_report(results.load(DATA / "h100-probe.json"), None, None)
    assert 'id="node"' not in html
