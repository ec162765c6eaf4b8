"""The Textual terminal UI (imported only by `gpuadvisor tui`)."""

from gpuadvisor.tui.app import GpuAdvisorApp, build_app

__all__ = ["GpuAdvisorApp", "build_app"]
