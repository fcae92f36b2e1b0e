"""Plots of the HTML report as ``<img>`` elements: PNG images drawn on
matplotlib's Agg canvas, embedded as base64 ``data:`` URIs, so the page needs
nothing but a browser."""

from __future__ import annotations

import base64
import io

# matplotlib is imported inside the functions that draw: it is slow to load and only a report with plots needs it

__all__ = ["figure_img", "level_colors"]


def figure_img(fig) -> str:
    """A matplotlib figure as an HTML ``<img>`` holding a base64 PNG: how the
    report's sections embed their plots."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=96, metadata={"Software": None})
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return f'<img class="plot" alt="plot" src="data:image/png;base64,{data}">'


def level_colors(height: int) -> list:
    """Colours of the levels of a hierarchy of ``height`` levels, pale at the leaves, dark at the root."""
    from matplotlib import colormaps

    cmap = colormaps["YlOrRd"]
    if height == 1:
        return [cmap(0.12)]
    # index 0 = level 1 (root) ... index height-1 = leaves
    return [cmap(0.12 + 0.83 * (height - 1 - d) / (height - 1)) for d in range(height)]

