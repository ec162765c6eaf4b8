"""`estimate`'s command line as a typed request: which question the flags ask, and the refusal of any flag
that the request does not use (request.APPLIES is the one table of what applies where)."""

from __future__ import annotations

import argparse
from typing import Any

from gpuadvisor.cli.common import lengths_given
from gpuadvisor.estimate.serve.profiles import is_serve_engine
from gpuadvisor.request import (
    EstimateRequest,
    HardwareChoice,
    ServingLoad,
    Step,
    TrainingLayout,
)

#: argparse dest -> (request field in request.APPLIES, the flag as the user types it)
FLAGS: dict[str, tuple[str, str]] = {
    "seq": ("seq_len", "--seq"),
    "input_len": ("input_len", "--input-len"),
    "output_len": ("output_len", "--output-len"),
    "optimizer": ("optimizer", "--optimizer"),
    "pure": ("pure", "--pure"),
    "checkpointing": ("checkpointing", "--checkpointing"),
    "tokens": ("tokens", "--tokens"),
    "samples": ("samples", "--samples"),
    "sharding": ("sharding", "--sharding"),
    "lora_rank": ("lora_rank", "--lora-rank"),
    "lora_targets": ("lora_targets", "--lora-targets"),
    "scoring": ("scoring", "--scoring"),
    "quant": ("quant", "--quant"),
    "channels_last": ("channels_last", "--channels-last"),
    "tf32": ("tf32", "--tf32"),
    "freeze": ("freeze", "--freeze"),
    "trainable": ("trainable", "--trainable"),
    "input": ("input", "--input"),
    "engine": ("engine", "--engine"),
    "serve_users": ("users", "--users"),
    "concurrency": ("concurrency", "--concurrency"),
    "offload": ("offload", "--offload"),
    "host_bw": ("host_bandwidth_gbs", "--host-bw"),
    "probe": ("probe", "--probe"),
    "mfu": ("mfu", "--mfu"),
    "bw_eff": ("bandwidth_efficiency", "--bw-eff"),
    "rate": ("rate", "--rate"),
    "lengths": ("lengths", "--lengths"),
    "requests": ("requests", "--requests"),
    "seed": ("seed", "--seed"),
    "weights": ("weights", "--weights"),
    "kv_dtype": ("kv_dtype", "--kv-dtype"),
    "replicas": ("replicas", "--replicas"),
    "dp_attention": ("dp_attention", "--dp-attention"),
    "p99_ttft": ("p99_ttft_s", "--p99-ttft"),
    "p99_tpot": ("p99_tpot_s", "--p99-tpot"),
    "calibration": ("engine_overrides", "--calibration"),
    "speculative": ("speculative", "--speculative"),
    "spec_tokens": ("spec_tokens", "--spec-tokens"),
    "spec_accept": ("spec_accept", "--spec-accept"),
    "spec_topk": ("spec_topk", "--spec-topk"),
    "spec_verify": ("spec_verify", "--spec-verify"),
    "draft_model": ("draft_model", "--draft-model"),
    "prefill_gpus": ("prefill_gpus", "--prefill-gpus"),
    "prefill_tp": ("prefill_tp", "--prefill-tp"),
    "prefill_gpu": ("prefill_card", "--prefill-gpu"),
    "kv_link": ("kv_link", "--kv-link"),
    "in_process": ("in_process", "--in-process"),
    "pp": ("pipeline_parallel", "--pp"),
    "micro_batch": ("micro_batch", "--micro-batch"),
    "vp": ("virtual_stages", "--vp"),
    "cp": ("context_parallel", "--cp"),
    "ep": ("expert_parallel", "--ep"),
    "framework": ("framework", "--framework"),
    "layout": ("search", "--layout"),
    "recompute": ("recompute", "--recompute"),
    "gpus_per_node": ("gpus_per_node", "--gpus-per-node"),
    "net_gbs": ("net_gbs_per_gpu", "--net-gbs"),
    "samples_seen": ("samples_seen", "--samples-seen"),
    "restart_overhead": ("restart_overhead", "--restart-overhead"),
}

_TRAINING_LAYOUT = ("micro_batch", "vp", "cp", "ep", "framework", "layout", "recompute", "gpus_per_node", "net_gbs",
                    "samples_seen", "restart_overhead")
_SERVING = ("rate", "concurrency", "lengths", "requests", "seed", "weights", "kv_dtype", "replicas", "dp_attention",
            "p99_ttft", "p99_tpot", "calibration", "speculative", "spec_tokens", "spec_accept", "spec_topk",
            "spec_verify", "draft_model", "prefill_gpus", "prefill_tp", "prefill_gpu", "kv_link", "in_process")


def given_flags(args: argparse.Namespace) -> dict[str, str]:
    """dest -> flag, for each flag whose value differs from the parser's default (a default typed out is harmless);
    the defaults are the parser's own (`flag_defaults`, set where `estimate` registers its flags)."""
    defaults = getattr(args, "flag_defaults", {})
    out = {}
    for dest, (_, flag) in FLAGS.items():
        value = getattr(args, dest, None)
        if value != defaults.get(dest) and value not in (None, [], ()):
            out[dest] = flag
    return out


def calibration_from(args: argparse.Namespace) -> Any:
    """`--calibration FILE`: the engine profile fitted to a saved serve-check measurement (servecheck/calibrate.py),
    None without the flag. The measurement names its engine: another --engine is refused."""
    path = getattr(args, "calibration", None)
    if not path:
        return None
    from gpuadvisor.core.errors import UserError
    from gpuadvisor.servecheck import calibrate, measurement

    m = measurement.load(path)
    if is_serve_engine(args.engine) and args.engine != m.target.engine:
        raise UserError(f"--calibration {path} measured {m.target.engine}; --engine {args.engine} is another engine")
    return calibrate.fit(m, str(path))


def request_from(args: argparse.Namespace, calibration: Any = None) -> EstimateRequest:
    """The request `estimate`'s flags ask; a flag the request does not use is refused in one line. `calibration`
    (calibration_from) replaces the engine's host and front-end figures with the fitted ones."""
    from gpuadvisor.cli.estimate_cmd import workload_from
    from gpuadvisor.request import refuse_inapplicable

    workload = workload_from(args)
    given = given_flags(args)
    hardware = HardwareChoice(card=args.gpu, probe=args.probe, mfu=args.mfu, bandwidth_efficiency=args.bw_eff)
    question: Step | ServingLoad | TrainingLayout
    if any(d in given for d in _TRAINING_LAYOUT) or (workload.is_training and "pp" in given):
        question = TrainingLayout(
            micro_batch=args.micro_batch, pipeline_parallel=args.pp, virtual_stages=args.vp,
            context_parallel=args.cp, expert_parallel=args.ep, framework=args.framework,
            search=args.layout == "auto", recompute=args.recompute, gpus_per_node=args.gpus_per_node,
            net_gbs_per_gpu=args.net_gbs, samples_seen=args.samples_seen, restart_overhead=args.restart_overhead)
    elif is_serve_engine(args.engine) or any(d in given for d in _SERVING) or "pp" in given:
        engine = calibration.engine if calibration else args.engine if is_serve_engine(args.engine) else "vllm"
        question = ServingLoad(
            engine=engine, rate=args.rate,
            concurrency=args.concurrency, lengths=args.lengths,
            lengths_given=lengths_given(args),
            requests=args.requests or ServingLoad.requests,
            seed=args.seed,
            weights=args.weights, kv_dtype=args.kv_dtype, pipeline_parallel=args.pp, replicas=args.replicas,
            dp_attention=args.dp_attention,
            p99_ttft_s=args.p99_ttft, p99_tpot_s=args.p99_tpot,
            engine_overrides=calibration.overrides if calibration else (), speculative=args.speculative,
            spec_tokens=args.spec_tokens, spec_accept=args.spec_accept, spec_topk=args.spec_topk,
            spec_verify=args.spec_verify, draft_model=args.draft_model,
            prefill_gpus=args.prefill_gpus, prefill_tp=args.prefill_tp, prefill_card=args.prefill_gpu,
            kv_link=args.kv_link, in_process=args.in_process)
    else:
        question = Step(engine=args.engine, users=args.serve_users, offload=args.offload,
                        host_bandwidth_gbs=args.host_bw)
    request = EstimateRequest(workload, hardware, question)
    names = {FLAGS[d][0]: flag for d, flag in given.items()}
    if args.engine == "graphs":
        names.pop("engine", None)
    refuse_inapplicable(request, names)
    return request.validate()


__all__ = ["FLAGS", "calibration_from", "given_flags", "request_from"]
