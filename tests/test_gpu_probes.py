"""Probes on a real GPU (skipped without CuPy and a GPU): properties match the CUDA runtime
exactly, and every probe returns sane figures."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def gpu():
    from gpuadvisor import devices
    from gpuadvisor.catalog import load_catalog, match_device
    from probes.properties import collect

    d = devices.discover()
    assert d.usable, d.message
    cp = d.cupy
    handle = devices.nvml_handle(d.nvml, 0)
    with cp.cuda.Device(0):
        props = collect(cp, d.nvml, handle, 0)
    try:
        card = match_device(load_catalog(), props["name"], props["memory_total_bytes"] / 2**30)
    except Exception:
        card = None
    return {"cp": cp, "nvml": d.nvml, "handle": handle, "props": props, "card": card}


def ctx_for(gpu, **options):
    from probes.base import ProbeContext
    from probes.timing import Deadline

    return ProbeContext(mode="quick", deadline=Deadline(120), device_index=0, cp=gpu["cp"], props=gpu["props"],
                        card=gpu["card"], options=options)


def test_properties_match_cuda_runtime(gpu):
    from probes.properties import ATTR, PROP_KEYS

    cp, p = gpu["cp"], gpu["props"]
    dp = cp.cuda.runtime.getDeviceProperties(0)
    assert p["name"] == (dp["name"].decode() if isinstance(dp["name"], bytes) else dp["name"])
    assert p["compute_capability"] == f"{dp['major']}.{dp['minor']}"
    for src, key in PROP_KEYS.items():
        if src in dp:
            assert p[key] == dp[src], key
    for key, attr in ATTR.items():
        if key in ("cc_major", "cc_minor", "clock_rate_khz", "memory_clock_rate_khz", "ecc_enabled"):
            continue
        assert p[key] == cp.cuda.runtime.deviceGetAttribute(attr, 0), key
    assert p["ecc_enabled"] == bool(cp.cuda.runtime.deviceGetAttribute(ATTR["ecc_enabled"], 0))
    assert p["shared_mem_per_block_optin"] >= p["shared_mem_per_block"]
    assert p["multiprocessor_count"] > 0 and p["warp_size"] == 32
    if gpu["nvml"] is not None:
        nv = gpu["nvml"]
        assert p["sm_clock_max_mhz"] == nv.nvmlDeviceGetMaxClockInfo(gpu["handle"], nv.NVML_CLOCK_SM)
        assert p["mem_clock_max_mhz"] == nv.nvmlDeviceGetMaxClockInfo(gpu["handle"], nv.NVML_CLOCK_MEM)


def test_memory_bandwidth_sane(gpu):
    from probes import memory_bandwidth

    res = memory_bandwidth.run(ctx_for(gpu))
    theo = gpu["props"]["memory_bandwidth_theoretical_gbs"]
    for key in ("memory.copy", "memory.triad", "memory.d2d"):
        m = res.get(key)
        assert m is not None and 0.3 * theo < m.value < 1.05 * theo, (key, m and m.value)
    assert res.get("memory.triad").ratio_to_reference > 0.8


def test_flops_sane(gpu):
    from probes import flops

    res = flops.run(ctx_for(gpu))
    for key in ("fp32.fma", "fp64.fma"):
        m = res.get(key)
        assert m.value > 0
        if m.datasheet:
            assert 0.5 * m.datasheet < m.value < 1.1 * m.datasheet, (key, m.value, m.datasheet)


def test_transfer_sane(gpu):
    from probes import transfer

    res = transfer.run(ctx_for(gpu))
    m = res.get("transfer.h2d_pinned")
    assert m.value > 1.0
    if m.datasheet:
        assert m.value < 1.1 * m.datasheet
    assert res.get("transfer.d2h_pageable").value > 0.1


def test_tensor_sane(gpu):
    from probes import tensor

    res = tensor.run(ctx_for(gpu))
    assert res.status == "ok", res.reason
    for m in res.measurements:
        assert m.value > 0
        assert m.details["rel_error_n512"] <= tensor.TOLERANCE[m.key.split(".")[1]]
        if m.datasheet:
            assert m.value < 1.1 * m.datasheet, (m.key, m.value, m.datasheet)


def test_crossover_gpu(gpu):
    from probes import crossover

    res = crossover.run(ctx_for(gpu, crossover={"vector_sizes": [1 << 10, 1 << 24], "matmul_sizes": [64, 2048]}))
    assert res.data["gpu"] is True
    assert all("gpu_ms" in r for r in res.data["matmul"])
    m = res.get("crossover.matmul.kernel")
    assert m is not None and m.value in (64, 2048)
