# --- gpu marker: skip `@pytest.mark.gpu` tests with the reason when CuPy or a GPU is missing ---
# (self-contained; other fixtures may be added below)
import pytest

_GPU_SKIP_REASON: list = []


def _gpu_unavailable_reason():
    if not _GPU_SKIP_REASON:
        try:
            from gpuadvisor.devices import Unavailable, load_cupy

            try:
                load_cupy()
                _GPU_SKIP_REASON.append(None)
            except Unavailable as e:
                _GPU_SKIP_REASON.append(f"no usable GPU: {e}")
        except Exception as e:  # pragma: no cover - a broken install
            _GPU_SKIP_REASON.append(f"no usable GPU: {type(e).__name__}: {e}")
    return _GPU_SKIP_REASON[0]


def pytest_collection_modifyitems(config, items):
    gpu_items = [item for item in items if item.get_closest_marker("gpu") is not None]
    if not gpu_items:
        return
    reason = _gpu_unavailable_reason()
    if reason:
        for item in gpu_items:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(autouse=True)
def _user_cache_in_tmp(tmp_path_factory, monkeypatch):
    """No test reads or writes the real user cache folder (the host cache, probes/hostcache.py)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
