"""Scripted checks: the rules format, evaluation against saved results, exit codes, JUnit XML."""

from __future__ import annotations

import json
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from gpuadvisor import checks
from gpuadvisor.cli import main
from gpuadvisor.core import results
from gpuadvisor.core.errors import UserError

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).parent.parent
FAKE = DATA / "fake-probe.json"  # device 0 healthy; device 1 throttled, busy, ECC errors, slow triad
REAL = DATA / "h100-probe.json"  # from a real H100, where the probe engineer saved one
SHIPPED_RULES = ROOT / "rules" / "training-node.yaml"


@pytest.fixture(scope="module")
def fake() -> results.RunResult:
    return results.load(FAKE)


def write(tmp_path: Path, text: str, name: str = "rules.yaml") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return p


def outcome(report: checks.CheckReport, device: int, check: str) -> checks.Outcome:
    return next(o for o in report.devices[device].outcomes if o.check == check)


# ------------------------------------------------------------------ rule format


def test_shipped_rules_are_valid_and_cover_every_documented_check():
    rs = checks.load_rules(SHIPPED_RULES)
    assert len(rs.rules) >= 8
    readme = (ROOT / "rules" / "README.md").read_text(encoding="utf-8")
    for name in checks.RULE_TYPES:
        assert f"`{name}`" in readme, f"rules/README.md does not document {name}"


def test_rules_as_plain_list_and_mapping(tmp_path):
    a = checks.load_rules(write(tmp_path, "- check: memory_gib\n  min: 40\n", "a.yaml"))
    b = checks.load_rules(write(tmp_path, "rules:\n  - check: memory_gib\n    min: 40\n", "b.yaml"))
    assert a.rules == b.rules
    assert a.rules[0].describe() == "memory >= 40 GiB"


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        ("- check: memry\n", "rule #1: unknown check 'memry'"),
        ("- min: 3\n", "rule #1: missing 'check'"),
        ("- check: memory_gib\n  min: 40 GiB\n", "rule #1 (memory_gib): field 'min': must be a plain number"),
        ("- check: memory_gib\n  min: yes\n", "field 'min': must be a plain number"),
        ("- check: memory_gib\n  min: .nan\n", "field 'min'"),
        ("- check: memory_gib\n", "give a threshold"),
        ("- check: memory_gib\n  min: 50\n  max: 40\n", "min (50) is greater than max (40)"),
        ("- check: memory_gib\n  min: 4\n  colour: red\n", "field 'colour': unknown field"),
        ("- check: pct_of_datasheet\n  min: 85\n", "field 'figure': missing"),
        ("- check: pct_of_datasheet\n  figure: memory.triad\n  min: -5\n", "field 'min'"),
        ("- check: pct_of_datasheet\n  figure: Memory Triad\n  min: 5\n", "field 'figure'"),
        ("- check: ecc_errors\n  max: 0.5\n", "field 'max'"),
        (
            "- check: memory_gib\n  min: 1\n- check: memory_gib\n  min: 1\n",
            "rule #2 (memory_gib): same name as rule #1",
        ),
        ("- check: [\n", "YAML syntax error"),
        ("rules: []\n", "no rules given"),
        ("42\n", "must be a list of rules"),
        ("- 42\n", "rule #1: must be a mapping"),
        ("rulez:\n  - check: memory_gib\n", "unknown top-level key 'rulez'"),
    ],
)
def test_bad_rules_are_one_line_errors_naming_file_and_rule(tmp_path, text, expect):
    path = write(tmp_path, text)
    with pytest.raises(UserError) as exc:
        checks.load_rules(path)
    msg = str(exc.value)
    assert "\n" not in msg
    assert str(path) in msg
    assert expect in msg


def test_bad_rules_exit_2_before_reading_results(tmp_path, capsys):
    path = write(tmp_path, "- check: nope\n")
    assert main(["check", "--rules", str(path), "--probe", str(tmp_path / "absent.json")]) == 2
    err = capsys.readouterr().err
    assert "unknown check 'nope'" in err and err.count("\n") == 1


def test_missing_rules_file_exits_2(tmp_path, capsys):
    assert main(["check", "--rules", str(tmp_path / "none.yaml"), "--probe", str(FAKE)]) == 2
    assert "rules file not found" in capsys.readouterr().err


# ------------------------------------------------------------------ evaluation


def test_every_device_is_checked(fake):
    report = checks.evaluate(checks.load_rules(SHIPPED_RULES), fake)
    assert [d.index for d in report.devices] == [0, 1]
    assert report.devices[0].passed, [o for o in report.devices[0].outcomes if not o.passed]
    assert not report.devices[1].passed
    assert report.exit_code == 1
    failed = {o.check for o in report.devices[1].outcomes if not o.passed}
    # GPU 1's triad is also 9% below the node's median: a straggler against its peer
    assert failed == {"pct_of_datasheet", "no_throttling", "ecc_errors", "no_other_processes", "peer_consistency"}


def test_outcomes_carry_measured_value_and_threshold(fake, tmp_path):
    rs = checks.load_rules(write(tmp_path, "- check: pct_of_datasheet\n  figure: memory.triad\n  min: 85\n"))
    report = checks.evaluate(rs, fake)
    good, bad = report.devices[0].outcomes[0], report.devices[1].outcomes[0]
    assert good.passed and good.value == pytest.approx(100 * 2890 / 3352.3, rel=1e-3)
    assert "86.2%" in good.measured and good.threshold == "memory.triad >= 85% of datasheet"
    assert not bad.passed and "71.9%" in bad.measured


def test_missing_figure_is_a_failure_saying_so(fake, tmp_path):
    rs = checks.load_rules(write(tmp_path, "- check: figure\n  figure: tensor.fp4\n  min: 1\n"))
    o = checks.evaluate(rs, fake).devices[0].outcomes[0]
    assert not o.passed and o.measured == "missing"
    assert "tensor.fp4 is not in the results" in o.message


def test_figure_without_value_reports_probe_reason(fake, tmp_path):
    rs = checks.load_rules(write(tmp_path, "- check: figure\n  figure: memory.triad\n  min: 1\n"))
    run = fake.model_copy(deep=True)
    probe = run.devices[0].probe("memory_bandwidth")
    probe.status, probe.reason = "timeout", "ran past 60 s"
    for m in probe.measurements:
        m.value = None
    o = checks.evaluate(rs, run).devices[0].outcomes[0]
    assert not o.passed and "memory_bandwidth probe timeout (ran past 60 s)" in o.message


def test_figure_unit_mismatch_fails(fake, tmp_path):
    rs = checks.load_rules(write(tmp_path, "- check: figure\n  figure: tensor.bf16\n  min: 1\n  unit: GB/s\n"))
    o = checks.evaluate(rs, fake).devices[0].outcomes[0]
    assert not o.passed and "unit mismatch" in o.message


def test_thresholds_both_sides(fake, tmp_path):
    rs = checks.load_rules(
        write(
            tmp_path,
            """\
            - check: figure
              figure: tensor.bf16
              min: 600
            - check: figure
              name: bf16 below 700
              figure: tensor.bf16
              max: 700
            - check: memory_gib
              min: 40
              max: 79
            - check: temperature_c
              max: 50
            - check: ratio_to_reference
              figure: memory.triad
              min: 0.95
            - check: ecc_errors
              kind: total
              max: 1
            """,
        )
    )
    by = {o.rule: o for o in checks.evaluate(rs, fake).devices[0].outcomes}
    assert by["tensor.bf16 >= 600"].passed
    assert not by["bf16 below 700"].passed
    assert not by["memory >= 40 GiB and <= 79 GiB"].passed
    assert not by["temperature <= 50 °C"].passed  # hotter of before (34) / after (51)
    ratio = by["memory.triad >= 0.95 x its same-run reference"]
    assert ratio.passed and ratio.value == pytest.approx(2890 / 2990)
    assert by["ECC total errors <= 1"].passed


def test_pcie_link_downgrade_fails(fake, tmp_path):
    rs = checks.load_rules(write(tmp_path, "- check: pcie_link\n- check: pcie_link\n  min_gen: 4\n  min_width: 8\n"))
    run = fake.model_copy(deep=True)
    dev = run.devices[0]
    for s in (dev.state_before, dev.state_after):
        s.pcie_gen, s.pcie_width = 4, 8
    dev.properties.update(pcie_gen_current=4, pcie_width_current=8)
    for m in dev.probe("transfer").measurements:
        m.details.update(pcie_gen_current=4, pcie_width_current=8)
    at_max, relaxed = checks.evaluate(rs, run).devices[0].outcomes
    assert not at_max.passed and "generation 4 < 5" in at_max.message and "width x8 < x16" in at_max.message
    assert relaxed.passed
    # an idle reading below max is fine when the link reached max under load
    dev.state_before.pcie_gen = 1
    dev.probe("transfer").measurements[0].details.update(pcie_gen_current=5, pcie_width_current=16)
    assert checks.evaluate(rs, run).devices[0].outcomes[0].passed


def test_throttle_flag_from_sampler_counts(fake, tmp_path):
    rs = checks.load_rules(write(tmp_path, "- check: no_throttling\n"))
    run = fake.model_copy(deep=True)
    run.devices[0].state_after.throttle_reasons = ["gpu_idle"]
    assert checks.evaluate(rs, run).devices[0].outcomes[0].passed
    run.devices[0].flags = ["throttled: sw_power_cap"]
    o = checks.evaluate(rs, run).devices[0].outcomes[0]
    assert not o.passed and o.measured == "sw_power_cap"


def test_throttle_ignore_list(fake, tmp_path):
    rs = checks.load_rules(write(tmp_path, "- check: no_throttling\n  ignore: [SW Thermal Slowdown]\n"))
    assert checks.evaluate(rs, fake).devices[1].outcomes[0].passed


def test_ecc_disabled_fails(fake, tmp_path):
    rs = checks.load_rules(write(tmp_path, "- check: ecc_errors\n"))
    run = fake.model_copy(deep=True)
    run.devices[0].properties["ecc_enabled"] = False
    o = checks.evaluate(rs, run).devices[0].outcomes[0]
    assert not o.passed and "disabled" in o.message


def test_probes_ok(fake, tmp_path):
    rs = checks.load_rules(write(tmp_path, "- check: probes_ok\n  probes: [tensor, nccl]\n"))
    o = checks.evaluate(rs, fake).devices[0].outcomes[0]
    assert not o.passed and "nccl: not run" in o.message and o.measured == "1/2 ok"


def test_no_gpu_fails_every_rule(fake):
    run = fake.model_copy(update={"devices": [], "gpu_found": False, "message": "no NVIDIA GPU found"})
    report = checks.evaluate(checks.load_rules(SHIPPED_RULES), run)
    assert report.exit_code == 1
    assert "no NVIDIA GPU found" in report.devices[0].name
    assert all(not o.passed and o.message == "no GPU to check" for o in report.devices[0].outcomes)


@pytest.mark.skipif(not REAL.exists(), reason="no saved real-GPU result yet")
def test_real_result_evaluates():
    report = checks.evaluate(checks.load_rules(SHIPPED_RULES), results.load(REAL))
    assert report.devices and all(
        len(d.outcomes) == len(checks.load_rules(SHIPPED_RULES).rules) for d in report.devices
    )


# ------------------------------------------------------------------ CLI, exit codes, JUnit


def test_cli_exit_codes(tmp_path, capsys):
    passing = write(tmp_path, "- check: memory_gib\n  min: 40\n", "pass.yaml")
    failing = write(tmp_path, "- check: ecc_errors\n", "fail.yaml")
    assert main(["check", "--rules", str(passing), "--probe", str(FAKE)]) == 0
    assert "all checks passed" in capsys.readouterr().out
    assert main(["check", "--rules", str(failing), "--probe", str(FAKE)]) == 1
    assert "checks failed on 1 of 2 GPU(s)" in capsys.readouterr().out


def test_cli_json(capsys):
    assert main(["check", "--rules", str(SHIPPED_RULES), "--probe", str(FAKE), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["exit_code"] == 1 and [d["passed"] for d in data["devices"]] == [True, False]
    o = data["devices"][1]["outcomes"][0]
    assert set(o) >= {"rule", "check", "passed", "measured", "threshold", "message", "value"}


def test_junit_one_suite_per_device_written_atomically(tmp_path, capsys):
    out = tmp_path / "junit" / "checks.xml"
    args = ["check", "--rules", str(SHIPPED_RULES), "--probe", str(FAKE), "--junit", str(out)]
    assert main(args) == 1
    root = ET.parse(out).getroot()
    suites = root.findall("testsuite")
    assert len(suites) == 2
    n = len(checks.load_rules(SHIPPED_RULES).rules)
    assert [len(s.findall("testcase")) for s in suites] == [n, n]
    assert suites[0].get("failures") == "0" and suites[1].get("failures") == "5"
    fail = suites[1].find("testcase/failure")
    assert fail is not None and "measured" in fail.get("message") and "required" in fail.get("message")
    assert not list(tmp_path.glob("junit/.*.tmp"))
    # a different existing file is not replaced without --force
    out.write_text("other", encoding="utf-8")
    capsys.readouterr()
    assert main(args) == 2
    assert "--force" in capsys.readouterr().err
    assert main([*args, "--force"]) == 1
    assert ET.parse(out).getroot().tag == "testsuites"


def test_junit_escapes_odd_text(fake, tmp_path):
    rs = checks.parse_rules([{"check": "memory_gib", "name": 'a <b> & "c"\x01', "min": 1000}], "inline")
    xml = checks.junit_xml(checks.evaluate(rs, fake))
    root = ET.fromstring(xml)
    assert root.find("testsuite/testcase").get("name").startswith('a <b> & "c"')


# ------------------------------------------------------------------ registry


def test_a_new_rule_type_is_one_registered_class(fake, tmp_path, monkeypatch):
    """Adding a rule is local: one model with its evaluate(), registered; it sees the whole node."""
    from typing import Literal

    monkeypatch.setattr(checks.rules, "RULE_TYPES", dict(checks.RULE_TYPES))

    @checks.register
    class GpuCount(checks.MinMaxRule):
        check: Literal["gpu_count"]

        def describe(self) -> str:
            return f"GPUs in the node {self.bounds()}"

        def evaluate(self, dev, run):
            return self.outcome(self.within(len(run.devices)), str(len(run.devices)), value=len(run.devices))

    rs = checks.load_rules(write(tmp_path, "- check: gpu_count\n  min: 4\n- check: memory_gib\n  min: 1\n"))
    report = checks.evaluate(rs, fake)
    assert [o.passed for o in report.devices[0].outcomes] == [False, True]
    assert report.devices[0].outcomes[0].measured == "2"
    with pytest.raises(UserError, match=r"rule #1 \(gpu_count\): min \(4\) is greater than max"):
        checks.load_rules(write(tmp_path, "- check: gpu_count\n  min: 4\n  max: 1\n"))
    with pytest.raises(TypeError, match="already registered"):

        @checks.register
        class Clash(checks.Rule):
            check: Literal["memory_gib"]


def test_match_card_prefers_the_recorded_catalog_name():
    from gpuadvisor.catalog import load_catalog, match_card

    cat = load_catalog(use_env=False)
    assert match_card(None, "NVIDIA H100 80GB HBM3") is None
    by_name = match_card(cat, "NVIDIA H100 80GB HBM3", 79.6)
    assert by_name is not None and "H100" in by_name.name
    recorded = match_card(cat, "NVIDIA H100 80GB HBM3", 79.6, catalog_name="A100 SXM4 80GB")
    assert recorded is not None and "A100" in recorded.name
