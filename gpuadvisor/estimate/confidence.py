"""How sure a time estimate is: 'low' where the validation says the time is less certain, with the
reasons as notes. Reasons are kept as a structured tuple beside the notes, so that callers never
parse note text to find them (the notes still carry them, worded as before, for display and JSON)."""

from __future__ import annotations

from gpuadvisor.estimate import calibration as cal
from gpuadvisor.estimate.dispatch import is_dtensor
from gpuadvisor.estimate.hardware import HardwareFigures
from gpuadvisor.strenum import StrEnum
from gpuadvisor.workload import Mode, Workload

BNB_FORMATS = ("int8", "nf4", "nf4-dq", "fp4")  # run through bitsandbytes kernels in eager PyTorch


class Confidence(StrEnum):
    NORMAL = "normal"
    LOW = "low"

    @classmethod
    def of(cls, reasons: tuple[str, ...] | list[str]) -> Confidence:
        """LOW where there is any reason to doubt the estimate."""
        return cls.LOW if reasons else cls.NORMAL


def low_confidence_reasons(workload: Workload, host_share: float, *, eager: bool = True,
                           gpu_figures: HardwareFigures | None = None) -> tuple[str, ...]:
    """Why a time is less certain (docs/validation-time.md): models under LOW_CONFIDENCE_PARAMS, steps
    whose time is mostly host dispatch (both depend on the host CPU and the framework version), MoE
    layers in eager PyTorch, bitsandbytes-quantized weights and DTensor's host time."""
    notes = []
    if eager and workload.model.num_experts > 1:
        notes.append("low confidence: eager MoE layers (routing, grouped expert products) were checked on two "
                     "Mixtral-style models only; their decode steps varied up to 2x between runs")
    if eager and workload.mode in (Mode.INFERENCE, Mode.SCORING) and getattr(workload, "quant_format",
                                                                             "none") in BNB_FORMATS:
        notes.append("low confidence: bitsandbytes int8/4-bit kernels measured up to 2x slower than the counted "
                     "bytes and FLOPs")
    dtensor = eager and is_dtensor(workload)
    if dtensor:
        notes.append(f"low confidence: tensor-parallel training through PyTorch DTensor issues each step with "
                     f"{cal.DTENSOR_HOST_FACTOR:.1f}x plain eager's host time (one-GPU mesh), so a TP step is often "
                     "host-bound and tracks the host's op time (`gpuadvisor run` measures it); checked at one point "
                     "on 2x H200 (TP=2, Llama-2-7B width: 330 ms measured, 296-445 ms estimated for 6-10 us an op)")
    if workload.model.num_params < cal.LOW_CONFIDENCE_PARAMS:
        notes.append(f"low confidence: models under {cal.LOW_CONFIDENCE_PARAMS / 1e9:g}B parameters are launch-bound "
                     "and run far below the "
                     "matmul rate; their time depends on the host CPU and framework (validated +-50%)")
    elif host_share > cal.LOW_CONFIDENCE_HOST_SHARE and not dtensor:  # the DTensor note already says host-bound
        notes.append(host_dispatch_note(gpu_figures))
    return tuple(notes)


def host_dispatch_note(gpu_figures: HardwareFigures | None) -> str:
    """The low-confidence reason of a step that is mostly host dispatch, for the analytic and the op-graph paths
    alike: measured on this host where a probe gave its dispatch time, else how to measure it."""
    if gpu_figures is not None and gpu_figures.host_measured:
        return ("low confidence: this step is mostly host-side dispatch (eager PyTorch), measured on this host by "
                "the dispatch probe; on the H100 hosts measured it drifted up to 35% within one run")
    return ("low confidence: this step is mostly host-side dispatch (eager PyTorch), which depends on the host CPU "
            "(the H100 hosts measured here took 7-22 us an op; `gpuadvisor run` measures yours and `--probe` "
            "prices it)")
