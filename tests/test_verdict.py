"""`check` and `fleet check` answer with one pass/fail type: the same logic, the same JSON head."""

from __future__ import annotations

import json
from pathlib import Path

from fleet_fakes import fleet_folder

from gpuadvisor import checks
from gpuadvisor.checks import EXIT_FAIL, EXIT_PASS, CheckReport, DeviceOutcome, Verdict
from gpuadvisor.cli import main
from gpuadvisor.core import results
from gpuadvisor.fleet.verdict import FleetVerdict, NodeVerdict

ROOT = Path(__file__).parent.parent
FAKE = ROOT / "tests" / "data" / "fake-probe.json"
RULES = ROOT / "rules" / "training-node.yaml"


def test_both_answers_are_one_verdict_type():
    assert issubclass(CheckReport, Verdict) and issubclass(FleetVerdict, Verdict)
    assert CheckReport.passed is FleetVerdict.passed is Verdict.passed  # one logic, not two copies
    assert CheckReport.exit_code is FleetVerdict.exit_code is Verdict.exit_code


def test_empty_never_passes_and_one_failure_fails():
    assert not CheckReport("r.yaml").passed and CheckReport("r.yaml").exit_code == EXIT_FAIL
    assert not FleetVerdict(None).passed
    ok, bad = NodeVerdict("a", "ok", 1), NodeVerdict("b", "lost", 1, reason="gone")
    assert FleetVerdict(None, nodes=[ok]).exit_code == EXIT_PASS
    both = FleetVerdict(None, nodes=[ok, bad])
    assert not both.passed and both.failed_parts == 1
    dev = DeviceOutcome(0, "GPU", None)
    assert CheckReport("r.yaml", [dev]).passed  # a device with no failed rule passes


def test_json_heads_keep_their_keys_in_order(tmp_path, capsys):
    assert main(["check", "--rules", str(RULES), "--probe", str(FAKE), "--json"]) == 1
    check = json.loads(capsys.readouterr().out)
    assert list(check) == ["rules", "passed", "exit_code", "devices"]
    assert main(["fleet", "check", str(fleet_folder(tmp_path, straggler=True)), "--json"]) == 1
    fleet = json.loads(capsys.readouterr().out)
    assert list(fleet) == ["rules", "tolerance_pct", "passed", "exit_code", "nodes", "outliers"]
    assert fleet["rules"] is None and not fleet["passed"] and fleet["exit_code"] == 1
    report = checks.evaluate(checks.load_rules(RULES), results.load(FAKE))
    assert report.to_dict() == check and report.failed_parts == 1
