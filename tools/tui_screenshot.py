"""Regenerate docs/tui-screenshot.svg and .png: the TUI's Advisor tab at 80x24 with the shipped
catalog and price snapshot and the sample H100 probe result (its card placed beside the picks).

    python3 -m tools.tui_screenshot            # needs textual; the PNG needs a chromium binary

The PNG is the SVG rendered by headless Chromium at 1000x640, as the README shows it.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import tempfile
from pathlib import Path

from gpuadvisor.core import results
from gpuadvisor.tui.app import GpuAdvisorApp

ROOT = Path(__file__).resolve().parent.parent

PROBE = ROOT / "reports" / "sample-h100-probe.json"
OUT = ROOT / "docs" / "tui-screenshot"


async def _svg() -> str:
    app = GpuAdvisorApp(results.load(PROBE), debounce_s=0.05)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.5)
        advice = [w for w in app.workers if w.group == "advice"]  # the advisor answers from a worker thread
        if advice:
            await app.workers.wait_for_complete(advice)
        await pilot.pause(0.2)
        return app.export_screenshot(title="gpuadvisor")


def main() -> int:
    svg = asyncio.run(_svg())
    OUT.with_suffix(".svg").write_text(svg, encoding="utf-8")
    print(f"wrote {OUT.with_suffix('.svg')}")
    names = ("chromium", "chromium-browser", "google-chrome")
    browser = next((shutil.which(b) for b in names if shutil.which(b)), None)
    if browser is None:
        print("no chromium binary: PNG not regenerated")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", f"--user-data-dir={tmp}",
             f"--screenshot={OUT.with_suffix('.png')}", "--window-size=1000,640", OUT.with_suffix(".svg").as_uri()],
            check=True, capture_output=True, timeout=120,
        )
    print(f"wrote {OUT.with_suffix('.png')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
