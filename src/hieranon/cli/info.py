"""``hieranon config-template``, ``hieranon methods`` and ``hieranon experiments``: what the
package offers, and the reproduction of the papers' experiments."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from .errors import die, one_line
from .options import (
    JsonOption,
)
from .output import configure_logging


def config_template():
    """Print an annotated example configuration."""
    from ..job.config import TEMPLATE
    typer.echo(TEMPLATE, nl=False)


def methods(as_json: JsonOption = False):
    """List the anonymisation methods: family, paper, what each needs and
    supports (several requirements, suppression, privacy models)."""
    from ..algorithms.registry import available_methods, method_info

    infos = [method_info(m) for m in available_methods()]
    if as_json:
        typer.echo(json.dumps(infos, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    def supports(i) -> str:
        privacy = {True: "privacy models", False: "no privacy models", None: "privacy models: unknown"}
        return "; ".join(["several requirements" if i["several_requirements"] else "one k over all QIs",
                          "suppression (--max-suppression" + (f", {i['suppression']})" if i["suppression"] else ")")
                          if i.get("max_suppression") else "no suppression",
                          privacy[i["privacy_models"]]])

    table = Table(title="hieranon methods (--method NAME)", show_lines=True)
    table.add_column("method", no_wrap=True)
    for col in ("family", "paper", "needs / notes", "supports"):
        table.add_column(col, overflow="fold")
    for i in infos:
        name = i["method"] + ("\n(default)" if i["default"] else "")
        needs = "; ".join(x for x in (i["needs"], i["notes"]) if x)
        table.add_row(name, i["family"], i["paper"], needs, supports(i))
    Console().print(table)


def experiments(
    quick: bool = typer.Option(False, "--quick", help="Reduced grid for CI (under 5 minutes)."),
    out: Path = typer.Option(Path("benchmarks/results/experiments"), "--out", "-o",
                             help="Folder for the CSVs, PNGs and REPORT.md."),
    adult_dir: Optional[Path] = typer.Option(None, "--adult-dir",
                                             help="UCI Adult folder (default: $HIERANON_ADULT_DIR)."),
    only: Optional[str] = typer.Option(None, "--only", help="Experiments to run, e.g. '1,3' (default: 1,2,3,4); "
                                       "the report covers every experiment whose CSVs are in --out."),
    seeds: Optional[int] = typer.Option(None, "--seeds", help="Seeds of the randomised methods (default: 10, "
                                        "--quick: 2)."),
    report_only: bool = typer.Option(False, "--report-only", help="Only redraw the figures and rewrite REPORT.md "
                                     "from the CSVs already in --out."),
):
    """Reproduce the papers' experiments on UCI Adult (Li et al. 2006, 2008; Sun et al. 2008;
    Arca & Hewett): CSVs, figures and REPORT.md with a verdict on every claim."""
    configure_logging(True, False)
    from ..experiments import ExperimentError, run_experiments
    try:
        run_experiments(out, quick=quick, adult_dir=adult_dir, only=only, seeds=seeds, report_only=report_only)
    except (ExperimentError, OSError) as exc:
        die(one_line(exc))
