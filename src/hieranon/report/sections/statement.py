"""The opening of the HTML report: in plain words, what the release protects
and against whom, what it does not protect (as visibly), what was released
unchanged and which groups of records lost most detail."""

from __future__ import annotations

import numpy as np

from ..page import esc, fmt, setting

__all__ = ["statement_section", "GROUPS_LISTED"]

#: Groups of records (a quasi-identifier's original value) named as losing most detail.
GROUPS_LISTED = 3


def _line(ok: bool, text: str) -> str:
    mark, cls, word = ("✔", "okv", "Holds") if ok else ("✘", "badv", "Does not hold")
    return f'<li><b class="{cls}">{mark} {word}:</b> {esc(text)}</li>'


def _attacker(result, k: int | None, risk_after) -> str:
    qis = ", ".join(map(str, result.qi_names)) or "none"
    if k is None:
        return ""
    worst = (f" In this release the highest such chance is {risk_after.risk_max:.3g}."
             if risk_after is not None else "")
    return ("<p><b>Whom it protects against.</b> <i>Prosecutor</i>: someone who knows that a person is in this "
            f"table and knows their quasi-identifiers ({esc(qis)}) finds them among at least {k} records sharing "
            f"the published values, so a guess names the person with a chance of at most 1/{k}.{esc(worst)} "
            "<i>Journalist</i>: someone who does not know whether the person is in the table does no better. "
            "<i>Not covered</i>: what the columns published unchanged tell about a class beyond the privacy models "
            "below, knowledge beyond the quasi-identifiers, several releases of the same people combined, and "
            "(unless the rows were shuffled) the row order.</p>")


def _unchanged(result, config) -> str:
    qis = set(result.qi_names)
    data = getattr(result, "data", None)
    columns = [c for c in (data.columns if data is not None else []) if c not in qis]
    if not columns:
        return ""
    modelled = {b.attribute for b in result.privacy_models}
    sensitive = set(setting(config, "sensitive") or []) | set(result.sensitive)
    identifiers = set(setting(config, "identifiers") or [])

    def role(c):
        if c in identifiers:
            return {"mask": "masked identifier", "pseudonym": "pseudonymised identifier"}.get(
                setting(config, "identifier_action", "drop"), "identifier")
        if c in sensitive:
            return "sensitive, " + ("with a privacy model" if c in modelled else "no privacy model")
        if c == setting(config, "class_column"):
            return "class column"
        return "insensitive" if c in set(setting(config, "insensitive") or []) else "no role"
    listed = ", ".join(f"{c} ({role(c)})" for c in columns)
    return f"<p><b>Released unchanged.</b> {esc(listed)}: every value as in the input.</p>"


def _detail(result, k: int | None, public: bool) -> str:
    codes, orig = result.codes, result.original_codes
    if codes is None or orig is None:
        return ""
    w = result.record_counts.astype(float)
    total = max(float(w.sum()), 1.0)
    shares = []
    for j, name in enumerate(result.qi_names):
        changed = float(w[(codes[:, j] != orig[:, j]) & (orig[:, j] != 0)].sum()) / total
        star = float(w[(codes[:, j] == 0) & (orig[:, j] != 0)].sum()) / total
        shares.append((changed, star, name))
    shares.sort(reverse=True)
    parts = [f"{name} {changed:.0%} generalised ({star:.0%} to *)" for changed, star, name in shares if changed]
    text = ("<p><b>Detail lost.</b> Cells changed per quasi-identifier: " + esc("; ".join(parts) or "none") + ".")
    if not public:  # the groups are the input's values: left out of a public report
        groups = []
        least = max(k or 1, 1)
        for j, h in enumerate(result.hierarchies):
            values, inverse = np.unique(orig[:, j], return_inverse=True)
            size = np.bincount(inverse, weights=w)
            star = np.bincount(inverse, weights=w * (codes[:, j] == 0))
            changed = np.bincount(inverse, weights=w * (codes[:, j] != orig[:, j]))
            for v, n, s, c in zip(values, size, star, changed):
                if v != 0 and n >= least and c > 0:
                    groups.append((s / n, c / n, n, h.name, h.labels[v]))
        groups.sort(key=lambda g: (-(g[0] + g[1]), -g[2]))  # a cell to * counts twice
        if groups:
            text += " Groups of records that lost most: " + esc("; ".join(
                f"{name} = {label}: {changed:.0%} of its {fmt(int(n))} records generalised, {star:.0%} to *"
                for star, changed, n, name, label in groups[:GROUPS_LISTED])) + "."
    return text + "</p>"


def statement_section(result, risk_after, config=None, public: bool = False) -> str:
    """What holds and what does not (one list, one style: the release
    statement, :meth:`hieranon.job.result.AnonymizationResult.statement`),
    the attacker models in plain words, the columns released unchanged and
    the groups that lost most detail."""
    config = result.spec if config is None else config
    statement = result.statement()
    k = min((r.k for r in result.requirements), default=None)
    items = "".join(_line(ok, text) for ok, text in statement.lines())
    if not statement.holds:
        items = _line(False, "the verification failed: nothing below is guaranteed") + items
    cells = f'<p><b>Records and cells.</b> {esc(statement.cells_text())}.</p>'
    return (f'<ul class="statement">{items}</ul>' + _attacker(result, k, risk_after)
            + _unchanged(result, config) + cells + _detail(result, k, public))
