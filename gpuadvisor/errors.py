"""Old import path of gpuadvisor.core.errors (the bottom layer, see gpuadvisor/core/__init__.py)."""

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuadvisor.core.errors import *  # noqa: F403
else:  # the same module object under both names, so that state and patches are shared
    from gpuadvisor.core import errors as _moved

    sys.modules[__name__] = _moved
