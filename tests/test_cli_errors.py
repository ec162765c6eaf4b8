"""Usage errors of the command line: one line, exit code 2, nothing taken for what it is not."""

from __future__ import annotations


def test_a_flag_is_taken_by_its_whole_name_only(capsys):
    """argparse's prefix matching had read `tui --mode training` as `--model training` (the TUI has no --mode):
    a flag a command does not have is refused in one line, never taken for a longer one."""
    from gpuadvisor.cli import main

    assert main(["tui", "--model", "llama-3.1-8b", "--mode", "training"]) == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments: --mode training" in err and len(err.strip().splitlines()) == 1
    assert main(["estimate", "llama-3.1-8b", "--output-l", "64"]) == 2
