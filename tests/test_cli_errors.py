"""Usage errors of the command line: one line, exit code 2, nothing taken for what it is not."""

from __future__ import annotations

import pytest


def test_a_flag_is_taken_by_its_whole_name_only(capsys):
    """argparse's prefix matching had read `tui --mode training` as `--model training` (the TUI has no --mode):
    a flag a command does not have is refused in one line, never taken for a longer one."""
    from gpuadvisor.cli import main

    assert main(["tui", "--model", "llama-3.1-8b", "--mode", "training"]) == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments: --mode training" in err and len(err.strip().splitlines()) == 1
    assert main(["estimate", "llama-3.1-8b", "--output-l", "64"]) == 2


@pytest.mark.parametrize("argv, named", [
    (["recommend", "llama-3.1-8b", "--deadline", "2h"], "--deadline applies to training"),
    (["recommend", "llama-3.1-8b", "--tok-s", "30", "--tokens", "1b"], "--tokens is a training budget"),
    (["recommend", "llama-3.1-8b", "--mode", "training", "--tokens", "1b", "--ttft", "1"], "--ttft is a serving"),
    (["recommend", "llama-3.1-8b", "--mode", "lora", "--tokens", "1b", "--users", "4"], "--users is a serving"),
])
def test_a_target_of_the_other_kind_of_job_is_refused(argv, named, capsys):
    """recommend had taken --deadline for serving and --ttft or --users for training and ignored them: a target the
    job does not have is refused in one line, exit 2, before anything is priced."""
    from gpuadvisor.cli import main

    assert main(argv) == 2
    assert named in capsys.readouterr().err


def test_list_models_takes_no_workload(capsys):
    """`estimate --list-models --mode training` had listed every preset and dropped --mode: refused, as a model is."""
    from gpuadvisor.cli import main

    assert main(["estimate", "--list-models", "--mode", "training"]) == 2
    assert "drop --mode" in capsys.readouterr().err
    assert main(["estimate", "--list-models", "--json"]) == 0


def test_an_engine_the_card_cannot_run_names_one_it_can(capsys):
    """A Tesla P40 (compute capability 6.1) asked about with the default engine (vLLM-class) is refused, and the line
    says what does run there, where it had said only what does not."""
    from gpuadvisor.cli import main

    assert main(["estimate", "llama-3.1-8b", "--gpu", "P40"]) == 2
    assert "--engine eager runs on it" in capsys.readouterr().err
    assert main(["estimate", "llama-3.1-8b", "--gpu", "P40", "--engine", "vllm", "--concurrency", "2"]) == 2
    assert "--engine llamacpp or hf run on it" in capsys.readouterr().err
    assert main(["estimate", "llama-3.1-8b", "--gpu", "P40", "--engine", "eager"]) == 0


def test_a_one_token_answer_simulates_without_an_inter_token_latency(capsys):
    """--output-len 1 has no second token: the simulation's printout had multiplied its missing inter-token latency
    (internal error, exit 3); it now says there is none."""
    from gpuadvisor.cli import main

    argv = ["estimate", "gemma-3-12b", "--gpu", "B200", "--engine", "sglang", "--rate", "4", "--requests", "20",
            "--input-len", "128", "--output-len", "1"]
    assert main(argv) == 0
    assert "no inter-token latency" in capsys.readouterr().out


@pytest.mark.parametrize("argv, gpus", [
    (["llama-3.1-70b", "--tp", "4"], 4),
    (["llama-3.1-70b", "--tp", "4", "--pp", "2", "--engine", "vllm", "--concurrency", "2", "--requests", "20"], 8),
    (["llama-3.1-8b", "--engine", "vllm", "--tp", "2", "--prefill-gpus", "2", "--prefill-tp", "2", "--rate", "1",
      "--requests", "20"], 4),
])
def test_the_parallel_degrees_given_set_the_gpus(argv, gpus, capsys):
    """`--tp 4` without --gpus had been refused ('1 GPUs cannot be split into tensor-parallel groups of 4'): the
    degrees given are the GPUs asked for; an explicit --gpus that contradicts them is still refused."""
    import json

    from gpuadvisor.cli import main

    assert main(["estimate", *argv, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["hardware"]["gpus"] == gpus
    assert main(["estimate", "llama-3.1-70b", "--gpus", "1", "--tp", "4"]) == 2


def test_the_slo_search_refuses_what_it_does_not_use_and_honours_only(capsys):
    """`recommend --rate R --p99-ttft T` searches rentals of one serving engine: --mode training, --buy-only and the
    steady-state targets had been taken and ignored (refused now); --only had been ignored too (honoured now)."""
    from gpuadvisor.cli import main

    slo = ["recommend", "llama-3.1-8b", "--rate", "2", "--p99-ttft", "1s", "--p99-tpot", "50ms"]
    assert main([*slo, "--mode", "training"]) == 2
    assert "--mode training: not used by the search" in capsys.readouterr().err
    assert main([*slo, "--buy-only"]) == 2
    capsys.readouterr()
    assert main([*slo, "--only", "geforce", "--json"]) == 0
    import json

    evaluated = json.loads(capsys.readouterr().out)["evaluated"]
    assert evaluated and all("GeForce" in e["card"] for e in evaluated)


def test_steady_state_advice_refuses_the_flags_of_the_rate_search_and_of_rank(capsys):
    """Without --rate, recommend had taken --serve-engine, --lengths, --pp (the search at a rate's) and --gpu-counts
    (--rank's) and ignored them."""
    from gpuadvisor.cli import main

    assert main(["recommend", "llama-3.1-8b", "--serve-engine", "sglang"]) == 2
    assert "flags of the search at a request rate" in capsys.readouterr().err
    assert main(["recommend", "llama-3.1-8b", "--gpu-counts", "1,2"]) == 2
    assert "--rank" in capsys.readouterr().err
    assert main(["recommend", "llama-3.1-8b", "--rate", "2", "--p99-ttft", "1s", "--pp", "2"]) == 2


def test_flags_that_need_what_is_not_given_are_refused(capsys, tmp_path):
    """--force without the file it overwrites (probe --out, check --junit), and a workload's flags on a report of
    probe results alone, had been taken and dropped."""
    from gpuadvisor.cli import main

    probe = "tests/data/h100-probe.json"
    assert main(["probe", "--quick", "--force"]) == 2
    assert main(["check", "--rules", "rules/training-node.yaml", "--probe", probe, "--force"]) == 2
    assert main(["report", "--probe", probe, "--mode", "training", "-o", str(tmp_path / "r.html")]) == 2
    assert "a workload's flags" in capsys.readouterr().err
    assert main(["report", "--probe", probe, "-o", str(tmp_path / "r.html")]) == 0


def test_catalog_show_refuses_a_name_that_means_several_cards(capsys):
    """`catalog show Jetson` had shown the Jetson Nano, one of eight Jetsons; a name several cards match equally is
    refused with them, as --gpu refuses it."""
    from gpuadvisor.cli import main

    assert main(["catalog", "show", "Jetson"]) == 2
    assert "matches several cards" in capsys.readouterr().err
    assert main(["catalog", "show", "4090"]) == 0


def test_a_simulated_engine_given_to_the_steady_state_advice_is_pointed_to_its_flags(capsys):
    """recommend --engine sglang had answered only "invalid choice ... graphs, eager": it now says where SGLang is
    simulated (recommend --rate ... --serve-engine, estimate --engine)."""
    from gpuadvisor.cli import main

    assert main(["recommend", "llama-3.1-8b", "--engine", "sglang"]) == 2
    assert "--serve-engine sglang" in capsys.readouterr().err


def test_a_time_per_token_target_for_one_token_answers_is_refused(capsys):
    """--p99-tpot with --output-len 1 had been met at 'P99 TPOT 0.0 ms' by every option: there is no second token."""
    from gpuadvisor.cli import main

    assert main(["recommend", "llama-3.1-8b", "--rate", "2", "--p99-tpot", "50ms", "--output-len", "1"]) == 2
    assert main(["estimate", "llama-3.1-8b", "--engine", "vllm", "--rate", "2", "--output-len", "1",
                 "--p99-tpot", "50ms"]) == 2
    assert "no time per output token" in capsys.readouterr().err
