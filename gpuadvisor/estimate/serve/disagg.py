"""Disaggregated prefill and decode: two pools of engine instances, and the KV cache sent between them.

A deployment (vLLM's NixlConnector, SGLang's --disaggregation-mode, TensorRT-LLM's disaggregated serving, NVIDIA
Dynamo) runs prompts on a prefill pool and generation on a decode pool, each of `instances` engine instances of
`tp` GPUs (possibly another card: each pool's step costs come from its own card, through the one StepCost of
stepcost.py). A request:

1. is sent, reaches the front-end (`frontend_s_per_request` of the engine profile) and is given to the prefill
   instance that will be free first (a shared prefill queue, as Dynamo's, or a proxy that knows the load);
2. is prefilled there in prefill-only iterations (chunked or not as the engine's profile says; the simulation of
   sim.py with one output token: no decode interferes);
3. has its KV cache (prompt tokens x KV bytes per token, all layers) sent to a decode instance over the link that
   joins the pools (`KvLink`: one direction of the cards' NVLink within a node, else the network's per-GPU rate),
   the GPUs of the smaller tensor-parallel group sending in parallel, at KV_TRANSFER_EFFICIENCY, plus the
   engine's `kv_transfer_latency_s` (the hand-off: the transfer's setup and the decode side's notice). Engines
   that send layer by layer while the prefill runs (`kv_transfer_layerwise`) expose only what outlasts it;
4. joins the decode instance's continuous batch when its KV cache has arrived (decode instances are given
   requests in turn, as the routers do round robin); its first decode iteration samples the first token the
   client sees. TTFT = front-end + prefill queue + prefill + KV transfer + the wait for and the first decode.

Closed-loop clients (`users`): a client sends its next request when the last one's final token arrives, which
couples the pools; the send times are found by iterating the two stages from "every request sent at once" until
they no longer move (monotone: later sends never finish earlier), at most MAX_ROUNDS times.

KV memory per pool: each instance's KV blocks come from its own card's memory less its weights (stepcost.py);
a prefill instance holds a prompt's blocks until its prefill ends (the transfer reads them after; not modelled).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from gpuadvisor.core.errors import UserError
from gpuadvisor.estimate import calibration as cal
from gpuadvisor.estimate.serve.lengths import Lengths
from gpuadvisor.estimate.serve.sim import SimResult, combine_draws, draw_count, simulate

#: the most GPUs one node holds: both pools within it send over NVLink (where the card has it)
GPUS_PER_NODE = 8
MAX_ROUNDS = 40
KV_LINKS = ("nvlink", "pcie", "network")


@dataclass(frozen=True)
class KvLink:
    """The link a KV cache crosses between the pools, per GPU and one direction."""

    kind: str  # nvlink | pcie | network | given
    gbs: float  # GB/s of one direction per GPU, before KV_TRANSFER_EFFICIENCY
    name: str = ""  # what the printout calls it where the kind's name is NVIDIA's and the card is not (AMD's links)

    def describe(self) -> str:
        return f"{self.name or self.kind}, {self.gbs:,.0f} GB/s per GPU one way"


def kv_link(spec: str | None, prefill_hw: Any, decode_hw: Any, total_gpus: int) -> KvLink:
    """The link of `--kv-link nvlink|pcie|network|GBS` (GB/s per GPU one way). By default, where both pools are one
    card in one node (at most GPUS_PER_NODE GPUs): NVLink if it joins the node's GPUs (SXM boards; a PCIe card's
    NVLink bridge joins two), else PCIe at DEFAULT_INTERCONNECT_GBS; otherwise the network at NODE_NET_GBS_PER_GPU
    (one 400 Gb/s NIC per GPU)."""
    same_nvlink = prefill_hw.name == decode_hw.name and (decode_hw.interconnect_gbs or 0) > 0
    one_node = prefill_hw.name == decode_hw.name and total_gpus <= GPUS_PER_NODE
    if spec is None:
        node_wide = same_nvlink and decode_hw.interconnect_node_wide
        spec = ("nvlink" if node_wide else "pcie") if one_node else "network"
    if spec == "pcie":
        if not one_node:
            raise UserError(f"--kv-link pcie: both pools must be one card in one node (at most {GPUS_PER_NODE} "
                            "GPUs); use network or GB/s")
        return KvLink("pcie", float(cal.DEFAULT_INTERCONNECT_GBS))
    if spec == "nvlink":
        if not same_nvlink:
            raise UserError("--kv-link nvlink: both pools must be one card with NVLink (the catalog gives "
                            f"{decode_hw.name} {decode_hw.interconnect_gbs or 'no'} GB/s); use network or GB/s")
        amd = decode_hw.compute_capability is None  # the catalog gives NVIDIA cards a compute capability
        return KvLink("nvlink", float(decode_hw.interconnect_gbs) / 2.0,  # the catalog's figure counts both ways
                      "Infinity Fabric" if amd else "")
    if spec == "network":
        return KvLink("network", float(cal.NODE_NET_GBS_PER_GPU))
    try:
        gbs = float(spec)
    except ValueError:
        raise UserError(f"--kv-link {spec}: nvlink, network or a rate in GB/s per GPU") from None
    if not 0.1 <= gbs <= 10_000:
        raise UserError(f"--kv-link {spec}: between 0.1 and 10,000 GB/s per GPU")
    return KvLink("given", gbs)


@dataclass
class DisaggSetup:
    """Two pools (each a ServeSetup of one instance: its card, TP, engine and KV blocks), the instances of each
    and the link between them."""

    prefill: Any  # api.ServeSetup of one prefill instance
    decode: Any  # api.ServeSetup of one decode instance
    prefill_instances: int
    decode_instances: int
    link: KvLink

    @property
    def gpus(self) -> int:
        return self.prefill_instances * self.prefill.layout.tp + self.decode_instances * self.decode.layout.tp

    def kv_bytes(self, tokens: np.ndarray | float) -> Any:
        """Bytes of a prompt's KV cache (every layer, every KV head) in the prefill pool's KV format; a sliding-window
        layer sends its window's (ModelSpec.kv_tokens)."""
        c = self.prefill.cost
        per_token = c.kv_per_token_layer * c.model.kv_shards(c.tp) * c.model.num_layers
        return c.model.kv_tokens(np.asarray(tokens, float)) * per_token

    def transfer_s(self, tokens: np.ndarray, prefill_s: np.ndarray | None = None) -> np.ndarray:
        """Seconds a prompt's KV cache takes from a prefill to a decode instance (module docstring, step 3)."""
        m = self.prefill.cost.model
        lanes = m.kv_shards(min(self.prefill.layout.tp, self.decode.layout.tp))
        rate = self.link.gbs * 1e9 * cal.KV_TRANSFER_EFFICIENCY * lanes
        wire = self.kv_bytes(tokens) / rate
        if self.decode.engine.kv_transfer_layerwise and prefill_s is not None:
            wire = np.maximum(wire / m.num_layers, wire - prefill_s)
        return wire + self.decode.engine.kv_transfer_latency_s

    def short_pools(self, inp: np.ndarray, out: np.ndarray) -> list[tuple[str, int, int]]:
        """(pool, tokens needed, tokens held) of each pool whose instance's KV cache cannot hold the longest
        request's share: a prefill instance its prompt, a decode instance its prompt and output."""
        needs = (("prefill", self.prefill, int(inp.max())), ("decode", self.decode, int((inp + out).max())))
        held = {name: s.cfg.kv_blocks * int(cal.KV_BLOCK_TOKENS) for name, s, _ in needs}
        return [(name, need, held[name]) for name, _, need in needs if need > held[name]]

    def assumptions(self) -> dict[str, Any]:
        p, d = self.prefill, self.decode
        return {"prefill_pool": _pool(p, self.prefill_instances), "decode_pool": _pool(d, self.decode_instances),
                "kv_link": self.link.describe(), "kv_transfer_efficiency": float(cal.KV_TRANSFER_EFFICIENCY),
                "kv_transfer_latency_s": d.engine.kv_transfer_latency_s,
                "kv_transfer_layerwise": d.engine.kv_transfer_layerwise}


def _pool(s: Any, instances: int) -> dict[str, Any]:
    return {"card": s.gpu_figures.name, "instances": instances, "tp": s.layout.tp, "gpus": instances * s.layout.tp,
            "kv_tokens_per_instance": s.cfg.kv_blocks * int(cal.KV_BLOCK_TOKENS),
            "weights_bytes_per_gpu": float(s.cost.weight_bytes_per_gpu()),
            "kv_bytes_per_gpu": float(s.cfg.kv_blocks * int(cal.KV_BLOCK_TOKENS) * s.cost.kv_per_token)}


def _least_loaded(send: np.ndarray, service: np.ndarray, instances: int) -> np.ndarray:
    """Instance of each request (in send order) that will be free first, given each one's prefill alone."""
    free = np.zeros(instances)
    where = np.zeros(len(send), np.int64)
    for i in np.argsort(send, kind="stable"):
        k = int(np.argmin(np.maximum(free, send[i])))
        where[i] = k
        free[k] = max(free[k], send[i]) + service[i]
    return where


@dataclass
class DisaggRun:
    """Per-request times of one disaggregated run (seconds from the first send)."""

    send: np.ndarray
    prefill_done: np.ndarray
    transfer: np.ndarray
    decode_arrival: np.ndarray
    first_token: np.ndarray
    finish: np.ndarray
    input_len: np.ndarray
    output_len: np.ndarray
    prefill: list[SimResult]
    decode: list[SimResult]
    rounds: int


def _stages(ds: DisaggSetup, inp: np.ndarray, out: np.ndarray, send: np.ndarray) -> DisaggRun:
    """Prefill pool, transfer, decode pool for requests sent at `send`."""
    n = len(inp)
    p, d = ds.prefill, ds.decode
    fe = p.engine.frontend_s_per_request
    service = np.array([p.cost.iteration_s(int(x), float(x) * x / 2.0, 0, 0.0) for x in inp])
    where = _least_loaded(send + fe, service, ds.prefill_instances)
    prefill_done = np.zeros(n)
    pre: list[SimResult] = []
    for k in range(ds.prefill_instances):
        idx = np.flatnonzero(where == k)
        if not len(idx):
            continue
        r = simulate(p.step_cost, replace(p.cfg, frontend_s=0.0), inp[idx], np.ones(len(idx), np.int64),
                     arrivals=send[idx] + fe)
        prefill_done[idx] = r.finish
        pre.append(r)
    transfer = ds.transfer_s(inp, prefill_done - send - fe)
    arrive = prefill_done + transfer
    order = np.argsort(arrive, kind="stable")
    first, finish = np.zeros(n), np.zeros(n)
    dec: list[SimResult] = []
    for k in range(ds.decode_instances):
        idx = order[k::ds.decode_instances]
        if not len(idx):
            continue
        r = simulate(d.step_cost, replace(d.cfg, frontend_s=0.0, prefilled=True), inp[idx], out[idx],
                     arrivals=arrive[idx])
        first[idx], finish[idx] = r.first_token, r.finish
        dec.append(r)
    return DisaggRun(send, prefill_done, transfer, arrive, first, finish, inp, out, pre, dec, 1)


def run_disaggregated(ds: DisaggSetup, inp: np.ndarray, out: np.ndarray, *, rate: float | None = None,
                      users: int | None = None, seed: int = 0) -> DisaggRun:
    """Every request through both pools: Poisson sends at `rate`, `users` closed-loop clients, or all at once."""
    n = len(inp)
    out = np.maximum(np.asarray(out, np.int64), 1)
    inp = np.asarray(inp, np.int64)
    if rate is not None:
        send = np.cumsum(np.random.default_rng(seed).exponential(1.0 / rate, n))
        return _stages(ds, inp, out, send - send[0])
    if users is None or users >= n:
        return _stages(ds, inp, out, np.zeros(n))
    # closed loop: client j sends requests j, j + users, ... each when the previous one's last token arrived
    send = np.zeros(n)
    run = _stages(ds, inp, out, send)
    for rounds in range(2, MAX_ROUNDS + 1):
        nxt = np.zeros(n)
        nxt[users:] = run.finish[:-users]
        if np.allclose(nxt, send, rtol=0, atol=1e-6):
            run.rounds = rounds - 1
            return run
        send = nxt
        run = _stages(ds, inp, out, send)
    run.rounds = MAX_ROUNDS
    return run


def summarize(run: DisaggRun, frontend_s: float, *, warmup: int = 0, slo_ttft: float | None = None,
              slo_tpot: float | None = None) -> dict[str, Any]:
    """The figures of SimResult.summary for the whole deployment, and where TTFT goes."""
    whole = SimResult(arrival=run.send, first_token=run.first_token, finish=run.finish, input_len=run.input_len,
                      output_len=run.output_len, iterations=sum(r.iterations for r in run.prefill + run.decode),
                      preemptions=sum(r.preemptions for r in run.decode),
                      makespan=float(run.finish.max()), max_running=max(r.max_running for r in run.decode),
                      frontend_s=frontend_s,
                      gaps=(np.concatenate([r.gaps[0] for r in run.decode]),
                            np.concatenate([r.gaps[1] for r in run.decode])))
    f = whole.summary(slo_ttft=slo_ttft, slo_tpot=slo_tpot, warmup=warmup)
    sel = slice(warmup, None)
    prefill_part = (run.prefill_done - run.send)[sel] - frontend_s
    decode_part = (run.first_token - run.decode_arrival)[sel]
    f["ttft_parts_s"] = {  # means over the requests summarised; they add up to the mean TTFT
        "front-end": frontend_s,
        "prefill queue + prefill": float(prefill_part.mean()),
        "KV transfer": float(run.transfer[sel].mean()),
        "decode queue + first decode": float(decode_part.mean())}
    f["ttft_parts_p99_s"] = {  # each part's own P99: one part alone past a TTFT target rules its pool out
        "prefill queue + prefill": float(np.percentile(prefill_part, 99)),
        "decode queue + first decode": float(np.percentile(decode_part, 99))}
    f["kv_transfer_s"] = {"mean": float(run.transfer[sel].mean()), "p50": float(np.percentile(run.transfer[sel], 50)),
                          "p99": float(np.percentile(run.transfer[sel], 99))}
    f["closed_loop_rounds"] = run.rounds
    return f


def estimate_disaggregated(ds: DisaggSetup, lengths: Lengths, *, rate: float | None = None, users: int | None = None,
                           requests: int = 1000, seed: int = 0, slo_ttft: float | None = None,
                           slo_tpot: float | None = None, draws: int | None = None) -> dict[str, Any]:
    """estimate_load's answer for a disaggregated deployment: the load, the figures, the assumptions (an open loop's
    figures each the median of `draws` draws of its arrivals, as estimate_load's)."""
    inp, out = lengths.draw(requests, seed)
    for name, need, cap in ds.short_pools(inp, out)[:1]:
        s = ds.prefill if name == "prefill" else ds.decode
        raise UserError(f"a request of {need} tokens does not fit in a {name} instance's KV cache ({cap:,} "
                        f"tokens on {s.layout.tp} x {s.gpu_figures.name})")
    warm = min(users, requests // 2) if users is not None else 0
    f = combine_draws([summarize(run_disaggregated(ds, inp, out, rate=rate, users=users, seed=seed + k),
                                 ds.prefill.engine.frontend_s_per_request, warmup=warm, slo_ttft=slo_ttft,
                                 slo_tpot=slo_tpot)
                       for k in range(draw_count(rate, draws))])
    f["requests"] = requests
    load = {"rate": rate, "users": users, "offline": rate is None and users is None, "lengths": lengths.describe(),
            "mean_input_len": float(inp.mean()), "mean_output_len": float(out.mean())}
    a = ds.decode.assumptions()
    a["gpus"] = ds.gpus
    a["layout"] = (f"{ds.prefill_instances} prefill x TP{ds.prefill.layout.tp} ({ds.prefill.gpu_figures.name}) + "
                   f"{ds.decode_instances} decode x TP{ds.decode.layout.tp} ({ds.decode.gpu_figures.name})")
    a["disaggregated"] = {**ds.assumptions(), "kv_bytes_per_request_mean": float(ds.kv_bytes(inp).mean())}
    return {"load": load, "figures": f, "assumptions": a, "estimate": True}


__all__ = ["GPUS_PER_NODE", "KV_LINKS", "DisaggRun", "DisaggSetup", "KvLink", "estimate_disaggregated", "kv_link",
           "run_disaggregated", "summarize"]
