"""serve-check without a serving engine: the figures' conventions, the saved file and its schema, the HTTP/SSE
client against a loopback stream with known gaps, the refusals (one line, exit 2), and the calibration fit.
The check against a real llama.cpp server is tests/test_serve_check_server.py."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

from gpuadvisor.core.errors import UserError
from gpuadvisor.servecheck import calibrate
from gpuadvisor.servecheck import measurement as ms
from gpuadvisor.servecheck.http import Endpoint, EndpointError, parse_endpoint
from gpuadvisor.servecheck.replay import Plan, list_models, prompt_id_range
from gpuadvisor.servecheck.replay import run as replay

ROOT = Path(__file__).resolve().parent.parent


def cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gpuadvisor", *argv], capture_output=True, text=True, cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, timeout=120)


def refused(p: subprocess.CompletedProcess[str], *words: str) -> None:
    assert p.returncode == 2, p.stdout + p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    for w in words:
        assert w in lines[0], lines[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --- the figures, as benchmark_serving takes them ----------------------------------------------------------------


def row(ttft: float, e2e: float, tokens: int, sent: float = 0.0) -> ms.RequestRow:
    return ms.RequestRow(input_len=100, output_len=tokens, output_tokens=tokens, sent_s=sent, ttft_s=ttft, e2e_s=e2e)


def test_tpot_excludes_the_first_token_and_throughput_is_over_the_duration():
    rows = [row(0.2, 1.2, 11), row(0.4, 2.4, 21), row(0.1, 0.1, 1)]  # the last: one token, no TPOT
    f = ms.figures(rows, itls=[0.1] * 30, duration_s=4.0)
    assert f.tpot_s.count == 2
    assert f.tpot_s.mean == pytest.approx((0.1 + 0.1) / 2)
    assert f.ttft_s.p50 == pytest.approx(0.2)
    assert f.requests_per_s == pytest.approx(3 / 4.0)
    assert f.output_tokens_per_s == pytest.approx(33 / 4.0)
    assert f.total_tokens_per_s == pytest.approx((33 + 300) / 4.0)
    values = [0.05 * i for i in range(1, 101)]
    d = ms.distribution(values)
    assert (d.p50, d.p90, d.p99) == pytest.approx(tuple(np.percentile(values, [50, 90, 99])))


def test_no_completed_request_gives_no_rates():
    f = ms.figures([], itls=[], duration_s=0.0)
    assert f.requests_per_s is None and f.ttft_s.p50 is None and f.ttft_s.count == 0


def test_shipped_schema_is_the_measurement_models_schema():
    shipped = json.loads((ROOT / "docs" / "serve-check.schema.json").read_text())
    assert shipped == json.loads(json.dumps(ms.json_schema())), (
        "regenerate: python -c \"import json; from gpuadvisor.servecheck.measurement import json_schema; "
        "open('docs/serve-check.schema.json','w').write(json.dumps(json_schema(), indent=1, sort_keys=True)+'\\n')\"")


def test_a_malformed_measurement_file_is_one_line(tmp_path):
    bad = tmp_path / "m.json"
    bad.write_text(json.dumps({"schema": "gpuadvisor.serve-check/1", "endpoint": "x"}))
    with pytest.raises(UserError, match=r"not a serve-check measurement .*gpuadvisor_version"):
        ms.load(bad)
    with pytest.raises(UserError, match="No such file"):
        ms.load(tmp_path / "missing.json")


def test_endpoint_forms():
    assert parse_endpoint("http://127.0.0.1:8000") == Endpoint("http", "127.0.0.1", 8000, "/v1")
    assert parse_endpoint("http://h:1/v1/completions").base_path == "/v1"
    assert parse_endpoint("https://h/proxy/v1/").url("/models") == "https://h:443/proxy/v1/models"
    for bad in ("ftp://h", "localhost:8000", "http://h:99999", "http://h/?q=1"):
        with pytest.raises(ValueError):
            parse_endpoint(bad)


def test_prompt_ids_stay_inside_the_vocabulary():
    assert prompt_id_range(128256) == (1000, 32000)
    low, high = prompt_id_range(2048)
    assert 0 < low < high == 2048


# --- the client against a loopback stream (the protocol, not an engine: fixed text at fixed gaps) -----------------

GAP_S = 0.04


class _Stream(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    bodies: ClassVar[list[dict]] = []

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # /v1/models
        body = json.dumps({"object": "list", "data": [{"id": "loop", "object": "model"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client cancelled (time-limit test)
            self._post()

    def _post(self) -> None:
        req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).bodies.append(req)
        if req["model"] != "loop":
            body = json.dumps({"error": {"message": f"model {req['model']} not found"}}).encode()
            self.send_response(404)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

        def chunk(data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        time.sleep(2 * GAP_S)  # the "prefill"
        for i in range(req["max_tokens"]):
            event = json.dumps({"choices": [{"index": 0, "text": f" t{i}"}]}).encode()
            half = len(event) // 2  # an event split over two chunks: the parser must join them
            chunk(b"data: " + event[:half])
            chunk(event[half:] + b"\n\n")
            if i < req["max_tokens"] - 1:
                time.sleep(GAP_S)
        chunk(b"data: " + json.dumps({"choices": [], "usage": {"completion_tokens": req["max_tokens"]}}).encode()
              + b"\n\ndata: [DONE]\n\n")
        chunk(b"")


@pytest.fixture
def loopback():
    _Stream.bodies = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Stream)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield parse_endpoint(f"http://127.0.0.1:{server.server_address[1]}")
    server.shutdown()
    server.server_close()


def test_client_times_a_stream_with_known_gaps(loopback):
    assert list_models(loopback) == ["loop"]
    plan = Plan(endpoint=loopback, served_model="loop", input_lens=[16, 32], output_lens=[5, 5], rate=None,
                concurrency=2, time_limit_s=30, seed=3, vocab_size=2048)
    r = replay(plan)
    assert r.tokens_from_usage and not r.stopped_by_time_limit
    assert [x.output_tokens for x in r.rows] == [5, 5]
    assert len(r.itls) == 8 and all(GAP_S * 0.9 < g < GAP_S * 3 for g in r.itls), r.itls
    f = ms.figures(r.rows, r.itls, r.duration_s)
    assert 2 * GAP_S * 0.9 < f.ttft_s.p50 < 2 * GAP_S * 3
    assert GAP_S * 0.9 < f.tpot_s.p50 < GAP_S * 2
    sent = _Stream.bodies
    assert sorted(len(b["prompt"]) for b in sent) == [16, 32] and all(b["stream"] and b["ignore_eos"] for b in sent)
    assert all(512 <= t < 2048 for b in sent for t in b["prompt"])


def test_time_limit_stops_the_run(loopback):
    plan = Plan(endpoint=loopback, served_model="loop", input_lens=[8] * 4, output_lens=[50] * 4, rate=None,
                concurrency=1, time_limit_s=1.0, seed=0, vocab_size=2048)
    t0 = time.perf_counter()
    r = replay(plan)
    assert time.perf_counter() - t0 < 1.8
    assert r.stopped_by_time_limit and len(r.rows) == 0


def test_an_error_answer_is_one_line_naming_it(loopback):
    plan = Plan(endpoint=loopback, served_model="other", input_lens=[8], output_lens=[2], rate=1.0,
                concurrency=None, time_limit_s=10, seed=0, vocab_size=2048)
    with pytest.raises(EndpointError, match=r"HTTP 404.*model other not found"):
        replay(plan)


def test_nothing_listening_is_one_line_exit_2():
    port = free_port()
    p = cli("serve-check", f"http://127.0.0.1:{port}", "--model", "llama-3.1-8b", "--concurrency", "1",
            "--requests", "2")
    refused(p, "cannot connect", f"127.0.0.1:{port}")


@pytest.mark.parametrize(("argv", "words"), [
    (("ftp://h", "--model", "7b", "--rate", "1", "--requests", "2"), ("not an http(s) URL",)),
    (("http://127.0.0.1:1", "--model", "7b", "--rate", "1", "--concurrency", "2", "--requests", "2"),
     ("not allowed with argument",)),
    (("http://127.0.0.1:1", "--model", "7b", "--rate", "1", "--requests", "99999"), ("--requests", "5,000")),
    (("http://127.0.0.1:1", "--model", "7b", "--rate", "1", "--requests", "2", "--time-limit", "7200"),
     ("--time-limit",)),
    (("http://127.0.0.1:1", "--model", "7b", "--rate", "1", "--requests", "2", "--save", "/nonexistent/dir/m.json"),
     ("--save", "does not exist")),
    (("http://127.0.0.1:1", "--model", "7b", "--rate", "1", "--requests", "2", "--engine", "nginx"),
     ("--engine", "unknown engine 'nginx'", "vllm@")),
    (("http://127.0.0.1:1", "--model", "7b", "--requests", "2"), ("--rate", "--concurrency")),
    (("http://127.0.0.1:1", "--model", "7b", "--rate", "1", "--requests", "2", "--lengths", "uniform:10-20",
      "--input-len", "64"), ("uniform:10-20", "drop --input-len")),
])
def test_bad_input_is_refused_before_anything_is_sent(argv, words):
    refused(cli("serve-check", *argv), *words)


def test_served_model_not_listed_is_refused(loopback):
    p = cli("serve-check", loopback.origin, "--model", "7b", "--served-model", "nope", "--concurrency", "1",
            "--requests", "1")
    refused(p, "--served-model nope", "serves loop")


# --- calibration: the fit recovers a measured TPOT and TTFT ----------------------------------------------------


def _measured(tmp_path: Path, tpot_scale: float, ttft_add_s: float) -> tuple[Path, ms.Measurement]:
    """A measurement of llama-3.1-8b on an H100 whose TPOT is `tpot_scale` x the shipped estimate's and whose TTFT
    is `ttft_add_s` longer: what a slower host and a front-end would show."""
    from gpuadvisor import api

    target = ms.Target(model="llama-3.1-8b", served_model="x", card="H100 SXM5 80GB", gpus=1, engine="vllm")
    load = ms.LoadSpec(rate=None, concurrency=4, input_len=512, output_len=128, lengths=None, requests=200, seed=0,
                       time_limit_s=60)
    stub = ms.Measurement(schema=ms.SCHEMA_ID, gpuadvisor_version="t", measured_at="t", endpoint="http://x/v1",
                          target=target, load=load, output_tokens_from="usage", stopped_by_time_limit=False,
                          figures=ms.figures([], [], 0.0), requests=[])
    pct = api.estimate(calibrate.estimate_request(stub, requests=200)).serving.percentiles
    tpot, ttft = pct["tpot_s"]["p50"] * tpot_scale, pct["ttft_s"]["p50"] + ttft_add_s
    rows = [row(ttft, ttft + tpot * 127, 128, sent=i * 0.1) for i in range(200)]
    m = stub.model_copy(update={"figures": ms.figures(rows, [tpot] * 100, 20.0), "requests": rows})
    path = tmp_path / "m.json"
    ms.save(m, path)
    return path, m


def test_fit_matches_the_measured_tpot_with_a_longer_host_time(tmp_path):
    path, m = _measured(tmp_path, tpot_scale=1.6, ttft_add_s=0.030)
    cal = calibrate.fit(ms.load(path), str(path))
    host = dict(cal.overrides)[calibrate.HOST]
    from gpuadvisor.estimate.serve.profiles import serve_engine

    assert host > serve_engine("vllm").host_s_per_iter
    assert cal.after["tpot_p50_s"] == pytest.approx(m.figures.tpot_s.p50, rel=0.02)
    assert cal.before["tpot_p50_s"] < 0.8 * m.figures.tpot_s.p50
    if calibrate.FRONTEND in dict(cal.overrides):  # where the profile has a front-end figure, TTFT is fitted too
        assert cal.after["ttft_p50_s"] == pytest.approx(m.figures.ttft_s.p50, rel=0.02)


def test_fit_never_goes_below_zero(tmp_path):
    path, _ = _measured(tmp_path, tpot_scale=0.3, ttft_add_s=0.0)
    cal = calibrate.fit(ms.load(path), str(path))
    assert dict(cal.overrides)[calibrate.HOST] == 0.0
    assert any("TPOT after the fit" in n for n in cal.notes)


def test_estimate_with_calibration_uses_the_fitted_profile(tmp_path):
    path, m = _measured(tmp_path, tpot_scale=1.6, ttft_add_s=0.0)
    base = cli("estimate", "llama-3.1-8b", "--engine", "vllm", "--concurrency", "4", "--input-len", "512",
               "--output-len", "128", "--requests", "200", "--json")
    cal = cli("estimate", "llama-3.1-8b", "--concurrency", "4", "--input-len", "512", "--output-len", "128",
              "--requests", "200", "--calibration", str(path), "--json")
    assert base.returncode == 0 and cal.returncode == 0, base.stderr + cal.stderr
    a, b = json.loads(base.stdout), json.loads(cal.stdout)
    assert b["rests_on"]["assumptions"]["engine"] == "vllm"
    assert b["serving"]["tpot_s"] == pytest.approx(m.figures.tpot_s.p50, rel=0.02)
    assert a["serving"]["tpot_s"] < 0.8 * b["serving"]["tpot_s"]
    assert b["rests_on"]["assumptions"]["engine_overrides"]["host_s_per_iter"] > 0
    text = cli("estimate", "llama-3.1-8b", "--concurrency", "4", "--calibration", str(path))
    assert text.returncode == 0 and f"calibrated on {path}" in text.stdout


def test_calibration_of_another_engine_is_refused(tmp_path):
    path, _ = _measured(tmp_path, tpot_scale=1.2, ttft_add_s=0.0)
    refused(cli("estimate", "llama-3.1-8b", "--engine", "sglang", "--concurrency", "4", "--calibration", str(path)),
            "--calibration", "vllm", "sglang")
    refused(cli("estimate", "llama-3.1-8b", "--mode", "training", "--calibration", str(path)), "inference")
