"""Names users type for a preset: Hugging Face repo ids, case, -instruct/-chat/-hf/-it endings, Ollama tags;
what does not name a preset is refused in one line with the closest names (issue 33, part 6)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from gpuadvisor import modelspec
from gpuadvisor.core.errors import UserError
from gpuadvisor.modelspec import list_presets, resolve_model

ROOT = Path(__file__).resolve().parent.parent

# (typed, preset that answers, whether the answer says which preset it used)
SPELLINGS = [
    ("llama-3.1-8b", "llama-3.1-8b", False),
    ("Llama-3.1-8B", "llama-3.1-8b", False),
    ("llama3.1-8b", "llama-3.1-8b", False),
    ("llama3.1:8b", "llama-3.1-8b", False),  # Ollama's tag
    ("llama-3.1-8b-instruct", "llama-3.1-8b", True),
    ("meta-llama/Llama-3.1-8B", "llama-3.1-8b", True),
    ("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b", True),
    ("meta-llama/Meta-Llama-3.1-8B-Instruct", "llama-3.1-8b", True),
    ("Meta-Llama-3.1-8B", "llama-3.1-8b", True),
    ("llama-3-8b", "llama-3-8b", False),
    ("meta-llama/Meta-Llama-3-8B-Instruct", "llama-3-8b", True),
    ("llama3:70b", "llama-3-70b", False),
    ("meta-llama/Llama-3.1-70B-Instruct", "llama-3.1-70b", True),
    ("meta-llama/Llama-3.3-70B-Instruct", "llama-3.3-70b", True),
    ("Llama-3.1-405B", "llama-3.1-405b", False),
    ("meta-llama/Llama-3.2-1B-Instruct", "llama-3.2-1b", True),
    ("meta-llama/Llama-2-7b-chat-hf", "llama-2-7b", True),
    ("Qwen/Qwen2.5-7B-Instruct", "qwen2.5-7b", True),
    ("qwen2.5:7b", "qwen2.5-7b", False),
    ("google/gemma-2-9b-it", "gemma-2-9b", True),
    ("mistralai/Mistral-7B-Instruct-v0.1", "mistral-7b", True),
    ("mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b", True),
    ("mistralai/Mistral-Nemo-Instruct-2407", "mistral-nemo-12b", True),
    ("bert-base-uncased", "bert-base", True),
    ("vit-b/16", "vit-base-16", True),
    ("gpt2", "gpt2", False),
]


@pytest.mark.parametrize(("typed", "name", "says_preset"), SPELLINGS)
def test_common_spellings_resolve_to_their_preset(typed, name, says_preset):
    spec = resolve_model(typed)
    assert spec.name == name
    assert spec.asked_as == (typed if says_preset else "")


def test_an_alias_answers_with_the_presets_figures():
    """asked_as is no part of the architecture: the spec equals the preset's, so estimates are the same."""
    typed = resolve_model("meta-llama/Meta-Llama-3.1-8B-Instruct")
    assert typed == resolve_model("llama-3.1-8b")
    assert typed.to_dict()["asked_as"] == "meta-llama/Meta-Llama-3.1-8B-Instruct"
    assert "asked_as" not in resolve_model("llama-3.1-8b").to_dict()  # --list-models --json as before


def test_llama_3_1_is_its_own_preset_with_its_own_source():
    """Llama 3.1 was answered as Llama 3 (named llama-3-8b, not in --list-models); now each has its config."""
    names = [s.name for s in list_presets()]
    for name in ("llama-3-8b", "llama-3.1-8b", "llama-3-70b", "llama-3.1-70b", "llama-3.3-70b", "llama-3.1-405b"):
        assert name in names
    v3, v31 = resolve_model("llama-3-8b"), resolve_model("llama-3.1-8b")
    assert v3.source.endswith("/meta-llama/Meta-Llama-3-8B/blob/main/config.json")
    assert v31.source.endswith("/meta-llama/Llama-3.1-8B/blob/main/config.json")
    assert resolve_model("llama-3.3-70b").source.endswith("/meta-llama/Llama-3.3-70B-Instruct/blob/main/config.json")
    assert v31.num_params == v3.num_params == 8_030_261_248  # the published count of both


@pytest.mark.parametrize(("typed", "closest"), [
    ("llama-4-8b", "llama-3-8b"),
    ("llama-3.1-13b", "llama-3.1-8b"),  # the same family at other sizes first
    ("llama-2-7bb", "llama-2-7b"),
    ("mistralai/Mistral-7B-Instruct-v0.3", "mistral-7b"),  # v0.3's vocabulary differs: refused, not mapped
    ("TinyLlama/TinyLlama-1.1B-Chat-v1.0", "tinyllama-1.1b"),
])
def test_unknown_names_are_refused_with_the_closest_presets(typed, closest):
    with pytest.raises(UserError) as err:
        resolve_model(typed)
    line = str(err.value)
    assert "\n" not in line
    hint = re.search(r"did you mean ([^?]+)\?", line)
    assert hint, line
    offered = hint.group(1).split(", ")
    assert offered[0] == closest and len(offered) <= 3
    assert all(name in {s.name for s in list_presets()} for name in offered)


@pytest.mark.parametrize(("typed", "preset", "quant"), [
    ("Qwen/Qwen2.5-7B-Instruct-AWQ", "qwen2.5-7b", "awq"),
    ("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4", "qwen2.5-7b", "gptq"),
    ("unsloth/Meta-Llama-3.1-8B-Instruct-bnb-4bit", "llama-3.1-8b", "nf4"),
    ("meta-llama/Llama-3.1-405B-Instruct-FP8", "llama-3.1-405b", "fp8"),
])
def test_quantized_repackagings_are_refused_with_the_quant_to_give(typed, preset, quant):
    """Answering a 4-bit repo id in bf16 would be wrong by 4x in weights: say which flag gives it."""
    with pytest.raises(UserError, match=re.escape(f"ask for: {preset} --quant {quant}")):
        resolve_model(typed)


def test_two_presets_spelt_alike_are_a_data_error(tmp_path, monkeypatch):
    data = tmp_path / "models.yaml"
    data.write_text("models:\n"
                    "  - {name: llama-3.1-8b, num_layers: 1, hidden_size: 64, num_heads: 1, intermediate_size: 64,"
                    " source: 'https://a'}\n"
                    "  - {name: llama3.1-8b, num_layers: 2, hidden_size: 64, num_heads: 1, intermediate_size: 64,"
                    " source: 'https://b'}\n")
    monkeypatch.setattr(modelspec, "presets_path", lambda: data)
    with pytest.raises(UserError, match=re.escape("the name 'llama3.1-8b' is 'llama-3.1-8b''s as well")):
        modelspec._read_presets()


def _documented_model_names() -> set[str]:
    """Preset names in README.md and docs/*.md command lines: `gpuadvisor estimate|recommend [--model] NAME`."""
    texts = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    pattern = re.compile(r"gpuadvisor (?:estimate|recommend)(?: --model)? +([A-Za-z0-9][\w.\-/:]*)")
    names = set()
    for path in texts:
        for name in pattern.findall(path.read_text()):
            if ":" in name or name.isupper() or modelspec.parse_param_count(name) is not None:
                continue  # a traced model (torchvision:NAME), a placeholder (MODEL) or a count (7b)
            names.add(name)
    return names


def test_every_preset_the_docs_use_is_listed_by_that_name():
    listed = subprocess.run([sys.executable, "-m", "gpuadvisor", "estimate", "--list-models"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.split()
    documented = _documented_model_names()
    assert {"llama-3.1-8b", "llama-3.1-70b", "llama-3-8b"} <= documented  # the grep finds what it should
    assert sorted(documented - set(listed)) == []


def test_the_answer_says_which_preset_answered():
    cli = [sys.executable, "-m", "gpuadvisor", "estimate"]
    out = subprocess.run([*cli, "meta-llama/Meta-Llama-3.1-8B-Instruct"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    assert out.startswith("llama-3.1-8b (preset for 'meta-llama/Meta-Llama-3.1-8B-Instruct'; 8.03B params)")
    refused = subprocess.run([*cli, "llama-4-8b"], cwd=ROOT, capture_output=True, text=True)
    assert refused.returncode == 2 and refused.stdout == ""
    assert len(refused.stderr.strip().splitlines()) == 1 and "did you mean llama-3-8b" in refused.stderr


def test_a_small_model_is_sized_in_its_own_unit():
    """A sub-billion model's size reads in millions (a 0.3M-parameter GRU read 0.00B); billions keep two decimals."""
    from gpuadvisor.cli.estimate_cmd import describe_workload
    from gpuadvisor.workload import make_workload

    assert describe_workload(make_workload("qwen2.5-0.5b")).startswith("qwen2.5-0.5b (494M params)")
    assert describe_workload(make_workload("llama-3.1-8b")).startswith("llama-3.1-8b (8.03B params)")
