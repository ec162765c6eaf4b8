"""The way forward `estimate` prints when a layout does not fit is a command that works: the flags it names,
added to the user's own, give an estimate that fits with the memory the line quotes (a suggestion costed in
another layout than the one its flags ask for had told users to add --checkpointing to a run that then needed
132 GiB a GPU)."""

from __future__ import annotations

import json
import shlex

import pytest

from gpuadvisor.cli import main

CASES = [
    "llama-3.1-8b --mode training --gpus 8 --gpu H100-SXM --seq 8192 --sharding fsdp --batch 64",
    "llama-3.1-8b --mode training --gpu H100-SXM --seq 4096 --batch 8",
    "llama-3.1-70b --mode lora --gpus 2 --gpu 'A100 SXM4 80GB' --batch 4",
    "mistral-7b --mode training --gpu L40S --batch 2",
    "llama-3.1-70b --gpu H100-SXM --users 8",
    "llama-3.1-8b --gpu RTX-3060 --users 64 --input-len 8192",
]


def _estimate(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    assert main(["estimate", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _with(args: list[str], flag: str) -> list[str]:
    """The user's arguments with the suggestion's flags set (a flag given twice takes the suggestion's value)."""
    out = list(args)
    words = shlex.split(flag.replace("(estimate)", ""))
    for i, word in enumerate(words):
        if not word.startswith("--"):
            continue
        value = words[i + 1] if i + 1 < len(words) and not words[i + 1].startswith("--") else None
        if word in out:
            if value is not None:
                out[out.index(word) + 1] = value
        else:
            out += [word] + ([value] if value is not None else [])
    return out


@pytest.mark.parametrize("case", CASES)
def test_each_way_forward_reproduces_when_its_flags_are_given(case: str, capsys: pytest.CaptureFixture[str]) -> None:
    args = shlex.split(case)
    first = _estimate(args, capsys)
    assert not first["fits"]
    fixes = first["detail"]["way_forward"]
    assert fixes, "a layout that does not fit offers a way forward"
    for fix in fixes:
        again = _estimate(_with(args, fix["flag"]), capsys)
        quoted = fix["figures"]["needed_gib_per_gpu"]
        assert again["fits"], fix["line"]
        assert again["memory"]["per_gpu_bytes"] / 2**30 == pytest.approx(quoted, rel=0.03, abs=0.5), fix["line"]


def test_an_offloaded_answer_fits_with_what_stays_on_the_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    """--offload answers with its plan: it fits, the memory a GPU holds is the plan's, the rate the plan's decode."""
    d = _estimate(["llama-3.1-70b", "--gpu", "RTX-4090", "--users", "1", "--quant", "q4_k_m", "--offload"], capsys)
    plan = d["detail"]["offload"]
    assert d["fits"] and not plan["fits_entirely"]
    assert d["memory"]["per_gpu_bytes"] / 2**30 == pytest.approx(plan["gpu_gib"], abs=0.01)
    assert d["memory"]["per_gpu_bytes"] < d["memory"]["capacity_bytes"]
    assert d["rate"]["value"] == pytest.approx(plan["decode_tokens_per_s"])


def test_a_change_the_workload_refuses_is_not_offered(capsys: pytest.CaptureFixture[str]) -> None:
    """An fp32 LoRA that does not fit had failed with QLoRA's error ('QLoRA ... not fp32'): the way forward tried to
    build a QLoRA variant of it, which the workload refuses. Such a change is left out; the answer still comes."""
    d = _estimate(["gemma-3-4b", "--gpu", "RTX-3060", "--mode", "lora", "--dtype", "fp32", "--batch", "64", "--seq",
                   "8192"], capsys)
    assert not d["fits"]
    assert all("qlora" not in fix["flag"] for fix in d["detail"]["way_forward"])
