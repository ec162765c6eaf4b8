"""Issue 28: no hostile command hangs or runs unbounded. Each returns within 10 s: an answer, or exit 2 with one
line naming the flag and its range (gpuadvisor/core/limits.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

ANSWERS = [  # each hung or ran for minutes before
    "estimate llama-3.1-8b --engine llamacpp --concurrency 4",
    "estimate llama-3.1-8b --engine llamacpp --rate 1",
    "estimate llama-3.1-8b --engine sglang --requests 2000",
]
REFUSED = [  # (command, what the one line must say)
    ("estimate llama-3.1-8b --engine vllm --rate 10 --requests 100000000",
     "--requests: 100000000 is out of range: 1 to 10,000"),
    ("estimate llama-3.1-8b --seq 0 --mode training", "--seq: 0 is out of range: 1 to 10,000,000 tokens"),
    ("estimate llama-3.1-8b --input-len 0", "--input-len: 0 is out of range"),
    ("estimate llama-3.1-8b --gpus 1000000", "--gpus: 1000000 is out of range: 1 to 65,536 GPUs"),
    ("estimate llama-3.1-8b --batch 100000000", "--batch: 100000000 is out of range"),
    ("estimate llama-3.1-8b --engine vllm --concurrency 100000000", "--concurrency: 100000000 is out of range"),
    ("estimate llama-3.1-8b --engine vllm --rate 1e300", "--rate: 1e300 is out of range"),
    ("estimate llama-3.1-8b --engine vllm --rate 1 --seed -1", "--seed: -1 is out of range"),
    ("estimate llama-3.1-8b --engine vllm --rate 1 --replicas 100000000", "--replicas: 100000000 is out of range"),
    ("recommend llama-3.1-8b --rate 5 --p99-ttft 1s --requests 10000", "--requests: 10000 is out of range: 1 to 1,000"),
    ("recommend llama-3.1-8b --users 100000000", "--users: 100000000 is out of range"),
]


def _run(command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gpuadvisor", *command.split()], cwd=ROOT, capture_output=True,
                          text=True, timeout=10)


@pytest.mark.parametrize("command", ANSWERS)
def test_hostile_load_gets_an_answer_within_10_s(command):
    done = _run(command)
    assert done.returncode == 0, done.stderr
    assert "TTFT" in done.stdout


@pytest.mark.parametrize(("command", "says"), REFUSED)
def test_out_of_range_is_refused_in_one_line_within_10_s(command, says):
    done = _run(command)
    assert done.returncode == 2 and not done.stdout
    assert len(done.stderr.strip().splitlines()) == 1 and says in done.stderr, done.stderr
