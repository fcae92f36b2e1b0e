"""``hieranon config-template``, ``hieranon methods`` and ``hieranon experiments``: what the
package offers, and the reproduction of the papers' experiments (run by the research harness,
which lives outside the package: :func:`research_harness`)."""

from __future__ import annotations

import json
import sys
from importlib import import_module, metadata
from pathlib import Path
from types import ModuleType
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
    """List the anonymisation methods: family, paper, what each needs, and
    what it supports as columns (several requirements, privacy models,
    suppression, a class column, a seed), as its tags declare."""
    from ..algorithms.registry import available_methods, method_info

    infos = [method_info(m) for m in available_methods()]
    if as_json:
        typer.echo(json.dumps(infos, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    def suppression(i) -> str:
        if not i["max_suppression"]:
            return "no (exact)" if i["exact"] else "no"
        return "--max-suppression" + (f"\nor {i['suppression']}" if i["suppression"] else "")

    capabilities = {
        "requirements": lambda i: "several requirements" if i["several_requirements"] else "one k over all QIs",
        "privacy models": lambda i: "yes" if i["privacy_models"] else "no",
        "suppression": suppression,
        "class column": lambda i: "needed" if i["class_column"] else "-",
        "seed": lambda i: "randomised" if i["randomised"] else "-",
    }
    table = Table(title="hieranon methods (--method NAME)", show_lines=True)
    table.add_column("method", no_wrap=True)
    for col in ("family", "paper", "needs / notes"):
        table.add_column(col, overflow="fold")
    for col in capabilities:
        table.add_column(col, overflow="fold")
    for i in infos:
        name = i["method"] + ("\n(default)" if i["default"] else "")
        needs = "; ".join(x for x in (i["needs"], i["notes"]) if x)
        table.add_row(name, i["family"], i["paper"], needs, *(show(i) for show in capabilities.values()))
    Console().print(table)


#: Entry-point group under which a separate installation of the research
#: harness (``pip install ./experiments`` from a clone) registers its module.
HARNESS_GROUP = "hieranon.harness"
#: The harness's package, in the folder ``experiments/`` at a clone's root.
HARNESS_PACKAGE = "hieranon_experiments"


def research_harness() -> ModuleType | None:
    """The research harness (the papers' experiments), which the installed
    package does not hold: the module an installation registers under
    :data:`HARNESS_GROUP`, else the folder ``experiments/`` beside the
    sources of a clone (put on the import path); None when neither is there."""
    for entry in metadata.entry_points(group=HARNESS_GROUP, name="experiments"):
        return entry.load()
    import hieranon

    folder = Path(hieranon.__file__).resolve().parents[2] / "experiments"  # src/hieranon/__init__.py -> the clone
    if not (folder / HARNESS_PACKAGE / "__init__.py").is_file():
        return None
    if str(folder) not in sys.path:
        sys.path.append(str(folder))
    return import_module(HARNESS_PACKAGE)


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
    try:
        harness = research_harness()
    except ImportError as exc:
        die(f"the research harness cannot be imported ({one_line(exc)}): reinstall it with "
            "`pip install ./experiments` from a clone of hieranon")
    if harness is None:
        die("the research harness is not installed: `hieranon experiments` runs from a clone of the hieranon "
            "repository (it finds experiments/ beside src/), or after `pip install ./experiments` in one")
    try:
        harness.run_experiments(out, quick=quick, adult_dir=adult_dir, only=only, seeds=seeds,
                                report_only=report_only)
    except (harness.ExperimentError, OSError) as exc:
        die(one_line(exc))
