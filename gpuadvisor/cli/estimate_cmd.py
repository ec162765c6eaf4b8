"""`gpuadvisor estimate MODEL`: memory breakdown and time estimate of one workload on one card."""

from __future__ import annotations

import argparse
import math
from typing import Any

from gpuadvisor.cli.common import given, positive_float, positive_int, record_flags
from gpuadvisor.core.errors import UserError
from gpuadvisor.core.limits import arg_type
from gpuadvisor.modelspec import params_text
from gpuadvisor.request import DEFAULT_INPUT_LEN, DEFAULT_OUTPUT_LEN, default_input_len
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
    g.add_argument("--tf32", action="store_true",
                   help="--dtype fp32: matmuls on TF32 tensor cores (torch.backends.cuda.matmul.allow_tf32 = True or "
                        "torch.set_float32_matmul_precision('high'), NGC's containers); fp32 convolutions use TF32 "
                        "anyway, cuDNN's default")
    g.add_argument("--batch", type=arg_type("batch"), default=1, help="global batch, sequences (default 1)")
    g.add_argument("--seq", type=arg_type("seq"), default=None, metavar="TOKENS",
                   help="training, LoRA, QLoRA and scoring: tokens per sequence (default: the model's, e.g. 2048, or "
                        "the ViT patch count)")
    g.add_argument("--input-len", type=arg_type("input_len"), default=None, metavar="TOKENS",
                   help=f"inference: prompt tokens per request (default {DEFAULT_INPUT_LEN})")
    g.add_argument("--output-len", type=arg_type("output_len"), default=None, metavar="TOKENS",
                   help=f"inference: tokens generated per request (default {DEFAULT_OUTPUT_LEN})")
    g.add_argument("--optimizer", default=None,
                   help="adamw-fused (default: Hugging Face Trainer's choice) | adamw-foreach (torch.optim.AdamW's "
                        "own default: one more state-sized temporary) | adamw8bit | sgd")
    g.add_argument("--quant", default=None, metavar="FORMAT",
                   help="weight format by its real bits per weight: q4_k_m | q5_k_m | q8_0 (GGUF) | awq | gptq "
                        "(int4, group 128) | nf4 | nf4-dq (bitsandbytes) | int8 | fp8 | mxfp4, or a number of bits "
                        "per weight (e.g. 4.65); default: the model's checkpoint format (gpt-oss: mxfp4), else "
                        "--dtype")
    g.add_argument("--scoring", default="logprobs",
                   help="--mode scoring: logprobs (log-softmax of the 16-bit logits, as lm-eval; default) or "
                        "loss (fp32 cross-entropy, as perplexity scripts and Trainer.evaluate)")
    g.add_argument("--pure", action="store_true",
                   help="training: weights, grads and optimizer states in --dtype (default: fp32 weights + autocast);"
                        " LoRA/QLoRA: no autocast (default: bf16 autocast, as Trainer(bf16=True))")
    g.add_argument("--checkpointing", action="store_true", help="activation checkpointing")
    g.add_argument("--gpus", type=arg_type("gpus"), default=None,
                   help="number of GPUs (estimate; default: the product of the parallel degrees given, e.g. --tp 4 "
                        "--pp 2 is 8, else 1; recommend tries 1/2/4/8)")
    g.add_argument("--sharding", default="none",
                   help="none | zero1 | zero2 | zero3 | fsdp | hsdp (FSDP inside each node, replicas across nodes)")
    g.add_argument("--tp", type=arg_type("tp"), default=1, help="tensor-parallel degree")
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
    from gpuadvisor.workload import Workload, mode_of, resolve_model

    spec = resolve_model(model)
    inference = mode_of(args.mode) == "inference"
    if inference:
        if args.seq is not None:
            raise UserError("--seq is the sequence length of training and scoring; a prompt's length is --input-len")
        gen = args.output_len or DEFAULT_OUTPUT_LEN
        seq = args.input_len or (default_input_len(spec, gen) if spec.kind == "decoder" else 0)
    else:
        if args.input_len is not None or args.output_len is not None:
            raise UserError(f"--input-len and --output-len are the lengths of an inference request; --mode "
                            f"{args.mode} takes --seq")
        seq, gen = args.seq or 0, Workload.gen_tokens  # not generated: the Workload's own default, as the TUI
    w = make_workload(
        spec, mode=args.mode, dtype=dtype, batch=args.batch, seq_len=seq, gen_tokens=gen,
        mixed_precision=not args.pure, checkpointing=args.checkpointing,
        num_gpus=args.gpus or degrees_gpus(args), sharding=args.sharding, tensor_parallel=args.tp,
        lora_rank=args.lora_rank,
        lora_targets=args.lora_targets, train_tokens=args.tokens, quant=args.quant, scoring=args.scoring,
        offload=bool(getattr(args, "offload", False)), channels_last=args.channels_last, tf32=args.tf32,
        freeze=tuple(args.freeze), trainable=tuple(args.trainable), input_shape=tuple(args.input),
        train_samples=args.samples, **extra,
    )
    return check_workload_flags(w, args)


def degrees_gpus(args: argparse.Namespace) -> int:
    """The GPUs the parallel degrees given ask for where --gpus is not given: --tp x --pp x --cp x --replicas (a
    user who writes --tp 4 means four GPUs; '1 GPUs cannot be split into tensor-parallel groups of 4' had answered
    it). A disaggregated deployment's prefill pool is apart: these are its decode GPUs (request.py)."""
    gpus = 1
    for name in ("tp", "pp", "cp", "replicas"):
        gpus *= int(getattr(args, name, None) or 1)
    return gpus


MAX_PARAMS = 1e14  # 100T parameters: well beyond any published model; a larger count is a typo


def check_workload_flags(workload: Any, args: argparse.Namespace) -> Any:
    """Refuse what would be ignored or is surely a typo, in one line each."""
    if workload.model.num_params > MAX_PARAMS:
        raise UserError(f"{workload.model.name}: {workload.model.num_params:.3g} parameters is more than "
                        f"{MAX_PARAMS:.0e}, larger than any model; check the count (e.g. 70b, 405b)")
    if args.checkpointing and workload.mode in ("inference", "scoring"):
        raise UserError(f"--checkpointing applies to training, LoRA and QLoRA, not --mode {workload.mode} "
                        "(inference keeps no activations for a backward pass)")
    return workload


def efficiency_from(args: argparse.Namespace) -> Any:
    from gpuadvisor.estimator import efficiency_for

    return efficiency_for(args.mfu, args.bw_eff)


def engine_name(text: str) -> str:
    from gpuadvisor.core.errors import UserError
    from gpuadvisor.estimate.engines import ENGINES
    from gpuadvisor.estimate.serve.profiles import engine_specs, is_serve_engine, serve_engine

    if text in ENGINES or is_serve_engine(text):
        return text.lower() if is_serve_engine(text) else text
    if "@" in text:  # a version of a serving engine: the versions it knows, in one line
        try:
            serve_engine(text)
        except UserError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    raise argparse.ArgumentTypeError(f"unknown engine {text!r} (one of {', '.join([*ENGINES, *engine_specs()])})")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("estimate", help="memory breakdown and time estimate of a workload on one card")
    add_workload_args(p)
    p.add_argument("--engine", type=engine_name, default="graphs",
                   help="inference engine: graphs (CUDA graphs / vLLM, TensorRT-LLM, SGLang; default) or eager "
                        "(Hugging Face generate()); vllm, sglang, trtllm, llamacpp or hf run the serving simulation "
                        "(older releases as NAME@VERSION: vllm@0.5, vllm@0.6)")
    p.add_argument("--gpu", default="H100 SXM5 80GB", metavar="CARD", help="catalog card (fuzzy; default H100 SXM)")
    p.add_argument("--probe", metavar="RESULTS.json", help="use measured figures from a probe result for this card")
    p.add_argument("--offload", action="store_true",
                   help="inference on a card too small for the model: layers on the GPU and decode speed with the "
                        "rest in host memory (llama.cpp -ngl)")
    p.add_argument("--host-bw", type=positive_float, metavar="GB/s",
                   help="--offload: host memory bandwidth (default: the host probe of --probe, else "
                        "60 GB/s)")
    from gpuadvisor.cli.serve_args import add_serve_args

    add_serve_args(p)
    p.add_argument("--calibration", metavar="FILE",
                   help="a measurement saved by serve-check --save: the serving simulation fits that engine's host "
                        "and front-end figures to it (docs/serve-check.md)")
    from gpuadvisor.cli.training_cmd import add_training_args

    add_training_args(p)
    p.set_defaults(func=run)
    record_flags(p)


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


def describe_workload(workload: Any, users: int | None = None) -> str:
    m = workload.model
    asked = f"preset for {m.asked_as!r}; " if m.asked_as else ""  # the name typed resolved to another preset
    # billions to two decimals as before; a smaller model in its own unit (a 0.3M-parameter GRU read "0.00B")
    size = f"{m.num_params / 1e9:.2f}B" if m.num_params >= 1e9 else params_text(m.num_params)
    parts = [f"{m.name} ({asked}{size} params)", workload.mode]
    if workload.mode == "training":
        precision = "mixed precision (fp32 weights)" if workload.weight_dtype == "fp32" else "pure"
        parts.append(f"{workload.dtype} {precision}")
        parts.append(workload.optimizer)
    elif workload.quant_format != "none":
        from gpuadvisor.presentation import weight_format

        parts.append(weight_format(workload))
    else:
        parts.append(workload.weight_dtype)
    if workload.mode in ("lora", "qlora"):
        parts.append("bf16 autocast" if workload.mixed_precision else "no autocast")
    if workload.mode == "scoring":
        parts.append("log-softmax of the logits" if workload.scoring == "logprobs" else "fp32 cross-entropy loss")
    if workload.model.is_traced:
        parts.append(f"batch {workload.batch}" + (", channels-last" if workload.channels_last else "")
                     + (f", trainable {' '.join(workload.trainable)}" if workload.trainable else "")
                     + (f", frozen {' '.join(workload.freeze)}" if workload.freeze else ""))
    else:
        from gpuadvisor.presentation import workload_shape

        parts.append(workload_shape(workload, users))
    if workload.num_gpus > 1:
        parts.append(f"{workload.num_gpus} GPUs (TP {workload.tensor_parallel}, {workload.sharding})")
    if workload.checkpointing:
        parts.append("checkpointing")
    return ", ".join(parts)


def run(args: argparse.Namespace) -> int:
    if args.list_models:
        from gpuadvisor.cli.estimate_request import given_flags

        basics = given(args, "mode", "dtype", "batch", "gpus", "tp", "gpu")
        others = sorted((set(given_flags(args).values()) | set(basics)) - {"--json"})
        if others or args.model or getattr(args, "model_opt", None):
            raise UserError(f"--list-models lists the presets and takes no workload: drop "
                            f"{', '.join(others) or 'the model'}")
        return print_presets(args.json)
    from gpuadvisor.cli.estimate_request import calibration_from, request_from
    from gpuadvisor.estimator import estimate

    calibration = calibration_from(args)
    request = request_from(args, calibration)
    answer = estimate(request, catalog=_catalog(args))
    if calibration:  # what the fitted figures rest on, in the answer's own assumptions and notes
        from dataclasses import replace

        answer = replace(answer, assumptions={**answer.assumptions, "calibration": calibration.to_dict()},
                         notes=(*answer.notes, calibration.line(), *calibration.notes))
    if args.json:
        from gpuadvisor.cli.common import print_json

        print_json(answer.to_dict())
        return 0
    from gpuadvisor.cli import estimate_text

    estimate_text.print_answer(answer)
    if calibration:
        for line in (calibration.line(), *calibration.notes):
            print(f"  {line}")
    return 0


def _catalog(args: argparse.Namespace) -> Any:
    from gpuadvisor.cli.common import catalog_from

    return catalog_from(args)
