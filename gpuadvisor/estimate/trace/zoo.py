"""Model specs that name a PyTorch model, and how to build one with an example batch.

One builder serves the tracer (on the CPU under fake tensors) and the GPU measurements of the
validation (lab/measure_models.py), so both run the same module on the same inputs:

    torchvision:resnet50    timm:convnext_tiny    torchaudio:wav2vec2_base
    hf:DIR or hf:FILE.json  (transformers or diffusers, from the config alone: nothing downloaded)
    path/to/file.py:build   (calls build(); build_batch(batch) gives the batch if the file has one)

No weights are loaded: initialisation runs on whatever device is current (fake tensors when
tracing). Bad specs raise UserError naming what is wrong.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate.trace.torchlib import import_library, import_torch
from gpuadvisor.modelref import DEFAULT_AUDIO_SAMPLES, DEFAULT_TEXT_SEQ, ModelRef, Source, Unit, parse_ref  # noqa: F401 (re-exported)


@dataclass
class BuiltModel:
    """A module with what it takes to run it: `make_batch(batch)` gives (args, kwargs); `train_batch(batch)` the
    batch of a training step where it differs (a detection model takes its targets then); `loss_fn(out)` the
    loss a training loop reduces the output with where generic_loss is not it."""

    ref: ModelRef
    module: Any
    make_batch: Callable[[int], tuple[tuple[Any, ...], dict[str, Any]]]
    unit: Unit = Unit.SAMPLES
    tokens_per_sample: int = 1  # for Unit.TOKENS: sequence length
    input_desc: str = ""
    notes: list[str] = field(default_factory=list)
    train_batch: Callable[[int], tuple[tuple[Any, ...], dict[str, Any]]] | None = None
    loss_fn: Callable[[Any], Any] | None = None

    def batch_for(self, batch: int, training: bool) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return self.train_batch(batch) if training and self.train_batch is not None else self.make_batch(batch)

    def loss(self, out: Any) -> Any:
        return self.loss_fn(out) if self.loss_fn is not None else generic_loss(out)


def build(ref: ModelRef, *, seq: int = 0, input_shape: tuple[int, ...] | None = None,
          device: Any = None) -> BuiltModel:
    """Build the model of `ref` on `device` (the current default device when None)."""
    torch = import_torch()
    builder = _BUILDERS[ref.source]
    with torch.device(device) if device is not None else contextlib.nullcontext():
        return builder(ref, seq, input_shape, device)


def _tensor_maker(device: Any) -> Callable[..., Any]:
    """rand/randint of a shape on `device`: never zeros (they run faster than real data)."""
    torch = import_torch()

    def make(shape: tuple[int, ...], *, high: int = 0, dtype: Any = None) -> Any:
        if high:
            return torch.randint(0, high, shape, device=device)
        return torch.randn(shape, device=device, dtype=dtype)

    return make


def _image_model(ref: ModelRef, module: Any, size: tuple[int, ...], device: Any) -> BuiltModel:
    make = _tensor_maker(device)
    return BuiltModel(ref, module, lambda b: ((make((b, *size)),), {}), unit=Unit.IMAGES,
                      input_desc="x".join(map(str, size)))


def _no_weights(tv: Any, name: str) -> dict[str, Any]:
    """No weights of any kind: `weights=None`, and `weights_backbone=None` for the segmentation and detection
    builders, whose backbone otherwise downloads its ImageNet weights (a URL error offline)."""
    import inspect

    kw: dict[str, Any] = {"weights": None}
    try:
        if "weights_backbone" in inspect.signature(tv.models.get_model_builder(name)).parameters:
            kw["weights_backbone"] = None
    except ValueError:  # an unknown name: get_model says so, with the close names
        pass
    return kw


def _build_torchvision(ref: ModelRef, seq: int, shape: tuple[int, ...] | None, device: Any) -> BuiltModel:
    tv = import_library("torchvision", f"model {ref.text}")
    try:
        module = tv.models.get_model(ref.name, **_no_weights(tv, ref.name))
    except ValueError:
        names = tv.models.list_models()
        close = [n for n in names if ref.name.lower().replace("-", "_") in n][:4]
        hint = f"; did you mean {', '.join(close)}?" if close else " (see torchvision.models.list_models())"
        raise UserError(f"unknown torchvision model {ref.name!r}{hint}") from None
    family = torchvision_family(tv, ref.name)
    if family is TorchvisionFamily.VIDEO:
        return _image_model(ref, module, shape or _video_input(tv, ref.name), device)
    if family is TorchvisionFamily.OPTICAL_FLOW:
        return _optical_flow_model(ref, module, shape or FLOW_FRAME, device)
    if family is TorchvisionFamily.DETECTION:
        return _detection_model(ref, module, shape or DETECTION_IMAGE, device)
    if family is TorchvisionFamily.SEGMENTATION:
        return _image_model(ref, module, shape or SEGMENTATION_IMAGE, device)
    if "inception" in ref.name:
        module.aux_logits = False
        module.AuxLogits = None
    built = _image_model(ref, module, shape or ((3, 299, 299) if "inception" in ref.name else (3, 224, 224)), device)
    if family is TorchvisionFamily.QUANTIZATION:
        built.notes.append(f"{ref.name}: torchvision's quantized models run their int8 kernels on the CPU only "
                           "(fbgemm, qnnpack); built unquantized, the float model is estimated in the dtype asked")
    return built


class TorchvisionFamily(str, Enum):
    """torchvision.models' sub-packages: each takes its own kind of input."""

    CLASSIFICATION = "classification"
    QUANTIZATION = "quantization"
    VIDEO = "video"
    OPTICAL_FLOW = "optical_flow"
    DETECTION = "detection"
    SEGMENTATION = "segmentation"


#: default inputs per family, per sample: a 16-frame clip (video: at the crop size the weights were trained at,
#: read from their transforms), two frames at the FlyingChairs training crop RAFT was trained on (optical
#: flow), a COCO-sized image that the detection model's own transform resizes (to 800 px on its short side for
#: the R-CNNs, 300 for SSD), the 520 px the segmentation weights were evaluated at
VIDEO_FRAMES = 16
FLOW_FRAME = (3, 368, 496)
DETECTION_IMAGE = (3, 480, 640)
SEGMENTATION_IMAGE = (3, 520, 520)
DETECTION_OBJECTS = 8  # boxes per image in a training step's targets (COCO averages about 7)


def torchvision_family(tv: Any, name: str) -> TorchvisionFamily:
    for family in (TorchvisionFamily.QUANTIZATION, TorchvisionFamily.VIDEO, TorchvisionFamily.OPTICAL_FLOW,
                   TorchvisionFamily.DETECTION, TorchvisionFamily.SEGMENTATION):
        if name in tv.models.list_models(module=getattr(tv.models, family.value)):
            return family
    return TorchvisionFamily.CLASSIFICATION


def _video_input(tv: Any, name: str) -> tuple[int, ...]:
    """(3, frames, crop, crop): the crop size of the model's weights' transforms (112 for the 3-D ResNets, 224
    for S3D, MViT and Swin3D; read from the weights enum, nothing downloaded)."""
    crop = 112
    with contextlib.suppress(Exception):  # metadata only: any layout it may take in another version
        size = tv.models.get_model_weights(name).DEFAULT.transforms.keywords["crop_size"]
        crop = int(size[0] if isinstance(size, (tuple, list)) else size)
    return (3, VIDEO_FRAMES, crop, crop)


def _optical_flow_model(ref: ModelRef, module: Any, size: tuple[int, ...], device: Any) -> BuiltModel:
    """RAFT: two frames in, a flow field per refinement iteration out; trained on all of them (the sequence
    loss sums every iteration's error, so the backward runs through every iteration)."""
    make = _tensor_maker(device)
    torch = import_torch()

    def sequence_loss(out: Any) -> Any:
        flows = out if isinstance(out, (list, tuple)) else [out]
        return torch.stack([f.float().abs().mean() for f in flows]).sum()
    return BuiltModel(ref, module, lambda b: ((make((b, *size)), make((b, *size))), {}), unit=Unit.SAMPLES,
                      input_desc=f"two frames of {'x'.join(map(str, size))}", loss_fn=sequence_loss)


def _detection_model(ref: ModelRef, module: Any, size: tuple[int, ...], device: Any) -> BuiltModel:
    """A list of images in (the model resizes each with its own transform); in training their targets too,
    DETECTION_OBJECTS boxes per image (masks and keypoints where the model predicts them); the loss is the sum
    of the losses the model returns."""
    torch = import_torch()
    make = _tensor_maker(device)
    if len(size) != 3:
        raise UserError(f"{ref.text}: a detection model takes images: give --input as CxHxW, e.g. 3x480x640")
    _, h, w = size
    heads = getattr(module, "roi_heads", None)
    masks = heads is not None and getattr(heads, "mask_predictor", None) is not None
    keypoints = heads is not None and getattr(heads, "keypoint_predictor", None) is not None

    def images(b: int) -> list[Any]:
        return [make(size) for _ in range(b)]

    def target() -> dict[str, Any]:
        n = DETECTION_OBJECTS
        corner = torch.rand((n, 2), device=device) * torch.tensor([w / 2, h / 2], device=device)
        extent = 1 + torch.rand((n, 2), device=device) * torch.tensor([w / 2 - 1, h / 2 - 1], device=device)
        t = {"boxes": torch.cat([corner, corner + extent], dim=1), "labels": make((n,), high=90) + 1}
        if masks:
            t["masks"] = torch.randint(0, 2, (n, h, w), dtype=torch.uint8, device=device)
        if keypoints:
            t["keypoints"] = torch.cat([corner.unsqueeze(1) + torch.rand((n, 17, 2), device=device)
                                        * extent.unsqueeze(1), torch.ones((n, 17, 1), device=device)], dim=2)
        return t

    def losses(out: Any) -> Any:
        if isinstance(out, dict) and out and all(isinstance(v, torch.Tensor) and v.dim() == 0 for v in out.values()):
            return sum(out.values())
        return generic_loss(out)
    t = module.transform
    resized = f"resized by the model to {min(t.min_size)} px on the short side, at most {t.max_size}" \
        if hasattr(t, "min_size") else "resized by the model"
    return BuiltModel(ref, module, lambda b: ((images(b),), {}), unit=Unit.IMAGES,
                      input_desc=f"{'x'.join(map(str, size))} images ({resized})",
                      train_batch=lambda b: ((images(b), [target() for _ in range(b)]), {}), loss_fn=losses)


def _build_timm(ref: ModelRef, seq: int, shape: tuple[int, ...] | None, device: Any) -> BuiltModel:
    timm = import_library("timm", f"model {ref.text}")
    try:
        module = timm.create_model(ref.name, pretrained=False)
    except RuntimeError as e:
        if "Unknown model" not in str(e):
            raise
        close = timm.list_models(f"*{ref.name}*")[:4]
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise UserError(f"unknown timm model {ref.name!r}{hint}") from None
    size = tuple(module.pretrained_cfg.get("input_size") or (3, 224, 224))
    return _image_model(ref, module, shape or size, device)


def _build_torchaudio(ref: ModelRef, seq: int, shape: tuple[int, ...] | None, device: Any) -> BuiltModel:
    ta = import_library("torchaudio", f"model {ref.text}")
    fn = getattr(ta.models, ref.name, None)
    if not callable(fn):
        raise UserError(f"unknown torchaudio model {ref.name!r} (a function of torchaudio.models, "
                        "e.g. wav2vec2_base, hubert_base, conformer)")
    module = fn()
    size = shape or (DEFAULT_AUDIO_SAMPLES,)
    make = _tensor_maker(device)
    return BuiltModel(ref, module, lambda b: ((make((b, *size)),), {}), unit=Unit.SAMPLES,
                      input_desc="x".join(map(str, size)))


def build_module(ref: ModelRef) -> Any:
    """The module of `ref` alone, with no example batch (enough for its parameter count)."""
    if ref.source is Source.FILE:
        return _load_file(ref)[1]
    return build(ref).module


def _load_file(ref: ModelRef) -> tuple[Any, Any]:
    """(the file's Python module, the nn.Module its function returns); one line for each way that fails."""
    path = Path(ref.name)
    if not path.is_file():
        raise UserError(f"model file {ref.name} not found")
    spec = importlib.util.spec_from_file_location(f"gpuadvisor_user_model_{abs(hash(str(path)))}", path)
    if spec is None or spec.loader is None:
        raise UserError(f"model file {ref.name} cannot be loaded as Python")
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
    except Exception as e:  # the user's code: report it in one line
        raise UserError(f"model file {ref.name} failed to load: {error_line(e)}") from None
    fn = getattr(mod, ref.func, None)
    if not callable(fn):
        raise UserError(f"model file {ref.name} has no function {ref.func}()")
    try:
        module = fn()
    except Exception as e:
        raise UserError(f"{ref.text}: {ref.func}() failed: {error_line(e)}") from None
    torch = import_torch()
    if not isinstance(module, torch.nn.Module):
        raise UserError(f"{ref.text}: {ref.func}() returned {type(module).__name__}, not a torch.nn.Module")
    return mod, module


def _build_file(ref: ModelRef, seq: int, shape: tuple[int, ...] | None, device: Any) -> BuiltModel:
    mod, module = _load_file(ref)
    batch_fn = getattr(mod, "build_batch", None)
    make = _tensor_maker(device)
    if callable(batch_fn) and shape is None:
        def make_batch(b: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
            out = batch_fn(b)
            if isinstance(out, dict):
                return (), out
            return (out if isinstance(out, tuple) else (out,)), {}
        return BuiltModel(ref, module, make_batch, input_desc="build_batch()")
    if shape is None:
        raise UserError(f"{ref.text}: give the per-sample input shape with --input (e.g. --input 3x224x224), "
                        "or define build_batch(batch) in the file")
    return BuiltModel(ref, module, lambda b: ((make((b, *shape)),), {}), input_desc="x".join(map(str, shape)))


def error_line(e: BaseException) -> str:
    """'ValueError: the first line of its message' (a message can run over many lines)."""
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0][:300]}" if text else type(e).__name__


def _load_config(name: str) -> tuple[dict[str, Any], Path]:
    p = Path(name)
    path = p / "config.json" if p.is_dir() else p
    if not path.is_file():
        from gpuadvisor.core.paths import shipped_config

        shipped = shipped_config(name)
        if shipped is None:
            raise UserError(f"hf:{name}: no config.json there (give a directory or file with a config.json)")
        path = shipped
    try:
        cfg = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise UserError(f"hf:{name}: {path} is not readable JSON: {e}") from None
    if not isinstance(cfg, dict):
        raise UserError(f"hf:{name}: {path} is not a JSON object")
    cfg.pop("_source", None)  # shipped configs say where they were copied from
    return cfg, path


def _build_hf(ref: ModelRef, seq: int, shape: tuple[int, ...] | None, device: Any) -> BuiltModel:
    cfg, _path = _load_config(ref.name)
    if "_class_name" in cfg:
        return _build_diffusers(ref, cfg, shape, device)
    tr = import_library("transformers", f"model {ref.text}")
    model_type = cfg.get("model_type")
    if not model_type:
        raise UserError(f"hf:{ref.name}: config has no model_type (is it a transformers config.json?)")
    try:
        config = tr.AutoConfig.for_model(**cfg)
    except (ValueError, KeyError) as e:
        raise UserError(f"hf:{ref.name}: transformers cannot read this config: {e}") from None
    arch = (cfg.get("architectures") or [None])[0]
    cls = getattr(tr, arch, None) if arch else None
    if cls is None:
        cls = tr.AutoModel
        module = cls.from_config(config)
    else:
        module = cls._from_config(config)
    return _hf_inputs(ref, module, config, arch or "", seq, shape, device)


def _hf_inputs(ref: ModelRef, module: Any, config: Any, arch: str, seq: int,
               shape: tuple[int, ...] | None, device: Any) -> BuiltModel:
    """Example inputs by what the model reads: audio frames, spectrograms, pixels or tokens."""
    make = _tensor_maker(device)
    mt = config.model_type
    vocab = int(getattr(config, "vocab_size", 0) or 0)
    labels = arch.endswith(("ForMaskedLM", "ForCausalLM", "ForConditionalGeneration", "LMHeadModel"))
    if mt == "whisper":
        frames = shape or (config.num_mel_bins, 2 * config.max_source_positions)
        dec = seq or 128

        def whisper(b: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
            kw = {"input_features": make((b, *frames))}
            kw["labels" if labels else "decoder_input_ids"] = make((b, dec), high=vocab)
            return (), kw
        return BuiltModel(ref, module, whisper, unit=Unit.SAMPLES, input_desc=f"{frames} mel, {dec} tokens")
    if mt in ("wav2vec2", "hubert", "wavlm", "data2vec-audio"):
        size = shape or (DEFAULT_AUDIO_SAMPLES,)
        return BuiltModel(ref, module, lambda b: ((), {"input_values": make((b, *size))}), unit=Unit.SAMPLES,
                          input_desc="x".join(map(str, size)))
    if hasattr(config, "image_size") and hasattr(config, "num_channels") and not vocab:
        size = shape or (config.num_channels, config.image_size, config.image_size)
        return BuiltModel(ref, module, lambda b: ((), {"pixel_values": make((b, *size))}), unit=Unit.IMAGES,
                          input_desc="x".join(map(str, size)))
    longest = int(getattr(config, "max_position_embeddings", 0) or DEFAULT_TEXT_SEQ)
    n = seq or (shape[0] if shape else 0) or min(DEFAULT_TEXT_SEQ, longest)
    if getattr(config, "is_encoder_decoder", False):
        tgt = max(1, n // 4)

        def seq2seq(b: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
            kw = {"input_ids": make((b, n), high=vocab)}
            kw["labels" if labels else "decoder_input_ids"] = make((b, tgt), high=vocab)
            return (), kw
        return BuiltModel(ref, module, seq2seq, unit=Unit.TOKENS, tokens_per_sample=n,
                          input_desc=f"{n} tokens in, {tgt} out")

    def text(b: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
        ids = make((b, n), high=vocab)
        return (), ({"input_ids": ids, "labels": ids} if labels else {"input_ids": ids})
    return BuiltModel(ref, module, text, unit=Unit.TOKENS, tokens_per_sample=n, input_desc=f"{n} tokens")


def _build_diffusers(ref: ModelRef, cfg: dict[str, Any], shape: tuple[int, ...] | None, device: Any) -> BuiltModel:
    df = import_library("diffusers", f"model {ref.text}")
    cls = getattr(df, cfg["_class_name"], None)
    if cls is None:
        raise UserError(f"hf:{ref.name}: diffusers has no class {cfg['_class_name']!r}")
    module = cls.from_config(cfg)
    c = module.config
    size = shape or (c.in_channels, c.sample_size, c.sample_size)
    text_len, ctx = 77, c.cross_attention_dim
    make = _tensor_maker(device)

    def unet(b: int) -> tuple[tuple[Any, ...], dict[str, Any]]:
        kw: dict[str, Any] = {"sample": make((b, *size)), "timestep": make((b,), high=1000),
                              "encoder_hidden_states": make((b, text_len, ctx))}
        if getattr(c, "addition_embed_type", None) == "text_time":
            pooled = c.projection_class_embeddings_input_dim - 6 * c.addition_time_embed_dim
            kw["added_cond_kwargs"] = {"text_embeds": make((b, pooled)), "time_ids": make((b, 6))}
        return (), kw
    return BuiltModel(ref, module, unet, unit=Unit.SAMPLES,
                      input_desc=f"latent {'x'.join(map(str, size))}, {text_len} text tokens")


_BUILDERS: dict[Source, Callable[..., BuiltModel]] = {
    Source.TORCHVISION: _build_torchvision,
    Source.TIMM: _build_timm,
    Source.TORCHAUDIO: _build_torchaudio,
    Source.HF: _build_hf,
    Source.FILE: _build_file,
}


def prepare_inputs(x: Any, dtype: Any, channels_last: bool) -> Any:
    """An example batch as a loop feeds it: floating inputs in `dtype` where given (bf16 inference feeds bf16;
    autocast takes fp32), 4-D images channels-last where asked."""
    from torch.utils._pytree import tree_map

    torch = import_torch()

    def fix(t: Any) -> Any:
        if not isinstance(t, torch.Tensor):
            return t
        if dtype is not None and t.is_floating_point():
            t = t.to(dtype)
        if channels_last and t.dim() == 4:
            t = t.contiguous(memory_format=torch.channels_last)
        return t
    return tree_map(fix, x)


def first_tensor(out: Any) -> Any:
    """The first tensor of a model's output (a tensor, a tuple, a dict or a ModelOutput)."""
    torch = import_torch()
    if isinstance(out, torch.Tensor):
        return out
    for attr in ("logits", "sample", "last_hidden_state"):
        v = getattr(out, attr, None)
        if isinstance(v, torch.Tensor):
            return v
    values = out.values() if isinstance(out, dict) else out if isinstance(out, (tuple, list)) else ()
    for v in values:
        t = first_tensor(v) if v is not None else None
        if t is not None:
            return t
    return None


def generic_loss(out: Any) -> Any:
    """The model's own loss where it computes one, cross-entropy over class logits, else a mean square:
    what a training loop would reduce the output with."""
    torch = import_torch()
    loss = getattr(out, "loss", None)
    if isinstance(loss, torch.Tensor):
        return loss
    t = first_tensor(out)
    if t is None:
        raise UserError("the model's output holds no tensor to train on")
    if t.dim() == 2 and t.is_floating_point():
        target = torch.zeros(t.shape[0], dtype=torch.long, device=t.device)
        return torch.nn.functional.cross_entropy(t.float(), target)
    return t.float().pow(2).mean()


def apply_trainable(module: Any, *, freeze: tuple[str, ...] = (), trainable: tuple[str, ...] = ()) -> int:
    """Freeze parameters by name globs (`freeze`), or all but `trainable` (steplog.trainable_flags, which the
    replays of shipped steps use too); returns the trainable count."""
    from gpuadvisor.estimate.steplog import trainable_flags

    params = list(module.named_parameters())
    flags = trainable_flags([n for n, _ in params], freeze=freeze, trainable=trainable)
    for (_, p), train in zip(params, flags, strict=True):
        p.requires_grad_(train)
    return sum(p.numel() for (_, p), train in zip(params, flags, strict=True) if train)
