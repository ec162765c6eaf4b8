"""Old import path of gpuadvisor.core.fileio (the bottom layer, see gpuadvisor/core/__init__.py)."""

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuadvisor.core.fileio import *  # noqa: F403
else:  # the same module object under both names, so that state and patches are shared
    from gpuadvisor.core import fileio as _moved

    sys.modules[__name__] = _moved
