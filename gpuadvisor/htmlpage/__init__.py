"""The one HTML rendering path of gpuadvisor: a self-contained page (no network), used by the report
(`gpuadvisor report`) and the fleet report (`gpuadvisor fleet report`).

A page template extends `page.html.j2`, which owns what every page shares: the head (charset, a
Content-Security-Policy that forbids fetching anything, the generator tag), the stylesheet, the
header with the title, the footer, and the charts: Plotly's JS inlined once and the figures in one
JSON block that "<" cannot break out of. Templates render with autoescape forced on (the files end
in .j2, so select_autoescape would not apply) and StrictUndefined, so user text (model, device and
node names) is always shown as text and a misspelt variable fails loudly.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from gpuadvisor import __version__

HERE = Path(__file__).parent
BASE_TEMPLATE = "page.html.j2"


class Charts:
    """The Plotly figures of one page, by element id: `add(fig)` files one and returns its id."""

    def __init__(self) -> None:
        self.figures: dict[str, Any] = {}

    def add(self, fig: Any) -> str | None:
        """File a Plotly figure (None: no chart) as "chart-N"; the page draws it into that element."""
        if fig is None:
            return None
        cid = f"chart-{len(self.figures) + 1}"
        self.figures[cid] = json.loads(fig.to_json())
        return cid


@functools.lru_cache(maxsize=1)
def plotly_js() -> str:
    """Plotly's JS bundle, to inline (the page fetches nothing). Imports Plotly: call it only with charts."""
    import plotly.offline

    return str(plotly.offline.get_plotlyjs())


def render_page(template_dir: Path, template: str, *, title: str, charts: Charts | None = None,
                **context: Any) -> str:
    """`template` (from `template_dir`, extending page.html.j2) rendered as one self-contained HTML string."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader([str(template_dir), str(HERE)]),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    figures = charts.figures if charts is not None else {}
    return env.get_template(template).render(
        title=title,
        tool_version=__version__,
        charts=figures,
        plotly_js=plotly_js() if figures else "",
        **context,
    )
