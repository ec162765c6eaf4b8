"""Old home of the card x GPU-count ranking, kept so that existing imports keep working.

The advisor now lives in `gpuadvisor.advisor` (ranking, targets, options, picks)."""

from gpuadvisor.advisor.ranking import (  # noqa: F401
    SINGLE_DEVICE_FAMILIES,
    SORT_KEYS,
    Option,
    _measured_for,
    evaluate,
    fewest_gpus_per_card,
    layout,
    one_per_card,
    recommend,
    why_not,
)

__all__ = ["SORT_KEYS", "Option", "evaluate", "fewest_gpus_per_card", "layout", "one_per_card", "recommend", "why_not"]
