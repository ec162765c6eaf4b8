"""One estimator: every `estimate` goes through a typed request and comes back as one Answer with one JSON
schema; a flag the request does not use is refused in one line; old spellings name the new one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuadvisor import api
from gpuadvisor.cli import main
from gpuadvisor.cli.estimate_request import FLAGS
from gpuadvisor.request import APPLIES, Question

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "docs" / "answer.schema.json").read_text())

# one command line per kind of question and per family of workload
KINDS = {
    "step-serving": ["llama-3.1-8b", "--users", "16", "--input-len", "1000", "--output-len", "200"],
    "step-training": ["llama-3.2-1b", "--mode", "training", "--batch", "4", "--seq", "1024", "--tokens", "1e8"],
    "step-lora": ["llama-3.1-8b", "--mode", "lora", "--batch", "2", "--seq", "512"],
    "step-scoring": ["llama-3.1-8b", "--mode", "scoring", "--batch", "8", "--seq", "1024"],
    "step-traced": ["torchvision:resnet50", "--mode", "training", "--batch", "64", "--channels-last"],
    "step-traced-inference": ["torchvision:resnet50", "--batch", "32"],
    "serving-rate": ["llama-3.1-8b", "--engine", "vllm", "--rate", "5", "--requests", "100"],
    "serving-concurrency": ["llama-3.1-8b", "--engine", "sglang", "--concurrency", "8", "--requests", "64"],
    "training-auto": ["7b", "--mode", "training", "--gpus", "8", "--batch", "64", "--layout", "auto"],
    "training-pp": ["llama-3.1-8b", "--mode", "training", "--gpus", "4", "--pp", "2", "--batch", "16"],
}


def _estimate_json(capsys, argv):
    capsys.readouterr()
    rc = main(["estimate", *argv, "--json"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return json.loads(out)


@pytest.mark.parametrize("name", sorted(KINDS))
def test_every_question_answers_in_the_one_schema(capsys, name):
    jsonschema = pytest.importorskip("jsonschema", reason="the dev extra installs jsonschema")
    d = _estimate_json(capsys, KINDS[name])
    jsonschema.validate(d, SCHEMA)
    assert d["question"] == name.split("-")[0]
    assert d["memory"]["per_gpu_bytes"] > 0
    if d["fits"]:
        assert d["time"]["step_s"] and d["time"]["step_s"] > 0
        assert d["rate"]["value"] and d["rate"]["value"] > 0


def test_the_schema_refuses_another_shape():
    jsonschema = pytest.importorskip("jsonschema", reason="the dev extra installs jsonschema")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"compute": {"step_time_s": 1.0}}, SCHEMA)


def test_units_say_what_is_counted(capsys):
    assert _estimate_json(capsys, KINDS["step-traced"])["rate"]["unit"] == "images/s"
    assert _estimate_json(capsys, KINDS["step-training"])["rate"]["unit"] == "tokens/s"
    assert _estimate_json(capsys, KINDS["serving-rate"])["rate"]["unit"] == "requests/s"


def test_cli_and_api_give_the_same_answer(capsys):
    d = _estimate_json(capsys, KINDS["step-serving"])
    w = api.workload("llama-3.1-8b", seq_len=1000, gen_tokens=200)
    a = api.estimate(api.request(w, "H100 SXM5 80GB", api.Step(users=16))).to_dict()
    assert a["serving"] == d["serving"]
    assert a["time"] == d["time"] and a["memory"] == d["memory"]


def test_api_serving_and_training_questions():
    w = api.workload("llama-3.1-8b", seq_len=1000, gen_tokens=200)
    sim = api.estimate(api.request(w, "H100 SXM5 80GB", api.ServingLoad(engine="vllm", rate=4.0, requests=50)))
    assert sim.question == Question.SERVING and sim.serving and sim.serving.percentiles
    t = api.estimate(api.request(api.workload("7b", mode="training", num_gpus=8, batch=64), "H100 SXM5 80GB",
                                 api.TrainingLayout(search=True)))
    assert t.question == Question.TRAINING and t.fits and t.rate.unit == "tokens/s"


# --- no flag is silently ignored -----------------------------------------------------------------------------

# a value for each flag that differs from its default
VALUES = {"--seq": "512", "--input-len": "500", "--output-len": "50", "--optimizer": "sgd", "--pure": None,
          "--checkpointing": None, "--tokens": "1e9", "--samples": "1e6", "--sharding": "fsdp", "--lora-rank": "8",
          "--lora-targets": "attn", "--scoring": "loss", "--quant": "awq", "--channels-last": None, "--tf32": None,
          "--freeze": "fc.*", "--trainable": "fc.*", "--input": "3x192x192", "--engine": "eager", "--users": "4",
          "--concurrency": "4",
          "--offload": None, "--host-bw": "40", "--probe": "tests/data/h100-probe.json", "--mfu": "0.5",
          "--bw-eff": "0.8", "--rate": "2", "--lengths": "sharegpt", "--requests": "50", "--seed": "3",
          "--weights": "fp8", "--kv-dtype": "fp8", "--replicas": "2", "--p99-ttft": "1s", "--p99-tpot": "50ms",
          "--speculative": "mtp", "--spec-tokens": "2", "--spec-accept": "1.8", "--spec-topk": "4",
          "--spec-verify": "8", "--draft-model": "llama-3.2-1b",
          "--prefill-gpus": "2", "--prefill-tp": "1", "--prefill-gpu": "H200", "--kv-link": "network",
          "--pp": "2", "--micro-batch": "2", "--vp": "2", "--cp": "2", "--ep": "2", "--framework": "megatron",
          "--layout": "auto", "--recompute": "full", "--gpus-per-node": "4", "--net-gbs": "25",
          "--samples-seen": "1e6", "--restart-overhead": "0.05",
          "--calibration": "tests/data/serve-check-tiny-llama.json", "--in-process": None, "--dp-attention": None}

# each kind of request, as the CLI builds it from these flags alone
BASES = {
    "inference step": ["llama-3.2-1b"],
    "training step": ["llama-3.2-1b", "--mode", "training"],
    "scoring step": ["llama-3.2-1b", "--mode", "scoring"],
    "traced training": ["torchvision:resnet50", "--mode", "training"],
}


@pytest.mark.parametrize("argv", [["--input-len", "512"], ["--mode", "training", "--seq", "512"]])
def test_a_sequence_length_is_refused_for_a_model_that_reads_no_tokens(capsys, argv):
    """torchvision, timm, torchaudio and file models take --input; a sequence length would change nothing."""
    rc = main(["estimate", "torchvision:resnet50", *argv, "--json"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "--input" in err


def test_the_flag_table_covers_every_estimate_flag():
    """Every flag of `estimate` that shapes the request is in FLAGS, and every FLAGS entry has a rule."""
    from gpuadvisor.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    est = sub.choices["estimate"]
    dests = {a.dest for a in est._actions} - {"help", "model", "model_opt", "list_models", "json", "mode", "dtype",
                                                "batch", "gpus", "tp", "gpu"}
    assert dests <= set(FLAGS), sorted(dests - set(FLAGS))
    assert {flag for _, flag in FLAGS.values()} == set(VALUES)
    assert {field for field, _ in FLAGS.values()} <= set(APPLIES)


def _figures(d):
    """What an answer says, less the echo of the request."""
    return {k: v for k, v in d.items() if k not in ("workload", "detail")}


@pytest.mark.parametrize("base", sorted(BASES))
def test_no_flag_is_silently_ignored(capsys, base):
    """Each flag on each kind of request either changes what the answer says or is refused in one line."""
    argv0 = BASES[base]
    plain = _figures(_estimate_json(capsys, argv0))
    ignored, bad = [], []
    for flag, value in VALUES.items():
        argv = [*argv0, flag, *([value] if value is not None else [])]
        capsys.readouterr()
        rc = main(["estimate", *argv, "--json"])
        out, err = capsys.readouterr()
        if rc == 0:
            if _figures(json.loads(out)) == plain:
                ignored.append(flag)
        elif rc != 2 or err.count("\n") != 1 or "Traceback" in err:
            bad.append(f"{flag}: rc {rc}: {err}")
    assert not ignored, f"{base}: accepted and changed nothing: {ignored}"
    assert not bad, bad


@pytest.mark.parametrize("old,new", [("--gen", "--output-len"), ("--context", "--input-len"),
                                     ("--output-tokens", "--output-len")])
def test_old_spellings_name_the_new_one(capsys, old, new):
    for cmd in ("estimate", "recommend"):
        assert main([cmd, "7b", old, "100"]) == 2
        err = capsys.readouterr().err
        assert new in err and err.count("\n") == 1


def test_seq_is_not_a_prompt_length(capsys):
    assert main(["estimate", "7b", "--seq", "100"]) == 2
    assert "--input-len" in capsys.readouterr().err
    assert main(["estimate", "7b", "--mode", "training", "--input-len", "100"]) == 2
    assert "--seq" in capsys.readouterr().err


def test_one_load_one_answer(capsys):
    """`--users N` is N users in steady state, priced by one model whatever else is asked; the simulation's
    benchmark clients that start together are another load with its own flag."""
    assert main(["estimate", "llama-3.1-8b", "--users", "16", "--engine", "vllm"]) == 2
    err = capsys.readouterr().err
    assert "--users" in err and "--concurrency" in err and err.count("\n") == 1
    steady = _estimate_json(capsys, ["llama-3.1-8b", "--users", "16", "--input-len", "1000", "--output-len", "200"])
    bench = _estimate_json(capsys, ["llama-3.1-8b", "--concurrency", "16", "--engine", "vllm", "--input-len", "1000",
                                    "--output-len", "200", "--requests", "64"])
    assert steady["question"] == "step" and bench["question"] == "serving"
    assert bench["rests_on"]["assumptions"]["load"]["users"] == 16
    # clients that start together queue their prompts behind each other: a longer TTFT than users spread out
    assert bench["serving"]["ttft_s"] > steady["serving"]["ttft_s"]


def test_what_binds_is_said_once(capsys):
    """An option's `binds` and the first words of its note name the same limit (a host-bound training step
    was once labelled host in the table and bandwidth in the pick's line)."""
    from gpuadvisor.advisor.figures import figures
    from gpuadvisor.advisor.options import hardware_of
    from gpuadvisor.advisor.targets import Targets
    from gpuadvisor.catalog import load_catalog

    w = api.workload("mistral-7b", mode="qlora", batch=1, seq_len=2048, checkpointing=True)
    seen = set()
    for card in ("H200 SXM 141GB", "H100 SXM5 80GB", "L4", "RTX A4000"):
        f = figures(w, hardware_of(load_catalog().get(card)), 8, Targets(tokens=2e8))
        if f.fits:
            assert f.binds_note.split(":")[0] == f.binds, (card, f.binds, f.binds_note)
            seen.add(f.binds)
    assert "host" in seen  # the case that had the two labels
