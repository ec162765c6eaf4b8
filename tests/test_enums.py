"""Typed modes, shardings, engines and confidence: the enums accept and print the same text as the strings
they replace (CLI, JSON), and low confidence is a structured field, not a prefix of note text."""

from __future__ import annotations

import json

import pytest

from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate import Confidence, HardwareFigures, StepEngineName, estimate_compute, estimate_serving
from gpuadvisor.layout import Sharding
from gpuadvisor.workload import MODES, SHARDINGS, Mode, Workload, make_workload, resolve_model

H100 = HardwareFigures(name="H100", memory_gib=80, bandwidth_gbs=3350, tflops={"bf16": 989.4, "fp32": 66.9},
                       tdp_w=700, interconnect_gbs=900, compute_units=132, compute_capability="9.0")


def test_modes_and_shardings_keep_their_text():
    assert MODES == ("inference", "scoring", "training", "lora", "qlora")
    assert SHARDINGS == ("none", "zero1", "zero2", "zero3", "fsdp", "hsdp")
    w = make_workload("llama-3.2-1b", mode="train", sharding="zero-3", num_gpus=2, batch=2)  # CLI aliases
    assert w.mode is Mode.TRAINING and w.sharding is Sharding.ZERO3
    assert w.mode == "training" and f"{w.mode}" == "training" and str(w.sharding) == "zero3"
    assert json.loads(json.dumps(w.to_dict()))["mode"] == "training"
    assert {"training": 1}[w.mode] == 1  # hashes as its text


def test_workloads_made_directly_get_enums_and_bad_text_is_still_reported():
    w = Workload(model=resolve_model("gpt2"), mode="lora")
    assert w.mode is Mode.LORA and w.is_adapter and w.mode.is_training
    with pytest.raises(UserError, match="unknown mode 'serve'"):
        Workload(model=resolve_model("gpt2"), mode="serve").validate()
    assert Sharding.FSDP.stage == 3 and Sharding.HSDP.stage == 3 and Sharding.NONE.stage == 0


def test_engine_and_confidence_serialize_as_before():
    w = make_workload("qwen2.5-0.5b", mode="inference", batch=1, seq_len=256, gen_tokens=16)
    ce = estimate_compute(w, H100, engine="eager")
    assert ce.engine is StepEngineName.EAGER and ce.confidence is Confidence.LOW
    d = json.loads(json.dumps(ce.to_dict()))
    assert d["engine"] == "eager" and d["confidence"] == "low"
    assert "low_confidence_reasons" not in d  # JSON keeps its keys: the reasons are in `notes`, as before
    assert ce.low_confidence_reasons and set(ce.low_confidence_reasons) <= set(d["notes"])
    big = estimate_compute(make_workload("llama-3-8b", mode="inference", batch=8), H100)
    assert big.confidence == "normal" and not big.low_confidence_reasons


def test_serving_takes_the_reasons_from_the_field_not_from_note_text():
    w = make_workload("qwen2.5-0.5b", mode="inference")
    s = estimate_serving(w, H100, concurrency=4, prompt_tokens=256, output_tokens=32, engine="eager")
    assert s.confidence is Confidence.LOW and s.engine is StepEngineName.EAGER
    assert s.low_confidence_reasons and set(s.low_confidence_reasons) <= set(s.notes)
    assert all(n in s.low_confidence_reasons for n in s.notes if n.startswith("low confidence"))
