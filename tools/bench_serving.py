"""Print the BENCHMARKS.md section of the serving simulation against published results
(bench.serving.markdown_section); `--append` adds it to BENCHMARKS.md."""

from __future__ import annotations

import sys
from pathlib import Path

from bench.serving import markdown_section

if __name__ == "__main__":
    md = markdown_section()
    if "--append" in sys.argv:
        p = Path(__file__).resolve().parents[1] / "BENCHMARKS.md"
        p.write_text(p.read_text().rstrip("\n") + "\n\n" + md)
    else:
        print(md)
