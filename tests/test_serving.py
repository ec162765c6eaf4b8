"""Time model and serving: engine profiles against the H100 decode measurements, kernel physics,
continuous batching, KV capacity, confidence flags, measured interconnect figures, `--engine`."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from gpuadvisor.cli import main
from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate import (
    ENGINES,
    HardwareFigures,
    apply_measured,
    decode_step,
    engine_profile,
    estimate_compute,
    estimate_serving,
    kernels,
    measured_figures,
)
from gpuadvisor.workload import make_workload, spec_from_config

DATA = Path(__file__).resolve().parent.parent / "tools" / "data"
LAB = Path(__file__).resolve().parent.parent / "lab" / "data"  # raw files of the dated eager-decode checks
H100 = HardwareFigures(name="H100", memory_gib=80, bandwidth_gbs=3350, tflops={"bf16": 989.4, "fp16": 989.4,
                       "fp32": 66.9, "fp8": 1978.9}, tdp_w=700, interconnect_gbs=900, compute_units=132,
                       compute_capability="9.0")
ORDER = ["qwen2.5-0.5b", "llama-3.2-1b", "llama-3.2-3b", "llama-3.1-8b"]
BATCHES = [1, 8, 32, 64]


def held_out(model: str, batch: int) -> bool:
    """The decode table's held-out rule: (model index + batch index) % 3 == 0."""
    return (ORDER.index(model) + BATCHES.index(batch)) % 3 == 0


def decode_points():
    d = json.loads((DATA / "decode-h100.json").read_text())
    return [r for r in d["decode"] if "batch" in r]


def estimated_step(rec: dict, engine: str) -> float:
    spec = spec_from_config(rec["config"], name=rec["model"])
    w = make_workload(spec, mode="inference", dtype="bf16", batch=rec["batch"], seq_len=rec["prompt"],
                      gen_tokens=rec["gen"])
    return decode_step(w, H100, batch=rec["batch"], context=rec["prompt"] + rec["gen"] // 2, engine=engine).time_s


def test_graphs_decode_within_25_percent_of_h100_for_1b_and_up():
    checked = 0
    for rec in decode_points():
        if rec["params"] < 1e9 or rec["batch"] not in (1, 8, 32):
            continue
        est, meas = estimated_step(rec, "graphs"), rec["graphs_own"]["step_s"]
        assert est == pytest.approx(meas, rel=0.25), (rec["model"], rec["batch"], est, meas)
        checked += 1
    assert checked == 9


def test_graphs_held_out_points_within_25_percent():
    for rec in decode_points():
        if held_out(rec["model"], rec["batch"]) and rec["params"] >= 1e9:
            assert estimated_step(rec, "graphs") == pytest.approx(rec["graphs_own"]["step_s"], rel=0.25)


def _eager_errors(path: str, card: str, variant: str = "default") -> list[float]:
    """tok/s errors of the eager estimate made with the dispatch probe's figures from the same run, as
    tools/validate_time.py computes them."""
    from tools import validate_time as mod

    label = mod.EAGER_VARIANTS[variant] + " ["
    return [r["err"] / 100 for r in mod.eager_check_rows(LAB / path, card, run="")
            if r["engine"].startswith(label) and not r["engine"].endswith("[no probe]")]


@pytest.mark.parametrize("path,card", [("h100-round3/eager-check.json", "H100 SXM5 80GB"),
                                       ("h200-round3/eager-check.json", "H200 SXM 141GB"),
                                       ("h100-round4/eager-check-e.json", "H100 SXM5 80GB")])
def test_eager_decode_with_single_op_probe_figures(path, card):
    """Runs C-E had only the single-op and SDPA-level host figures (the SDPA-level plan reads 10-30 %
    above what generate() pays): every point of 1B, 3B and 8B at batch 1, 8 and 32 within 30 %."""
    errors = _eager_errors(path, card)
    assert len(errors) == 9
    assert max(abs(e) for e in errors) < 0.30, errors


@pytest.mark.parametrize("path,card,variant", [
    ("h100-round4/eager-check-f.json", "H100 SXM5 80GB", "default"),
    ("h100-round4/eager-check-f.json", "H100 SXM5 80GB", "nocudnn"),
    ("h200-round4/eager-check-g.json", "H200 SXM 141GB", "default"),
    ("h200-round4/eager-check-g.json", "H200 SXM 141GB", "nocudnn"),
    ("h200-round4/eager-check-g.json", "H200 SXM 141GB", "padded")])
def test_eager_decode_with_generate_probe_figures(path, card, variant):
    """Runs F and G: the dispatch probe timed generate() on tiny models (what `gpuadvisor run` measures
    now); the estimate made from it against 1B, 3B and 8B generate() with cuDNN attention on, off, and
    with padded batches. The H100 host of run F was noisy (its op time drifted 35 % within the run)."""
    errors = _eager_errors(path, card, variant)
    assert len(errors) >= 6
    assert sum(abs(e) <= 0.25 for e in errors) >= 0.6 * len(errors) and max(abs(e) for e in errors) < 0.40, errors


def test_eager_step_adds_host_and_gpu_time():
    """generate()'s dispatch and GPU work add up (runs F and G with cuDNN attention off)."""
    w = make_workload("llama-3.1-8b", batch=32, seq_len=2048, gen_tokens=64)
    d = decode_step(w, H100, batch=32, context=2080, engine="eager")
    assert d.time_s == pytest.approx(d.host_s + max(d.memory_s, d.compute_s) + d.kernel_floor_s)
    measured = replace(H100, eager_layer_s=1.0e-3, eager_fixed_s=2.0e-3, attention_plan_s=0.030)
    m = decode_step(w, measured, batch=32, context=2080, engine="eager")
    assert m.host_s == pytest.approx(2.0e-3 + 0.030 + 32 * 1.0e-3)  # the probe's figures, not the defaults


def test_padded_batches_move_the_kv_cache_per_query_head():
    e, g = ENGINES["eager"], ENGINES["graphs"]
    assert e.kv_multiplier(32, 8) == 3.0  # no mask: K and V shared across query heads (enable_gqa)
    assert e.kv_multiplier(32, 8, padded=True) == pytest.approx(4 + 4 * 4)  # repeat_kv: 20 passes at g = 4
    assert g.kv_multiplier(32, 8, padded=True) == 1.0
    w = make_workload("llama-3.1-8b", batch=32, seq_len=4096, gen_tokens=64)
    plain = decode_step(w, H100, batch=32, context=4128, engine="eager")
    padded = decode_step(w, H100, batch=32, context=4128, engine="eager", padded=True)
    assert padded.time_s > plain.time_s + 0.05  # 17 more passes over 17 GB of cache
    one = decode_step(w, H100, batch=1, context=4128, engine="eager", padded=True)
    assert one.kv_multiplier == 3.0  # one sequence has nothing to pad
    ce = estimate_compute(w, H100, engine="eager")
    assert any("padded batch" in n for n in ce.notes)
    assert not any("padded batch" in n for n in estimate_compute(w, H100, engine="graphs").notes)


def test_attention_plan_comes_from_the_probe_or_the_gpu():
    from dataclasses import replace

    from gpuadvisor.estimate.engines import CUDNN_ATTENTION_PLAN_S, attention_plan_s

    assert attention_plan_s(H100) == CUDNN_ATTENTION_PLAN_S  # Hopper: PyTorch picks cuDNN attention
    assert attention_plan_s(replace(H100, compute_capability="8.0")) == 0.0  # Ampere: flash, no plan
    assert attention_plan_s(replace(H100, attention_plan_s=0.012)) == 0.012  # measured wins
    w = make_workload("llama-3.2-1b", batch=1, seq_len=512, gen_tokens=64)
    hopper = decode_step(w, H100, batch=1, context=544, engine="eager").time_s
    ampere = decode_step(w, replace(H100, compute_capability="8.0"), batch=1, context=544, engine="eager").time_s
    assert hopper - ampere == pytest.approx(CUDNN_ATTENTION_PLAN_S)
    slow_host = decode_step(w, replace(H100, host_op_s=2 * kernels.HOST_OP_S), batch=1, context=544, engine="eager")
    assert slow_host.time_s > hopper  # dispatch scales with the measured op time
    ce = estimate_compute(w, H100, engine="eager")
    plan_note = next(n for n in ce.notes if "enable_cudnn_sdp(False)" in n)
    # the step without the plan is the one a warm process (lengths seen before) or flash attention gets
    assert f"{ampere * 1e3:.1f} ms instead of {hopper * 1e3:.1f} ms" in plan_note
    assert "cached per length" in plan_note


def test_dispatch_figures_map_onto_the_estimate():
    figs = measured_figures(_Dev({"dispatch.op": 12.0, "dispatch.sdpa_new_shape": 0.0}))
    assert figs == {"host_op_s": pytest.approx(12e-6), "attention_plan_s": 0.0}
    gpu_figures = apply_measured(H100, figs)
    assert gpu_figures.host_op_s == pytest.approx(12e-6) and gpu_figures.attention_plan_s == 0.0
    assert gpu_figures.source == "datasheet"
    # generate() timed on tiny models: its plan wins over the SDPA-level one, its per-layer time is used
    figs = measured_figures(_Dev({"dispatch.op": 12.0, "dispatch.sdpa_new_shape": 53.0, "dispatch.generate_plan": 41.0,
                                  "dispatch.generate_layer": 0.9, "dispatch.generate_fixed": 1.2}))
    assert figs["attention_plan_s"] == pytest.approx(0.041)
    assert figs["eager_layer_s"] == pytest.approx(0.9e-3) and figs["eager_fixed_s"] == pytest.approx(1.2e-3)
    gpu_figures = apply_measured(H100, figs)
    assert ENGINES["eager"].dispatch_s(10, gpu_figures) == pytest.approx(9e-3)
    assert ENGINES["eager"].host_fixed_step_s(gpu_figures) == pytest.approx(1.2e-3 + 0.041)


def test_eager_is_host_bound_and_slower_than_graphs():
    w = make_workload("llama-3.2-3b", batch=1, seq_len=512, gen_tokens=64)
    e = decode_step(w, H100, batch=1, context=544, engine="eager")
    g = decode_step(w, H100, batch=1, context=544, engine="graphs")
    assert e.bound == "host" and g.bound == "memory"
    assert e.time_s > 5 * g.time_s


def test_eager_overhead_grows_with_layers():
    few = make_workload("llama-2-7b", batch=1, seq_len=128, gen_tokens=16)
    many = few.with_(model=replace(few.model, num_layers=64))  # fields only: not the cached parameter counts
    t_few = decode_step(few, H100, batch=1, context=136, engine="eager").host_s
    t_many = decode_step(many, H100, batch=1, context=136, engine="eager").host_s
    assert t_many - t_few == pytest.approx(32 * ENGINES["eager"].host_per_layer_s)


def test_decode_grows_with_batch_and_context():
    w = make_workload("llama-2-7b", batch=1, seq_len=1024, gen_tokens=0)
    t = [decode_step(w, H100, batch=b, context=1024, engine="graphs").time_s for b in (1, 16, 64)]
    assert t[0] < t[1] < t[2]
    assert decode_step(w, H100, batch=8, context=8192, engine="graphs").time_s > t[1]


def test_moe_batch_one_reads_only_routed_experts():
    cfg = {"model_type": "mixtral", "num_hidden_layers": 8, "hidden_size": 1024, "num_attention_heads": 16,
           "num_key_value_heads": 8, "intermediate_size": 4096, "vocab_size": 32000, "num_local_experts": 8,
           "num_experts_per_tok": 2}
    w = make_workload(spec_from_config(cfg, name="moe"), batch=1, seq_len=256, gen_tokens=0)
    one = decode_step(w, H100, batch=1, context=256, engine="graphs").memory_s
    many = decode_step(w, H100, batch=64, context=256, engine="graphs").memory_s
    assert many > 2 * one


def test_unknown_engine_is_a_user_error():
    with pytest.raises(UserError, match="unknown engine"):
        engine_profile("vllm")
    with pytest.raises(UserError):
        estimate_compute(make_workload("7b"), H100, engine="turbo")


def test_continuous_batching_curve():
    s = estimate_serving(make_workload("llama-2-7b"), H100, concurrency=16, prompt_tokens=512, output_tokens=256)
    curve = s.curve
    assert [p["concurrency"] for p in curve[:5]] == [1, 2, 4, 8, 16]
    agg = [p["aggregate_tokens_per_s"] for p in curve]
    user = [p["per_user_tokens_per_s"] for p in curve]
    assert agg == sorted(agg) and user == sorted(user, reverse=True)
    assert s.ttft_s > estimate_compute(make_workload("llama-2-7b", seq_len=512, gen_tokens=0), H100).prefill_time_s
    # prefills interleaved by continuous batching make per-user speed lower than 1 / TPOT
    assert s.per_user_tokens_per_s < 1 / s.tpot_s


def test_kv_capacity_in_paged_blocks():
    s = estimate_serving(make_workload("llama-2-7b"), H100, concurrency=1, prompt_tokens=2000, output_tokens=48)
    assert s.kv_bytes_per_token == 2 * 32 * 32 * 128 * 2  # 512 KiB a token
    assert s.max_concurrent_seqs == s.kv_capacity_tokens // 16 // 128  # 2048 tokens = 128 blocks
    assert 50 < s.max_concurrent_seqs < 60  # (72 GiB usable - 12.6 GiB weights - context) / 1 GiB a sequence
    too_many = estimate_serving(make_workload("llama-2-7b"), H100, concurrency=s.max_concurrent_seqs + 1,
                                prompt_tokens=2000, output_tokens=48)
    assert not too_many.fits and s.fits


def test_serving_names_engine_and_assumptions():
    s = estimate_serving(make_workload("llama-2-7b"), H100, concurrency=4, prompt_tokens=128, output_tokens=64,
                         engine="eager")
    d = s.to_dict()
    assert d["engine"] == "eager" and d["assumptions"]["engine"]["host_fixed_s"] > 0
    assert d["assumptions"]["decode_step"]["bound"] == "host"
    assert d["confidence"] == "low" and any("host" in n for n in d["notes"])


def test_confidence_flags_small_models():
    small = estimate_compute(make_workload("gpt2", mode="training", batch=8, seq_len=1024), H100)
    big = estimate_compute(make_workload("llama-2-7b", batch=8, seq_len=1024, gen_tokens=0), H100)
    assert small.confidence == "low" and any("under 1B" in n for n in small.notes)
    assert big.confidence == "normal"


def test_wave_quantization_and_k_ramp():
    assert kernels.wave_efficiency(128 * 132, 256, 132) == 1.0
    # one tile past a full wave: the tail runs at half-size tiles, half a wave (kernels._waves)
    assert kernels.wave_efficiency(128 * 133, 256, 132) == pytest.approx(133 / 198)
    assert kernels.wave_efficiency(128 * 66, 256, 132) == 0.5  # a single partial wave costs a whole one
    kw = {"rate": 740e12, "bandwidth": 2.9e12, "sms": 132}
    # same FLOPs, a short inner dimension costs more
    assert kernels.gemm_time(4096, 4096, 512, **kw) * 8 > kernels.gemm_time(4096, 4096, 4096, **kw)
    # a misaligned vocabulary (GPT-2's 50257) loses the 16-byte tensor-core path
    assert kernels.gemm_time(8192, 50257, 768, **kw) > 2 * kernels.gemm_time(8192, 50304, 768, **kw)
    # batch-1 products are bound by reading the weights
    assert kernels.gemm_time(1, 4096, 4096, **kw) == pytest.approx(2 * 4096 * 4097 / 2.9e12, rel=0.01)


def test_attention_rate_rises_with_sequence_and_head_dim():
    r = [kernels.attention_rate(s, 128, 740e12) for s in (256, 1024, 4096)]
    assert r == sorted(r) and r[-1] < 740e12
    assert kernels.attention_rate(2048, 64, 740e12) < kernels.attention_rate(2048, 128, 740e12)


class _Dev:
    def __init__(self, values):
        self.values = values

    def measurement(self, key):
        v = self.values.get(key)
        return None if v is None else type("M", (), {"value": v})()


def test_measured_allreduce_bandwidth_drives_data_parallel_time():
    figs = measured_figures(_Dev({"memory.triad": 2900.0, "interconnect.allreduce_busbw": 50.0}))
    assert figs["allreduce_busbw_gbs"] == 50.0
    slow = apply_measured(H100, figs)
    fast = apply_measured(H100, {**figs, "allreduce_busbw_gbs": 400.0})
    assert slow.allreduce_busbw_gbs == 50.0
    w = make_workload("llama-2-7b", mode="training", batch=8, seq_len=1024, num_gpus=8, sharding="zero2")
    assert estimate_compute(w, slow).comm_time_s > 4 * estimate_compute(w, fast).comm_time_s
    # an interconnect figure alone does not make the compute rates "measured"
    only_link = apply_measured(H100, {"allreduce_busbw_gbs": 300.0})
    assert only_link.source == "datasheet" and only_link.allreduce_busbw_gbs == 300.0


def test_cli_engine_flag(capsys):
    assert main(["estimate", "llama-3.2-3b", "--batch", "8", "--input-len", "512", "--output-len", "64",
                 "--engine", "eager", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["rests_on"]["assumptions"]["engine"] == "eager"
    d = d["detail"]
    assert d["compute"]["engine"] == "eager"
    assert d["serving"]["engine"] == "eager" and d["serving"]["assumptions"]["engine"]["name"] == "eager"
    assert d["compute"]["confidence"] in ("low", "normal")
    assert main(["estimate", "llama-3.2-3b", "--input-len", "512", "--output-len", "64"]) == 0
    out = capsys.readouterr().out
    assert "engine graphs" in out and "TTFT" in out and "tok/s aggregate" in out and "KV cache" in out


def test_cli_text_shows_the_engine_notes(capsys):
    """What the eager engine assumes that a user can change is printed in text, not only in JSON."""
    assert main(["estimate", "llama-3.1-8b", "--batch", "32", "--input-len", "4096", "--engine", "eager"]) == 0
    out = capsys.readouterr().out
    assert "enable_cudnn_sdp(False)" in out and "a padded batch" in out
    assert main(["estimate", "llama-3.1-8b", "--batch", "32", "--input-len", "4096"]) == 0
    assert "a padded batch" not in capsys.readouterr().out  # graphs: no mask-dependent copies


def test_cli_unknown_engine_one_line_exit_2(capsys):
    # vllm, sglang, trtllm, llamacpp and hf are engines of the serving simulation now (tests/test_serve_cli.py)
    assert main(["estimate", "7b", "--engine", "tgi"]) == 2
    err = capsys.readouterr().err
    assert "unknown engine 'tgi'" in err and err.count("\n") == 1
