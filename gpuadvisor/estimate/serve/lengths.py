"""Request lengths: fixed, a named distribution, or a file of lengths. Pure functions, seeded.

* `fixed` (default): every request has --input-len and --output-len tokens;
* `sharegpt-vllm`: ShareGPT V3 requests as vLLM's benchmark sampler draws them (sharegpt_lengths.json: 638 measured
  [prompt, output] pairs, built by tools/build_sharegpt_lengths.py from published `--save-result` files, which list
  every request's lengths), resampled with their means scaled to the sample's (202 input, 179 output tokens a request
  over 500 prompts: vLLM blog 2024-09-05 perf-update, vllm-project/vllm-project.github.io
  _posts/2024-09-05-perf-update.md) and vLLM's filter held (benchmarks/benchmark_serving.py sample_sharegpt_requests:
  prompts of 4-1,024 tokens, outputs of at least 4, prompt + output at most 2,048). The pairs are skewed as the set
  is: a median prompt of 76 tokens, a tenth of the answers 11 tokens or fewer, long prompts with short answers;
* `sharegpt`: the same pairs with the means of the set as SGLang's benchmark samples it (227 input and 188 output
  tokens a request: sgl-project/sglang issue #1639, 2,000 prompts, 453,502 input and 376,493 output tokens), clipped
  to 4-4,096 tokens;
* either ShareGPT draw takes --input-len and --output-len, where given, as its means (a published run's totals
  over its requests);
* OpenOrca (MLPerf Inference Llama-2-70B): not provided. mlcommons/inference language/llama2-70b/processorca.py
  gives the filter (inputs and outputs under 1,024 tokens, outputs of at least 3, 24,576 samples) but no published
  summary of the lengths was found to store; give the lengths as a file instead;
* `uniform:A-B`: inputs uniform in [A, B], outputs --output-len;
* a file: one request a line, `INPUT OUTPUT` (whitespace or comma), `#` comments allowed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from gpuadvisor.core.errors import UserError

SHAREGPT_MEAN_IN, SHAREGPT_MEAN_OUT = 227.0, 188.0  # SGLang issue #1639 (module docstring)
SHAREGPT_VLLM_MEAN_IN, SHAREGPT_VLLM_MEAN_OUT = 202.0, 179.0  # vLLM blog 2024-09-05 (module docstring)
VLLM_FILTER = (4, 1024, 4, 2048)  # min prompt, max prompt, min output, max prompt + output (benchmark_serving.py)
SHAREGPT_BOUNDS = (4, 4096, 4, 8192)  # `sharegpt`: each length clipped to 4-4,096 tokens (VLLM_FILTER's order)
SHAREGPT_PAIRS = Path(__file__).with_name("sharegpt_lengths.json")
#: rounds of scaling the drawn pairs until, within their bounds, they have the stated means (each round cuts the gap
#: about tenfold: the bounds clip a few per cent of the draws)
FILTER_MEAN_ROUNDS = 6


@cache
def sharegpt_pairs() -> np.ndarray:
    """The measured ShareGPT [prompt, output] pairs (SHAREGPT_PAIRS), one row a request."""
    return np.array(json.loads(SHAREGPT_PAIRS.read_text())["pairs"], dtype=np.int64)


NAMED = ("fixed", "sharegpt", "sharegpt-vllm", "uniform:A-B")


@dataclass(frozen=True)
class Lengths:
    """A way of drawing request lengths (see the module docstring); `describe()` says which."""

    kind: str  # fixed | sharegpt | sharegpt-vllm | uniform | file
    input_len: int
    output_len: int
    lo: int = 0
    hi: int = 0
    pairs: tuple[tuple[int, int], ...] = ()
    path: str = ""
    means: tuple[float, float] | None = None  # sharegpt: other mean lengths (a published run's), same shape

    def _means(self) -> tuple[float, float]:
        if self.means is not None:
            return self.means
        if self.kind == "sharegpt-vllm":
            return SHAREGPT_VLLM_MEAN_IN, SHAREGPT_VLLM_MEAN_OUT
        return SHAREGPT_MEAN_IN, SHAREGPT_MEAN_OUT

    def describe(self) -> str:
        if self.kind == "fixed":
            return f"fixed: {self.input_len} input, {self.output_len} output tokens"
        if self.kind in ("sharegpt", "sharegpt-vllm"):
            mean_in, mean_out = self._means()
            sample = f"{len(sharegpt_pairs())} measured ShareGPT requests resampled"
            if self.kind == "sharegpt-vllm":
                return (f"sharegpt-vllm: {sample} through vLLM's benchmark filter (means {mean_in:g} input, "
                        f"{mean_out:g} output tokens)")
            return f"sharegpt: {sample} (means {mean_in:g} input, {mean_out:g} output tokens)"
        if self.kind == "uniform":
            return f"uniform inputs {self.lo}-{self.hi} tokens, {self.output_len} output tokens"
        return f"{len(self.pairs)} (input, output) pairs from {self.path}"

    @staticmethod
    def _resampled(seed: int, want_in: float, want_out: float, n: int, bounds: tuple[int, int, int, int]
                   ) -> tuple[np.ndarray, np.ndarray]:
        """`n` requests drawn from the measured pairs (sharegpt_pairs), each length scaled by one factor a side until,
        within `bounds` (min prompt, max prompt, min output, max prompt + output), they have the means wanted."""
        pairs = sharegpt_pairs()
        rows = pairs[np.random.default_rng(seed).integers(0, len(pairs), n)]
        lo_in, hi_in, lo_out, hi_total = bounds
        scale_in, scale_out = want_in / rows[:, 0].mean(), want_out / rows[:, 1].mean()
        for _ in range(FILTER_MEAN_ROUNDS):
            inp = np.clip(np.rint(rows[:, 0] * scale_in), lo_in, hi_in).astype(np.int64)
            out = np.clip(np.rint(rows[:, 1] * scale_out), lo_out, np.maximum(hi_total - inp, lo_out)).astype(np.int64)
            scale_in *= want_in / float(inp.mean())
            scale_out *= want_out / float(out.mean())
        return inp, out

    def draw(self, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng(seed)
        if self.kind == "fixed":
            return np.full(n, self.input_len, np.int64), np.full(n, self.output_len, np.int64)
        if self.kind in ("sharegpt", "sharegpt-vllm"):
            bounds = VLLM_FILTER if self.kind == "sharegpt-vllm" else SHAREGPT_BOUNDS
            return self._resampled(seed, *self._means(), n, bounds)
        if self.kind == "uniform":
            return rng.integers(self.lo, self.hi + 1, n).astype(np.int64), np.full(n, self.output_len, np.int64)
        idx = np.arange(n) % len(self.pairs)
        arr = np.array(self.pairs, np.int64)
        return arr[idx, 0], arr[idx, 1]


def parse_lengths(spec: str | None, input_len: int, output_len: int,
                  given: tuple[bool, bool] = (False, False)) -> Lengths:
    """`spec` as given to --lengths (None: fixed); UserError with one line on anything else. `given`: whether the
    user gave --input-len and --output-len: a ShareGPT-shaped draw takes them as its means (a published run's), the
    other its named default; a range or a file that draws a length itself refuses its flag."""
    if input_len < 1 or output_len < 1:
        raise UserError(f"input and output lengths must be at least 1 token, got {input_len} and {output_len}")
    if spec is None or spec == "fixed":
        return Lengths("fixed", input_len, output_len)
    if spec in ("sharegpt", "sharegpt-vllm"):
        if not any(given):
            return Lengths(spec, input_len, output_len)
        default_in, default_out = Lengths(spec, input_len, output_len)._means()
        means = (float(input_len) if given[0] else default_in, float(output_len) if given[1] else default_out)
        return Lengths(spec, input_len, output_len, means=means)
    if spec == "openorca":
        raise UserError("--lengths openorca: no published summary of MLPerf's OpenOrca lengths is stored (see "
                        "gpuadvisor/estimate/serve/lengths.py); give the lengths as a file of 'INPUT OUTPUT' lines")
    if spec.startswith("uniform:"):
        try:
            a, b = (int(x) for x in spec[len("uniform:"):].split("-"))
        except ValueError:
            raise UserError(f"--lengths {spec!r}: write uniform:A-B with whole token counts, e.g. uniform:100-2000") \
                from None
        if not 1 <= a <= b:
            raise UserError(f"--lengths {spec!r}: need 1 <= A <= B")
        if given[0]:
            raise UserError(f"--lengths {spec} draws the prompt lengths itself: drop --input-len")
        return Lengths("uniform", input_len, output_len, lo=a, hi=b)
    p = Path(spec)
    if not p.is_file():
        raise UserError(f"--lengths {spec!r}: not a distribution ({', '.join(NAMED)}) nor a file of lengths")
    if any(given):
        flags = " and ".join(f for f, g in zip(("--input-len", "--output-len"), given, strict=True) if g)
        raise UserError(f"--lengths {spec} gives both lengths of every request: drop {flags}")
    pairs = []
    try:
        text = p.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise UserError(f"--lengths {spec}: cannot read it ({e.__class__.__name__})") from None
    for n, line in enumerate(text.splitlines(), 1):
        s = line.split("#", 1)[0].replace(",", " ").split()
        if not s:
            continue
        try:
            i, o = int(s[0]), int(s[1])
        except (ValueError, IndexError):
            raise UserError(f"{spec}:{n}: expected 'INPUT OUTPUT' token counts, got {line.strip()!r}") from None
        if i < 1 or o < 1 or len(s) > 2:
            raise UserError(f"{spec}:{n}: expected two token counts of at least 1, got {line.strip()!r}")
        pairs.append((i, o))
    if not pairs:
        raise UserError(f"--lengths {spec}: no lengths in the file")
    return Lengths("file", input_len, output_len, pairs=tuple(pairs), path=str(p))
