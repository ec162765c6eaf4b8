"""How the GPUs of a node are joined, from NVML: common ancestor per pair and NVLink per pair.

Pure functions over the pynvml module (or a fake of it in tests); every call is guarded, and a
field the driver does not report stays None. Used by the interconnect probe and by the report.
"""

from __future__ import annotations

from typing import Any

from gpuadvisor.core.provenance import as_text as _s
from gpuadvisor.core.provenance import nvml_try as _try

# nvmlGpuTopologyLevel_t: how far apart two GPUs are on the PCIe/CPU tree, with nvidia-smi topo's names
LEVELS: dict[int, tuple[str, str]] = {
    0: ("internal", "same board"),
    10: ("PIX", "one PCIe switch"),
    20: ("PXB", "several PCIe switches"),
    30: ("PHB", "a PCIe host bridge"),
    40: ("NODE", "host bridges of one NUMA node"),
    50: ("SYS", "across NUMA nodes (SMP interconnect)"),
}
NVLINK_DEVICE_TYPES = {0: "gpu", 1: "ibmnpu", 2: "switch", 0xFF: "unknown"}
# nvmlNvlinkVersion_t as NVML reports it -> (NVLink generation, GB/s per link and direction)
NVLINK_VERSIONS = {1: ("1.0", 20.0), 2: ("2.0", 25.0), 3: ("2.2", 25.0), 4: ("3.0", 25.0), 5: ("3.1", 25.0),
                   6: ("4.0", 25.0), 7: ("5.0", 50.0)}
NVLINK_GBS_PER_LINK = {k: v[1] for k, v in NVLINK_VERSIONS.items()}
MAX_LINKS = 18


def _bus(x: Any) -> str | None:
    """Normalise a PCI bus id ('00000000:1B:00.0' or '0000:1b:00.0') for comparison."""
    if x is None:
        return None
    text = str(_s(x)).strip().lower()
    parts = text.split(":")
    try:
        if len(parts) == 3:
            return f"{int(parts[0], 16):04x}:{parts[1]}:{parts[2]}"
        if len(parts) == 2:
            return f"0000:{text}"
    except ValueError:
        pass
    return text


def nvlinks(nvml: Any, handle: Any, max_links: int | None = None) -> list[dict[str, Any]]:
    """The device's active NVLinks: link number, version, remote type and remote PCI bus id."""
    if nvml is None or handle is None or not hasattr(nvml, "nvmlDeviceGetNvLinkState"):
        return []
    n = max_links or min(int(getattr(nvml, "NVML_NVLINK_MAX_LINKS", MAX_LINKS)), 36)
    links: list[dict[str, Any]] = []
    for link in range(n):
        try:
            state = nvml.nvmlDeviceGetNvLinkState(handle, link)
        except Exception:
            continue  # not a link on this device (NVML_ERROR_INVALID_ARGUMENT / NOT_SUPPORTED)
        if not state:
            links.append({"link": link, "active": False})
            continue
        pci = _try(nvml.nvmlDeviceGetNvLinkRemotePciInfo, handle, link)
        rtype = _try(getattr(nvml, "nvmlDeviceGetNvLinkRemoteDeviceType", lambda *a: None), handle, link)
        links.append({
            "link": link,
            "active": True,
            "version": _try(nvml.nvmlDeviceGetNvLinkVersion, handle, link),
            "remote_type": NVLINK_DEVICE_TYPES.get(rtype, None if rtype is None else str(rtype)),
            "remote_bus_id": _bus(getattr(pci, "busId", None)) if pci is not None else None,
        })
    return links


def pair_link(
    links_a: list[dict[str, Any]], links_b: list[dict[str, Any]], bus_a: str | None, bus_b: str | None
) -> dict[str, Any]:
    """NVLinks between two GPUs: direct links (remote bus id is the peer) or both on NVSwitches.

    Through NVSwitches every GPU reaches every other with all its switch links, so the pair
    gets the smaller of the two switch-link counts (what nvidia-smi topo -m shows as NV18).
    """
    act_a = [x for x in links_a if x.get("active")]
    act_b = [x for x in links_b if x.get("active")]
    direct = [x for x in act_a if bus_b is not None and x.get("remote_bus_id") == bus_b]
    if not direct and bus_a is not None:  # a's side unreadable: count from b's links back to a
        direct = [x for x in act_b if x.get("remote_bus_id") == bus_a]
    sw_a = [x for x in act_a if x.get("remote_type") == "switch"]
    sw_b = [x for x in act_b if x.get("remote_type") == "switch"]
    if direct:
        used, via = direct, "direct"
        count = len(direct)
    elif sw_a and sw_b:
        used, via = sw_a, "nvswitch"
        count = min(len(sw_a), len(sw_b))
    else:
        return {"nvlink": False, "links": 0, "via": None, "version": None, "gbs_per_direction": None}
    versions = [x["version"] for x in used if x.get("version")]
    raw = max(versions) if versions else None
    version = NVLINK_VERSIONS[raw][0] if raw in NVLINK_VERSIONS else raw
    per = NVLINK_GBS_PER_LINK.get(raw) if raw else None
    return {"nvlink": True, "links": count, "via": via, "version": version,
            "gbs_per_direction": per * count if per else None}


def topology(nvml: Any, handles: list[Any], indices: list[int]) -> dict[str, Any]:
    """The node's matrix: for every pair, NVML's common ancestor and the NVLinks between them.

    Returns {"devices": [...], "pairs": [{"a", "b", "label", "level", "level_name", nvlink...}],
    "matrix": [[label]]} where label is what nvidia-smi topo -m prints (NV18, PIX, SYS, X).
    """
    info: list[dict[str, Any]] = []  # JSON out: a device's bus id and links
    for idx, h in zip(indices, handles, strict=True):
        pci = _try(nvml.nvmlDeviceGetPciInfo, h) if nvml is not None and h is not None else None
        info.append({"index": idx, "bus_id": _bus(getattr(pci, "busId", None)) if pci is not None else None,
                     "nvlinks": nvlinks(nvml, h)})
    pairs = []
    n = len(indices)
    matrix = [["X" if i == j else "?" for j in range(n)] for i in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            level = None
            if nvml is not None and handles[i] is not None and handles[j] is not None:
                level = _try(nvml.nvmlDeviceGetTopologyCommonAncestor, handles[i], handles[j])
            link = pair_link(info[i]["nvlinks"], info[j]["nvlinks"], info[i]["bus_id"], info[j]["bus_id"])
            p2p = None
            if nvml is not None and handles[i] is not None and hasattr(nvml, "nvmlDeviceGetP2PStatus"):
                status = _try(nvml.nvmlDeviceGetP2PStatus, handles[i], handles[j], 2)  # NVLINK caps index
                p2p = None if status is None else int(status) == 0
            name, desc = LEVELS.get(int(level), (str(level), "unknown")) if level is not None else (None, None)
            label = f"NV{link['links']}" if link["nvlink"] else (name or "?")
            pairs.append({"a": indices[i], "b": indices[j], "label": label, "level": level, "level_name": name,
                          "level_desc": desc, "nvlink_p2p_status_ok": p2p, **link})
            matrix[i][j] = matrix[j][i] = label
    for d in info:  # keep the per-link listing short: active links only, summarised
        active = [x for x in d["nvlinks"] if x.get("active")]
        d["nvlinks_active"] = len(active)
        d["nvlink_versions"] = sorted({x["version"] for x in active if x.get("version")})
        d["nvlink_remote_types"] = sorted({x["remote_type"] for x in active if x.get("remote_type")})
        d["nvlinks"] = active
    return {"devices": info, "pairs": pairs, "matrix": matrix, "indices": list(indices)}
