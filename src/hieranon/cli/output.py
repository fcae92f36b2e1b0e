"""What the commands print: logging, status lines and progress bars on stderr, tables of
metrics, warnings, and the JSON of ``--json``."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Optional

import typer

if TYPE_CHECKING:
    from ..core.progress import ProgressEvent


def configure_logging(quiet: bool, verbose: bool) -> None:
    level = logging.WARNING if quiet else (logging.DEBUG if verbose else logging.WARNING)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)


def status(quiet: bool, text: str) -> AbstractContextManager:
    from contextlib import nullcontext
    if quiet:
        return nullcontext()
    from rich.console import Console
    return Console(stderr=True).status(text)


@contextmanager
def show_progress(quiet: bool) -> Iterator[Optional[Callable[[ProgressEvent], None]]]:
    """Show the progress events of the stages run inside as rich bars on
    stderr (nothing when ``quiet``; when stderr is not a terminal, only one
    line when kernels compile); yields the callback for :func:`hieranon.job.pipeline.run`."""
    if quiet:
        yield None
        return
    from rich.console import Console

    from ..core.jit import COMPILE_STAGE
    from ..core.progress import reporting, rich_callback
    console = Console(stderr=True)
    draw, stop = rich_callback(console)
    said = False

    def show(ev):
        nonlocal said
        if ev.stage == COMPILE_STAGE and not console.is_terminal and not said:  # no bars: one line says why we wait
            said = True
            typer.echo(f"hieranon: {COMPILE_STAGE}...", err=True)
        draw(ev)

    try:
        with reporting(show):
            yield show
    finally:
        stop()


def print_metrics(title: str, rows: list[tuple[str, str]], quiet: bool) -> None:
    if quiet:
        return
    from rich.console import Console
    from rich.table import Table
    table = Table(title=title, show_header=False)
    table.add_column("measure")
    table.add_column("value", justify="right")
    for name, value in rows:
        table.add_row(name, value)
    Console().print(table)


def bound_rows(result) -> list[tuple[str, str]]:
    """The lower bound of ``anonymize --bound``, if computed."""
    b = result.lower_bound
    if b is None:
        return []
    exact = " (the optimum)" if b.optimal else ""
    meeting = "".join(f", {m}" for m in b.models)
    return [(f"lower bound of any output's distortion ratio (objective{meeting})" + exact, f"{b.ratio:.4f}"),
            ("output / lower bound", f"{result.gap_to_bound():.4f}")]


def metric_rows(m) -> list[tuple[str, str]]:
    def f(x):
        return f"{x:.4f}" if isinstance(x, float) else str(x)
    rows = [
        ("records / rows", f"{m.n_records} / {m.n_rows}"),
        ("k achieved (smallest class)", f(m.achieved_k)),
        ("equivalence classes", f(m.n_classes)),
        ("distortion (objective)", f(m.distortion)),
        ("distortion ratio (objective)", f(m.distortion_ratio)),
        ("distortion ratio, uniform WHD", f(m.distortion_ratio_uniform)),
        ("distortion ratio, height WHD", f(m.distortion_ratio_height)),
        ("MAGE distortion", f(m.mage_distortion)),
        ("discernibility DM", f(m.discernibility)),
        ("CAVG", f(m.cavg)),
        ("inconsistency (max over attributes)", f(m.inconsistency)),
        ("modification rate", f(m.modification_rate)),
        ("precision Prec", f(m.precision)),
        ("distinct rows in / out", f"{m.distinct_rows_input} / {m.distinct_rows_output}"),
        ("suppressed records", f(m.suppressed_records)),
        ("prosecutor risk max / mean", f"{m.risk_max:.4f} / {m.risk_mean:.4f}"),
    ]
    if m.classification_metric is not None:
        rows.append(("classification metric CM", f(m.classification_metric)))
    per_req = m.achieved_k_per_requirement
    if len(per_req) > 1 or any(kk != m.achieved_k for kk in per_req.values()):  # not plain k over all QIs
        rows += [(f"k achieved for {req}", f(kk)) for req, kk in m.achieved_k_per_requirement.items()]
    for q, inc in zip(m.qi_names, m.inconsistency_per_attribute):
        rows.append((f"inconsistency of {q}", f(inc)))
    return rows


#: The risk estimates --json gives by name, each a share of records (:class:`hieranon.evaluation.risk.RiskModels`).
RISK_KEYS = ("prosecutor", "journalist", "marketer", "pitman", "zayatz", "snb", "dankar")


def risk_summary(before, after, threshold: float) -> dict:
    """The risk figures of a result before and after, for --json: the
    estimates of :data:`RISK_KEYS` for the release (the original when nothing
    was released) at the top, every figure of each table under ``before``
    and ``after``."""
    def part(r):
        if r is None:
            return None
        return {"records": r.n_records, "records_at_risk": r.records_at_risk, "risk_max": r.risk_max,
                "risk_mean": r.risk_mean, "sample_uniques": r.sample_uniques, "achieved_k": r.achieved_k,
                "models": r.models.as_dict() if r.models is not None else None,
                "individual_risk": r.individual_risk.as_dict() if r.individual_risk is not None else None}
    shown = after if after is not None else before
    top = {key: getattr(shown.models, key) for key in RISK_KEYS} if shown is not None and shown.models else {}
    extra = {"individual_risk": shown.individual_risk.as_dict() if shown is not None and shown.individual_risk
             else None, "suda": before.suda.as_dict() if before is not None and before.suda is not None else None}
    return {"threshold": threshold, **top, **extra, "before": part(before), "after": part(after)}


def risk_rows(before, after, threshold: float) -> list[tuple[str, str]]:
    if before is None:
        return []
    rows = [(f"records at risk (risk above {threshold:.3g}) before / after",
             f"{before.records_at_risk} / {after.records_at_risk if after is not None else '-'}")]
    if before.models is None:
        return rows
    b, a = before.models, (after.models if after is not None else None)
    assumed = " (assumed)" if b.sampling_fraction_assumed else ""
    for key, label in (("prosecutor", "prosecutor risk, average"), ("journalist", "journalist risk, average"),
                       ("marketer", "marketer risk"), ("dankar", "population uniques (Dankar et al.)")):
        rows.append((f"{label} before / after", f"{getattr(b, key):.4f} / "
                     f"{f'{getattr(a, key):.4f}' if a is not None else '-'}"))
    rows.append(("sampling fraction / population", f"{b.sampling_fraction:.4g}{assumed} / {b.population_size}"))
    bi, ai = before.individual_risk, (after.individual_risk if after is not None else None)
    if bi is not None:
        for key, label, form in (("highest", "individual risk, highest", ".4f"),
                                 ("mean", "individual risk, mean", ".4f"),
                                 ("global_expected", "expected re-identifications", ".2f")):
            rows.append((f"{label} before / after",
                         f"{getattr(bi, key):{form}} / " + (f"{getattr(ai, key):{form}}" if ai else "-")))
        if not bi.weights.startswith("1/f"):
            rows.append(("sampling weights", bi.weights))
    return rows + (before.suda.rows() if before.suda is not None else [])


def statement_lines(statement, holds: bool = True) -> list[str]:
    """The release statement (:class:`hieranon.evaluation.statement.ReleaseStatement`)
    as lines of one style: ``HOLDS: ...`` (unless ``holds`` is False, when a
    verdict line already says it) and ``DOES NOT HOLD: ...``, one per finding."""
    return [("HOLDS: " if ok else "DOES NOT HOLD: ") + text for ok, text in statement.lines() if holds or not ok]


def cells_rows(statement) -> list[tuple[str, str]]:
    """Records suppressed and cells generalised to ``*``, counted apart."""
    if statement.star_cells is None:
        return []
    rows = [("cells generalised to * (records not suppressed)", f"{statement.star_cells_total:,}")]
    n = max(statement.records, 1)
    rows += [(f"cells of {q} generalised to *", f"{c:,} ({c / n:.1%})") for q, c in statement.star_cells.items() if c]
    return rows


def warn(line: str) -> None:
    typer.echo(f"hieranon: warning: {line}", err=True)


def json_default(x: object) -> object:
    import numpy as np
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating,)):
        return float(x)
    if isinstance(x, np.ndarray):
        return x.tolist()
    return str(x)


def verdict_line(report) -> str:
    """VERIFIED / VERIFICATION FAILED and the summary, the verdict said once."""
    summary = report.summary()
    if report.ok:
        return "VERIFIED: " + summary.removeprefix("verified: ")
    return "VERIFICATION FAILED" + (summary[len("verification FAILED"):] if summary.startswith("verification FAILED")
                                    else ": " + summary)
