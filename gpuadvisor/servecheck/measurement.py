"""What `serve-check` measured, as a typed, versioned JSON document (`--save FILE`; `estimate --calibration FILE`
reads it back). The figures follow vLLM's benchmark_serving (benchmarks/backend_request_func.py and
benchmark_serving.py, vllm-project/vllm @ 011841309828ee36ff4c125eb2390b56e1c1bbad):

* TTFT: from the request sent to the first streamed chunk that carries text;
* ITL: the gaps between successive chunks that carry text, pooled over all requests;
* TPOT: per request, (end-to-end latency - TTFT) / (output tokens - 1), for requests of two tokens or more;
* E2E latency: from the request sent to the stream's end ('data: [DONE]');
* throughput: completed requests and output tokens over the benchmark's duration (first request sent to the
  last one finished); percentiles as NumPy's (linear interpolation).

docs/serve-check.schema.json is this module's JSON schema (tests/test_serve_check.py keeps the two in step)."""

from __future__ import annotations

from pathlib import Path
from typing import Final, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gpuadvisor.core.errors import UserError

SCHEMA_ID: Final = "gpuadvisor.serve-check/1"
PERCENTILES = (50, 90, 99)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Distribution(_Strict):
    """Mean and percentiles of one figure, in seconds; None where no request gave it."""

    mean: float | None
    p50: float | None
    p90: float | None
    p99: float | None
    count: int = Field(ge=0, description="values the figures are over (requests; ITL: gaps)")


class Target(_Strict):
    """What the estimate beside the measurement is for: the deployment as the user described it."""

    model: str = Field(description="the gpuadvisor model (preset, parameter count or config.json path)")
    served_model: str = Field(description="the model name sent in each request")
    card: str
    gpus: int = Field(ge=1, description="tensor-parallel GPUs of the one replica measured")
    engine: str
    weights: str | None = Field(None, description="--weights (None: the model's dtype)")


class LoadSpec(_Strict):
    """The load replayed: Poisson arrivals at `rate`, or `concurrency` clients that start together."""

    rate: float | None = Field(gt=0)
    concurrency: int | None = Field(ge=1)
    input_len: int = Field(ge=1)
    output_len: int = Field(ge=1)
    lengths: str | None = Field(description="--lengths spec (None: fixed input_len / output_len)")
    lengths_given: tuple[bool, bool] = Field((False, False), description="whether --input-len and --output-len were "
                                             "given: a ShareGPT shape takes them as its means")
    requests: int = Field(ge=1, description="requests asked for")
    seed: int = Field(ge=0)
    time_limit_s: float = Field(gt=0)
    prompt: Literal["ids", "text"] = Field("ids", description="ids: token ids sent as the prompt; text: the server's "
                                           "own detokenized text of them, counted by its tokenizer")


class RequestRow(_Strict):
    """One completed request."""

    input_len: int = Field(ge=1, description="prompt tokens (--prompt text: as the server's tokenizer counts them)")
    output_len: int = Field(ge=1, description="tokens asked for (max_tokens)")
    output_tokens: int = Field(ge=0, description="tokens received (usage, else streamed chunks with text)")
    sent_s: float = Field(ge=0, description="when it was sent, from the benchmark's start")
    ttft_s: float | None = Field(ge=0)
    e2e_s: float = Field(ge=0)


class Figures(_Strict):
    completed: int = Field(ge=0)
    duration_s: float = Field(ge=0)
    requests_per_s: float | None
    output_tokens_per_s: float | None
    total_tokens_per_s: float | None
    mean_input_len: float | None
    mean_output_tokens: float | None
    ttft_s: Distribution
    tpot_s: Distribution
    itl_s: Distribution
    e2e_s: Distribution


class Measurement(_Strict):
    schema_id: Literal["gpuadvisor.serve-check/1"] = Field(SCHEMA_ID, alias="schema")
    gpuadvisor_version: str
    measured_at: str = Field(description="UTC, ISO 8601")
    endpoint: str
    target: Target
    load: LoadSpec
    output_tokens_from: Literal["usage", "chunks"] = Field(
        description="usage: the server's completion_tokens; chunks: streamed chunks that carried text")
    stopped_by_time_limit: bool
    figures: Figures
    requests: list[RequestRow]

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    def to_json(self) -> str:
        return self.model_dump_json(by_alias=True, indent=1) + "\n"


def distribution(values: list[float]) -> Distribution:
    if not values:
        return Distribution(mean=None, p50=None, p90=None, p99=None, count=0)
    a = np.asarray(values, dtype=float)
    p50, p90, p99 = (float(x) for x in np.percentile(a, PERCENTILES))
    return Distribution(mean=float(a.mean()), p50=p50, p90=p90, p99=p99, count=len(values))


def figures(rows: list[RequestRow], itls: list[float], duration_s: float) -> Figures:
    """The benchmark's figures from its completed requests (module docstring for the conventions)."""
    tpots = [(r.e2e_s - r.ttft_s) / (r.output_tokens - 1) for r in rows if r.ttft_s is not None and
             r.output_tokens > 1]
    out_tokens = sum(r.output_tokens for r in rows)
    in_tokens = sum(r.input_len for r in rows)
    per_s = (lambda n: n / duration_s) if duration_s > 0 and rows else (lambda n: None)
    return Figures(completed=len(rows), duration_s=duration_s, requests_per_s=per_s(len(rows)),
                   output_tokens_per_s=per_s(out_tokens), total_tokens_per_s=per_s(out_tokens + in_tokens),
                   mean_input_len=in_tokens / len(rows) if rows else None,
                   mean_output_tokens=out_tokens / len(rows) if rows else None,
                   ttft_s=distribution([r.ttft_s for r in rows if r.ttft_s is not None]),
                   tpot_s=distribution(tpots), itl_s=distribution(itls),
                   e2e_s=distribution([r.e2e_s for r in rows]))


def save(m: Measurement, path: str | Path) -> None:
    p = Path(path)
    if not p.parent.is_dir():
        raise UserError(f"--save {path}: the folder {p.parent} does not exist")
    p.write_text(m.to_json())


def load(path: str | Path) -> Measurement:
    """A saved measurement; one line (UserError) on a missing, unreadable or malformed file."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise UserError(f"--calibration {path}: {e.strerror or e}") from None
    try:
        return Measurement.model_validate_json(text)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(x) for x in first.get("loc", ())) or "(top level)"
        raise UserError(f"--calibration {path}: not a serve-check measurement ({SCHEMA_ID}): {where}: "
                        f"{first.get('msg', 'invalid')}") from None


def json_schema() -> dict[str, object]:
    """The JSON schema of a saved measurement (docs/serve-check.schema.json)."""
    schema = Measurement.model_json_schema(by_alias=True)
    schema["$id"] = SCHEMA_ID
    schema["title"] = "gpuadvisor serve-check measurement"
    return schema
