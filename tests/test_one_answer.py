"""One answer: `recommend`, `estimate`, the API and the report give the same fit, memory per GPU
and speed for the same option (card x GPUs in the same layout), for serving at 1, 32 and 100
users, a quantized model, fp8, training, LoRA and QLoRA."""

from __future__ import annotations

import json

import pytest

from gpuadvisor import api
from gpuadvisor.cli import main
from gpuadvisor.report.advice import workload_view

# (recommend arguments, card)
WORKLOADS = [
    (["llama-3.1-8b", "--users", "1"], "L40S"),
    (["llama-3.1-8b", "--users", "32", "--input-len", "3840"], "L40S"),
    (["llama-3.1-70b", "--users", "100", "--input-len", "3840"], "H100 SXM5 80GB"),
    (["llama-3.1-70b", "--users", "1"], "H100 SXM5 80GB"),
    (["llama-3.1-70b", "--users", "100", "--input-len", "3840"], "A100 PCIe 80GB"),
    (["llama-3.1-70b", "--quant", "awq", "--users", "32"], "L40S"),
    (["llama-3.1-8b", "--dtype", "fp8", "--users", "16"], "H100 SXM5 80GB"),
    (["mistral-7b", "--users", "100", "--input-len", "1536", "--output-len", "512"], "GeForce RTX 4090"),
    (["llama-3.1-8b", "--mode", "training", "--batch", "2", "--tokens", "1e8"], "H100 SXM5 80GB"),
    (["llama-3.1-8b", "--mode", "lora", "--batch", "4", "--tokens", "1e7"], "L40S"),
    (["llama-3.1-70b", "--mode", "qlora", "--batch", "1", "--tokens", "1e6"], "A100 PCIe 80GB"),
    (["1b", "--mode", "training", "--batch", "8", "--checkpointing", "--tokens", "1e9"], "GeForce RTX 4090"),
    # traced models, priced op by op
    (["resnet-50", "--mode", "training", "--batch", "256", "--samples", "1e6"], "H100 SXM5 80GB"),
    (["vit-b-16", "--batch", "64"], "L4"),
]


def _json(capsys, *argv):
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def _flag(args, name, default=None):
    return args[args.index(name) + 1] if name in args else default


def _estimate_argv(args, card, o):
    """The `estimate` command line for a recommend option: the same card, GPUs and layout."""
    model, rest = args[0], args[1:]
    mode = _flag(rest, "--mode", "inference")
    argv = ["estimate", model, "--gpu", card, "--gpus", str(o["hardware"]["gpus"]), "--json", "--mode", mode]
    for f in ("--quant", "--dtype", "--tokens", "--samples"):
        if f in rest:
            argv += [f, _flag(rest, f)]
    if "--checkpointing" in rest:
        argv.append("--checkpointing")
    if mode == "inference" and "--batch" in rest:  # a traced model's forward pass
        argv += ["--batch", _flag(rest, "--batch")]
    elif mode == "inference":
        out = int(_flag(rest, "--output-len", 256))
        inp = int(_flag(rest, "--input-len", 1024))
        argv += ["--users", _flag(rest, "--users", "1"), "--input-len", str(inp), "--output-len", str(out),
                 "--tp", str(o["tensor_parallel"])]
    else:
        g = o["hardware"]["gpus"]
        batch = int(_flag(rest, "--batch", 1))  # the global batch, in both commands
        # a searched layout: Megatron's, or (LoRA/QLoRA, the support matrix) Trainer's data parallel or FSDP
        fw = "megatron" if o["layout"].startswith("megatron") else "hf" if " mb" in o["layout"] else None
        if fw:  # data parallel did not fit: the searched layout, as estimate finds it
            per_gpu = -(-batch // g)  # recommend rounds the global batch up to whole sequences per GPU
            return [*argv, "--batch", str(per_gpu * g), "--framework", fw, "--layout", "auto"]
        argv += ["--batch", str(batch)]
        if "ZeRO-3" in o["layout"]:
            argv += ["--sharding", "zero3"]
    return argv


def _layout_of(answer):
    """`estimate --json` (one schema) as the layout figures: the step's (the advisor's own), or the parallel
    search's."""
    assert answer["schema"] == "gpuadvisor.answer/1"
    est = answer["detail"]
    if answer["question"] == "step":
        lay = est["layout"]
        assert lay["fits"] == answer["fits"]
        assert answer["memory"]["per_gpu_bytes"] == pytest.approx(lay["needed_gib_per_gpu"] * 2**30, rel=1e-9)
        return lay
    e = est["estimate"]
    mem = {k: v for k, v in e["memory_gib"].items() if k != "total"}
    lay = e["layout"]
    label = (f"megatron TP{lay['tp']} PP{lay['pp']} CP{lay['cp']} mb{lay['micro_batch']} {lay['sharding']} "
             f"ac:{lay['checkpointing']}")
    if est["framework"] == "hf":  # a LoRA/QLoRA job's searched layout, as Trainer users name it
        label = (f"{'FSDP' if lay['sharding'] in ('fsdp', 'zero3') else 'DDP'} x {lay['dp']} mb{lay['micro_batch']}"
                 + (" ac:full" if lay["checkpointing"] == "full" else ""))
    return {"fits": e["fits"], "layout": label, "needed_gib_per_gpu": e["memory_gib"]["total"], "memory_parts": mem,
            "wall_s": est["time_to_train"]["seconds"] if e["fits"] else None, "per_user_tokens_per_s": None}


def _speed(d):
    """What the option is timed by: tokens/s per user (a decoder served), the job's wall time (training), or one
    batch's time (a model that does not decode)."""
    for key in ("per_user_tokens_per_s", "wall_s", "request_s"):
        if d.get(key) is not None:
            return d[key]
    return None


@pytest.mark.parametrize(("args", "card"), WORKLOADS, ids=[" ".join(a) + " @ " + c for a, c in WORKLOADS])
def test_estimate_recommend_api_report_agree(capsys, args, card):
    rec = _json(capsys, "recommend", *args, "--buy-only", "--only", card, "--all", "--json")
    opts = [o for o in rec["options"] if o["hardware"]["card"] == card]
    assert opts, f"recommend evaluated no {card}"
    checked = 0
    for o in opts:
        est = _json(capsys, *_estimate_argv(args, card, o))
        lay = _layout_of(est)
        assert lay["fits"] == o["fits"], (o["label"], o["layout"])
        assert lay["layout"] == o["layout"]
        tol = 1e-9 if " mb" not in o["layout"] else 1e-3  # a searched layout: its JSON rounds GiB to 3 places
        assert lay["needed_gib_per_gpu"] == pytest.approx(o["needed_gib_per_gpu"], rel=tol)
        assert sum(lay["memory_parts"].values()) == pytest.approx(o["needed_gib_per_gpu"], rel=tol)
        assert sum(o["memory_parts"].values()) == pytest.approx(o["needed_gib_per_gpu"], rel=1e-6)
        if o["fits"]:
            assert _speed(lay) == pytest.approx(_speed(o), rel=1e-9)
        else:
            assert _speed(lay) is None  # no run time for what does not fit
        checked += 1
    assert checked >= 1

    # the API and the report, for the first choice
    from gpuadvisor.cli import build_parser
    from gpuadvisor.cli.advisor_args import targets_from
    from gpuadvisor.cli.estimate_cmd import workload_from

    ns = build_parser().parse_args(["recommend", *args, "--buy-only", "--only", card])
    advice = api.advise(workload_from(ns), targets_from(ns), buy=True, rent=False, only=(card,))
    view = workload_view(advice)
    first = next(o for o in advice.options if o.label == (advice.picks.get("cheapest") or advice.closest).option.label)
    assert float(view["memory_total"].replace(",", "")) == pytest.approx(first.needed_gib_per_gpu, abs=0.006)
    same = next(o for o in opts if o["label"] == first.label)
    assert first.needed_gib_per_gpu == pytest.approx(same["needed_gib_per_gpu"], rel=1e-9)
    if " mb" in first.layout:
        return  # a searched parallel layout: its estimate is `estimate --framework ... --layout auto` (above)
    w = advice.workload.with_(num_gpus=first.hardware.gpus, tensor_parallel=first.tensor_parallel)
    if w.mode == "inference":
        e = api.estimate(api.request(w, card, api.Step(users=advice.targets.users)))
    else:
        sh = "zero3" if "ZeRO-3" in first.layout else "none"
        budget = {"train_samples" if w.train_samples else "train_tokens": advice.targets.tokens or 0.0}
        e = api.estimate(api.request(w.with_(sharding=sh, **budget), card))
    assert e.fits == first.fits
    assert e.memory.per_gpu_bytes == pytest.approx(first.needed_gib_per_gpu * 2**30, rel=1e-9)
    if first.fits:
        assert _speed(e.detail["layout"]) == pytest.approx(_speed(first.to_dict()), rel=1e-9)


def test_recommend_70b_100_users_counts_every_prompt(capsys):
    """The user's case: 4x A100 80GB serving 100 users of 4,096 tokens fits (65 GiB per GPU) but
    the prefills of every user's 3,840-token prompt hold each user to a few tok/s, not 21."""
    est = _json(capsys, "estimate", "llama-3.1-70b", "--gpu", "A100 PCIe 80GB", "--gpus", "4", "--tp", "4",
                "--users", "100", "--input-len", "3840", "--output-len", "256", "--json")
    lay = est["detail"]["layout"]
    assert lay["fits"] and 60 < lay["needed_gib_per_gpu"] < 72
    assert lay["per_user_tokens_per_s"] < 5
    assert "KV cache (100 users" in next(k for k in lay["memory_parts"] if k.startswith("KV"))


@pytest.mark.parametrize("argv", [
    ["llama-3.1-70b", "--users", "100", "--input-len", "3840"],
    ["llama-3.1-8b", "--mode", "lora", "--tokens", "2e7"],
    ["sdxl-unet"],
])
def test_recommend_fits_80_columns(monkeypatch, argv):
    """In an 80-column terminal every pick's and option's cost and speed sit on one line."""
    import io

    from rich.console import Console

    from gpuadvisor.cli import build_parser, common, recommend_cmd
    from gpuadvisor.cli.advisor_args import advice_from
    from gpuadvisor.cli.estimate_cmd import workload_from

    buf = io.StringIO()
    monkeypatch.setattr(common, "console", lambda: Console(width=80, file=buf, highlight=False))
    ns = build_parser().parse_args(["recommend", *argv])
    from gpuadvisor.catalog import load_catalog

    advice = advice_from(ns, workload_from(ns), load_catalog())
    recommend_cmd.print_advice(advice)
    lines = buf.getvalue().splitlines()
    assert lines and max(len(x) for x in lines) <= 80
    picks = [x for x in lines if x.split()[:1] and x.split()[0] in ("rent", "buy", "value", "fast", "1")
             and not x.startswith("buy or rent")]
    assert picks, buf.getvalue()
    for x in picks:
        assert "$" in x and any(ch.isdigit() for ch in x.split("$")[-1]), x
