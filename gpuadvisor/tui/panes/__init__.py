"""One TabPane per tab: advisor (workload form and ranking), memory, device, catalog."""

from gpuadvisor.tui.panes.advisor import AdvisorPane
from gpuadvisor.tui.panes.catalog import CatalogPane
from gpuadvisor.tui.panes.device import DevicePane
from gpuadvisor.tui.panes.memory import MemoryPane

__all__ = ["AdvisorPane", "CatalogPane", "DevicePane", "MemoryPane"]
