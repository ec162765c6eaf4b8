"""Request lengths: fixed, a named distribution, or a file of lengths. Pure functions, seeded.

* `fixed` (default): every request has --input-len and --output-len tokens;
* `sharegpt`: lognormal inputs and outputs with the means of the ShareGPT V3 set as the engines' benchmark
  scripts sample it (227 input and 188 output tokens a request: sgl-project/sglang issue #1639, 2,000 prompts,
  453,502 input and 376,493 output tokens), clipped to 4-4,096 tokens;
* `sharegpt-vllm`: the same shape with the means of vLLM's benchmark sample (202 input, 179 output tokens a
  request over 500 prompts: vLLM blog 2024-09-05 perf-update, vllm-project/vllm-project.github.io
  _posts/2024-09-05-perf-update.md) and vLLM's filter (benchmarks/benchmark_serving.py sample_sharegpt_requests:
  prompts of 4-1,024 tokens, outputs of at least 4, prompt + output at most 2,048; out-of-filter draws redrawn);
* either ShareGPT shape takes --input-len and --output-len, where given, as its means (a published run's totals
  over its requests);
* OpenOrca (MLPerf Inference Llama-2-70B): not provided. mlcommons/inference language/llama2-70b/processorca.py
  gives the filter (inputs and outputs under 1,024 tokens, outputs of at least 3, 24,576 samples) but no published
  summary of the lengths was found to store; give the lengths as a file instead;
* `uniform:A-B`: inputs uniform in [A, B], outputs --output-len;
* a file: one request a line, `INPUT OUTPUT` (whitespace or comma), `#` comments allowed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gpuadvisor.core.errors import UserError

SHAREGPT_MEAN_IN, SHAREGPT_MEAN_OUT, SHAREGPT_SIGMA = 227.0, 188.0, 0.9
SHAREGPT_VLLM_MEAN_IN, SHAREGPT_VLLM_MEAN_OUT = 202.0, 179.0  # vLLM blog 2024-09-05 (module docstring)
VLLM_FILTER = (4, 1024, 4, 2048)  # min prompt, max prompt, min output, max prompt + output (benchmark_serving.py)
#: rounds of scaling the draw before vLLM's filter until the kept requests have the stated means (each round cuts
#: the gap about tenfold: the filter drops a few per cent of the draws)
FILTER_MEAN_ROUNDS = 6
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
            sigma = f"sigma {SHAREGPT_SIGMA:g}"
            if self.kind == "sharegpt-vllm":
                return (f"sharegpt-like lognormal through vLLM's benchmark filter (the kept requests' means "
                        f"{mean_in:g} input, {mean_out:g} output tokens; {sigma})")
            return f"sharegpt-like lognormal (mean {mean_in:g} input, {mean_out:g} output tokens, {sigma})"
        if self.kind == "uniform":
            return f"uniform inputs {self.lo}-{self.hi} tokens, {self.output_len} output tokens"
        return f"{len(self.pairs)} (input, output) pairs from {self.path}"

    @staticmethod
    def _lognormal(rng: np.random.Generator, mean: float, size: int) -> np.ndarray:
        """ShareGPT-shaped lengths of mean `mean` (SHAREGPT_SIGMA), clipped to 4-4,096 tokens."""
        mu = math.log(mean) - SHAREGPT_SIGMA ** 2 / 2
        return np.clip(np.rint(rng.lognormal(mu, SHAREGPT_SIGMA, size)), 4, 4096).astype(np.int64)

    @classmethod
    def _filtered(cls, seed: int, mean_in: float, mean_out: float, n: int) -> tuple[np.ndarray, np.ndarray]:
        """`n` requests through vLLM's benchmark filter (VLLM_FILTER): what it drops is drawn again."""
        rng = np.random.default_rng(seed)
        inp, out = cls._lognormal(rng, mean_in, n), cls._lognormal(rng, mean_out, n)
        lo_in, hi_in, lo_out, hi_total = VLLM_FILTER
        for _ in range(100):  # a few per cent a round
            bad = (inp < lo_in) | (inp > hi_in) | (out < lo_out) | (inp + out > hi_total)
            if not bad.any():
                break
            k = int(bad.sum())
            inp[bad], out[bad] = cls._lognormal(rng, mean_in, k), cls._lognormal(rng, mean_out, k)
        return np.clip(inp, lo_in, hi_in), np.clip(out, lo_out, hi_total - np.clip(inp, lo_in, hi_in))

    def draw(self, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng(seed)
        if self.kind == "fixed":
            return np.full(n, self.input_len, np.int64), np.full(n, self.output_len, np.int64)
        if self.kind == "sharegpt":
            mean_in, mean_out = self._means()
            return self._lognormal(rng, mean_in, n), self._lognormal(rng, mean_out, n)
        if self.kind == "sharegpt-vllm":
            # the means are a filtered sample's (vLLM's blog, a published run's totals): the draw before the filter
            # is scaled until the kept requests have them (the filter drops long prompts, so its mean falls)
            want_in, want_out = self._means()
            mean_in, mean_out = want_in, want_out
            for _ in range(FILTER_MEAN_ROUNDS):
                inp, out = self._filtered(seed, mean_in, mean_out, n)
                mean_in *= want_in / float(inp.mean())
                mean_out *= want_out / float(out.mean())
            return inp, out
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
