"""Every card at its real rates: no card lacks a tensor figure without a `derived` or `none` mark
and a note; derived figures are what tools/derive_tensor_figures.py writes; cards without tensor
cores are not shortlisted for 16-bit work they run at the FP32 rate."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from gpuadvisor import api
from gpuadvisor.catalog import load_catalog

ROOT = Path(__file__).resolve().parent.parent


def test_every_card_has_a_tensor_figure_or_says_why_not():
    for card in load_catalog().cards:
        t = card.tensor_dense_tflops
        if t.basis == "none":
            assert t.note and "FP32 rate" in t.note, card.name
            continue
        assert t.fp16 or t.bf16, f"{card.name}: no 16-bit tensor figure and no 'none' mark"
        if t.basis == "derived":
            assert t.note and t.note.startswith("derived"), card.name


def test_derived_figures_are_current():
    p = subprocess.run([sys.executable, str(ROOT / "tools" / "derive_tensor_figures.py"), "--check"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


def test_pro_cards_are_not_slower_than_their_predecessors():
    c = load_catalog()
    pro6000 = c.get("RTX PRO 6000 Blackwell").tensor_dense_tflops.bf16
    ada6000 = c.get("RTX 6000 Ada Generation").tensor_dense_tflops.bf16
    a6000 = c.get("RTX A6000").tensor_dense_tflops.bf16
    assert pro6000 > ada6000 > a6000
    # the RTX 6000 Ada datasheet's one figure: 1,457 TFLOPS FP8 with sparsity
    assert abs(2 * c.get("RTX 6000 Ada Generation").tensor_dense_tflops.fp8 - 1457) < 1


def _shortlisted(advice):
    return {p.option.hardware.card for p in advice.picks.values()}


def test_no_tensor_core_cards_are_left_out_of_qlora_and_sdxl():
    q = api.advise(api.workload("llama-3.1-8b", mode="qlora", train_tokens=1e7), rent=False)
    assert "Tesla P40" not in {o.hardware.card for o in q.options}
    assert any("without tensor cores" in n for n in q.notes)
    s = api.advise(api.workload("sdxl-unet"), rent=False)
    short = _shortlisted(s)
    assert "Tesla P4" not in short and "Jetson Orin Nano 8GB" not in short
    assert "Tesla P4" not in {o.hardware.card for o in s.options}
    assert not any(o.meets for o in s.options if o.hardware.card == "Jetson Orin Nano 8GB")
    assert any("a request is wanted within 1 s" in n for n in s.notes)


def test_named_card_without_tensor_cores_is_costed_at_fp32_and_says_so():
    a = api.advise(api.workload("llama-3.1-8b", mode="qlora", train_tokens=1e7), rent=False, only=("P40",))
    p40 = [o for o in a.options if o.hardware.card == "Tesla P40"]
    assert p40 and any("costed at its FP32 rate (12 TFLOPS)" in n for n in p40[0].notes)
