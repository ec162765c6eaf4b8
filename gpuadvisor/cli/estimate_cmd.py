"""`gpuadvisor estimate MODEL`: memory breakdown and time estimate of one workload on one card."""

from __future__ import annotations

import argparse
import math
from typing import Any

from gpuadvisor.cli.common import non_negative_int, positive_float, positive_int
from gpuadvisor.errors import UserError
from gpuadvisor.units import duration

GiB = 2**30


def fraction(text: str) -> float:
    """An efficiency: a fraction in (0, 1] ("0.4"), or a percentage with its sign ("40%")."""
    t = text.strip()
    pct = t.endswith("%")
    v = positive_float(t[:-1] if pct else t)
    if pct:
        v /= 100.0
    if v > 1:
        raise argparse.ArgumentTypeError(f"must be a fraction in (0, 1], or a percentage with % (40%): {text!r}")
    return v


def token_count(text: str) -> float:
    from gpuadvisor.workload import parse_param_count

    n = parse_param_count(text)
    if n is None:
        try:
            n = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a token count: {text!r} (e.g. 2e9, 300b)") from None
    if not (n > 0) or math.isinf(n):
        raise argparse.ArgumentTypeError(f"must be > 0: {text!r}")
    return n


def add_workload_args(p: argparse.ArgumentParser, *, json_flag: bool = True) -> None:
    p.add_argument("model", nargs="?", help="preset name (llama-2-7b), parameter count (7b, 350m), config.json path, "
                   "or PyTorch code to trace: torchvision:resnet50, timm:convnext_tiny, torchaudio:wav2vec2_base, "
                   "hf:DIR (a config.json), path/to/model.py:build")
    p.add_argument("--model", dest="model_opt", metavar="MODEL", help="same as the positional MODEL")
    p.add_argument("--list-models", action="store_true", help="list the model presets and exit")
    g = p.add_argument_group("workload")
    g.add_argument("--mode", default="inference",
                   help="inference | scoring (evaluation forward, logits of every position) | training | lora | qlora")
    g.add_argument("--dtype", default=None, help="fp32 | bf16 | fp16 | fp8 | int8 | int4 (default bf16)")
    g.add_argument("--batch", type=positive_int, default=1, help="global batch, sequences (default 1)")
    g.add_argument("--seq", type=non_negative_int, default=0, metavar="TOKENS",
                   help="sequence / prompt length (default: 2048, or the ViT patch count)")
    g.add_argument("--gen", type=non_negative_int, default=128, metavar="TOKENS",
                   help="inference: tokens generated after the prompt (default 128)")
    g.add_argument("--optimizer", default=None,
                   help="adamw-fused (default: Hugging Face Trainer's choice) | adamw-foreach (torch.optim.AdamW's "
                        "own default: one more state-sized temporary) | adamw8bit | sgd")
    g.add_argument("--quant", default="none", metavar="FORMAT",
                   help="weight format by its real bits per weight: q4_k_m | q5_k_m | q8_0 (GGUF) | awq | gptq "
                        "(int4, group 128) | nf4 | nf4-dq (bitsandbytes) | int8 | fp8, or a number of bits per "
                        "weight (e.g. 4.65)")
    g.add_argument("--scoring", default="logprobs",
                   help="--mode scoring: logprobs (log-softmax of the 16-bit logits, as lm-eval; default) or "
                        "loss (fp32 cross-entropy, as perplexity scripts and Trainer.evaluate)")
    g.add_argument("--pure", action="store_true",
                   help="training: weights, grads and optimizer states in --dtype (default: fp32 weights + autocast);"
                        " LoRA/QLoRA: no autocast (default: bf16 autocast, as Trainer(bf16=True))")
    g.add_argument("--checkpointing", action="store_true", help="activation checkpointing")
    g.add_argument("--gpus", type=positive_int, default=1, help="number of GPUs (estimate; recommend tries 1/2/4/8)")
    g.add_argument("--sharding", default="none", help="none | zero1 | zero2 | zero3 | fsdp")
    g.add_argument("--tp", type=positive_int, default=1, help="tensor-parallel degree")
    g.add_argument("--lora-rank", type=positive_int, default=16)
    g.add_argument("--lora-targets", default="all", choices=["all", "attn"])
    g.add_argument("--tokens", type=token_count, default=0.0, help="training token budget, e.g. 2e9 or 300b")
    t = p.add_argument_group("traced models (torchvision:, timm:, torchaudio:, hf:, file.py:build)")
    t.add_argument("--channels-last", action="store_true", help="images in NHWC, as fast 16-bit convolutions want")
    t.add_argument("--freeze", action="append", default=[], metavar="GLOB",
                   help="parameters that do not train, by name (repeatable): --freeze 'layer1.*'")
    t.add_argument("--trainable", action="append", default=[], metavar="GLOB",
                   help="train only these parameters, by name (repeatable): transfer learning, --trainable 'fc.*'")
    t.add_argument("--input", type=input_shape, default=(), metavar="SHAPE",
                   help="per-sample input shape where the model has no example batch: 3x224x224, 160000")
    t.add_argument("--samples", type=token_count, default=0.0, metavar="N",
                   help="training: samples to train on, e.g. 115.2m (90 epochs of ImageNet's 1.28M images)")
    e = p.add_argument_group("efficiency (the estimate's assumptions)")
    e.add_argument("--mfu", type=fraction,
                   help="large-matmul efficiency vs datasheet peak (default 0.75, measured on an H100)")
    e.add_argument("--bw-eff", type=fraction,
                   help="bandwidth efficiency vs datasheet (default 0.86, measured on an H100)")
    if json_flag:
        p.add_argument("--json", action="store_true", help="machine-readable output")


def input_shape(text: str) -> tuple[int, ...]:
    from gpuadvisor.errors import UserError
    from gpuadvisor.modelref import parse_input_shape

    try:
        return parse_input_shape(text)
    except UserError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def workload_from(args: argparse.Namespace) -> Any:
    from gpuadvisor.workload import make_workload

    model = args.model_opt or args.model
    if args.model_opt and args.model and args.model_opt != args.model:
        raise UserError("give the model once (positional or --model)")
    if not model:
        raise UserError("no model given: e.g. 'llama-2-7b', '7b' or path/to/config.json (see --list-models)")
    dtype = args.dtype or "bf16"
    extra = {"optimizer": args.optimizer} if args.optimizer else {}
    ctx = getattr(args, "serve_context", None)
    if ctx is not None:
        if args.seq:
            raise UserError("give --context (prompt + answer) or --seq (prompt), not both")
        if ctx <= args.gen:
            raise UserError(f"--context {ctx} must exceed --gen ({args.gen})")
        args.seq = ctx - args.gen
    w = make_workload(
        model, mode=args.mode, dtype=dtype, batch=args.batch, seq_len=args.seq, gen_tokens=args.gen,
        mixed_precision=not args.pure, checkpointing=args.checkpointing,
        num_gpus=args.gpus, sharding=args.sharding, tensor_parallel=args.tp, lora_rank=args.lora_rank,
        lora_targets=args.lora_targets, train_tokens=args.tokens, quant=args.quant, scoring=args.scoring,
        offload=bool(getattr(args, "offload", False)), channels_last=args.channels_last,
        freeze=tuple(args.freeze), trainable=tuple(args.trainable), input_shape=tuple(args.input),
        train_samples=args.samples, **extra,
    )
    return check_workload_flags(w, args)


MAX_PARAMS = 1e14  # 100T parameters: well beyond any published model; a larger count is a typo


def check_workload_flags(w: Any, args: argparse.Namespace) -> Any:
    """Refuse what would be ignored or is surely a typo, in one line each."""
    if w.model.num_params > MAX_PARAMS:
        raise UserError(f"{w.model.name}: {w.model.num_params:.3g} parameters is more than {MAX_PARAMS:.0e}, larger "
                        "than any model; check the count (e.g. 70b, 405b)")
    if args.checkpointing and w.mode in ("inference", "scoring"):
        raise UserError(f"--checkpointing applies to training, LoRA and QLoRA, not --mode {w.mode} "
                        "(inference keeps no activations for a backward pass)")
    return w


def efficiency_from(args: argparse.Namespace) -> Any:
    from gpuadvisor.estimate import Efficiency

    d = Efficiency()
    kw: dict[str, float] = {}
    if args.mfu:
        kw.update(mfu=args.mfu, mfu_vs_measured=min(1.0, args.mfu / d.mfu * d.mfu_vs_measured))
    if args.bw_eff:
        kw.update(bandwidth=args.bw_eff,
                  bandwidth_vs_measured=min(1.0, args.bw_eff / d.bandwidth * d.bandwidth_vs_measured))
    return Efficiency(**{**d.__dict__, **kw}).validate()


def engine_name(text: str) -> str:
    from gpuadvisor.cli.serve_args import SERVE_ENGINES
    from gpuadvisor.estimate.engines import ENGINES

    if text not in ENGINES and text not in SERVE_ENGINES:
        raise argparse.ArgumentTypeError(f"unknown engine {text!r} (one of {', '.join([*ENGINES, *SERVE_ENGINES])})")
    return text


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("estimate", help="memory breakdown and time estimate of a workload on one card")
    add_workload_args(p)
    p.add_argument("--engine", type=engine_name, default="graphs",
                   help="inference engine: graphs (CUDA graphs / vLLM, TensorRT-LLM, SGLang; default) or eager "
                        "(Hugging Face generate()); vllm, sglang, trtllm, llamacpp or hf run the serving simulation")
    p.add_argument("--gpu", default="H100 SXM5 80GB", metavar="CARD", help="catalog card (fuzzy; default H100 SXM)")
    s = p.add_argument_group("serving (a decoder in inference mode; the figures `recommend` shows for a layout; "
                             "--users alone gives them, with --rate or --engine vllm|... it runs the simulation)")
    s.add_argument("--context", type=positive_int, metavar="TOKENS", dest="serve_context",
                   help="prompt + answer tokens per user, as `recommend --context` (sets --seq to this less --gen)")
    p.add_argument("--probe", metavar="RESULTS.json", help="use measured figures from a probe result for this card")
    p.add_argument("--offload", action="store_true",
                   help="inference on a card too small for the model: layers on the GPU and decode speed with the "
                        "rest in host memory (llama.cpp -ngl)")
    p.add_argument("--host-bw", type=positive_float, metavar="GB/s",
                   help="--offload: host memory bandwidth (default: the host probe of --probe, else "
                        "60 GB/s)")
    from gpuadvisor.cli.serve_args import add_serve_args

    add_serve_args(p)
    from gpuadvisor.cli.training_cmd import add_training_args

    add_training_args(p)
    p.set_defaults(func=run)


def print_presets(as_json: bool) -> int:
    from gpuadvisor.cli.common import print_json
    from gpuadvisor.workload import list_presets

    specs = list_presets()
    if as_json:
        print_json([s.to_dict() for s in specs])
        return 0
    for s in specs:
        print(f"{s.name:20} {s.num_params / 1e9:8.2f}B  {s.kind}")
    return 0


def gib(v: float) -> str:
    return f"{v / GiB:,.2f}"


fmt_time = duration  # the CLI's name for the shared formatter


def describe_workload(w: Any, users: int | None = None) -> str:
    m = w.model
    parts = [f"{m.name} ({m.num_params / 1e9:.2f}B params)", w.mode]
    if w.mode == "training":
        parts.append(f"{w.dtype} {'mixed precision (fp32 weights)' if w.weight_dtype == 'fp32' else 'pure'}")
        parts.append(w.optimizer)
    elif w.quant_format != "none":
        parts.append(f"{w.quant_format} weights ({w.quant_bits_per_weight:g} bits/weight), {w.compute_dtype} compute")
    else:
        parts.append(w.weight_dtype)
    if w.mode in ("lora", "qlora"):
        parts.append("bf16 autocast" if w.mixed_precision else "no autocast")
    if w.mode == "scoring":
        parts.append("log-softmax of the logits" if w.scoring == "logprobs" else "fp32 cross-entropy loss")
    if w.model.is_traced:
        parts.append(f"batch {w.batch}" + (", channels-last" if w.channels_last else "")
                     + (f", trainable {' '.join(w.trainable)}" if w.trainable else "")
                     + (f", frozen {' '.join(w.freeze)}" if w.freeze else ""))
    else:
        from gpuadvisor.presentation import workload_shape

        parts.append(workload_shape(w, users))
    if w.num_gpus > 1:
        parts.append(f"{w.num_gpus} GPUs (TP {w.tensor_parallel}, {w.sharding})")
    if w.checkpointing:
        parts.append("checkpointing")
    return ", ".join(parts)


def offload_plan(args: argparse.Namespace, w: Any, card: Any, hw: Any, eff: Any) -> Any:
    """The llama.cpp-style offload plan for `estimate --offload` (host bandwidth: flag, probe, default)."""
    from gpuadvisor.estimate.offload import host_bandwidth_from, plan_offload

    if card.memory_gib is None or not hw.bandwidth_gbs:
        raise UserError(f"{card.name}: the catalog has no memory size or bandwidth, which --offload needs")
    host_bw = args.host_bw
    if host_bw is None and args.probe:
        from gpuadvisor import results

        host_bw = host_bandwidth_from(results.load(args.probe))
    return plan_offload(w, card.memory_gib * GiB, hw.bandwidth_gbs, host_bandwidth_gbs=host_bw,
                        bandwidth_efficiency=eff.for_source(hw.source)[1])


def run(args: argparse.Namespace) -> int:
    if args.list_models:
        return print_presets(args.json)
    from gpuadvisor.cli.serve_args import run_estimate, serving_requested

    # `--users N` alone (one flag, shared with the simulation) asks for the layout's figures, the ones
    # `recommend` prices; with --rate, --engine vllm|..., lengths or p99 targets it runs the simulation
    if serving_requested(argparse.Namespace(**{**vars(args), "serve_users": None})):
        return run_estimate(args)
    from gpuadvisor.advisor.figures import layout_figures
    from gpuadvisor.advisor.options import hardware_of
    from gpuadvisor.cli.common import catalog_from, console, print_json, resolve_card
    from gpuadvisor.estimate import (
        estimate_compute,
        estimate_memory,
        estimate_serving,
    )

    w = workload_from(args)
    eff = efficiency_from(args)
    catalog = catalog_from(args)
    card = resolve_card(catalog, args.gpu)
    figs = None
    if args.probe:
        from gpuadvisor import results
        from gpuadvisor.compare import measured_by_card

        figs = measured_by_card(results.load(args.probe), catalog).get(card.name)
        if not figs:
            raise UserError(f"{args.probe}: no measured figures for {card.name}")
    hw = hardware_of(card, figs)
    from gpuadvisor.cli import training_cmd

    if training_cmd.wants_parallel(args, w):
        return training_cmd.run_parallel(args, w, card, hw)
    decoder_serving = w.mode == "inference" and w.model.kind == "decoder" and bool(w.gen_tokens and w.seq)
    if args.serve_users and not decoder_serving:
        raise UserError("--users applies to serving a decoder (--mode inference, a language model)")
    if decoder_serving and args.serve_users:
        w = w.with_(batch=args.serve_users)
    mem = estimate_memory(w)
    comp = estimate_compute(w, hw, eff, engine=args.engine)
    plan = offload_plan(args, w, card, hw, eff) if args.offload else None
    serving = None
    lay = layout_figures(w, hw, eff, args.engine) if not args.offload else None
    if decoder_serving:
        serving = estimate_serving(w.with_(batch=w.data_parallel), hw, concurrency=w.micro_batch,
                                   prompt_tokens=w.seq, output_tokens=w.gen_tokens, engine=args.engine,
                                   efficiency=eff)
    fits = lay.fits if lay is not None else card.memory_gib is not None and mem.total / GiB <= card.memory_gib
    graph = op_graph(w, hw, eff, comp)
    if args.json:
        print_json({"workload": w.to_dict(), "model": w.model.to_dict(), "card": card.name,
                    "hardware_source": hw.source, "memory": mem.to_dict(), "compute": comp.to_dict(),
                    "engine": args.engine, "serving": serving.to_dict() if serving else None,
                    "layout": lay.to_dict() if lay else None, "fits": fits,
                    "way_forward": [r.to_dict() for r in _fixes(w, hw, lay, eff, args.engine)],
                    **({"offload": plan.to_dict()} if plan else {}), **({"op_graph": graph} if graph else {})})
        return 0
    from rich.table import Table

    con = console()
    con.print(f"[bold]{describe_workload(w, users=w.batch if decoder_serving else None)}[/bold]")
    parts = list(lay.memory_parts) if lay is not None else [(k, v / GiB) for k, v in mem.items if v]
    need = sum(v for _, v in parts)
    phase = "serving: weights, one prefill's activations, every user's KV cache" if decoder_serving else mem.phase
    t = Table(title=f"memory per GPU (peak: {phase})", show_header=True)
    t.add_column("item")
    t.add_column("GiB", justify="right")
    for k, v in parts:
        t.add_row(k, f"{v:,.2f}")
    t.add_row("[bold]total[/bold]", f"[bold]{need:,.2f}[/bold]")
    con.print(t)
    verdict = "fits" if fits else "does NOT fit"
    room = (f"{lay.usable_gib:.1f} GiB usable of {hw.memory_gib:g} (a serving engine keeps "
            f"{1 - lay.usable_gib / hw.memory_gib:.0%} free)" if decoder_serving and lay and lay.usable_gib
            and hw.memory_gib else f"{hw.memory_gib or 0:g} GiB on the card")
    con.print(f"{card.name}: {verdict} ({need:.1f} GiB needed per GPU, {room})"
              + ("" if fits or lay is None else f": {lay.why_not}"))
    if hw.memory_gib is not None and card.memory_gib is not None and hw.memory_gib < card.memory_gib:
        con.print(f"  note: {card.name} shares its {card.memory_gib:g} GiB with the OS and CPU: "
                  f"{hw.memory_gib:g} GiB taken as free for the GPU")
    for n in mem.notes:
        con.print(f"  note: {n}")
    from gpuadvisor.advisor.options import hw_notes

    for n in hw_notes(card, w):  # no tensor cores (FP32 rate), derived tensor figures, no bf16
        con.print(f"  note: {n}")
    if plan:
        con.print(f"[bold]CPU offload on {card.name}[/bold]: {plan.gpu_layers} of {plan.total_layers} layers on "
                  f"the GPU ({plan.gpu_bytes / GiB:.1f} GiB), {plan.host_bytes / GiB:.1f} GiB in host memory; decode "
                  f"{plan.decode_tokens_per_s:,.1f} tokens/s ({fmt_time(plan.decode_step_s)} per step)")
        for n in plan.notes:
            con.print(f"  note: {n}")
        if not plan.fits_entirely:
            con.print("  note: the times below assume the whole model on the GPU; with offload, decode runs at the "
                      "rate above")
    if lay is not None and not lay.fits:
        print_way_forward(con, w, hw, lay, eff, args.engine)
        return 0
    src = "measured (probe)" if hw.source == "measured" else "datasheet"
    eng = f", engine {comp.engine}" if w.mode in ("inference", "scoring") else ", eager PyTorch"
    con.print(f"[bold]time on {w.num_gpus} x {card.name}[/bold] (estimate; {src} figures{eng}, "
              f"large matmuls at {comp.mfu:.0%} of peak, bandwidth efficiency {comp.bandwidth_efficiency:.0%})")
    if comp.time_s is None:
        con.print("  no throughput figures for this card")
    elif w.model.is_traced:
        print_traced(con, w, comp)
    elif w.mode == "scoring":
        con.print(f"  forward: {fmt_time(comp.prefill_time_s)} for {w.batch} x {w.seq} tokens, "
                  f"{comp.prefill_tokens_per_s:,.0f} tokens/s ({comp.prefill_bound} bound)")
        print_op_graph(con, graph, "forward")
    elif w.mode == "inference":
        if serving:
            con.print(f"  offline, the {w.batch} prompts at once:")
        con.print(f"  prefill: {fmt_time(comp.prefill_time_s)} for {w.batch} x {w.seq} tokens, "
                  f"{comp.prefill_tokens_per_s:,.0f} tokens/s ({comp.prefill_bound} bound)")
        print_op_graph(con, graph, "prefill")
        if comp.decode_tokens_per_s:
            con.print(f"  decode: {comp.decode_tokens_per_s:,.0f} tokens/s over the batch, "
                      f"{fmt_time(comp.decode_step_s)} per step ({comp.decode_bound} bound)")
        con.print(f"  total for prompt + {w.gen_tokens} tokens: {fmt_time(comp.time_s)}")
        if serving and lay is not None:
            print_serving(con, serving, lay)
    else:
        con.print(f"  step: {fmt_time(comp.step_time_s)} ({comp.tokens_per_s:,.0f} tokens/s, {comp.bound} bound)")
        print_op_graph(con, graph, "step")
        if w.train_tokens:
            con.print(f"  {w.train_tokens:.3g} tokens: {fmt_time(comp.time_s)}")
        if w.num_gpus > 1:
            con.print(f"  scaling efficiency {comp.scaling_efficiency:.0%} "
                      f"(communication {fmt_time(comp.comm_time_s)}/step)")
    if comp.achieved_mfu:
        con.print(f"  achieved MFU {comp.achieved_mfu:.0%}; confidence: {comp.confidence}")
    # low-confidence reasons, and what the engine assumes that the user can change (decode_notes: "<engine>: ...")
    reasons = {*comp.low_confidence_reasons, *(serving.low_confidence_reasons if serving else ())}
    low = [n for n in (*comp.notes, *(serving.notes if serving else ()))
           if n in reasons or n.startswith(f"{comp.engine}:")]
    for n in dict.fromkeys(low):  # the serving and compute notes can repeat one another
        con.print(f"  note: {n}")
    return 0


def op_graph(w: Any, hw: Any, eff: Any, comp: Any) -> dict[str, Any] | None:
    """The analytic op graph of a Llama-style decoder's step costed by the op cost model, beside the calibrated
    headline (its training step, or its forward over the prompts); None where the analytic front-end does not
    write the workload (other architectures, LoRA/QLoRA, quantized weights, several GPUs...)."""
    if w.model.is_traced or w.model.kind != "decoder":
        return None
    from gpuadvisor.estimate.analytic import op_graph_summary
    from gpuadvisor.estimate.compute_result import Engine

    try:
        return op_graph_summary(w, hw, eff, headline_s=comp.step_time_s if w.is_training else comp.prefill_time_s,
                                eager=w.is_training or comp.engine == Engine.EAGER)
    except UserError:
        return None


def print_op_graph(con: Any, graph: dict[str, Any] | None, what: str) -> None:
    """One line under the calibrated figure: the analytic op graph's time for the same `what`."""
    if graph:
        ratio = graph["ratio_to_headline"]
        con.print(f"  op graph (analytic, op cost model): {fmt_time(graph['step_time_s'])}"
                  + (f", {ratio:.2f}x the {what}" if ratio else "") + f"; peak {graph['peak_bytes'] / GiB:.1f} GiB")


def print_traced(con: Any, w: Any, comp: Any) -> None:
    """A traced model's step: one forward (inference) or one training step, its rate and where the GPU time goes."""
    what = "training step" if w.is_training else "forward pass"
    con.print(f"  {what}: {fmt_time(comp.step_time_s)} for a batch of {w.batch}, "
              f"{comp.samples_per_s:,.0f} {comp.unit}/s"
              + (f" ({comp.tokens_per_s:,.0f} tokens/s)" if comp.tokens_per_s and comp.unit != "tokens" else "")
              + f", {comp.bound} bound")
    if comp.breakdown:
        parts = sorted(comp.breakdown.items(), key=lambda kv: -kv[1])
        con.print("  GPU time by op class: " + ", ".join(f"{k} {fmt_time(v)}" for k, v in parts if v >= 1e-5)
                  + f"; host dispatch {fmt_time(comp.host_time_s or 0.0)}")
    if w.train_samples:
        con.print(f"  {w.train_samples:.3g} samples: {fmt_time(comp.time_s)}")


def _fixes(w: Any, hw: Any, lay: Any, eff: Any, engine: str) -> list[Any]:
    """The way forward for a layout that does not fit (empty when it fits or is not costed)."""
    from gpuadvisor.advisor.remedy import way_forward
    from gpuadvisor.advisor.targets import Targets

    if lay is None or lay.fits:
        return []
    if w.mode == "inference":
        t = Targets(users=w.batch, context=w.seq + w.gen_tokens, output_tokens=w.gen_tokens,
                    tokens_per_s=1.0)
        base = w.with_(batch=1)
    else:
        t = Targets(tokens=float(w.train_tokens or w.train_samples) or None)
        base = w.with_(batch=w.micro_batch)
    return way_forward(base, hw, w.num_gpus, t, engine=engine, efficiency=eff, current=lay, global_batch=True)


def print_way_forward(con: Any, w: Any, hw: Any, lay: Any, eff: Any, engine: str) -> None:
    """No run time for a layout that does not fit; the cheapest change that makes it fit instead."""
    con.print("  no run time: this layout does not fit")
    fixes = _fixes(w, hw, lay, eff, engine)
    if not fixes:
        con.print("  way forward: none of checkpointing, a smaller micro-batch, a quantized format or up to 8 "
                  "GPUs makes it fit; a card with more memory")
    for r in fixes:
        con.print(f"  way forward: {r.line}", soft_wrap=True)


def print_serving(con: Any, s: Any, lay: Any) -> None:
    """The serving lines of `estimate`: the layout's figures (as `recommend` shows them) and the
    engine's assumptions."""
    a = s.assumptions or {}
    eng = a.get("engine", {})
    con.print(f"[bold]serving ({s.engine}: {eng.get('label', s.engine)})[/bold], {lay.layout}")
    if s.tpot_s is None:
        con.print("  no throughput figures for this card")
        return
    step = a.get("decode_step", {})
    users = s.concurrency * lay.replicas if lay.replicas == 1 else f"{s.concurrency} per replica x {lay.replicas}"
    if not lay.fits:
        con.print(f"  {users} users do not fit ({lay.why_not}): no speed figures for this layout")
    else:
        con.print(f"  {users} concurrent x ({s.prompt_tokens} prompt + {s.output_tokens} output tokens): "
                  f"TTFT {fmt_time(lay.ttft)}, TPOT {fmt_time(lay.tpot)} ({s.bound} bound)")
        con.print(f"  {lay.per_user:,.1f} tok/s per user, {lay.aggregate:,.0f} tok/s aggregate "
                  "(continuous batching, every prompt prefilled in full, tensor-parallel all-reduces included)")
    con.print(f"  KV cache {s.kv_bytes_per_token / 1024:,.0f} KiB/token: {s.kv_capacity_tokens:,} tokens fit, "
              f"{lay.max_users:,} sequences of {s.prompt_tokens + s.output_tokens} tokens "
              f"(16-token blocks){'' if lay.fits else ' -- fewer than asked'}")
    plan = a.get("attention_plan_s", 0.0)
    con.print(f"  engine assumptions ({a.get('host_figures', 'assumed')} host figures): host "
              f"{a.get('host_fixed_s', eng.get('host_fixed_s', 0)) * 1e3:.1f} ms/step + "
              + (f"{plan * 1e3:.0f} ms attention plan/step + " if plan else "")
              + f"{a.get('host_layer_s', eng.get('host_per_layer_s', 0)) * 1e3:.2f} ms/layer, "
              f"{eng.get('kernels_per_layer', 0):g} kernels/layer, "
              f"KV read x{step.get('kv_multiplier', 1):.0f}; step = memory {fmt_time(step.get('memory_s'))}, "
              f"kernel floors {fmt_time(step.get('kernel_floor_s'))}, host {fmt_time(step.get('host_s'))}")
