"""A self-contained HTML report of one anonymisation, for the data custodian.

Modelled on sdcMicro's ``report()``: one page that says what was done (the
configuration), whether it worked (the independent verification), what it
cost (every quality measure, the generalisation level of each attribute) and
what it bought (re-identification risk and class sizes before and after),
with timings and a sample of the output.

The page needs nothing but a browser: the CSS is inline and the plots are
PNG images made with matplotlib's Agg canvas, embedded as base64 ``data:``
URIs. Every value taken from the data or the configuration is HTML-escaped.

:func:`write_report` writes it atomically (:func:`hieranon.io.write_text`);
:func:`render_report` returns the HTML text; :func:`evaluate_pair` builds the
:class:`~hieranon.job.result.AnonymizationResult` of an existing (original,
anonymised) pair so that a table anonymised elsewhere gets the same report
(``hieranon report ORIGINAL ANONYMISED``).

matplotlib is imported only inside the plotting functions, so importing this
package is cheap. The page and its helpers are in :mod:`~hieranon.report.page`,
the plots' embedding in :mod:`~hieranon.report.figures`, the sections in
:mod:`hieranon.report.sections`.
"""

from .evaluate import evaluate_pair
from .render import SECTIONS, render_report, write_report
from .sections.measures import METRIC_TEXT
from .sections.risk import MAX_CLASSES_PLOTTED, MAX_VALUES_COLOURED

__all__ = ["SECTIONS", "render_report", "write_report", "evaluate_pair", "METRIC_TEXT", "MAX_CLASSES_PLOTTED",
           "MAX_VALUES_COLOURED"]
