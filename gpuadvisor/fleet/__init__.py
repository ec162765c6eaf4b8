"""Fleet: one probe per node of a Ray cluster, gathered into one fleet result.

The core here is UI-free. `nodes` selects the nodes to probe, `gather` waits for their tasks
under one deadline (pure: it talks to a Backend, so tests use fakes), `ray_backend` is the only
module that imports Ray (lazily), `store` owns the fleet folder (a RunResult file per node and
summary.json), `outliers` compares nodes against the fleet's median, and `report` renders HTML.
"""

from __future__ import annotations

from typing import Any

from gpuadvisor.core.errors import UserError

RAY_MISSING = "the fleet commands need the [fleet] extra: pip install 'gpuadvisor[fleet]'"


def import_ray() -> Any:
    """Ray, or the one-line UserError saying how to install it."""
    try:
        import ray
    except ImportError as e:
        if getattr(e, "name", None) in ("ray", None) or str(e.name).startswith("ray."):
            raise UserError(RAY_MISSING) from None
        # Ray is there but one of its own dependencies is not: say which, not "install the extra"
        raise UserError(f"Ray is installed but cannot be imported: {type(e).__name__}: {e}") from None
    return ray
