"""Print a compact table of probe result files: figure, value, % datasheet, x reference."""

import sys

from gpuadvisor.core.results import load

for path in sys.argv[1:]:
    try:
        r = load(path)
    except Exception as e:
        print(f"{path}: {e}")
        continue
    print(f"== {path} mode={r.mode} complete={r.complete} driver={r.host.driver_version} "
          f"cuda={r.host.cuda_runtime_version} cupy={r.host.cupy_version} torch={r.host.torch_version}")
    for name, probes in [("host", r.host_probes)] + [(f"GPU{d.index} {d.name} [{d.catalog_name}] flags={d.flags}",
                                                        d.probes) for d in r.devices]:
        print(f"-- {name}")
        for p in probes:
            print(f"   [{p.probe} {p.status} {p.duration_s:.1f}s] {p.reason or ''}"[:400])
            for m in p.measurements:
                pct = m.pct_of_datasheet
                rat = m.ratio_to_reference
                v = "-" if m.value is None else f"{m.value:.4g}"
                print(f"     {m.key:<28} {v:>10} {m.unit:<8} ds%={'-' if pct is None else f'{pct:.1f}':>6} "
                      f"xref={'-' if rat is None else f'{rat:.3f}':>6} ref={m.reference and round(m.reference, 1)} "
                      f"sp={m.spread and round(m.spread, 3)}")
                if m.details.get("configurations_failed") or m.details.get("reference_note"):
                    print(f"       failed configs: {m.details.get('configurations_failed')}; "
                          f"ref note: {m.details.get('reference_note')}"[:600])
            if p.probe == "tensor":
                print(f"       sizes: {p.data.get('sizes')}"[:1500])
