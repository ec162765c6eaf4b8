"""The NCCL workers end to end against a fake `cupy` package (NumPy arrays, a communicator that writes
the expected sum): processes start, join, check the sum, sweep every collective and size, write
their files, and the probe combines them into bus bandwidth rows."""

from __future__ import annotations

import sys
import textwrap

import pytest

from probes import interconnect as ic

FAKE_CUPY = {
    "cupy/__init__.py": """
        import numpy as _np
        from cupy import cuda
        float32 = _np.float32
        __version__ = "0.0-fake"

        class ndarray(_np.ndarray):
            @property
            def data(self):
                class P:
                    ptr = self.ctypes.data
                return P()

        def full(n, v, dtype=None):
            return _np.full(n, v, dtype=dtype).view(ndarray)

        def abs(a):
            return _np.abs(a)

        def get_default_memory_pool():
            class Pool:
                def free_all_blocks(self):
                    pass
            return Pool()
    """,
    "cupy/cuda/__init__.py": """
        import time as _time

        class Device:
            def __init__(self, i=0):
                self.i = i
            def use(self):
                pass
            def synchronize(self):
                pass

        class Stream:
            def __init__(self, non_blocking=False):
                self.ptr = id(self)
            def synchronize(self):
                pass

        class Event:
            def record(self, stream=None):
                self.t = _time.perf_counter()
            def synchronize(self):
                pass

        def get_elapsed_time(a, b):
            return (b.t - a.t) * 1e3 + 0.001
    """,
    "cupy/cuda/nccl.py": """
        import ctypes
        import numpy as np
        available = True
        NCCL_FLOAT32, NCCL_SUM = 7, 0

        def get_version():
            return 22703

        def get_unique_id():  # CuPy 14 returns bytes, and NcclCommunicator takes nothing else
            return bytes(range(128))

        class NcclCommunicator:
            def __init__(self, n, uid, rank):
                if not isinstance(uid, bytes):
                    raise TypeError(f"Argument 'commId' has incorrect type (expected bytes, got {type(uid).__name__})")
                assert uid == bytes(range(128))
                self.n = n
            def _fill(self, ptr, count):  # what an all-reduce of (rank + 1) gives
                arr = np.ctypeslib.as_array((ctypes.c_float * count).from_address(ptr))
                arr[:] = self.n * (self.n + 1) / 2
            def allReduce(self, s, r, count, dtype, op, stream):
                self._fill(r, count)
            def allGather(self, s, r, count, dtype, stream):
                pass
            def reduceScatter(self, s, r, count, dtype, op, stream):
                pass
            def destroy(self):
                pass
    """,
}


@pytest.fixture
def fake_cupy(tmp_path, monkeypatch):
    for rel, text in FAKE_CUPY.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m == "cupy" or m.startswith("cupy.")]:
        monkeypatch.delitem(sys.modules, name)
    yield tmp_path


def test_workers_sweep_every_collective_and_size(fake_cupy):
    sizes = [1 << 20, 4 << 20]
    out = ic.run_collectives([0, 1], sizes, ["cupy"], rounds=2, time_limit_s=60)
    assert out["errors"] == []
    for r in out["ranks"]:
        assert r["done"] and r["errors"] == {} and r["checks"] == {"cupy": 0.0} and r["versions"] == {"cupy": 22703}
    sweep = out["sweep"]
    assert set(sweep) == {"cupy.all_reduce", "cupy.all_gather", "cupy.reduce_scatter"}
    for rows in sweep.values():
        assert [r["bytes"] for r in rows] == sizes and all(r["busbw_gbs"] > 0 and r["rounds"] == 2 for r in rows)
    ar = sweep["cupy.all_reduce"][0]
    assert ar["busbw_gbs"] == pytest.approx(ar["algbw_gbs"])  # two GPUs: factor 1
    ag = sweep["cupy.all_gather"][0]
    assert ag["busbw_gbs"] == pytest.approx(ag["algbw_gbs"] / 2)


def test_a_backend_one_rank_cannot_join_is_dropped_everywhere(fake_cupy):
    """Torch is asked for but not importable here: each rank reports it, and cupy still runs."""
    out = ic.run_collectives([0, 1], [1 << 20], ["cupy", "torch"], rounds=1, time_limit_s=60)
    assert set(out["sweep"]) == {"cupy.all_reduce", "cupy.all_gather", "cupy.reduce_scatter"}
    assert all("torch" in r["errors"] and r["ready"] == ["cupy"] for r in out["ranks"])
