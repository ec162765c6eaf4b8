"""What runs where (issue 34): the support matrix's data, its rules on known cards, and that no pick anywhere is an
option the matrix says cannot run, asked across the whole catalog for QLoRA, vLLM serving, fp8 and a
FlashAttention-2 job; plus the two user cases (QLoRA proposed under Megatron TP on V100s, a Tesla K80 for vLLM)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from gpuadvisor import api
from gpuadvisor.advisor.support import adapter_layout_blocker, cannot_run, load_matrix, needs
from gpuadvisor.catalog import load_catalog
from gpuadvisor.cli import main
from gpuadvisor.workload import make_workload

CATALOG = load_catalog()
MATRIX = load_matrix()


def _card(name):
    return next(c for c in CATALOG.cards if c.name == name)


def _why(name, feature):
    return MATRIX.why_not(MATRIX.chip(_card(name)), feature)


def test_every_rule_has_a_source_and_a_date():
    assert MATRIX.read >= "2026-01-01"
    for key, f in MATRIX.features.items():
        assert f.sources and all(s.url.startswith("https://") and s.says for s in f.sources), key
        assert f.nvidia or f.amd, f"{key}: a feature with no rule checks nothing"
        if f.nvidia and f.nvidia.min_cc and f.nvidia.max_cc:
            assert f.nvidia.min_cc <= f.nvidia.max_cc, key
    assert MATRIX.adapter_training.sources
    names = {c.name for c in CATALOG.cards}
    assert set(MATRIX.amd_targets.cards) <= names, "every card the target table names is a catalog card"


@pytest.mark.parametrize(("card", "feature", "runs"), [
    ("Tesla K80", "vllm", False),  # 3.7 < 7.0
    ("Tesla V100 SXM2 16GB", "vllm", True),
    ("Tesla T4", "sglang", False),
    ("A100 SXM4 80GB", "sglang", True),
    ("Tesla V100 SXM2 32GB", "trtllm", False),
    ("Instinct MI300X", "trtllm", False),  # NVIDIA only
    ("A100 SXM4 80GB", "fp8", False),
    ("L40S", "fp8", True),
    ("Instinct MI300X", "fp8", True),  # its datasheet gives an fp8 rate
    ("Radeon RX 7900 XT", "fp8", False),
    ("H100 SXM5 80GB", "flash-attention-3", True),
    ("A100 SXM4 80GB", "flash-attention-3", False),
    ("B200", "flash-attention-3", False),  # sm90 only
    ("GeForce RTX 2080 Ti", "flash-attention-2", False),
    ("GeForce RTX 3090", "flash-attention-2", True),
    ("Instinct MI250X", "flash-attention-2", True),
    ("Instinct MI50 32GB", "vllm", False),  # gfx906
    ("Radeon RX 7600", "vllm", False),  # gfx1102, not in vLLM's list
    ("Radeon RX 7800 XT", "vllm", True),  # gfx1101
    ("Tesla P100 PCIe 16GB", "bitsandbytes-4bit", True),  # 6.0+
    ("Tesla P100 PCIe 16GB", "bitsandbytes-8bit", False),  # LLM.int8 needs 7.5
    ("Tesla K80", "bitsandbytes-4bit", False),
    ("Tesla V100 SXM2 32GB", "transformer-engine", False),
    ("A10", "transformer-engine", True),
    ("GeForce RTX 5090", "fp4", True),
    ("H100 SXM5 80GB", "fp4", False),
])
def test_rules_on_known_cards(card, feature, runs):
    why = _why(card, feature)
    assert (why is None) == runs, why
    if why:
        assert MATRIX.feature(feature).label in why  # what cannot run, and (a rule on figures) the card's figure
        assert card in why or "does not run on" in why


def test_a_card_without_the_figure_a_rule_reads_is_not_checked():
    assert _why("Radeon RX 7900 XTX", "vllm") is None  # no LLVM target in the table: kept, never refused on a guess


def test_what_a_workload_needs():
    w = make_workload("llama-3.1-8b")
    assert needs(w, step_engine="graphs") == ("vllm",)
    assert needs(w, step_engine="eager") == ()
    assert needs(w, serve_engine="trtllm") == ("trtllm",)
    assert needs(w, serve_engine="vllm@0.5") == ("vllm",)  # a version of an engine needs what the engine needs
    assert needs(make_workload("llama-3.1-8b", dtype="fp8"), step_engine="graphs") == ("vllm", "fp8")
    q = make_workload("llama-3.1-8b", mode="qlora")
    assert needs(q) == ("bitsandbytes-4bit",)
    assert needs(make_workload("llama-3.1-8b", mode="training"), framework="megatron") == ("transformer-engine",)
    assert adapter_layout_blocker(q) is None
    assert "TP2" in adapter_layout_blocker(q, tp=2)
    assert adapter_layout_blocker(q, framework="megatron")
    assert adapter_layout_blocker(make_workload("llama-3.1-8b", mode="training"), tp=2) is None


# --- across the catalog: no pick, frontier option or fitting option is one the matrix rules out ----------------

CASES = [
    ("qlora", dict(mode="qlora"), {"tokens": 1e8}, ()),
    ("lora", dict(mode="lora"), {"tokens": 2e7}, ()),
    ("vllm serving", dict(), {"users": 8}, ()),
    ("fp8 serving", dict(dtype="fp8"), {"users": 8}, ()),
    ("fp8 training", dict(mode="training", dtype="fp8"), {"tokens": 1e8}, ()),
    ("flash-attention-2 serving", dict(), {"users": 8}, ("flash-attention-2",)),
]


@pytest.fixture(scope="module")
def advices():
    out = {}
    for name, kw, targets, requires in CASES:
        w = make_workload("llama-3.1-8b", **kw)
        out[name] = (w, api.advise(w, api.Targets(**targets), requires=requires), requires)
    return out


@pytest.mark.parametrize("name", [c[0] for c in CASES])
def test_no_pick_is_an_option_that_cannot_run(advices, name):
    w, advice, requires = advices[name]
    features = needs(advice.workload, step_engine=advice.engine, requires=requires)
    assert advice.picks, f"{name}: nothing picked"
    by_name = {c.name: c for c in CATALOG.cards}
    chosen = [p.option for p in advice.picks.values()] + list(advice.frontier)
    chosen += [advice.closest.option] if advice.closest else []
    for o in chosen:
        assert not o.cannot_run
        assert cannot_run(by_name[o.hardware.card], features) is None, (name, o.label)
    fitting = [o for o in advice.options if o.fits]
    assert fitting
    for o in fitting:  # every option that fits runs, by the matrix
        assert cannot_run(by_name[o.hardware.card], features) is None, (name, o.label)
        if w.is_adapter:  # PEFT's layouts: data parallel or FSDP, never Megatron's
            assert o.tensor_parallel == 1 and "megatron" not in o.layout and "TP" not in o.layout, o.layout
    blocked = [o for o in advice.options if o.cannot_run]
    for o in blocked:  # what cannot run is listed, saying why, and never fits
        assert not o.fits and not o.meets and o.cannot_run.startswith("cannot run: ")
        assert cannot_run(by_name[o.hardware.card], features) == o.cannot_run
    if not w.is_adapter:  # each of these rules some catalog card out (LoRA/QLoRA: the cards bnb cannot run on are
        # left out before, as cards without matrix units; test_qlora_on_a_k80_cannot_run asks for one by name)
        assert blocked, f"{name}: the matrix ruled out no card"
        assert any("cannot run this (support matrix" in n for n in advice.notes)


def test_fp8_rules_out_ampere_and_flash_attention_2_rules_out_turing(advices):
    blocked_fp8 = {o.hardware.card for o in advices["fp8 serving"][1].options if o.cannot_run}
    assert {"A100 SXM4 80GB", "GeForce RTX 3090"} <= blocked_fp8
    assert "L40S" not in blocked_fp8 and "H100 SXM5 80GB" not in blocked_fp8
    blocked_fa = {o.hardware.card for o in advices["flash-attention-2 serving"][1].options if o.cannot_run}
    assert {"Tesla T4", "Tesla V100 SXM2 16GB"} <= blocked_fa
    assert "Tesla V100 SXM2 16GB" not in {o.hardware.card for o in advices["vllm serving"][1].options
                                          if o.cannot_run}


def test_qlora_on_a_k80_cannot_run():
    w = make_workload("llama-3.1-8b", mode="qlora")
    advice = api.advise(w, api.Targets(tokens=1e8), only=("Tesla K80",))
    assert advice.options and all(o.cannot_run and not o.fits for o in advice.options)
    assert "bitsandbytes 4-bit" in advice.options[0].cannot_run and "6.0" in advice.options[0].cannot_run
    assert not advice.picks and advice.closest is None  # nothing to pick, not even as the closest miss


# --- the two user cases -------------------------------------------------------------------------------------


def _json(capsys, *argv):
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_qlora_is_never_proposed_under_megatron_tensor_parallelism(capsys):
    """Was: cheapest rental 8x Tesla V100 SXM2 16GB under 'megatron TP2 PP1 CP1 mb2 zero1 ac:selective'."""
    rec = _json(capsys, "recommend", "llama-3.1-8b", "--mode", "qlora", "--tokens", "100m", "--all", "--json")
    for o in rec["options"]:
        assert "megatron" not in o["layout"] and o["tensor_parallel"] == 1, o["label"]
    for p in rec["picks"].values():
        assert "megatron" not in p["option"]["layout"]
    v100 = [o for o in rec["options"] if o["hardware"]["card"] == "Tesla V100 SXM2 16GB" and o["hardware"]["gpus"] == 8]
    assert v100 and all(o["fits"] and o["layout"].startswith("DDP x 8") for o in v100)  # data parallel, checkpointed


@dataclass(frozen=True)
class _Offer:
    card: str
    gpu_count: int
    on_demand_usd_h: float
    provider: str = "test"
    instance_type: str = "x"


def test_a_k80_is_never_offered_for_vllm():
    """Was: a Tesla K80 among the SLO path's options for vLLM; now it is named as unable to run it and skipped."""
    from gpuadvisor.advisor.serve_slo import cheapest_for_slo
    from gpuadvisor.estimate.serve.lengths import parse_lengths
    from gpuadvisor.modelspec import resolve_model

    offers = [_Offer("Tesla K80", 8, 0.05), _Offer("Tesla P100 PCIe 16GB", 4, 0.06), _Offer("L40S", 1, 0.9),
              _Offer("H100 SXM5 80GB", 1, 2.5)]
    pick, tried, blocked, _ = cheapest_for_slo(resolve_model("llama-3.1-8b"), CATALOG, offers, engine="vllm",
                                               weights="bf16", kv_dtype=None, lengths=parse_lengths(None, 1024, 256),
                                               rate=1.0, slo_ttft=2.0, slo_tpot=0.1, requests=60)
    assert set(blocked) == {"Tesla K80", "Tesla P100 PCIe 16GB"}
    assert "compute capability 7.0" in blocked["Tesla K80"] and "3.7" in blocked["Tesla K80"]
    assert all(t.card not in blocked for t in tried)
    assert pick is not None and pick.card not in blocked


def test_recommend_slo_path_evaluates_only_cards_that_run_vllm(capsys):
    rec = _json(capsys, "recommend", "llama-3.1-8b", "--rate", "5", "--p99-ttft", "300ms", "--p99-tpot", "30ms",
                "--json")
    for t in rec["evaluated"] + ([rec["pick"]] if rec["pick"] else []):
        assert cannot_run(_card(t["card"]), ("vllm",)) is None, t["card"]
    for card, why in rec["cannot_run"].items():
        assert why == cannot_run(_card(card), ("vllm",))


@pytest.mark.parametrize(("argv", "words"), [
    (["llama-3.1-8b", "--dtype", "fp8", "--gpu", "A100 SXM4 80GB"], ("A100 SXM4 80GB", "FP8", "8.9", "8.0")),
    (["llama-3.1-8b", "--gpu", "Tesla K80"], ("Tesla K80", "vLLM", "7.0", "3.7")),
    (["llama-3.1-8b", "--mode", "qlora", "--gpu", "A100 SXM4 80GB", "--gpus", "2", "--tp", "2"], ("QLoRA", "TP2")),
    (["llama-3.1-8b", "--gpu", "Tesla T4", "--rate", "1", "--engine", "sglang"], ("SGLang", "8.0")),
    (["llama-3.1-8b", "--mode", "training", "--gpu", "Tesla V100 SXM2 32GB", "--gpus", "8", "--framework", "megatron",
      "--layout", "auto"], ("Transformer Engine", "7.0")),
])
def test_estimate_refuses_what_cannot_run_in_one_line(capsys, argv, words):
    assert main(["estimate", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "cannot run" in err and "docs/support.md" in err
    for word in words:
        assert word in err


def test_estimate_still_answers_what_runs(capsys):
    assert main(["estimate", "llama-3.1-8b", "--gpu", "Tesla K80", "--engine", "eager", "--json"]) == 0  # HF generate
    assert main(["estimate", "llama-3.1-8b", "--dtype", "fp8", "--gpu", "L40S", "--json"]) == 0
    capsys.readouterr()


@pytest.mark.slow  # doc sync: regenerates docs/support.md
def test_support_doc_is_current():
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    p = subprocess.run([sys.executable, "-m", "tools.support_doc", "--check"], capture_output=True, text=True,
                       cwd=root, timeout=300)
    assert p.returncode == 0, p.stderr


def test_support_doc_shows_every_feature_and_source():
    from tools.support_doc import render

    text = render(MATRIX, list(CATALOG.cards))
    for key, f in MATRIX.features.items():
        assert f"`{key}`" in text
        assert all(s.url in text for s in f.sources), key
    assert "| Tesla K80 | nvidia | 3.7 | no |" in text  # vLLM, the first column


def test_every_serving_engine_says_what_it_needs():
    """A new engine (CONTRIBUTING, "Add an engine") names the matrix feature it needs, or None where it runs wherever
    PyTorch does."""
    from gpuadvisor.advisor.support import SERVE_ENGINE_FEATURE, STEP_ENGINE_FEATURE
    from gpuadvisor.estimate.serve.profiles import engine_names

    assert set(SERVE_ENGINE_FEATURE) == set(engine_names())
    for feature in [*SERVE_ENGINE_FEATURE.values(), *STEP_ENGINE_FEATURE.values()]:
        assert feature is None or feature in MATRIX.features
