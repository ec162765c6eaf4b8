#!/usr/bin/env python3
"""Write BENCHMARKS.md's training-at-scale section (published runs and our own LoRA vs full fine-tuning runs) from
tests/data/published-training.json, tools/data/lora-vs-full-h100.json and the current estimator
(bench.training.markdown_section): the section between its heading and the next.

  python3 tools/bench_training.py            # rewrite (or append) the section in BENCHMARKS.md
  python3 tools/bench_training.py --print    # print it
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.training import markdown_section  # noqa: E402

HEADING = "## Training at scale"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--print", action="store_true")
    a = ap.parse_args()
    text = markdown_section()
    if a.print:
        print(text, end="")
        return 0
    path = ROOT / "BENCHMARKS.md"
    doc = path.read_text()
    start = doc.find(HEADING)
    if start < 0:
        doc = doc.rstrip("\n") + "\n\n" + text
    else:
        nxt = doc.find("\n## ", start + len(HEADING))
        doc = doc[:start] + text + ("\n" + doc[nxt + 1:] if nxt >= 0 else "")
    path.write_text(doc)
    print(f"wrote the section to {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
