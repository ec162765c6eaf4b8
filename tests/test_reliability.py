"""Failure modes, one test each, faking the failing layer at its boundary (docs/reliability.md).

Each row of the reliability table that can run without a GPU has a test here or is named in
the table with the test that covers it elsewhere.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import types
from pathlib import Path

import pytest

import gpuadvisor.probe_runner as pr
from gpuadvisor import devices
from gpuadvisor.cli import main
from gpuadvisor.core import results
from gpuadvisor.core.errors import UserError
from gpuadvisor.core.install import package_requirement
from gpuadvisor.core.results import GpuState
from gpuadvisor.probe_runner import RunOptions, flags_for

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "tests" / "data" / "h100-probe.json"
SMALL = {"host": {"vec_bytes": 1 << 20, "mat_n": 64, "repeats": 2},
         "crossover": {"vector_sizes": [1 << 10, 1 << 12], "matmul_sizes": [16, 32], "repeats": 2}}


@pytest.fixture
def small_probes(monkeypatch):
    """Keep the real runner and real discovery, but small host sizes so tests stay fast."""
    real = pr.run_probes

    def run(opts, **kw):
        opts = RunOptions(mode=opts.mode, only=opts.only, probe_options=SMALL, catalog_dirs=opts.catalog_dirs)
        return real(opts, **kw)

    monkeypatch.setattr(pr, "run_probes", run)
    devices.reset_cache()
    yield
    devices.reset_cache()


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_usage_error(code: int, err: str, *needles: str) -> None:
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("gpuadvisor: error: "), err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err, err


def _fake_nvml_failing_init(message: str) -> types.ModuleType:
    mod = types.ModuleType("pynvml")

    class NVMLError(Exception):
        pass

    def init():
        raise NVMLError(message)

    mod.NVMLError = NVMLError
    mod.nvmlInit = init
    return mod


# --- no driver, NVML missing or failing, CuPy missing ------------------------------------------------


def test_no_driver_runs_host_probe_and_says_so(monkeypatch, capsys, small_probes):
    monkeypatch.setitem(sys.modules, "pynvml", _fake_nvml_failing_init("Driver Not Loaded"))
    monkeypatch.setattr(devices, "load_cupy", lambda: (_ for _ in ()).throw(devices.Unavailable("CuPy: no CUDA")))
    code, out, _ = cli(capsys, "probe", "--json")
    data = json.loads(out)
    assert code == 0
    assert data["gpu_found"] is False
    assert data["message"].startswith("no NVIDIA GPU found: NVML: Driver Not Loaded")
    assert {p["probe"]: p["status"] for p in data["host_probes"]} == {"host": "ok", "crossover": "ok"}


def test_nvml_bindings_missing(monkeypatch, small_probes):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml -> ImportError
    monkeypatch.setattr(devices, "load_cupy", lambda: (_ for _ in ()).throw(devices.Unavailable("CuPy: none")))
    d = devices.discover()
    assert not d.found
    assert d.message.startswith("no NVIDIA GPU found: NVML: Python bindings not importable")


def test_nvml_failing_midway_keeps_the_device_from_cuda(monkeypatch):
    """NVML initialises but fails on the first query: the reason is kept, discovery does not raise."""
    mod = types.ModuleType("pynvml")
    mod.nvmlInit = lambda: None

    def count():
        raise RuntimeError("Unknown Error")

    mod.nvmlDeviceGetCount = count
    monkeypatch.setitem(sys.modules, "pynvml", mod)
    monkeypatch.setattr(devices, "load_cupy", lambda: (_ for _ in ()).throw(devices.Unavailable("CuPy: none")))
    devices.reset_cache()
    try:
        d = devices.discover()
    finally:
        devices.reset_cache()
    assert not d.found and "Unknown Error" in d.message


def test_gpu_present_but_cupy_missing(monkeypatch, capsys, small_probes):
    found = devices.Discovery(
        devices=[devices.DeviceInfo(index=0, name="NVIDIA H100 80GB HBM3", memory_total_bytes=80 * 2**30)],
        cupy_reason=f"CuPy is not installed or not importable; {devices.cupy_hint()}",
    )
    monkeypatch.setattr(devices, "discover", lambda: found)
    code, out, _ = cli(capsys, "probe", "--json")
    data = json.loads(out)
    assert code == 0
    message = data["message"]
    assert "GPU probes cannot run" in message and f"pip install {package_requirement('cuda12')}" in message
    assert [p["status"] for p in data["host_probes"]] == ["ok", "ok"]


# --- interrupted, busy, throttled --------------------------------------------------------------------


def test_ctrl_c_keeps_partial_results_marked_incomplete(monkeypatch, tmp_path, capsys, small_probes):
    def interrupted(ctx):
        raise KeyboardInterrupt

    real = pr.run_probes
    monkeypatch.setattr(pr, "run_probes", lambda opts, **kw: real(opts, probe_fns={"crossover": interrupted}, **kw))
    monkeypatch.setattr(devices, "discover", lambda: devices.Discovery(reason="NVML: Driver Not Loaded"))
    out = tmp_path / "partial.json"
    code, _, err = cli(capsys, "probe", "--out", str(out))
    assert code == 130 and "interrupted" in err
    saved = results.load(out)
    assert saved.complete is False
    assert [(p.probe, p.status) for p in saved.host_probes] == [("host", "ok"), ("crossover", "interrupted")]


def test_busy_gpu_is_flagged():
    other = {"pid": 4242, "name": "python3", "used_mib": 1024}
    flags = flags_for(GpuState(other_processes=[other]), GpuState(other_processes=[other]), None)
    assert flags == ["busy: 1 other process on the GPU: python3 (4242)"]


def test_throttling_is_flagged_but_idle_is_not():
    assert flags_for(None, GpuState(throttle_reasons=["hw_thermal_slowdown"]), None) == [
        "throttled: hw_thermal_slowdown"
    ]
    assert flags_for(None, GpuState(throttle_reasons=["gpu_idle"]), None) == []


def test_saved_h100_run_carries_its_flags_and_provenance():
    run = results.load(SAMPLE)
    dev = run.devices[0]
    assert dev.state_before is not None and dev.state_after is not None
    assert dev.state_before.sm_clock_mhz and dev.state_after.temperature_c is not None
    assert run.host.driver_version and run.host.cuda_runtime_version


# --- bad files: one line, exit 2 ----------------------------------------------------------------------


@pytest.fixture
def bad_files(tmp_path):
    files = {
        "json_syntax": tmp_path / "syntax.json",
        "json_shape": tmp_path / "shape.json",
        "yaml_syntax": tmp_path / "rules.yaml",
        "yaml_shape": tmp_path / "shape.yaml",
        "config": tmp_path / "config.json",
        "binary": tmp_path / "binary.json",
    }
    files["json_syntax"].write_text('{"schema_version": 1, "host": ')
    files["json_shape"].write_text(json.dumps({"devices": "many"}))
    files["yaml_syntax"].write_text("rules:\n  - check: memory_gib\n   min: [\n")
    files["yaml_shape"].write_text("rules: 7\n")
    files["config"].write_text(json.dumps({"architectures": ["Nothing"], "hidden_size": -3}))
    files["binary"].write_bytes(b"\xff\xfe\x00garbage")
    return files


@pytest.mark.parametrize("which", ["json_syntax", "json_shape", "binary"])
@pytest.mark.parametrize("command", [
    ["estimate", "llama-2-7b", "--probe"],
    ["recommend", "llama-2-7b", "--probe"],
    ["check", "--rules", str(ROOT / "rules" / "training-node.yaml"), "--probe"],
    ["report", "--probe"],
])
def test_malformed_result_file(capsys, bad_files, which, command):
    path = bad_files[which]
    code, _, err = cli(capsys, *command, str(path))
    assert_one_line_usage_error(code, err, path.name)


@pytest.mark.parametrize("which", ["yaml_syntax", "yaml_shape"])
def test_malformed_rules_file(capsys, bad_files, which):
    code, _, err = cli(capsys, "check", "--rules", str(bad_files[which]), "--probe", str(SAMPLE))
    assert_one_line_usage_error(code, err)


def test_malformed_model_config(capsys, bad_files):
    code, _, err = cli(capsys, "estimate", str(bad_files["config"]))
    assert_one_line_usage_error(code, err, "config.json")


@pytest.mark.parametrize("command", [["estimate", "--probe"], ["check", "--rules"], ["report", "--probe"]])
def test_missing_and_directory_inputs(capsys, tmp_path, command):
    for path in (tmp_path / "nope.json", tmp_path):
        argv = [*command, str(path)]
        if command[0] == "estimate":
            argv.insert(1, "7b")
        if command[0] == "check":
            argv += ["--probe", str(SAMPLE)]
        code, _, err = cli(capsys, *argv)
        assert_one_line_usage_error(code, err)


def test_unreadable_catalog_fails_fast(capsys, tmp_path):
    bad = tmp_path / "cat"
    bad.mkdir()
    (bad / "x.yaml").write_text("cards: [")
    for argv in (["catalog", "list"], ["recommend", "7b"], ["probe", "--only", "host"]):
        code, _, err = cli(capsys, "--catalog", str(bad), *argv)
        assert_one_line_usage_error(code, err, "x.yaml", "YAML syntax error")


# --- outputs: read-only folder, no silent overwrite, atomic -------------------------------------------


def test_read_only_output_folder(monkeypatch, capsys, tmp_path, small_probes):
    monkeypatch.setattr(devices, "discover", lambda: devices.Discovery(reason="NVML: Driver Not Loaded"))

    def denied(*a, **kw):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", denied)
    code, _, err = cli(capsys, "probe", "--only", "host", "--out", str(tmp_path / "ro" / "r.json"))
    assert_one_line_usage_error(code, err, "permission denied")
    code, _, err = cli(capsys, "report", "--probe", str(SAMPLE), "-o", str(tmp_path / "ro" / "r.html"))
    assert_one_line_usage_error(code, err, "permission denied")


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root can write to read-only folders")
def test_read_only_output_folder_for_real(capsys, tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        code, _, err = cli(capsys, "report", "--probe", str(SAMPLE), "-o", str(ro / "r.html"))
    finally:
        ro.chmod(0o700)
    assert_one_line_usage_error(code, err, "permission denied")


def test_outputs_never_overwrite_a_different_file_without_force(capsys, tmp_path):
    precious = "my notes, not a report\n"
    for argv, flag in (
        (["report", "--probe", str(SAMPLE), "-o"], "--force"),
        (["check", "--rules", str(ROOT / "rules" / "training-node.yaml"), "--probe", str(SAMPLE), "--junit"],
         "--force"),
    ):
        target = tmp_path / f"{argv[0]}.{'html' if argv[0] == 'report' else 'xml'}"
        target.write_text(precious)
        code, _, err = cli(capsys, *argv, str(target))
        assert_one_line_usage_error(code, err, "--force")
        assert target.read_text() == precious
        code, _, _ = cli(capsys, *argv, str(target), flag)
        assert code in (0, 1) and target.read_text() != precious


def test_interrupted_write_leaves_the_old_file_intact(monkeypatch, tmp_path):
    from gpuadvisor.core.fileio import atomic_write_text

    target = tmp_path / "keep.json"
    target.write_text("old")

    def boom(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        atomic_write_text(target, "new", force=True)
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["keep.json"]  # no temporary file left behind


# --- security -------------------------------------------------------------------------------------------


def test_yaml_is_loaded_safely(tmp_path):
    from gpuadvisor.catalog import load_catalog

    d = tmp_path / "evil"
    d.mkdir()
    marker = tmp_path / "pwned"
    (d / "x.yaml").write_text(f"cards: !!python/object/apply:os.system ['touch {marker}']\n")
    with pytest.raises(UserError):
        load_catalog([d], use_env=False)
    assert not marker.exists()


def test_no_shell_is_ever_invoked():
    pattern = re.compile(r"shell\s*=\s*True|os\.system\(|os\.popen\(|subprocess\.getoutput|commands\.")
    offenders = []
    for base in ("gpuadvisor", "probes"):
        for path in (ROOT / base).rglob("*.py"):
            for n, line in enumerate(path.read_text().splitlines(), 1):
                if pattern.search(line):
                    offenders.append(f"{path.relative_to(ROOT)}:{n}")
    assert offenders == []


def test_report_escapes_user_text(capsys, tmp_path):
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({
        "model_type": "llama", "_name_or_path": "<script>alert(1)</script>", "hidden_size": 512,
        "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 8, "intermediate_size": 1024,
        "vocab_size": 1000,
    }))
    out = tmp_path / "r.html"
    code, _, err = cli(capsys, "report", "--model", str(cfg), "--title", "<img src=x onerror=alert(2)>",
                       "-o", str(out))
    assert code == 0, err
    html = out.read_text()
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(2)&gt;" in html
    assert "<script>alert(1)</script>" not in html


def test_outputs_get_ordinary_file_permissions(tmp_path):
    from gpuadvisor.core.fileio import atomic_write_text

    umask = os.umask(0o022)
    try:
        p = atomic_write_text(tmp_path / "out.json", "{}")
    finally:
        os.umask(umask)
    assert p.stat().st_mode & 0o777 == 0o644


def test_check_refuses_an_existing_junit_before_probing(monkeypatch, capsys, tmp_path):
    def must_not_probe(*a, **kw):
        raise AssertionError("probed before checking --junit")

    monkeypatch.setattr(pr, "run_probes", must_not_probe)
    junit = tmp_path / "checks.xml"
    junit.write_text("keep me")
    code, _, err = cli(capsys, "check", "--rules", str(ROOT / "rules" / "training-node.yaml"), "--junit", str(junit))
    assert_one_line_usage_error(code, err, "--force")
    assert junit.read_text() == "keep me"
