#!/usr/bin/env python3
"""Vision models nobody on the project wrote or fitted, on an RTX 4090: timm's published inference rates against the
tool's estimates, as a user would ask them (`gpuadvisor estimate timm:NAME --gpu "RTX 4090" --batch 512
--channels-last --dtype fp16`). A yardstick, not a fit: no constant reads these rows.

Source: huggingface/pytorch-image-models results/benchmark-infer-amp-nhwc-pt240-cu124-rtx4090.csv at commit
7479d451a6dfd8af27f941b8e82a7402461fae80 (read 2026-12-06 through the project's public-repository index): timm's
benchmark.py, PyTorch 2.4.0, CUDA 12.4, AMP float16, channels-last, batch 512, eager. The models: 27 of the CSV's
224 px rows, chosen across families before any was estimated (RegNet, MnasNet, MobileNetV2, EfficientNet-Lite and
B1, ResNet-34/26 and SE-ResNet-34, ConvNeXt femto/nano, HGNetV2, LeViT, DeiT, ViT-B/32, RepVGG, DLA, ReXNet, MLP-Mixer,
ResMLP, XCiT, PVTv2, SelecSLS, TinyViT, GhostNet, HRNet); none is among the twelve models of the cross-card set
(tools/published_cross_card.py). Needs PyTorch and timm (the [trace-vision] extra).

  python3 -m tools.timm_out_of_sample
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SOURCE = ("https://github.com/huggingface/pytorch-image-models/blob/7479d451a6dfd8af27f941b8e82a7402461fae80/"
          "results/benchmark-infer-amp-nhwc-pt240-cu124-rtx4090.csv")
CARD, BATCH = "GeForce RTX 4090", 512
#: timm model -> published images/s (infer_samples_per_sec, 224 px, batch 512)
ROWS = {
    "regnety_004": 17337.89, "regnety_008": 12684.45, "regnetx_016": 6438.32, "mnasnet_100": 14430.36,
    "mobilenetv2_100": 11768.03, "efficientnet_lite0": 11509.61, "efficientnet_b1": 6906.68, "resnet34": 11246.05,
    "resnet26": 8074.23, "seresnet34": 10212.95, "convnext_femto": 11240.65, "convnext_nano": 6328.61,
    "hgnetv2_b0": 10947.51, "levit_256": 14076.58, "deit_tiny_patch16_224": 17596.84,
    "vit_base_patch32_224": 10426.38, "repvgg_a1": 10156.41, "dla34": 9394.03, "rexnet_100": 8980.27,
    "mixer_s16_224": 7827.39, "resmlp_12_224": 7865.04, "xcit_tiny_12_p16_224": 7972.61, "pvt_v2_b0": 9469.13,
    "selecsls42": 10259.59, "tiny_vit_5m_224": 7865.63, "ghostnet_100": 15502.44, "hrnet_w18_small": 10372.58,
}


def ratios() -> dict[str, float]:
    """Each model's estimated images/s over timm's published figure."""
    from bench.cross_card import _vision_estimate

    out = {}
    for name, published in ROWS.items():
        e = {"card": CARD, "model": f"timm:{name}", "mode": "inference", "batch": BATCH, "channels_last": True,
             "precision": "AMP float16"}
        estimate, _ = _vision_estimate(e)
        out[name] = estimate / published
    return out


def main() -> int:
    r = ratios()
    for name, x in sorted(r.items(), key=lambda kv: kv[1]):
        print(f"{name:26s} {x:5.2f}x{'' if 0.8 <= x <= 1.25 else '  (outside 0.8x-1.25x)'}")
    inside = sum(0.8 <= x <= 1.25 for x in r.values())
    geomean = math.exp(sum(math.log(x) for x in r.values()) / len(r))
    print(f"{inside} of {len(r)} within 0.8x-1.25x, geometric mean {geomean:.2f}x ({SOURCE})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
