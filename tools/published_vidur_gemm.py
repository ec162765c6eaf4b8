"""Write tests/data/published-vidur-gemm.json: the four linear layers of a transformer block as Microsoft's vidur
profiled them, on an A100, an A40 and an H100 (fp16, PyTorch/cuBLAS, median kernel time of each op).

Source: microsoft/vidur, data/profiling/compute/<card>/<model>/mlp.csv at the commit below (the profiles its
simulator predicts from; vidur/profiling/mlp/: fp16 weights, one transformer block's operations timed one by one;
columns time_stats.<op>.median in ms, num_tokens, num_tensor_parallel_workers, the model's widths). The four
products and their shapes (tokens x inner -> outer, each tensor-parallel worker's share):

* attn_pre_proj: hidden -> (heads + 2 x kv heads) x head dim / tp (the fused QKV projection)
* attn_post_proj: heads x head dim / tp -> hidden
* mlp_up_proj: hidden -> (2 if gated else 1) x intermediate / tp (gate and up fused)
* mlp_down_proj: intermediate / tp -> hidden

Which A100 the profiles came from is not said: vidur's docs/profiling.md uses the same `a100` compute data for an
Azure Standard_NC96ads_A100_v4 (A100 80GB PCIe) and a DGX A100; the rows are compared as an A100 SXM4 80GB (its large
products reach 232 TFLOP/s, as an SXM part's do). Token counts kept: 1 and 16 (decode) and 64 to 16,384 (the CSVs
hold every multiple of 256 up to 32,768 and more). `held_out`: every third row.

Run: `python3 tools/published_vidur_gemm.py [PATH_TO_VIDUR_GIT_DIR]` (a clone or a bare mirror of microsoft/vidur
at COMMIT; the default is the path `fetch` gives on the team's machines). The JSON is what the tests read."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "published-vidur-gemm.json"
COMMIT = "7d47513363ec447a741ac5e47241580b47724fbf"
REPO = "microsoft/vidur"
DEFAULT_GIT_DIR = "/work/.mirror/microsoft+vidur/repo"
CARDS = {"a100": "A100 SXM4 80GB", "a40": "A40", "h100": "H100 SXM5 80GB"}
MODELS = ("meta-llama/Llama-2-7b-hf", "meta-llama/Llama-2-70b-hf", "meta-llama/Meta-Llama-3-8B",
          "meta-llama/Meta-Llama-3-70B", "codellama/CodeLlama-34b-Instruct-hf", "internlm/internlm-20b",
          "Qwen/Qwen-72B", "microsoft/phi-2")
TOKENS = (1, 16, 64, 256, 512, 1024, 2048, 4096, 16384)
OPS = ("attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj")


def _csv(git_dir: str, path: str) -> list[dict[str, str]]:
    done = subprocess.run(["git", "--git-dir", git_dir, "show", f"{COMMIT}:{path}"], capture_output=True, text=True)
    return list(csv.DictReader(io.StringIO(done.stdout))) if done.returncode == 0 else []


def shapes(row: dict[str, str]) -> dict[str, tuple[int, int]]:
    """(inner, outer) of each product for one tensor-parallel worker."""
    hidden, heads, kv_heads = int(row["n_embd"]), int(row["n_head"]), int(row["n_kv_head"])
    inter, tp, head_dim = int(row["n_expanded_embd"]), int(row["num_tensor_parallel_workers"]), hidden // heads
    gated = row["use_gated_mlp"] == "True"
    return {"attn_pre_proj": (hidden, (heads + 2 * kv_heads) * head_dim // tp),
            "attn_post_proj": (heads * head_dim // tp, hidden),
            "mlp_up_proj": (hidden, (2 if gated else 1) * inter // tp),
            "mlp_down_proj": (inter // tp, hidden)}


def build(git_dir: str = DEFAULT_GIT_DIR) -> dict[str, object]:
    rows: list[dict[str, object]] = []
    for card_dir, card in CARDS.items():
        for model in MODELS:
            path = f"data/profiling/compute/{card_dir}/{model}/mlp.csv"
            seen: set[tuple[int, int]] = set()
            for row in _csv(git_dir, path):
                tokens, tp = int(row["num_tokens"]), int(row["num_tensor_parallel_workers"])
                if tokens not in TOKENS or (tokens, tp) in seen:  # a few sizes were profiled twice: the first
                    continue
                seen.add((tokens, tp))
                for op, (inner, outer) in shapes(row).items():
                    median = row.get(f"time_stats.{op}.median")
                    if not median:
                        continue
                    rows.append({"card": card, "model": model, "tp": tp, "op": op, "m": tokens, "n": outer,
                                 "k": inner, "measured_s": round(float(median) / 1e3, 9)})
    for i, r in enumerate(rows):
        r["held_out"] = i % 3 == 1
    return {"_about": "microsoft/vidur's measured fp16 linear layers (median kernel time, seconds) with their GEMM "
                      "shapes m x k -> n; written by tools/published_vidur_gemm.py from the CSVs at commit "
                      f"{COMMIT} (read 2026-12-07). held_out: every third row.",
            "source": {"repo": REPO, "commit": COMMIT, "card_dirs": {card: d for d, card in CARDS.items()},
                       "url": f"https://github.com/{REPO}/blob/{COMMIT}/data/profiling/compute/{{card_dir}}/{{model}}"
                              "/mlp.csv",
                       "document": "vidur's compute profiles (data/profiling/compute/<card>/<model>/mlp.csv), "
                                   "fp16, columns time_stats.<op>.median (ms)"},
            "results": rows}


if __name__ == "__main__":
    data = build(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_GIT_DIR)
    if not data["results"]:
        sys.exit("no vidur profiles found: give the path of a microsoft/vidur git directory")
    rows = ",\n".join(json.dumps(r) for r in data["results"])
    head = json.dumps({k: v for k, v in data.items() if k != "results"}, indent=1)[:-2]
    OUT.write_text(f'{head},\n "results": [\n{rows}\n]}}\n')
    print(f"wrote {OUT} ({len(data['results'])} rows)")
