"""serve-check against a real OpenAI-compatible server on this machine: llama.cpp's, through llama-cpp-python's
server, serving a tiny random-weight LLaMA that the test writes with the `gguf` package (tests/tiny_gguf.py).
Loopback only; a handful of requests, one at a time; bounded by --time-limit and the test timeout.

What is compared: serve-check's per-request figures, taken by the client over HTTP, against the server's own
timings for the same requests (llama.cpp's perf lines, one block a request: 'prompt eval time = X ms / N tokens',
'eval time = Y ms / M runs' and 'total time = T ms'): TTFT against the prompt's evaluation, TPOT against the
server's own time per decode step, (T - X) / M. That step time holds the server's sampling and detokenizing (about
1 ms a token in llama-cpp-python 0.3.36), which the model-only 'eval time' leaves out and every client sees: Y / M
is only a floor under the client's TPOT (at Y / M, 0.3.36 measured 1.10-1.12x on two cores).

llama-cpp-python's completions take text only, so serve-check runs with `--prompt text` (the server's detokenizer
and tokenizer endpoints make and count the prompts). One request runs first, unmeasured, with another seed (the
same seed's first prompt would be a cached prefix): the first request after the server starts takes many times
longer and is booked as 'eval' in llama.cpp's perf lines."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("llama_cpp.server", reason="llama-cpp-python[server] is not installed "
                    "(pip install -e '.[serve-check-test]')")
pytest.importorskip("gguf", reason="gguf is not installed (pip install -e '.[serve-check-test]')")

from tests import tiny_gguf  # after the skips: it needs gguf

ROOT = Path(__file__).resolve().parent.parent
REQUESTS, INPUT_LEN, OUTPUT_LEN = 6, 128, 32
AGREEMENT = 0.10  # the bound: serve-check's figures within 10 % of the server's own timings

PROMPT_EVAL = re.compile(r"prompt eval time\s*=\s*([\d.]+) ms /\s*(\d+) tokens")
EVAL = re.compile(r"^\S*\s+eval time\s*=\s*([\d.]+) ms /\s*(\d+) runs", re.M)
TOTAL = re.compile(r"total time\s*=\s*([\d.]+) ms")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("llama")
    gguf_path, config = tiny_gguf.write(folder)
    port = _free_port()
    log = folder / "server.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf_path), "--host", "127.0.0.1",
             "--port", str(port), "--n_ctx", "1024", "--n_batch", "512", "--n_threads", "2", "--verbose", "true"],
            stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited ({proc.returncode}): {log.read_text()[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"llama_cpp.server did not listen within 120 s: {log.read_text()[-2000:]}")
                time.sleep(0.5)
        yield url, config, log
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _server_timings(log: Path, start: int) -> list[tuple[float, int, float, int, float]]:
    """(prompt eval ms, prompt tokens, eval ms, eval runs, total ms) per request, from the log past byte `start`."""
    text = log.read_text()[start:]
    prompts = [(float(ms), int(n)) for ms, n in PROMPT_EVAL.findall(text)]
    evals = [(float(ms), int(n)) for ms, n in EVAL.findall(text)]
    totals = [float(ms) for ms in TOTAL.findall(text)]
    return [(p[0], p[1], e[0], e[1], t) for p, e, t in zip(prompts, evals, totals, strict=False)]


def serve_check(url: str, config: Path, requests: int, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuadvisor", "serve-check", url, "--model", str(config), "--engine", "llamacpp",
         "--prompt", "text", "--concurrency", "1", "--input-len", str(INPUT_LEN), "--output-len", str(OUTPUT_LEN),
         "--requests", str(requests), "--time-limit", "240", *extra],
        capture_output=True, text=True, cwd=ROOT, timeout=300)


@pytest.mark.slow  # about 45 s: a real llama.cpp server (CI runs the slow tests after the default suite)
def test_serve_check_agrees_with_the_servers_own_timings(server, tmp_path):
    url, config, log = server
    warm = serve_check(url, config, 1, "--seed", "99")  # another prompt than the measured run's first
    assert warm.returncode == 0, warm.stderr
    start = len(log.read_text())
    saved = tmp_path / "measured.json"
    p = serve_check(url, config, REQUESTS, "--save", str(saved), "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    m = json.loads(saved.read_text())
    rows = m["requests"]
    assert len(rows) == REQUESTS and not m["stopped_by_time_limit"]
    assert all(r["output_tokens"] == OUTPUT_LEN for r in rows)  # ignore_eos honoured, every token streamed
    timings = _server_timings(log, start)
    assert len(timings) == REQUESTS, log.read_text()[start:][-3000:]
    # every prompt reached the model whole (no cached prefix), as long as serve-check counted it
    assert [n for _, n, _, _, _ in timings] == [r["input_len"] for r in rows] == [INPUT_LEN] * REQUESTS
    assert all(runs == OUTPUT_LEN - 1 for _, _, _, runs, _ in timings)

    ttft_client = sum(r["ttft_s"] for r in rows) / REQUESTS
    ttft_server = sum(prompt for prompt, _, _, _, _ in timings) / REQUESTS / 1e3
    tpot_client = sum((r["e2e_s"] - r["ttft_s"]) / (r["output_tokens"] - 1) for r in rows) / REQUESTS
    tpot_server = sum((total - prompt) / runs for prompt, _, _, runs, total in timings) / REQUESTS / 1e3
    tpot_model = sum(ms / runs for _, _, ms, runs, _ in timings) / REQUESTS / 1e3
    agreement = {"ttft": ttft_client / ttft_server, "tpot": tpot_client / tpot_server}
    print(f"serve-check vs llama.cpp's own timings: TTFT {ttft_client * 1e3:.1f} / {ttft_server * 1e3:.1f} ms, "
          f"TPOT {tpot_client * 1e3:.2f} / {tpot_server * 1e3:.2f} ms (model alone {tpot_model * 1e3:.2f}), "
          f"ratios {agreement}")
    for name, ratio in agreement.items():
        assert abs(ratio - 1) <= AGREEMENT, (name, ratio)
    assert tpot_model < tpot_client  # the model's step is a floor: the client sees the server's work around it
    # the printed figures are the saved ones, beside an estimate for the same shape
    assert out["measurement"]["figures"]["tpot_s"]["mean"] == pytest.approx(tpot_client, rel=1e-9)
    assert out["estimate"]["rests_on"]["assumptions"]["engine"] == "llamacpp"
    assert {r["figure"] for r in out["comparison"]} >= {"TTFT P50", "TPOT P99", "output throughput"}
    itl_p50 = next(r for r in out["comparison"] if r["figure"] == "ITL P50")
    assert itl_p50["estimate"] == pytest.approx(out["estimate"]["detail"]["serving_simulation"]["figures"]["itl_p50_s"])

    # the measurement calibrates the llamacpp profile: the estimate at the measured load then matches its TPOT
    est = subprocess.run(
        [sys.executable, "-m", "gpuadvisor", "estimate", str(config), "--concurrency", "1", "--input-len",
         str(INPUT_LEN), "--output-len", str(OUTPUT_LEN), "--requests", str(REQUESTS), "--calibration", str(saved),
         "--json"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert est.returncode == 0, est.stderr
    fitted = json.loads(est.stdout)
    assert fitted["serving"]["tpot_s"] == pytest.approx(m["figures"]["tpot_s"]["p50"], rel=0.03)
