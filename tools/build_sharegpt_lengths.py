"""Write gpuadvisor/estimate/serve/sharegpt_lengths.json: ShareGPT request lengths as vLLM's benchmark samples them.

`vllm bench serve --dataset-name sharegpt` (benchmark_serving.py before it) draws prompts from ShareGPT V3 with seed 0,
keeps prompts of 4-1,024 tokens with a completion of at least 4 and at most 2,048 tokens together, and asks each
request for its ShareGPT completion's length (`max_tokens`). Its `--save-result` file lists every request's prompt
tokens (`input_lens`) and the tokens it got back (`output_lens`); the lengths a model stopped short of at its own end
of sequence are below the asked ones, and a request that streamed no text reads 0.

The sample here: LambdaLabsML/vllm-benchmark's 640-prompt ShareGPT bursts of five Llama-tokenizer models on H100s
(vLLM 0.5.4, request rate inf; lab/data/sharegpt-vllm-sample-2024-09/, each file's source in it: repository, path,
commit). Their `input_lens` are the same list in the same order (the same 640 prompts), so each request's asked length
is at least the longest answer any of the five models gave it: that is the output length kept (it is the answer of 2
to 5 of the models for 539 of the 638 prompts). The 2 prompts no model answered are dropped. The pairs keep the
prompt-answer correlation (long prompts, often pasted text, get short answers).

Checked against other runs of the same sampler (none of them read here; docs/serving.md, "ShareGPT lengths as vLLM's
benchmark draws them"). Run: `python3 -m tools.build_sharegpt_lengths`.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "lab" / "data" / "sharegpt-vllm-sample-2024-09"
OUT = ROOT / "gpuadvisor" / "estimate" / "serve" / "sharegpt_lengths.json"


def build(sample: Path = SAMPLE) -> dict:
    runs = [json.loads(p.read_text()) for p in sorted(sample.glob("*.json"))]
    if len(runs) < 2:
        raise SystemExit(f"{sample}: need at least two runs of the same prompts")
    prompts = runs[0]["input_lens"]
    for run in runs:
        if run["input_lens"] != prompts:
            raise SystemExit(f"{run['path']}: not the same prompts as {runs[0]['path']}")
        if sum(run["output_lens"]) != run["summary"]["total_output_tokens"]:
            raise SystemExit(f"{run['path']}: output_lens do not sum to the run's total")
    asked = np.max([run["output_lens"] for run in runs], axis=0)
    keep = asked > 0
    return {
        "_about": ("ShareGPT V3 request lengths as vLLM's benchmark sampler draws them (seed 0, its filter applied): "
                   "one [prompt tokens, asked output tokens] pair a request, the asked length being the longest "
                   "answer any of the runs below gave the request. Built by tools/build_sharegpt_lengths.py; read "
                   "by gpuadvisor/estimate/serve/lengths.py. Tokens of the Llama 3 tokenizer."),
        "read": "2026-12-07",
        "runs": [{"model": r["summary"]["model_id"], "url": r["url"], "repo": r["repo"], "path": r["path"],
                  "commit": r["commit"], "date": r["summary"]["date"]} for r in runs],
        "pairs": [[int(i), int(o)] for i, o, k in zip(prompts, asked, keep, strict=True) if k],
    }


if __name__ == "__main__":
    table = build()
    text = json.dumps({**table, "pairs": "PAIRS"}, indent=1)
    one_a_line = "[\n  " + ",\n  ".join(json.dumps(p) for p in table["pairs"]) + "\n ]"
    OUT.write_text(text.replace('"PAIRS"', one_a_line) + "\n")
    pairs = np.array(table["pairs"])
    print(f"wrote {OUT.relative_to(ROOT)}: {len(pairs)} requests, mean {pairs[:, 0].mean():.1f} prompt and "
          f"{pairs[:, 1].mean():.1f} output tokens")
