"""`gpuadvisor estimate MODEL`: memory breakdown and time estimate of one workload on one card."""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from typing import Any

from gpuadvisor.cli.common import non_negative_int, positive_float, positive_int
from gpuadvisor.core.errors import UserError
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
    from gpuadvisor.core.errors import UserError
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
        from gpuadvisor.core import results

        host_bw = host_bandwidth_from(results.load(args.probe))
    return plan_offload(w, card.memory_gib * GiB, hw.bandwidth_gbs, host_bandwidth_gbs=host_bw,
                        bandwidth_efficiency=eff.for_source(hw.source)[1])


@dataclass
class Answer:
    """What `estimate` found for one workload on one card, before it is printed (estimate_text) or
    written as JSON."""

    w: Any
    card: Any
    hw: Any
    eff: Any
    engine: str
    decoder_serving: bool
    mem: Any
    comp: Any
    plan: Any
    serving: Any
    lay: Any
    fits: bool
    graph: dict[str, Any] | None = None  # the analytic op graph's figures (op_graph), where it writes the model


def run(args: argparse.Namespace) -> int:
    if args.list_models:
        return print_presets(args.json)
    from gpuadvisor.cli.serve_args import run_estimate, serving_requested

    # `--users N` alone (one flag, shared with the simulation) asks for the layout's figures, the ones
    # `recommend` prices; with --rate, --engine vllm|..., lengths or p99 targets it runs the simulation
    if serving_requested(argparse.Namespace(**{**vars(args), "serve_users": None})):
        return run_estimate(args)
    from gpuadvisor.cli import training_cmd

    w, card, hw, eff = _inputs(args)
    if training_cmd.wants_parallel(args, w):
        return training_cmd.run_parallel(args, w, card, hw)
    a = _answer(args, w, card, hw, eff)
    if args.json:
        from gpuadvisor.cli.common import print_json

        print_json(_answer_dict(a))
        return 0
    from gpuadvisor.cli import estimate_text
    from gpuadvisor.cli.common import console

    con = console()
    estimate_text.print_memory(con, a)
    if a.plan:
        estimate_text.print_offload(con, a)
    if a.lay is not None and not a.lay.fits:
        estimate_text.print_way_forward(con, a.w, a.hw, a.lay, a.eff, a.engine)
        return 0
    estimate_text.print_time(con, a)
    return 0


def _inputs(args: argparse.Namespace) -> tuple[Any, Any, Any, Any]:
    """The workload, the card, its figures (datasheet, or measured with --probe) and the efficiencies."""
    from gpuadvisor.advisor.options import hardware_of
    from gpuadvisor.cli.common import catalog_from, resolve_card

    w = workload_from(args)
    eff = efficiency_from(args)
    catalog = catalog_from(args)
    card = resolve_card(catalog, args.gpu)
    figs = None
    if args.probe:
        from gpuadvisor.compare import measured_by_card
        from gpuadvisor.core import results

        figs = measured_by_card(results.load(args.probe), catalog).get(card.name)
        if not figs:
            raise UserError(f"{args.probe}: no measured figures for {card.name}")
    return w, card, hardware_of(card, figs), eff


def _answer(args: argparse.Namespace, w: Any, card: Any, hw: Any, eff: Any) -> Answer:
    """Memory, time, the layout's figures, serving (a decoder with --users) and the offload plan."""
    from gpuadvisor.advisor.figures import layout_figures
    from gpuadvisor.estimate import estimate_compute, estimate_memory, estimate_serving

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
    return Answer(w, card, hw, eff, args.engine, decoder_serving, mem, comp, plan, serving, lay, fits, graph)


def _answer_dict(a: Answer) -> dict[str, Any]:
    return {"workload": a.w.to_dict(), "model": a.w.model.to_dict(), "card": a.card.name,
            "hardware_source": a.hw.source, "memory": a.mem.to_dict(), "compute": a.comp.to_dict(),
            "engine": a.engine, "serving": a.serving.to_dict() if a.serving else None,
            "layout": a.lay.to_dict() if a.lay else None, "fits": a.fits,
            "way_forward": [r.to_dict() for r in fixes_for(a.w, a.hw, a.lay, a.eff, a.engine)],
            **({"offload": a.plan.to_dict()} if a.plan else {}), **({"op_graph": a.graph} if a.graph else {})}


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


def fixes_for(w: Any, hw: Any, lay: Any, eff: Any, engine: str) -> list[Any]:
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
