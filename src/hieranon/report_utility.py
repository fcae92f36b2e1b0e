"""The "Utility for analysis" section of the HTML report, kept importable here
for existing callers: it lives in :mod:`hieranon.report.sections.utility`, and
:func:`figure_img` in :mod:`hieranon.report.figures`."""

from __future__ import annotations

from .report.figures import figure_img
from .report.sections.utility import PAIRS_LISTED, PLOTTED_VALUES, utility_section

__all__ = ["PAIRS_LISTED", "PLOTTED_VALUES", "figure_img", "utility_section"]
