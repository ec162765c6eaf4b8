"""What a user asks the estimator: one typed request (a workload, the hardware, and one question).

Every interface (CLI, TUI, report, Python API) builds an `EstimateRequest` and hands it to
`gpuadvisor.estimator.estimate`; what a request may hold is checked here, in the core, so that the
interfaces refuse the same things with the same words. A field that does not apply to the question
asked is refused (`inapplicable`), never ignored.

The three questions:
* `Step`: memory and time of the workload in its own layout (`Workload.num_gpus`, `tensor_parallel`,
  `sharding`); for a decoder in inference, the closed-form serving figures of `users` at once.
* `ServingLoad`: a request stream simulated under an engine's continuous-batching scheduler (percentiles,
  goodput under SLOs): Poisson arrivals at a rate, or `concurrency` clients that start together and each send
  the next request when the last one ends (vLLM's `benchmark_serving --max-concurrency`), or an offline batch.
  `users` (a Step) and `concurrency` (a ServingLoad) are two loads, not two spellings of one: users in steady
  state arrive spread out, so a new prompt rarely queues behind others; benchmark clients arrive together.
* `TrainingLayout`: a training job over GPUs in a parallel layout (TP/PP/CP/EP, micro-batches, sharding,
  recomputation), as given or searched.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

from gpuadvisor.core import limits
from gpuadvisor.core.errors import UserError
from gpuadvisor.core.limits import in_range
from gpuadvisor.estimate.compute_result import StepEngineName
from gpuadvisor.estimate.serve.profiles import engine_names, engine_specs, is_serve_engine, serve_engine
from gpuadvisor.modelref import Source, parse_ref
from gpuadvisor.strenum import StrEnum
from gpuadvisor.workload import Mode, Workload

DEFAULT_CARD = "H100 SXM5 80GB"
# One default prompt and answer length for every serving question (estimate, recommend, the simulation, the TUI):
# vLLM's `benchmark_serving --dataset-name random` defaults to 1,024 input tokens; 256 output tokens is a chat turn.
DEFAULT_INPUT_LEN = 1024
DEFAULT_OUTPUT_LEN = 256


def default_input_len(spec: Any, output_len: int = DEFAULT_OUTPUT_LEN) -> int:
    """A served decoder's default prompt, shortened where the model's learned positions leave less room (GPT-2:
    1,024 in all); one rule for every interface."""
    if spec.max_positions and spec.max_positions - output_len < DEFAULT_INPUT_LEN:
        return max(1, spec.max_positions - output_len)
    return DEFAULT_INPUT_LEN


class Question(StrEnum):
    """Which model answers: a step in the workload's layout, a simulated request stream, a training layout."""

    STEP = "step"
    SERVING = "serving"
    TRAINING = "training"


@dataclass(frozen=True)
class HardwareChoice:
    """The card (a catalog name or alias, matched fuzzily) and where its figures come from."""

    card: str = DEFAULT_CARD
    probe: str | None = None  # a probe result JSON: its measured figures replace the card's datasheet figures
    mfu: float | None = None  # large-matmul efficiency against the datasheet peak (default: the calibrated one)
    bandwidth_efficiency: float | None = None  # streaming efficiency against the datasheet bandwidth


@dataclass(frozen=True)
class Step:
    """Memory and time of the workload in its own layout."""

    engine: str = "graphs"  # graphs (CUDA graphs: vLLM, TensorRT-LLM, SGLang) or eager (Hugging Face generate())
    users: int | None = None  # a decoder in inference: this many users at once (the batch in flight)
    offload: bool = False  # inference on a card too small: layers in host memory (llama.cpp -ngl)
    host_bandwidth_gbs: float | None = None  # with offload: the host's memory bandwidth


@dataclass(frozen=True)
class ServingLoad:
    """A request stream under an engine's scheduler. Lengths are the workload's (`seq_len` prompt tokens,
    `gen_tokens` output tokens) unless `lengths` names a distribution."""

    engine: str = "vllm"
    rate: float | None = None  # requests/s, Poisson arrivals
    concurrency: int | None = None  # closed loop: N clients that start together, each sending its next request
    # when the last one ends (benchmark_serving --max-concurrency)
    lengths: str | None = None  # fixed (default), sharegpt, uniform:A-B, or a file of 'INPUT OUTPUT' lines
    # whether the prompt and output lengths were given (--input-len, --output-len): a ShareGPT-shaped draw takes
    # them as its means, a range or a file that draws one itself refuses it (lengths.parse_lengths)
    lengths_given: tuple[bool, bool] = (False, False)
    requests: int = 1000
    seed: int = 0
    weights: str | None = None  # weight format (default: the workload's quant, else its dtype)
    kv_dtype: str | None = None
    pipeline_parallel: int = 1
    replicas: int = 1
    dp_attention: bool = False  # attention data-parallel over the TP ranks (Layout.dp_attention)
    p99_ttft_s: float | None = None
    p99_tpot_s: float | None = None
    # engine-profile figures replaced for this estimate, e.g. fitted to a measured endpoint (servecheck/calibrate.py,
    # `estimate --calibration FILE`): (field of ServeEngine, value) pairs
    engine_overrides: tuple[tuple[str, float], ...] = ()
    speculative: str | None = None  # draft | eagle | mtp (estimate/serve/speculative.py)
    spec_tokens: int | None = None  # draft tokens k per verify step (default: the method's preset)
    spec_accept: float | None = None  # mean tokens a verify step keeps, 1..k+1 (default: the method's preset)
    spec_topk: int | None = None  # an EAGLE draft tree: candidates a draft step proposes per sequence
    spec_verify: int | None = None  # an EAGLE draft tree: tokens a sequence verifies per step
    draft_model: str | None = None  # the drafting model of --speculative draft
    # disaggregated prefill/decode (estimate/serve/disagg.py): a prefill pool of `prefill_gpus` GPUs in instances
    # of `prefill_tp` (default: the workload's --tp) on `prefill_card` (default: the request's card); the decode
    # pool is the workload's layout (--tp x --replicas on --gpu); `kv_link` nvlink | pcie | network | GB/s per GPU
    prefill_gpus: int | None = None
    prefill_tp: int | None = None
    prefill_card: str | None = None
    kv_link: str | None = None
    # the load drives the engine in-process, as an offline benchmark does (trtllm-bench, vLLM's LLM class): no HTTP
    # front-end, so no time per request before the scheduler and no streaming of tokens to clients
    in_process: bool = False

    @property
    def disaggregated(self) -> bool:
        return self.prefill_gpus is not None


@dataclass(frozen=True)
class TrainingLayout:
    """A training job over the workload's GPUs in a parallel layout; `search` takes the fastest that fits."""

    micro_batch: int | None = None
    pipeline_parallel: int = 1
    virtual_stages: int = 1
    context_parallel: int = 1
    expert_parallel: int = 1
    framework: str | None = None
    search: bool = False
    recompute: str | None = None  # none | selective | full
    gpus_per_node: int | None = None
    net_gbs_per_gpu: float | None = None
    samples_seen: float = 0.0
    restart_overhead: float = 0.0


    def default_global_batch(self, gpus: int, tensor_parallel: int) -> int:
        """The global batch where none is given (a batch of 1 cannot be split over data-parallel GPUs): four
        sequences per GPU when the layout is searched, else one micro-batch per data-parallel rank (times four
        per pipeline stage, to fill the pipeline)."""
        if self.search:
            return 4 * gpus
        dp = max(1, gpus // (tensor_parallel * self.pipeline_parallel * self.context_parallel))
        pp = self.pipeline_parallel
        return dp * (self.micro_batch or 1) * (4 * pp if pp > 1 else 1)


QuestionSpec = Step | ServingLoad | TrainingLayout


@dataclass(frozen=True)
class EstimateRequest:
    """One question about one workload on one kind of hardware: the estimator's only input."""

    workload: Workload
    hardware: HardwareChoice = field(default_factory=HardwareChoice)
    question: QuestionSpec = field(default_factory=Step)

    @property
    def kind(self) -> Question:
        return (Question.SERVING if isinstance(self.question, ServingLoad) else
                Question.TRAINING if isinstance(self.question, TrainingLayout) else Question.STEP)

    def validate(self) -> EstimateRequest:
        """Refuse what the estimator cannot answer, in one line each (UserError)."""
        w, q = self.workload, self.question
        in_range("--gpus", w.num_gpus, 1, limits.MAX_GPUS, "GPUs")
        in_range("--batch", w.batch, 1, limits.MAX_BATCH, "sequences")
        in_range("--seq" if w.mode != Mode.INFERENCE else "--input-len", w.seq_len, 0, limits.MAX_TOKENS, "tokens")
        in_range("--output-len", w.gen_tokens, 0, limits.MAX_TOKENS, "tokens")
        if isinstance(q, Step):
            in_range("--users", q.users, 1, limits.MAX_USERS, "users")
            if q.engine not in STEP_ENGINES:
                raise UserError(f"--engine {q.engine}: the step estimate takes one of {', '.join(STEP_ENGINES)}; "
                                f"{', '.join(SERVE_ENGINES)} simulate a request stream (with --rate or "
                                "--concurrency)")
        elif isinstance(q, ServingLoad):
            if not is_serve_engine(q.engine):
                serve_engine(q.engine)  # an unknown version of a known engine: its own line (the known versions)
                raise UserError(f"--engine {q.engine}: the serving simulation takes one of {', '.join(engine_specs())}")
            if q.rate is not None and q.concurrency is not None:
                raise UserError("give --rate or --concurrency, not both")
            in_range("--rate", q.rate, limits.MIN_RATE, limits.MAX_RATE, "requests/s")
            in_range("--concurrency", q.concurrency, 1, limits.MAX_USERS, "clients")
            in_range("--requests", q.requests, 1, limits.MAX_REQUESTS, "requests")
            in_range("--seed", q.seed, 0, 2**32 - 1)
            in_range("--pp", q.pipeline_parallel, 1, limits.MAX_GPUS, "stages")
            in_range("--replicas", q.replicas, 1, limits.MAX_GPUS, "replicas")
            _check_engine_overrides(q.engine_overrides)
            if q.speculative is None:
                given = [f for f, v in (("--spec-tokens", q.spec_tokens), ("--spec-accept", q.spec_accept),
                                        ("--spec-topk", q.spec_topk), ("--spec-verify", q.spec_verify),
                                        ("--draft-model", q.draft_model)) if v is not None]
                if given:
                    raise UserError(f"{', '.join(given)}: speculative decoding needs --speculative draft|eagle|mtp")
            if q.p99_tpot_s is not None and w.gen_tokens <= 1 and q.lengths in (None, "fixed"):
                raise UserError("--p99-tpot: an answer of one token (--output-len 1) has no time per output token; "
                                "give --p99-ttft")
            if w.mode != Mode.INFERENCE or w.model.kind != "decoder" or not w.model.is_transformer:
                raise UserError(f"{w.model.name} ({w.mode}): the serving simulation needs a decoder transformer "
                                "in --mode inference")
            decode_gpus = gpus = w.tensor_parallel * q.pipeline_parallel * q.replicas
            if q.disaggregated:
                gpus += _check_disaggregated(q, w.tensor_parallel)
            if w.num_gpus not in (1, gpus, decode_gpus):  # all of them, or the decode pool's (the degrees given)
                what = "--tp x --pp x --replicas" + (" + --prefill-gpus" if q.disaggregated else "")
                raise UserError(f"the serving simulation runs on {what} = {gpus} GPUs; --gpus "
                                f"{w.num_gpus} does not match (drop --gpus, or set the degrees)")
        elif isinstance(q, TrainingLayout):
            if not w.is_training:
                raise UserError(f"a training layout (--micro-batch, --pp, --cp, --ep, --vp, --framework, --layout, "
                                f"--recompute) is for training, lora and qlora; --mode is {w.mode}")
            if not w.model.is_transformer:
                raise UserError(f"{w.model.name}: parallel layouts are costed for transformer shapes only")
            if not w.mixed_precision:
                raise UserError("--pure is not modelled by parallel layouts (bf16 compute, fp32 master weights and "
                                "Adam)")
            if w.optimizer not in ("adamw", "adam", "adamw-fused", "adamw-foreach"):
                raise UserError(f"--optimizer {w.optimizer}: parallel layouts model AdamW only")
        return self


def _check_disaggregated(q: ServingLoad, decode_tp: int) -> int:
    """A disaggregated deployment's prefill pool, in one line each; its GPU count."""
    from gpuadvisor.estimate.serve.profiles import serve_engine as profile

    assert q.prefill_gpus is not None
    in_range("--prefill-gpus", q.prefill_gpus, 1, limits.MAX_GPUS, "GPUs")
    tp = q.prefill_tp or decode_tp
    in_range("--prefill-tp", tp, 1, limits.MAX_GPUS, "GPUs")
    if q.prefill_gpus % tp:
        raise UserError(f"--prefill-gpus {q.prefill_gpus} is not a whole number of prefill instances of "
                        f"--prefill-tp {tp} GPUs")
    if q.pipeline_parallel > 1:
        raise UserError("--pp with --prefill-gpus: pipeline stages in a disaggregated deployment are not modelled")
    if q.speculative is not None:
        raise UserError("--speculative with --prefill-gpus: speculative decoding in a disaggregated deployment is "
                        "not modelled")
    if not profile(q.engine).disaggregation:
        raise UserError(f"--engine {q.engine} does not run disaggregated prefill/decode (vllm, sglang and trtllm "
                        "do)")
    return q.prefill_gpus


def _check_engine_overrides(overrides: tuple[tuple[str, float], ...]) -> None:
    """Only host and front-end times (seconds, >= 0) may be replaced: the scheduler knobs are the engine's own."""
    from gpuadvisor.estimate.serve.profiles import ServeEngine

    known = {f.name for f in fields(ServeEngine)}
    for name, value in overrides:
        if name not in known or not name.endswith(("_s_per_iter", "_s_per_request")):
            raise UserError(f"engine override {name!r}: only an engine's host and front-end times "
                            "(*_s_per_iter, *_s_per_request) can be replaced")
        in_range(name, value, 0.0, 10.0, "s")


#: the engines of each question, from their one registry each: the step engines (estimate/engines.py: how a step's
#: kernels are launched) and the serving engines (estimate/serve/engines.json: a scheduler on top of one of those)
STEP_ENGINES = (StepEngineName.GRAPHS.value, StepEngineName.EAGER.value)  # the default first
SERVE_ENGINES = engine_names()

# --- which request fields apply to which question: one table, read by every interface ----------------------

_TRAINING_MODES = (Mode.TRAINING, Mode.LORA, Mode.QLORA)


def _training(r: EstimateRequest) -> bool:
    return r.workload.mode in _TRAINING_MODES


def _adapter(r: EstimateRequest) -> bool:
    return r.workload.mode in (Mode.LORA, Mode.QLORA)


def _inference_decoder(r: EstimateRequest) -> bool:
    return r.workload.mode == Mode.INFERENCE and r.workload.model.kind == "decoder"


def _traced(r: EstimateRequest) -> bool:
    return bool(r.workload.model.is_traced)


def _reads_tokens(r: EstimateRequest) -> bool:
    """A sequence length shapes the model's input: a language model, or a traced Hugging Face model (the only
    traced source whose builder reads one; torchvision, timm, torchaudio and file models take --input)."""
    if not _traced(r):
        return True
    ref = parse_ref(r.workload.model.trace or "")
    return ref is not None and ref.source is Source.HF


def _kind(*kinds: Question) -> Callable[[EstimateRequest], bool]:
    return lambda r: r.kind in kinds


#: field -> (applies to the request?, where it applies, in the user's words)
APPLIES: dict[str, tuple[Callable[[EstimateRequest], bool], str]] = {
    "seq_len": (lambda r: r.workload.mode != Mode.INFERENCE and _reads_tokens(r),
                "training, LoRA, QLoRA and scoring of a model that reads tokens (inference: --input-len; "
                "torchvision, timm, torchaudio and file models: --input)"),
    "input_len": (lambda r: r.workload.mode == Mode.INFERENCE and _reads_tokens(r),
                  "--mode inference of a model that reads tokens (training and scoring: --seq; torchvision, timm, "
                  "torchaudio and file models: --input)"),
    "output_len": (_inference_decoder, "a decoder in --mode inference"),
    "optimizer": (_training, "training, LoRA and QLoRA"),
    "pure": (_training, "training, LoRA and QLoRA"),
    "checkpointing": (_training, "training, LoRA and QLoRA"),
    "tokens": (lambda r: _training(r) and not _traced(r), "training a language model (traced models: --samples)"),
    "samples": (lambda r: _training(r) and _traced(r), "training a traced model (language models: --tokens)"),
    "sharding": (lambda r: _training(r) and r.workload.num_gpus > 1, "training, LoRA and QLoRA on several GPUs "
                                                                      "(--gpus)"),
    "lora_rank": (_adapter, "--mode lora and qlora"),
    "lora_targets": (_adapter, "--mode lora and qlora"),
    "scoring": (lambda r: r.workload.mode == Mode.SCORING, "--mode scoring"),
    "quant": (lambda r: r.workload.mode in (Mode.INFERENCE, Mode.SCORING, Mode.QLORA) and not _traced(r),
              "inference, scoring and QLoRA of a language model"),
    "channels_last": (_traced, "traced models (torchvision:, timm:, hf:, file.py:build)"),
    "tf32": (lambda r: r.workload.compute_dtype == "fp32", "--dtype fp32 (TF32 matmuls)"),
    "freeze": (lambda r: _traced(r) and _training(r), "training a traced model"),
    "trainable": (lambda r: _traced(r) and _training(r), "training a traced model"),
    "input": (_traced, "traced models"),
    "engine": (lambda r: r.workload.mode in (Mode.INFERENCE, Mode.SCORING), "inference and scoring"),
    "users": (lambda r: _inference_decoder(r) and r.kind == Question.STEP,
              "the steady-state serving figures of a decoder (what recommend prices); a simulated stream takes "
              "--rate or --concurrency"),
    "concurrency": (_kind(Question.SERVING), "the serving simulation (benchmark clients that start together)"),
    "offload": (lambda r: r.kind == Question.STEP and _inference_decoder(r), "inference of a decoder"),
    "host_bandwidth_gbs": (lambda r: isinstance(r.question, Step) and r.question.offload, "--offload"),
    "probe": (_kind(Question.STEP, Question.TRAINING), "step and training-layout estimates (the serving "
                                                     "simulation prices from the datasheet)"),
    "mfu": (_kind(Question.STEP, Question.TRAINING), "step and training-layout estimates"),
    "bandwidth_efficiency": (_kind(Question.STEP, Question.TRAINING), "step and training-layout estimates"),
    **{k: (_kind(Question.SERVING), "the serving simulation (--rate, or --engine vllm|sglang|trtllm|llamacpp|hf)")
       for k in ("rate", "lengths", "requests", "seed", "weights", "kv_dtype", "replicas", "dp_attention", "p99_ttft_s",
                 "p99_tpot_s", "engine_overrides", "speculative", "spec_tokens", "spec_accept", "spec_topk",
                 "spec_verify", "draft_model", "prefill_gpus", "in_process")},
    **{k: (lambda r: isinstance(r.question, ServingLoad) and r.question.disaggregated,
           "a disaggregated deployment (--prefill-gpus N)") for k in ("prefill_tp", "prefill_card", "kv_link")},
    "pipeline_parallel": (_kind(Question.SERVING, Question.TRAINING), "the serving simulation and training "
                                                                    "layouts"),
    **{k: (_kind(Question.TRAINING), "training layouts (training, lora, qlora)")
       for k in ("micro_batch", "virtual_stages", "context_parallel", "expert_parallel", "framework", "search",
                 "recompute", "gpus_per_node", "net_gbs_per_gpu", "samples_seen", "restart_overhead")},
}


def inapplicable(request: EstimateRequest, given: dict[str, Any]) -> list[tuple[str, str]]:
    """The fields among `given` (field name -> the name the user typed) that do not apply to `request`:
    (the name the user typed, where it applies), in the order given."""
    out = []
    for name, spelled in given.items():
        rule = APPLIES.get(name)
        if rule is not None and not rule[0](request):
            out.append((spelled, rule[1]))
    return out


def refuse_inapplicable(request: EstimateRequest, given: dict[str, Any]) -> None:
    """One line naming every given field that the request does not use."""
    bad = inapplicable(request, given)
    if bad:
        what = "; ".join(f"{name} applies to {where}" for name, where in bad)
        raise UserError(f"not used by this {request.kind} estimate of {request.workload.model.name} "
                        f"({request.workload.mode}): {what}")


__all__ = [
    "APPLIES",
    "DEFAULT_CARD",
    "DEFAULT_INPUT_LEN",
    "DEFAULT_OUTPUT_LEN",
    "SERVE_ENGINES",
    "STEP_ENGINES",
    "EstimateRequest",
    "HardwareChoice",
    "Question",
    "QuestionSpec",
    "ServingLoad",
    "Step",
    "TrainingLayout",
    "default_input_len",
    "in_range",
    "inapplicable",
    "refuse_inapplicable",
]
