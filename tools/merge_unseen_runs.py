"""Rewrite the cases of tests/data/models-h100-unseen.json measured in several runs (the recurrent ones, and since
2026-12-05 the vision ones) from every H100 run of them: their steps are mostly host-bound (the host's time to issue
a step is the step), and one run's median moves by up to 25 % (recurrent) or 40 % (vision training) from one process
to the next, so a case's time is the median over the runs' medians, each run listed with its steps and the host
speed the dispatch probe saw around it. Memory is the same in every run.

  python3 -m tools.merge_unseen_runs [--check]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from bench.unseen import family

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "models-h100-unseen.json"
FIRST = ROOT / "lab" / "data" / "h100-unseen-2026-11-27" / "unseen-0.json"  # 10 steps a case, one run
LATER = sorted((ROOT / "lab" / "data" / "h100-rnn-unseen-2026-12-05").glob("run*.json"))  # 100 steps, five runs
#: the two models written after the pricer learned which training calls run persistent, three runs of 100 steps,
#: their estimates recorded before (lab/data/h100-rnn-new-2026-12-05/predicted.json): cases this file adds
#: and the two written after the recurrent memory and set-up were measured call by call (h100-rnn-new2-2026-12-05),
#: and the two written after the inference workspace's floor was fitted (h100-rnn-new3-2026-12-05)
ADDED = sorted(path for folder in ("h100-rnn-new-2026-12-05", "h100-rnn-new2-2026-12-05", "h100-rnn-new3-2026-12-05")
               for path in (ROOT / "lab" / "data" / folder).glob("*-[0-9].json"))
#: the vision cases again, three runs of 50 steps each (2026-12-05): their first run's 10 steps had spread up to 178 %
VISION = sorted((ROOT / "lab" / "data" / "h100-vision-unseen-2026-12-05").glob("vision-*-[0-9].json"))
#: GoogLeNet and Inception-v4, estimated before they ran (lab/data/h100-pools-new-2026-12-05/predicted.json), three
#: runs of 50 steps each (2026-12-05): cases this file adds
POOLS = sorted((ROOT / "lab" / "data" / "h100-pools-new-2026-12-05").glob("*-[0-9].json"))
#: the LSTM forecaster and the bidirectional GRU written after the small-hidden persistent kernel's step went with the
#: batch's rows, estimated before they ran (lab/data/h100-rnn-rows-2026-12-05/predicted.json), three runs of 50 steps
#: each (2026-12-06): cases this file adds
ROWS = sorted((ROOT / "lab" / "data" / "h100-rnn-rows-2026-12-05").glob("*-[0-9].json"))
#: the GRU review classifier written after a launched inference step became the host's issuing, estimated before it
#: ran (lab/data/h100-rnn-host-2026-12-06/predicted.json), three runs of 50 steps (2026-12-06): cases this file adds
HOST = sorted((ROOT / "lab" / "data" / "h100-rnn-host-2026-12-06").glob("*-[0-9].json"))
#: the LSTM autoencoder and the GRU language model written after cuDNN's training kernels were profiled (the bias
#: gradient by the rows, a launched training step the host's), estimated before they ran
#: (lab/data/h100-rnn-kernels-new-2026-12-06/predicted.json), three runs of 50 steps (2026-12-06): cases this file adds
KERNELS = sorted((ROOT / "lab" / "data" / "h100-rnn-kernels-new-2026-12-06").glob("*-[0-9].json"))
#: every recurrent case once more, 50 steps each, with a cuDNN host probe beside each (lab/rnn_host_runs.py,
#: 2026-12-06): one more run of each
RNN_PROBE = sorted((ROOT / "lab" / "data" / "h100-rnn-probe-2026-12-06").glob("rnn_host-[0-9].json"))
#: the second out-of-sample batch (14 models, no recurrent one), estimated before they ran
#: (lab/data/h100-unseen-broad-2026-12-06/predicted.json), two passes of 20 steps in opposite orders (2026-12-06):
#: cases this file adds
BROAD = sorted((ROOT / "lab" / "data" / "h100-unseen-broad-2026-12-06").glob("broad-[0-9].json"))
#: the third batch (five CNNs in NCHW), estimated before they ran (lab/data/h100-nchw-unseen-2026-12-06/predicted.json),
#: two passes of 20 steps in opposite orders (2026-12-06): cases this file adds
NCHW = sorted((ROOT / "lab" / "data" / "h100-nchw-unseen-2026-12-06").glob("nchw-[0-9].json"))
#: the fourth batch (four Hugging Face transformers models from published configurations), estimated before they ran
#: (lab/data/h100-hf-unseen-2026-12-06/predicted.json), two passes of 20 steps in opposite orders (2026-12-06)
HF = sorted((ROOT / "lab" / "data" / "h100-hf-unseen-2026-12-06").glob("hf-[0-9].json"))
#: BERT-base SQuAD (hf:bert-base-uncased-qa, 384 tokens: Lambda's batches of 96 and 320), estimated before it ran
#: (lab/data/h100-bert-qa-2026-12-07/predicted.json), one pass of 10 steps (2026-12-07): cases this file adds
BERT_QA = sorted((ROOT / "lab" / "data" / "h100-bert-qa-2026-12-07").glob("bert-qa-[0-9].json"))
#: the fifth batch: BERT-base SQuAD with its attention written out (lab/models/bert_qa_eager.py), estimated before it
#: ran (lab/data/h100-bert-eager-2026-12-07/predicted.json), one pass of 10 steps beside hf:bert-base-uncased-qa's cases
#: again, the reference in the same run (2026-12-07): cases this file adds, and one more run of those
BERT_EAGER = sorted((ROOT / "lab" / "data" / "h100-bert-eager-2026-12-07").glob("bert-eager-[0-9].json"))


def _key(case: dict[str, Any]) -> tuple[str, str, int]:
    return case["spec"], case["mode"], case["batch"]


def merged(current: dict[str, Any]) -> dict[str, Any]:
    """`current` with each case's time the median over the runs that measured it (FIRST's, LATER's, ADDED's, VISION's
    POOLS', ROWS', HOST's, KERNELS', RNN_PROBE's, BROAD's, NCHW's, HF's, BERT_QA's and BERT_EAGER's) where more than
    one did (a recurrent case and a one-pass batch's always), and ADDED's cases appended."""
    by: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    first: dict[tuple[str, str, int], dict[str, Any]] = {}
    for path in (FIRST, *LATER, *ADDED, *VISION, *POOLS, *ROWS, *HOST, *KERNELS, *RNN_PROBE, *BROAD, *NCHW, *HF,
                 *BERT_QA, *BERT_EAGER):
        run = json.loads(path.read_text())
        env = run["env"]
        for c in run["results"]:
            if "time_s" in c:
                first.setdefault(_key(c), {k: v for k, v in c.items() if k != "ops"})
                by.setdefault(_key(c), []).append({
                    "file": str(path.relative_to(ROOT)), "date": env["date"][:10], "time_s": c["time_s"],
                    "timed_steps": c["timed_steps"], "dispatch_op_s": c["dispatch_op_s"],
                    "peak_bytes": c["peak_bytes"]})
    one_pass = {str(p.relative_to(ROOT)) for p in (*BERT_QA, *BERT_EAGER)}  # one-pass cases keep their runs too
    known = {_key(c) for c in current["cases"]}
    out = []
    for c in [*current["cases"], *(first[k] for k in sorted(first) if k not in known)]:
        each = by.get(_key(c), [])
        if len(each) > 1 or family(c["spec"]) == "recurrent" or any(r["file"] in one_pass for r in each):
            c = {**c, "time_s": statistics.median(r["time_s"] for r in each), "runs": each,
                 "time_of": f"median of {len(each)} runs' medians (tools/merge_unseen_runs.py)"}
        out.append(c)
    return {**current, "cases": out}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the file is not what this writes")
    a = ap.parse_args(argv)
    current = json.loads(OUT.read_text())
    text = json.dumps(merged(current), indent=1) + "\n"
    if a.check:
        same = OUT.read_text() == text
        print(f"{OUT.relative_to(ROOT)} {'is current' if same else 'is stale: run python3 -m tools.merge_unseen_runs'}")
        return 0 if same else 1
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
