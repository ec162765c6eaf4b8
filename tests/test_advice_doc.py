"""docs/advice.md is the tool's own answer today: at least 15 questions, the five users of issue 23
among them, each with the command that answers it, and the file current (tools/make_advice_doc.py)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "advice.md"


def test_advice_doc_has_the_users_questions():
    text = DOC.read_text()
    questions = re.findall(r"^## \d+\. (.+)$", text, flags=re.M)
    assert len(questions) >= 15
    for who in ("Student", "Startup", "Computer-vision engineer", "Hobbyist", "Cluster admin"):
        assert any(q.startswith(who) for q in questions), who
    assert text.count("```\ngpuadvisor ") >= len(questions)  # each answered by a command shown


@pytest.mark.slow  # doc sync: regenerates docs/advice.md
def test_advice_doc_is_current():
    p = subprocess.run([sys.executable, str(ROOT / "tools" / "make_advice_doc.py"), "--check"], capture_output=True,
                       text=True, cwd=ROOT, timeout=600)
    assert p.returncode == 0, p.stderr
