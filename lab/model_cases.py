"""The models and shapes the op-graph estimator is validated on (measured by lab/measure_models.py).

Each model runs training and inference at two batch sizes. Held out, fixed before any fitting:
every third model in this list (index % 3 == 2), all of its cases; calibration never reads them.
"""

from __future__ import annotations

CL = {"channels_last": True}
# (spec, training batches, inference batches, extra settings)
MODELS: list[tuple[str, tuple[int, int], tuple[int, int], dict]] = [
    ("torchvision:resnet50", (64, 256), (32, 256), CL),
    ("torchvision:resnet18", (64, 256), (32, 256), CL),
    ("torchvision:resnet152", (32, 128), (32, 128), CL),
    ("torchvision:vgg16", (32, 128), (32, 128), CL),
    ("torchvision:mobilenet_v3_large", (64, 256), (64, 256), CL),
    ("torchvision:efficientnet_b0", (64, 256), (64, 256), CL),
    ("torchvision:densenet121", (32, 128), (32, 128), CL),
    ("timm:convnext_tiny", (64, 256), (64, 256), CL),
    ("timm:resnext50_32x4d", (64, 256), (64, 256), CL),
    ("torchvision:vit_b_16", (32, 128), (32, 256), {}),
    ("timm:vit_small_patch16_224", (64, 256), (64, 256), {}),
    ("timm:swin_tiny_patch4_window7_224", (32, 128), (64, 256), {}),
    ("hf:bert-base-uncased", (8, 32), (8, 64), {"seq": 512}),
    ("hf:deberta-v3-base", (8, 32), (8, 32), {"seq": 512}),
    ("hf:t5-base", (8, 32), (8, 32), {"seq": 512}),
    ("hf:bart-base", (8, 32), (8, 32), {"seq": 512}),
    ("hf:whisper-small", (8, 32), (8, 32), {}),
    ("torchaudio:wav2vec2_base", (8, 32), (8, 32), {}),
    ("lab/models/lstm_classifier.py:build", (32, 128), (32, 128), {}),
    ("lab/models/gcn.py:build", (8, 32), (8, 32), {}),
    ("lab/models/mlp_mnist.py:build", (64, 1024), (64, 1024), {}),
    ("hf:sd15-unet", (4, 16), (4, 16), {}),
    ("hf:sdxl-unet", (1, 2), (2, 8), {}),
    ("hf:gpt2", (8, 32), (8, 32), {"seq": 1024}),
    ("hf:qwen2.5-0.5b", (4, 16), (8, 32), {"seq": 1024}),
    ("hf:llama-3.2-1b", (4, 8), (8, 32), {"seq": 1024}),
    ("torchvision:convnext_tiny", (64, 256), (64, 256), CL),
]
# transfer learning: a frozen base, only the classifier trains (model, trainable globs, batches)
TRANSFER: list[tuple[str, tuple[str, ...], tuple[int, int], dict]] = [
    ("torchvision:resnet50", ("fc.*",), (64, 256), CL),
    ("torchvision:vit_b_16", ("heads.*",), (32, 128), {}),
    ("timm:convnext_tiny", ("head.*", "stages.3.*"), (64, 256), CL),
]


def _cases() -> list[dict]:
    out = []
    for i, (spec, train, infer, extra) in enumerate(MODELS):
        held = i % 3 == 2
        for b in train:
            out.append({"spec": spec, "mode": "training", "batch": b, "held_out": held, **extra})
        for b in infer:
            out.append({"spec": spec, "mode": "inference", "batch": b, "held_out": held, **extra})
    for i, (spec, globs, train, extra) in enumerate(TRANSFER):
        for b in train:
            out.append({"spec": spec, "mode": "training", "batch": b, "trainable": list(globs),
                        "held_out": i % 3 == 2, **extra})
    return out


# Out of sample: models nobody on the project measured before, never read by a fit (the issue "Every card"'s
# H100 check): the recurrent layers (LSTM and GRU, one and several layers) at two batch sizes each, and vision
# models whose architectures the fitted set lacks. Measured into tests/data/models-h100-unseen.json.
UNSEEN_MODELS: list[tuple[str, tuple[int, ...], tuple[int, ...], dict]] = [
    ("lab/models/gru_seq2seq.py:build", (64, 256), (64, 256), {}),
    ("lab/models/lstm_lm.py:build", (32, 64), (32, 64), {}),
    ("lab/models/lstm_small.py:build", (256, 1024), (256, 1024), {}),
    ("lab/models/gru_deep.py:build", (32, 128), (32, 128), {}),
    # added 2026-12-05 (evening), after the recurrent pricer learned which training calls run persistent
    ("lab/models/lstm_tagger.py:build", (64, 128), (64, 128), {}),
    ("lab/models/gru_keyword.py:build", (128, 512), (128, 512), {}),
    # added 2026-12-05 (night), after the recurrent memory and set-up were measured call by call
    ("lab/models/bilstm_ner.py:build", (32, 128), (32, 128), {}),
    ("lab/models/gru_speech.py:build", (16, 64), (16, 64), {}),
    # added 2026-12-05 (late), after the RNN inference workspace's floor per layer and direction was fitted
    ("lab/models/char_gru.py:build", (64, 256), (64, 256), {}),
    ("lab/models/lstm_sensor.py:build", (64, 512), (64, 512), {}),
    # added 2026-12-05 (later), after the small-hidden persistent kernel's step was priced by its batch rows
    ("lab/models/lstm_forecast.py:build", (256, 1024), (256, 1024), {}),
    ("lab/models/gru_activity.py:build", (512, 2048), (512, 2048), {}),
    # added 2026-12-06, after a launched inference RNN step became the host's issuing (scaled by the dispatch probe)
    ("lab/models/gru_review.py:build", (32, 128), (32, 128), {}),
    # added 2026-12-06 (later), after cuDNN's training kernels were profiled: the backward's bias gradient by the
    # rows, a launched training step the host's issuing
    ("lab/models/lstm_autoencoder.py:build", (512, 2048), (512, 2048), {}),
    ("lab/models/gru_lm.py:build", (32, 128), (32, 128), {}),
    ("torchvision:inception_v3", (), (32, 128), {**CL, "input": [3, 299, 299]}),
    ("torchvision:efficientnet_v2_s", (32, 128), (), CL),
    ("torchvision:swin_v2_t", (32, 64), (), {}),
    ("torchvision:regnet_y_1_6gf", (64,), (128,), CL),
    ("timm:resnet50d", (64,), (128,), CL),
    ("timm:deit_small_patch16_224", (64,), (128,), {}),
    ("torchvision:shufflenet_v2_x1_0", (128,), (256,), CL),
    # added 2026-12-05 (last), after pooling kernels were priced by their work: GoogLeNet's stride-1 max pools in
    # every inception block (a window no measured call had), Inception-v4's stride-1 average pools
    ("torchvision:googlenet", (), (32, 128), CL),
    ("timm:inception_v4", (64,), (128,), {**CL, "input": [3, 299, 299]}),
    # added 2026-12-06 (second batch), estimates committed before any run: op classes and architectures no measured
    # case had (3-D and transposed convolutions, dilated convolutions at 520 px, embedding bags, PyTorch's own
    # TransformerEncoder and its inference fast path, MLP-Mixer, ConvMixer's 9x9 depthwise, MaxViT, LeViT, RepVGG,
    # NFNet's weight standardization, BEiT, Hugging Face's RoBERTa and ViT)
    ("lab/models/torch_transformer.py:build", (32, 128), (64, 256), {}),
    ("lab/models/dcgan.py:build", (256, 1024), (256, 1024), CL),
    ("lab/models/dlrm_small.py:build", (2048, 16384), (2048, 16384), {}),
    ("torchvision:r3d_18", (16,), (32,), {}),
    ("torchvision:deeplabv3_resnet50", (8,), (16,), CL),
    ("timm:mixer_b16_224", (64,), (128,), {}),
    ("timm:convmixer_768_32", (32,), (64,), CL),
    ("timm:maxvit_tiny_tf_224", (32,), (64,), CL),
    ("timm:levit_128", (256,), (256,), {}),
    ("timm:repvgg_a2", (64,), (128,), CL),
    ("timm:dm_nfnet_f0", (64,), (128,), CL),
    ("timm:beit_base_patch16_224", (32,), (64,), {}),
    ("hf:roberta-base", (8, 32), (8, 32), {"seq": 512}),
    ("hf:vit-base-patch16-224", (32,), (64,), {}),
    # added 2026-12-06 (third batch), estimates committed before any run, after the H100's NCHW transposes were
    # profiled: CNNs as users run them by default, in NCHW (3x3, 1x1, strided, depthwise and (2+1)-D convolutions)
    ("torchvision:resnet50", (64,), (128,), {}),
    ("torchvision:densenet121", (32,), (64,), {}),
    ("torchvision:vgg16", (32,), (64,), {}),
    ("timm:efficientnet_b0", (64,), (128,), {}),
    ("torchvision:r2plus1d_18", (8,), (16,), {}),
    # added 2026-12-06 (fourth batch), estimates committed before any run: Hugging Face transformers classes built with
    # published configurations no fitted model has (GPT-2 medium, BERT-large, DistilBERT, a SmolLM-360M-shaped Llama
    # with 15 query heads over 5 key-value heads)
    ("lab/models/gpt2_medium.py:build", (8,), (16,), {}),
    ("lab/models/bert_large_cls.py:build", (32,), (128,), {}),
    ("lab/models/distilbert_cls.py:build", (64,), (256,), {}),
    ("lab/models/smollm_360m.py:build", (8,), (16,), {}),
    # added 2026-12-07, estimates committed before any run: BERT-base fine-tuned on SQuAD as Lambda's table runs it
    # (the question-answering head, 384 tokens, its batches of 96 and 320; tests/data/published-cross-card-3.json)
    ("hf:bert-base-uncased-qa", (96, 320), (64, 256), {"seq": 384}),
    # added 2026-12-07 (night), estimates committed before any run: the same BERT-base SQuAD model with its attention
    # written out (transformers' eager attention, as DLE's BERT computes it), at Lambda's smaller batches
    ("lab/models/bert_qa_eager.py:build", (32, 96), (64,), {}),
]
#: the recurrent ones (bench.unseen.family): the LSTM and GRU models written for the issue "Every card"
RECURRENT_UNSEEN = frozenset(spec for spec, *_ in UNSEEN_MODELS
                             if spec.startswith("lab/models/") and any(k in spec for k in ("lstm", "gru")))
UNSEEN = [{"spec": spec, "mode": mode, "batch": b, "held_out": True, "unseen": True, **extra}
          for spec, train, infer, extra in UNSEEN_MODELS
          for mode, batches in (("training", train), ("inference", infer)) for b in batches]


CASES = _cases()


def case_id(case: dict) -> tuple:
    """What tells one case from another (tools/collect_model_runs.py keeps one entry per case)."""
    return (case["spec"], case["mode"], case["batch"], tuple(case.get("trainable", ())),
            bool(case.get("channels_last")), case.get("seq", 0))
