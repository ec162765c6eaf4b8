"""The P2P measurement against a NumPy-backed fake of the few CuPy calls it makes: every pair is
copied and verified, both directions are timed, staged pairs are labelled, the chase kernel's
walk is checked. Timings from the fake are meaningless; the bookkeeping is what is tested."""

from __future__ import annotations

import ctypes
import types

import numpy as np
import pytest

from probes import base, p2p


class FakeArray(np.ndarray):
    @property
    def data(self):
        return types.SimpleNamespace(ptr=self.ctypes.data)

    def get(self):
        return np.asarray(self)


def fake_cupy(n_devices: int = 2, peer: bool = True):
    cp = types.SimpleNamespace(uint8=np.uint8, uint32=np.uint32, int32=np.int32, float32=np.float32)
    state = {"device": 0, "clock": 0.0, "enabled": set()}

    def wrap(a):
        return np.asarray(a).view(FakeArray)

    cp.arange = lambda n, dtype=None: wrap(np.arange(n, dtype=dtype))
    cp.empty = lambda n, dtype=None: wrap(np.empty(n, dtype=dtype))
    cp.zeros = lambda n, dtype=None: wrap(np.zeros(n, dtype=dtype))
    cp.asarray = wrap
    cp.asnumpy = np.asarray
    cp.get_default_memory_pool = lambda: types.SimpleNamespace(free_all_blocks=lambda: None)

    class Device:
        def __init__(self, i=None):
            self.i = state["device"] if i is None else i

        def __enter__(self):
            self.prev, state["device"] = state["device"], self.i
            return self

        def __exit__(self, *a):
            state["device"] = self.prev

        def synchronize(self):
            pass

    class Stream:
        def __init__(self, non_blocking=False):
            self.ptr = id(self)

        def synchronize(self):
            pass

        def wait_event(self, e):
            pass

    class Event:
        def __init__(self, disable_timing=False):
            self.t = None

        def record(self, stream=None):
            state["clock"] += 1.0
            self.t = state["clock"]

        def synchronize(self):
            pass

    def memcpy_peer(dst, dst_dev, src, src_dev, n, stream):
        ctypes.memmove(dst, src, n)
        state["clock"] += n / 1e9  # "1 GB/ms"

    def enable(peer_dev):
        key = (state["device"], peer_dev)
        if key in state["enabled"]:
            raise RuntimeError("cudaErrorPeerAccessAlreadyEnabled: peer access is already enabled")
        state["enabled"].add(key)

    runtime = types.SimpleNamespace(
        deviceCanAccessPeer=lambda i, j: int(peer), deviceEnablePeerAccess=enable, memcpyPeerAsync=memcpy_peer,
        getDevice=lambda: state["device"], memGetInfo=lambda: (8 << 30, 16 << 30))
    cp.cuda = types.SimpleNamespace(Device=Device, Stream=Stream, Event=Event, runtime=runtime,
                                    get_elapsed_time=lambda a, b: b.t - a.t)

    class RawModule:
        def __init__(self, code, options=()):
            assert "chase" in code

        def get_function(self, name):
            def chase(grid, block, args):
                table, start, steps, out = args
                i = int(start)
                for _ in range(int(steps)):
                    i = int(table[i])
                out[0] = i

            return chase

    cp.RawModule = RawModule
    return cp, state


@pytest.fixture(autouse=True)
def small_chase(monkeypatch):
    monkeypatch.setattr(p2p, "CHASE_ENTRIES", 1 << 10)
    monkeypatch.setattr(base, "_MODULES", {})


def test_measure_pairs_with_peer_access():
    cp, state = fake_cupy(2)
    res = p2p.measure_pairs(cp, [0, 1], 1 << 20, rounds=2, repeats=3)
    assert [(r["src"], r["dst"], r["path"]) for r in res["one_way"]] == [(0, 1, "peer"), (1, 0, "peer")]
    row = res["one_way"][0]
    assert "error" not in row and row["gbs"] > 0 and row["latency_memcpy_us"] > 0 and row["latency_load_us"] > 0
    assert res["both_ways"][0]["a"] == 0 and res["both_ways"][0]["gbs"] > 0
    assert res["peer_access"] == {"0->1": True, "1->0": True} and state["enabled"] == {(0, 1), (1, 0)}
    # enabling again (as PyTorch or a second run would) is not an error
    assert p2p.enable_peer_access(cp, [0, 1]) == {(0, 1): True, (1, 0): True}


def test_measure_pairs_staged_when_no_peer_access():
    cp, _ = fake_cupy(3, peer=False)
    res = p2p.measure_pairs(cp, [0, 1, 2], 1 << 16, rounds=1, repeats=1)
    assert len(res["one_way"]) == 6 and len(res["both_ways"]) == 3
    assert all(r["path"] == "staged through host" and "latency_load_us" not in r for r in res["one_way"])


def test_fast_cycle_is_one_cycle():
    nxt = p2p._fast_cycle(1000)
    seen, i = set(), 0
    for _ in range(1000):
        seen.add(i)
        i = int(nxt[i])
    assert i == 0 and len(seen) == 1000


def test_chase_detects_a_wrong_walk():
    cp, _ = fake_cupy(2)

    class Broken:
        def __init__(self, code, options=()):
            pass

        def get_function(self, name):
            def chase(grid, block, args):
                args[3][0] = 12345  # a kernel that did not follow the table

            return chase

    cp.RawModule = Broken
    with pytest.raises(RuntimeError, match="wrong place"):
        p2p.chase_latency_us(cp, 0, 1, steps=10)


def test_interconnect_probe_without_nccl_on_fakes(monkeypatch):
    """The probe's own orchestration: topology from a fake NVML, P2P on the fake CuPy, measurements."""
    from gpuadvisor import devices
    from probes import interconnect
    from tests.test_interconnect import fake_nvml

    cp, _ = fake_cupy(2)
    links = {0: [(6, "gpu", "0000:43:00.0")] * 18, 1: [(6, "gpu", "0000:1b:00.0")] * 18}
    nvml, _ = fake_nvml(links, level=50, buses=("00000000:1B:00.0", "00000000:43:00.0"))
    monkeypatch.setattr(devices, "nvml_handle", lambda m, i: ("h", i))
    ctx = base.ProbeContext(mode="quick", cp=cp, nvml=nvml, devices=[0, 1], use_torch=False,
                            options={"interconnect": {"nccl": False, "p2p_bytes": 1 << 20}})
    res = interconnect.run(ctx)
    assert res.status == "ok", res.reason
    keys = [m.key for m in res.measurements]
    assert keys == ["interconnect.p2p_0_1", "interconnect.p2p_latency_0_1", "interconnect.p2p_1_0",
                    "interconnect.p2p_latency_1_0", "interconnect.p2p_bidir_0_1"]
    m = res.get("interconnect.p2p_0_1")
    assert m.datasheet == 450.0 and "NVLink 4.0 x18" in m.datasheet_source and m.reference is None
    assert res.get("interconnect.p2p_bidir_0_1").datasheet == 900.0
    assert res.data["topology"]["matrix"][0][1] == "NV18" and res.data["errors"] == {}
