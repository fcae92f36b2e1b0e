"""The HTML report of one anonymisation: its sections in page order, rendered
into one page (:func:`render_report`) or written atomically to a file
(:func:`write_report`)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd

from .. import __version__
from ..evaluation.risk import assess_result
from ..io import write_text
from .page import esc, page
from .sections.classes import class_sizes_section, generalisation_section
from .sections.measures import metrics_section, reading_section, sample_section, timings_section
from .sections.overview import configuration_section, summary_section, verification_section
from .sections.risk import risk_models_section, risk_section, roles_section, sensitive_section
from .sections.statement import statement_section
from .sections.utility import result_utility_section

__all__ = ["SECTIONS", "render_report", "write_report"]

#: Section ids of the report, in page order (``<section id=...>``).
SECTIONS = {
    "statement": "What this release protects",
    "summary": "Summary",
    "configuration": "Configuration",
    "verification": "Verification",
    "risk": "Re-identification risk",
    "sensitive": "Sensitive attributes",
    "class-sizes": "Equivalence class sizes",
    "generalisation": "Generalisation per attribute",
    "utility": "Utility for analysis",
    "reading": "Reading the metrics",
    "metrics": "Quality metrics",
    "timings": "Timings",
    "sample": "Sample of the output",
}


def render_report(original_df: pd.DataFrame | None, result, config=None, *, counts=None, title: str | None = None,
                  input_name: str | None = None, output_name: str | None = None, threshold: float | None = None,
                  sample_rows: int = 20, sample: pd.DataFrame | None = None, public: bool = False,
                  utility=None) -> str:
    """The HTML report of ``result`` (an :class:`~hieranon.job.result.AnonymizationResult`).

    Everything comes from the result: its codes, record counts, risk figures
    (computed once and cached on it) and spec; ``original_df`` is no longer
    read (kept for the callers that pass it).

    Parameters
    ----------
    config : Config, AnonymizationSpec or mapping, optional
        The settings shown in the report (default: the result's spec).
    counts : array, optional
        Record count per row (default: the result's).
    input_name, output_name : str, optional
        File names shown in the header.
    threshold : float, optional
        Prosecutor risk above which a record counts as "at risk" (default:
        the spec's ``risk_threshold``).
    sample_rows : int
        Rows of the output shown (HTML-escaped).
    sample : DataFrame, optional
        The first rows of the output when ``result.data`` is not held in
        memory (a Parquet dataset).
    public : bool
        For sharing outside: leave out everything computed on the original
        table (sample uniques, input class sizes, before-figures, linkage
        risks of the input's columns).
    """

    config = result.spec if config is None else config
    if counts is not None and not isinstance(counts, str):
        cnt = np.asarray(counts, dtype=np.int64)
        risk_before, risk_after, n_sup = assess_result(result, cnt, threshold)
    else:
        cnt = result.record_counts
        risk_before, risk_after, n_sup = result.risk(threshold)
    k = max((r.k for r in result.requirements), default=1)
    parts = {
        "statement": statement_section(result, risk_after, config, public),
        "summary": summary_section(result, risk_before, risk_after, public),
        "configuration": configuration_section(result, config),
        "verification": verification_section(result),
        "risk": (risk_section(risk_before, risk_after, n_sup, public) + risk_models_section(result, public)
                 + roles_section(result, public)),
        "sensitive": sensitive_section(result, public),
        "class-sizes": class_sizes_section(risk_before, risk_after, k, public),
        "generalisation": generalisation_section(result, cnt),
        "utility": result_utility_section(result, utility, public),
        "reading": reading_section(),
        "metrics": metrics_section(result, public),
        "timings": timings_section(result),
        "sample": sample_section(result, sample, sample_rows),
    }
    title = title or "hieranon anonymisation report" + (" (public)" if public else "")
    what = ""
    if input_name or output_name:
        what = f"{esc(input_name or '?')} → {esc(output_name or '?')} · "
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    nav = "".join(f'<a href="#{sid}">{esc(name)}</a>' for sid, name in SECTIONS.items())
    sections = "".join(f'<section id="{sid}"><h2>{esc(SECTIONS[sid])}</h2>{parts[sid]}</section>' for sid in SECTIONS)
    subtitle = (f"{what}method <b>{esc(result.method)}</b> · "
                f"generated {esc(stamp)} by hieranon {esc(__version__)}")
    return page(esc(title), subtitle, nav, sections)


def write_report(path, original_df: pd.DataFrame, result, config=None, *, overwrite: bool = False,
                 **kwargs) -> Path:
    """Render the report (see :func:`render_report` for ``kwargs``) and write
    it to ``path`` atomically (an existing file replaced only with ``overwrite``)."""

    return write_text(render_report(original_df, result, config, **kwargs), path, overwrite=overwrite)

