"""The options anonymize, check, evaluate and report share are declared once
(:mod:`hieranon.cli.options`), so that their spelling and help cannot drift apart."""

from __future__ import annotations

import inspect
from typing import get_args

import typer

from hieranon.cli.anonymize import anonymize
from hieranon.cli.check import check
from hieranon.cli.evaluate import evaluate
from hieranon.cli.report import report_command

#: Flags spelled alike with a different meaning per command: anonymize's --method chooses the algorithm,
#: report's names the one that made the table; -o is the anonymised table or the report.
DIFFERENT_MEANINGS = {"--method", "--output"}


def _declarations(command) -> dict[str, int]:
    """Flag -> the identity of the typer option that declares it in ``command``."""
    out = {}
    for p in inspect.signature(command, eval_str=True).parameters.values():
        infos = [a for a in get_args(p.annotation) if isinstance(a, typer.models.OptionInfo)]
        info = infos[0] if infos else p.default
        if isinstance(info, typer.models.OptionInfo):
            for flag in (info.default, *info.param_decls):
                if isinstance(flag, str) and flag.startswith("--"):
                    out[flag.split("/")[0]] = id(info)
    return out


def test_an_option_the_job_commands_share_is_declared_once():
    seen: dict[str, list[int]] = {}
    for command in (anonymize, check, evaluate, report_command):
        for flag, ident in _declarations(command).items():
            seen.setdefault(flag, []).append(ident)
    shared = {flag for flag, idents in seen.items() if len(idents) > 1 and flag not in DIFFERENT_MEANINGS}
    assert {"--config", "--qi", "--bound", "--force", "--public"} <= shared
    repeated = sorted(flag for flag in shared if len(set(seen[flag])) > 1)
    assert repeated == []
