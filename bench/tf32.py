"""FP32 steps on an H100 with TF32 on and off (lab/fp32_convs.py), against the op pricer: ResNet-50 with cuDNN's TF32
convolutions (PyTorch's default, Rates.conv_rate) and BERT-QA with its matmuls on TF32 and not (`--tf32`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench import REPO

RUN = REPO / "lab/data/h100-fp32-tf32-2026-12-07/fp32_convs.json"


def rows(path: Path = RUN) -> list[dict[str, Any]]:
    """Each measured step with the tool's estimate of it on the card it ran on (the H100 SXM's datasheet), where the
    run's setting is one the tool can be asked for: the default convolutions, and matmuls with --tf32 or without."""
    from gpuadvisor import api
    from gpuadvisor.catalog import load_catalog
    from gpuadvisor.estimate import HardwareFigures, estimate_compute

    figures = HardwareFigures.from_card(load_catalog(use_env=False).get("H100 SXM5 80GB"))
    out = []
    for r in json.loads(path.read_text())["rows"]:
        if not r["cudnn_allow_tf32"]:  # cuDNN's TF32 turned off: no setting of the tool's
            continue
        w = api.workload(r["model"], mode="training", dtype="fp32", batch=r["batch"], seq_len=r.get("seq", 0),
                         tf32=bool(r["matmul_allow_tf32"]))
        estimate = estimate_compute(w, figures).step_time_s
        out.append({**r, "estimate_s": estimate, "ratio": estimate / r["step_s"]})
    return out


def off_share(path: Path = RUN) -> dict[tuple[str, int], float]:
    """(model, batch) -> its step with TF32 on over the same step with it off, in the same run (the reference): each
    pair differs in one setting, cuDNN's for ResNet-50, the matmuls' for BERT."""
    pairs: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for r in json.loads(path.read_text())["rows"]:
        pairs.setdefault((r["model"], r["batch"]), []).append(r)

    def tf32(r: dict[str, Any]) -> tuple[bool, bool]:
        return r["cudnn_allow_tf32"], r["matmul_allow_tf32"]

    return {k: max(p, key=tf32)["step_s"] / min(p, key=tf32)["step_s"] for k, p in pairs.items()}


def line(path: Path = RUN) -> str:
    """BENCHMARKS.md's line."""
    env = json.loads(path.read_text())["env"]
    rs = {(r["model"].split(":")[-1], r["batch"], r["matmul_allow_tf32"]): r for r in rows(path)}
    shares = off_share(path)
    rn = [rs[("resnet50", b, False)] for b in (64, 128)]
    bert_on, bert_off = rs[("bert-base-uncased-qa", 32, True)], rs[("bert-base-uncased-qa", 32, False)]
    resnet_share = shares[("torchvision:resnet50", 64)]
    date = env["date"][:10]
    return (f"FP32, H100 {date}, driver {env['driver']}, lab/fp32_convs.py: ResNet-50, cuDNN TF32 "
            f"{rn[0]['step_s'] * 1e3:.1f}/{rn[1]['step_s'] * 1e3:.1f} ms b64/128, x{resnet_share:.2f} "
            f"TF32 off; tool {rn[0]['ratio']:.2f}/{rn[1]['ratio']:.2f}x. BERT, TF32 matmuls "
            f"x{shares[('hf:bert-base-uncased-qa', 32)]:.2f}: tool {bert_on['ratio']:.2f}x (`--tf32`), "
            f"{bert_off['ratio']:.2f}x without.")
