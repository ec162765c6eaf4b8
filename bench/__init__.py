"""The evaluation harness: the estimator against measured and published results, run from a clone.

Not part of the product (the wheel ships `gpuadvisor` and `probes` only): these modules read the measurements
under `tests/data/` and `tools/data/`, which the wheel does not carry. The accuracy gates (tests/test_*_accuracy.py,
tests/test_calibration_fits.py), the fitting scripts (tools/fit_*.py) and the BENCHMARKS.md builders import them.

* `bench.models`: the op-graph estimator against the H100's measured training steps and forward passes, and the
  fits of the op model's constants;
* `bench.serving`: the serving simulation against published engine results;
* `bench.training`: the parallel training model against published training runs, and the framework fits;
* `bench.cross_card`: every path against published results on cards besides the H100/H200, per card and family;
* `bench.serve_gpu_check`: the serving estimates against one H100's Hugging Face generate() and prefill kernels.
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]  # the clone's root: bench/ sits beside gpuadvisor/, tests/ and tools/
TESTS_DATA = REPO / "tests" / "data"
TOOLS_DATA = REPO / "tools" / "data"
