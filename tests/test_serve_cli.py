"""`estimate --engine vllm --rate ...` and `recommend --rate --p99-*`: output and one-line errors (exit 2)."""

from __future__ import annotations

import json

import pytest

from gpuadvisor.cli import main


def code_of(argv):
    """The exit status of the CLI (argparse raises SystemExit; UserError is returned as 2)."""
    try:
        return main(list(argv))
    except SystemExit as e:
        return e.code


def run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_estimate_rate_json(capsys):
    rc, out, _ = run(capsys, "estimate", "llama-3.1-8b", "--engine", "vllm", "--rate", "20", "--input-len", "1000",
                     "--output-len", "200", "--requests", "200", "--json")
    assert rc == 0
    d = json.loads(out)
    assert d["question"] == "serving"
    f = d["detail"]["serving_simulation"]["figures"]
    assert f["output_tokens_per_s"] > 0 and f["ttft_s"]["p99"] >= f["ttft_s"]["p50"] > 0
    assert f["tpot_s"]["p90"] > 0
    pct = d["serving"]["percentiles"]
    assert pct["ttft_s"] == f["ttft_s"] and d["serving"]["ttft_s"] == f["ttft_s"]["p50"]
    assert d["serving"]["aggregate_tokens_per_s"] == f["output_tokens_per_s"]
    a = d["rests_on"]["assumptions"]
    assert a["engine"] == "vllm" and a["kv_dtype"] == "bf16" and a["chunk_tokens"] == 8192


def test_estimate_sharegpt_text(capsys):
    rc, out, _ = run(capsys, "estimate", "llama-3.1-8b", "--engine", "sglang", "--rate", "10", "--lengths", "sharegpt",
                     "--requests", "200", "--kv-dtype", "fp8")
    assert rc == 0
    assert "sharegpt" in out and "P99" in out and "KV cache fp8" in out and "token budget" in out


def test_estimate_text_gives_the_mean_beside_the_percentiles(capsys):
    """A benchmark client reports each latency's mean beside its percentiles (vllm bench serve: Mean, Median, P99
    TTFT and TPOT): the text answer gives the simulation's mean too, the JSON's figure."""
    args = ("estimate", "qwen3-8b", "--engine", "vllm", "--concurrency", "4", "--requests", "40")
    rc, out, _ = run(capsys, *args)
    assert rc == 0
    rc, js, _ = run(capsys, *args, "--json")
    f = json.loads(js)["detail"]["serving_simulation"]["figures"]
    for label, key in (("TTFT (client: request sent to first token received)", "ttft_s"),
                       ("time per output token", "tpot_s")):
        line = next(x for x in out.splitlines() if x.strip().startswith(label))
        assert f"mean {f[key]['mean'] * 1e3:,.1f} ms, P50 {f[key]['p50'] * 1e3:,.1f} ms" in line, line


def test_estimate_takes_the_given_lengths_as_a_sharegpt_draws_means(capsys):
    """A published ShareGPT run's mean lengths, given as --input-len/--output-len, are the draw's means: the answer
    says so, where they had been left unread."""
    rc, out, _ = run(capsys, "estimate", "qwen3-8b", "--engine", "vllm", "--concurrency", "4", "--lengths",
                     "sharegpt-vllm", "--input-len", "233", "--output-len", "221", "--requests", "40", "--json")
    assert rc == 0
    load = json.loads(out)["detail"]["serving_simulation"]["load"]
    assert "means 233 input, 221 output" in load["lengths"]
    assert load["mean_input_len"] == pytest.approx(233, rel=0.05) and load["mean_output_len"] == pytest.approx(221,
                                                                                                             rel=0.1)


@pytest.mark.parametrize("argv", [
    ["--engine", "tgi", "--rate", "2"],
    ["--engine", "vllm", "--rate", "0"],
    ["--engine", "vllm", "--rate", "fast"],
    ["--engine", "vllm", "--lengths", "zipf"],
    ["--engine", "vllm", "--lengths", "/no/such/file"],
    ["--engine", "vllm", "--p99-ttft", "-1s"],
    ["--engine", "vllm", "--p99-tpot", "soon"],
    ["--engine", "vllm", "--kv-dtype", "fp3"],
    ["--engine", "llamacpp", "--kv-dtype", "fp8"],
    ["--engine", "vllm", "--rate", "2", "--users", "3"],
])
def test_estimate_bad_input_one_line_exit_2(capsys, argv):
    assert code_of(["estimate", "llama-3.1-8b", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err


def test_bad_length_file_exit_2(capsys, tmp_path):
    f = tmp_path / "l.txt"
    f.write_text("12 x\n")
    assert code_of(["estimate", "llama-3.1-8b", "--engine", "vllm", "--lengths", str(f)]) == 2
    assert "l.txt:1" in capsys.readouterr().err


def test_recommend_slo(capsys):
    rc, out, _ = run(capsys, "recommend", "llama-3.1-70b", "--rate", "5", "--p99-ttft", "1s", "--p99-tpot", "50ms",
                     "--requests", "150", "--json")
    assert rc == 0
    d = json.loads(out)
    p = d["pick"]
    assert p and p["meets"] and p["p99_ttft_s"] <= 1.0 and p["p99_tpot_s"] <= 0.05 and "binds" in p
    cheaper = [t for t in d["evaluated"] if not t["meets"]]
    assert all(t["usd_per_hour"] <= p["usd_per_hour"] for t in cheaper)


def test_recommend_slo_needs_a_rate(capsys):
    assert code_of(["recommend", "llama-3.1-70b", "--p99-ttft", "1s"]) == 2


def test_a_burst_past_the_engines_sequences_carries_the_validations_caveat(capsys):
    """1,000 requests queued at once on vLLM's 256 A100 sequences: the answer says what published runs of that kind
    measured (docs/serving-accuracy.md); 200 queued at once, or any number at a rate, do not carry it."""
    def notes(*extra):
        rc, out, _ = run(capsys, "estimate", "qwen3-14b", "--gpu", "A100 SXM4 80GB", "--engine", "vllm",
                         "--input-len", "200", "--output-len", "200", *extra, "--json")
        assert rc == 0
        return [n for n in json.loads(out)["notes"] if "queued at once" in n]

    assert notes("--requests", "1000") and "docs/serving-accuracy.md" in notes("--requests", "1000")[0]
    assert not notes("--requests", "200")
    assert not notes("--requests", "1000", "--rate", "5")
    rc, out, _ = run(capsys, "estimate", "qwen3-14b", "--gpu", "A100 SXM4 80GB", "--engine", "vllm",
                     "--input-len", "200", "--output-len", "200", "--requests", "1000")
    assert rc == 0 and "caveat: more requests queued at once" in " ".join(out.split())


def test_in_process_drops_the_http_front_end(capsys):
    """`--in-process` (an offline benchmark such as trtllm-bench): no front-end time per request and no streaming,
    so 600 queued ShareGPT requests through TensorRT-LLM on an H100 come out faster than served over HTTP (where
    trtllm-serve's streaming paces the step), and the answer says which it is."""
    base = ("estimate", "qwen3-14b", "--engine", "trtllm", "--requests", "600", "--lengths", "sharegpt", "--json")
    figures = {}
    for extra in ((), ("--in-process",)):
        rc, out, _ = run(capsys, *base, *extra)
        assert rc == 0
        d = json.loads(out)
        figures[bool(extra)] = d["detail"]["serving_simulation"]["figures"]["output_tokens_per_s"]
        assert d["detail"]["serving_simulation"]["assumptions"]["served"] is not bool(extra)
    assert figures[True] > 1.2 * figures[False]
    rc, out, _ = run(capsys, *base[:-1], "--in-process")
    assert rc == 0 and "in-process (no HTTP front-end" in " ".join(out.split())


def test_in_process_is_refused_where_nothing_is_served(capsys):
    rc, _, err = run(capsys, "estimate", "llama-3.1-8b", "--mode", "training", "--batch", "4", "--micro-batch", "2",
                     "--in-process")
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "--in-process" in err
