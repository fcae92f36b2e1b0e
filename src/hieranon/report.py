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
:class:`~hieranon.result.AnonymizationResult` of an existing (original,
anonymised) pair so that a table anonymised elsewhere gets the same report
(``hieranon report ORIGINAL ANONYMISED``).

matplotlib is imported only inside the plotting functions, so importing this
module is cheap.
"""

from __future__ import annotations

import dataclasses
import html
import time
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from . import __version__
from . import metrics as M
from .bounds import problem_lower_bound
from .io import write_text
from .metrics import level_fractions
from .privacy import sensitive_columns
from .privacy.assess import classes_of
from .report_utility import figure_img, utility_section
from .requirements import RequirementError
from .result import AnonymizationResult
from .risk import assess_result
from .spec import AnonymizationSpec, build_problem
from .table import encode_generalised, group
from .verify import verify

# matplotlib is imported inside the functions that draw: it is slow to load and only a report with plots needs it

__all__ = ["SECTIONS", "render_report", "write_report", "evaluate_pair"]

#: Section ids of the report, in page order (``<section id=...>``).
SECTIONS = {
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

#: Human names and one-line meanings of the fields of :class:`hieranon.metrics.Metrics`.
METRIC_TEXT = {
    "n_records": ("records", "records in the table (sum of counts)"),
    "n_rows": ("rows", "rows of the table"),
    "k": ("k required", "largest k over the requirements"),
    "achieved_k": ("k achieved", "size of the smallest equivalence class (suppressed records excluded)"),
    "n_classes": ("equivalence classes", "distinct QI combinations of the output (suppressed excluded)"),
    "distortion": ("distortion (objective)", "the distortion the method minimised (Li et al. 2006, Def. 7)"),
    "distortion_ratio": ("distortion ratio (objective)", "distortion / that of the fully generalised table"),
    "distortion_uniform": ("distortion, uniform WHD", "sum over cells of WHD with unit weights"),
    "distortion_ratio_uniform": ("distortion ratio, uniform WHD", "0 = unchanged, 1 = every cell '*'"),
    "distortion_height": ("distortion, height WHD", "WHD with weights 1/(j-1) (beta = 1)"),
    "distortion_ratio_height": ("distortion ratio, height WHD", "0 = unchanged, 1 = every cell '*'"),
    "mage_distortion": ("MAGE distortion", "sum of level-from-leaf / tree height (Han et al. 2014, Def. 5)"),
    "discernibility": ("discernibility DM", "sum of squared class sizes; lower is better"),
    "cavg": ("CAVG", "(records / classes) / k; 1 is ideal"),
    "inconsistency": ("inconsistency", "max over attributes of 1 - largest level share (Li et al. 2008, Def. 12)"),
    "modification_rate": ("modification rate", "fraction of QI cells changed"),
    "precision": ("precision Prec", "1 - mean generalisation height of QI cells (Arca & Hewett); 1 = unchanged"),
    "distinct_rows_input": ("distinct rows, input", "distinct QI combinations before"),
    "distinct_rows_output": ("distinct rows, output", "distinct QI combinations after (Arca & Hewett maximises this)"),
    "row_ratio": ("distinct rows out / in", "share of distinct QI combinations kept"),
    "suppressed_records": ("suppressed records", "records whose every QI cell is '*'"),
    "risk_max": ("prosecutor risk, highest", "max over records of 1/|class|"),
    "risk_mean": ("prosecutor risk, average", "mean over records of 1/|class|"),
    "classification_metric": ("classification metric CM", "share of records suppressed or outside their "
                              "class's majority label (Sun et al. 2008)"),
}
#: Metrics computed on the original table alone (left out of a public report).
_INPUT_METRICS = {"distinct_rows_input", "row_ratio"}
_SKIP_METRICS = {"qi_names", "inconsistency_per_attribute", "generalisation_portion_per_attribute", "extra",
                 "achieved_k_per_requirement"}  # per requirement: shown in the verification section

_CSS = """
:root{--fg:#1f2430;--muted:#5b6270;--line:#d9dde3;--bg:#ffffff;--soft:#f4f6f8;--accent:#1f5fa8;
--ok:#17773a;--okbg:#e5f4ea;--bad:#a61b1b;--badbg:#fbe9e9;--mark:#fff1c7}
*{box-sizing:border-box}
body{margin:0;background:var(--soft);color:var(--fg);font:14px/1.45 -apple-system,BlinkMacSystemFont,"Segoe UI",
Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1120px;margin:0 auto;padding:24px 28px 48px;background:var(--bg)}
header h1{margin:0 0 4px;font-size:24px}
header p{margin:0;color:var(--muted)}
nav{margin:14px 0 6px;padding:8px 0;border-top:1px solid var(--line);border-bottom:1px solid var(--line);
display:flex;flex-wrap:wrap;gap:4px 16px}
nav a{color:var(--accent);text-decoration:none;white-space:nowrap}
section{margin-top:26px}
h2{font-size:18px;margin:0 0 10px;padding-bottom:4px;border-bottom:2px solid var(--line)}
h3{font-size:15px;margin:16px 0 6px}
p.note{color:var(--muted);margin:6px 0}
table{border-collapse:collapse;margin:6px 0 4px}
th,td{border:1px solid var(--line);padding:4px 9px;text-align:left;vertical-align:top}
th{background:var(--soft);font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tbody tr:nth-child(even) td{background:#fafbfc}
table.kv th{min-width:150px;max-width:340px}table.metrics th{width:240px}
table.metrics{width:100%}table.metrics td.num{width:130px}table.metrics td.desc{width:58%}
.cols{display:grid;grid-template-columns:minmax(0,3fr) minmax(0,2fr);gap:0 28px;align-items:start}
.cols td{overflow-wrap:break-word}
.cols.even{grid-template-columns:minmax(0,2fr) minmax(0,3fr)}table.hier{width:100%}
.cols>div>h3:first-child{margin-top:0}
@media (max-width:820px){.cols{grid-template-columns:minmax(0,1fr)}}
td.desc{color:var(--muted)}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(165px,1fr));gap:10px}
.card{border:1px solid var(--line);border-radius:6px;padding:9px 12px;background:var(--soft)}
.card .v{font-size:20px;font-weight:600;font-variant-numeric:tabular-nums}
.card .l{color:var(--muted);font-size:12px}
.card.ok{background:var(--okbg);border-color:#a9d8b8}.card.ok .v{color:var(--ok)}
.card.bad{background:var(--badbg);border-color:#e6b0b0}.card.bad .v{color:var(--bad)}
b.okv{color:var(--ok)}b.badv{color:var(--bad)}
.banner{padding:10px 14px;border-radius:6px;font-weight:600;margin-bottom:8px}
.banner.ok{background:var(--okbg);color:var(--ok)}.banner.bad{background:var(--badbg);color:var(--bad)}
pre{background:var(--soft);border:1px solid var(--line);padding:8px 10px;overflow-x:auto;white-space:pre-wrap;
font-size:12.5px}
img.plot{max-width:100%;height:auto;display:block;margin:6px 0}
.scroll{overflow-x:auto}
table.sample{width:100%}
table.sample td,table.sample th{font-size:12px;padding:3px 5px;overflow-wrap:break-word;hyphens:auto}
table.sample th{overflow-wrap:anywhere}
table.hier td:last-child{overflow-wrap:anywhere}
ul.reading li{margin:3px 0}
table.sample td.gen{background:var(--mark)}
table.sample th.qi{background:#e8eef7}
code{font-family:SFMono-Regular,Consolas,Menlo,monospace;font-size:12.5px}
footer{margin-top:30px;color:var(--muted);font-size:12px;border-top:1px solid var(--line);padding-top:8px}
@media print{body{background:#fff}main{max-width:none;padding:0}nav{display:none}}
"""


# ------------------------------------------------------------------ helpers
def _e(x) -> str:
    return html.escape(str(x), quote=True)


def _value_text(v) -> str:
    """A parameter or algorithm detail as short text: numbers through :func:`_fmt`,
    lists as their first items and a count, mappings as ``key=value`` pairs."""
    if isinstance(v, Mapping):
        return "(" + ", ".join(f"{k}={_value_text(x)}" for k, x in v.items()) + ")"
    if isinstance(v, (list, tuple)):
        head = "; ".join(_value_text(x) for x in v[:4])
        return f"[{head}; ... {len(v)} items]" if len(v) > 4 else f"[{head}]"
    if isinstance(v, (float, np.floating)) and float(v).is_integer() and abs(v) < 1e15:
        return f"{int(v):,}"
    return _fmt(v, 3) if isinstance(v, (float, np.floating)) else (repr(v) if isinstance(v, str) else _fmt(v))


def _fmt(x, digits: int = 4) -> str:
    if x is None:
        return "–"
    if isinstance(x, (bool, np.bool_)):
        return "yes" if x else "no"
    if isinstance(x, (int, np.integer)):
        return f"{int(x):,}"
    if isinstance(x, (float, np.floating)):
        x = float(x)
        if np.isnan(x):
            return "–"
        if x != 0 and (abs(x) >= 1e6 or abs(x) < 1e-4):
            return f"{x:.{digits}g}"
        return f"{x:,.{digits}f}"
    return str(x)


def _pct(x: float) -> str:
    return f"{100 * float(x):.1f}%"


def _table(header: Sequence[str] | None, rows: Sequence[Sequence], cls: str = "", num_cols: Sequence[int] = (),
           raw: bool = False) -> str:
    """An HTML table; cells are escaped unless ``raw``."""
    out = [f'<table class="{cls}">' if cls else "<table>"]
    if header:
        out.append("<thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in header) + "</tr></thead>")
    out.append("<tbody>")
    for r in rows:
        cells = []
        for i, c in enumerate(r):
            text = c if raw else _e(c)
            cells.append(f'<td class="num">{text}</td>' if i in num_cols else f"<td>{text}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _kv(rows: Sequence[tuple[str, str]]) -> str:
    return '<table class="kv"><tbody>' + "".join(
        f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows) + "</tbody></table>"


def _cfg(config, key: str, default=None):
    if config is None:
        return default
    if isinstance(config, Mapping):
        return config.get(key, default)
    return getattr(config, key, default)


# --------------------------------------------------------------- sections
def _summary(result, risk_before, risk_after, public: bool = False) -> str:
    m = result.metrics
    ver = result.verification
    ok = bool(getattr(ver, "ok", False))
    k_req = max((r.k for r in result.requirements), default=None)
    verdict = ("ok", "verified") if ok else (("bad", "FAILED") if ver is not None else ("", "not run"))
    cards = [
        (*verdict, "verification"),
        ("", _e(result.method), "method"),
        ("", _fmt(k_req), "k required"),
    ]
    if m is not None:
        cards += [
            ("ok" if (k_req is None or m.achieved_k >= k_req) else "bad", _fmt(m.achieved_k), "k achieved"),
            ("", _fmt(m.n_records), "records"),
            ("", _fmt(m.suppressed_records), "suppressed records"),
            ("", _fmt(m.distortion_ratio_uniform, 3), "distortion ratio (uniform)"),
            ("", _fmt(m.precision, 3), "precision Prec"),
        ]
    if public and risk_after is not None:
        cards.append(("", f"{risk_after.risk_max:.3g}", "highest risk"))
        cards.append(("", _fmt(risk_after.records_at_risk), "records at risk"))
    elif risk_before is not None and risk_after is not None:
        cards.append(("", f"{risk_before.risk_max:.3g} → {risk_after.risk_max:.3g}", "highest risk before → after"))
        cards.append(("", f"{_pct(risk_before.sample_uniques)} → {_pct(risk_after.sample_uniques)}",
                      "sample uniques before → after"))
    return '<div class="cards">' + "".join(
        f'<div class="card {c}"><div class="v">{v}</div><div class="l">{_e(label)}</div></div>'
        for c, v, label in cards) + "</div>"


def _hierarchy_source(config, name: str) -> str:
    qis = _cfg(config, "quasi_identifiers") or {}
    if not isinstance(qis, Mapping):  # an AnonymizationSpec: its hierarchy sources by name
        qis = _cfg(config, "hierarchies") or {}
    spec = qis.get(name) if isinstance(qis, Mapping) else None
    if spec is None:
        return ""
    if isinstance(spec, (str, Path)):
        return Path(str(spec)).name
    if isinstance(spec, Mapping):
        return ", ".join(f"{k}: {v}" for k, v in spec.items())
    file = getattr(spec, "file", None)
    if file is not None:
        return Path(file).name
    if getattr(spec, "tree", None) is not None:
        return "inline tree"
    builder = getattr(spec, "builder", None)
    arg = getattr(spec, "argument", None)
    if builder == "intervals" and isinstance(arg, tuple):
        return f"intervals {list(arg[0])}" + (f" from {arg[1]}" if arg[1] else "")
    if builder == "suppress":
        return "suppression (value → *)"
    if hasattr(spec, "describe"):  # a builder, as the command line writes it (dates:month,quarter,year)
        return spec.describe()
    return f"{builder} {arg}" if arg is not None else str(builder or "")


def _configuration(result, config) -> str:
    rows = [("method", result.method)]
    plan = getattr(result, "plan", None)
    if plan:
        how = "whole table" if plan["mode"] == "whole" else f"{plan['blocks']} partitioned blocks"
        rows.append(("execution", f"{how}: {plan['reason']}"))
    given = _cfg(config, "params")
    params = dict(given) if isinstance(given, Mapping) else {k: v for k, v in (result.params or {}).items()
                                                             if v is not None}
    rows.append(("method parameters", ", ".join(f"{k}={_value_text(v)}" for k, v in params.items())
                 or "the method's defaults"))
    rows.append(("requirements", "; ".join(str(r) for r in result.requirements) or "–"))
    weights = _cfg(config, "weights", "uniform")
    beta = _cfg(config, "beta", 1.0)
    rows.append(("distortion weights", f"{weights}" + (f" (beta = {beta:g})" if weights == "height" else "")))
    pri = _cfg(config, "priorities")
    if pri:
        rows.append(("attribute priorities", ", ".join(f"{k}: {v}" for k, v in pri.items())
                     if isinstance(pri, Mapping) else " > ".join(map(str, pri))))
    for key, label in (("identifiers", "direct identifiers"), ("sensitive", "sensitive attributes")):
        v = _cfg(config, key) or []
        if v:
            action = _cfg(config, "identifier_action", "drop")
            extra = {"drop": " (dropped)", "mask": " (masked)", "pseudonym": " (replaced by pseudonyms)"}.get(
                action, "") if key == "identifiers" else ""
            rows.append((label, ", ".join(map(str, v)) + extra))
    for key, label in (("class_column", "class column"), ("count_column", "count column"),
                       ("missing", "missing QI values"), ("suppression_threshold", "suppression threshold"),
                       ("max_suppression", "record suppression budget")):
        v = _cfg(config, key)
        if v is not None:
            rows.append((label, str(v)))
    insensitive = _cfg(config, "insensitive") or []
    if insensitive:
        rows.append(("insensitive attributes", ", ".join(map(str, insensitive))))
    if getattr(result, "row_order", None) is not None or _cfg(config, "shuffle"):
        rows.append(("row order", "shuffled; the permutation is not published"))
    src = _cfg(config, "source")
    if src:
        rows.append(("configuration file", Path(str(src)).name))
    out = ['<div class="cols even"><div><h3>Settings</h3>', _kv(rows), "</div><div>",
           "<h3>Quasi-identifiers and their hierarchies</h3>"]
    hrows = []
    for h in result.hierarchies:
        hrows.append((h.name, h.height, len(h.leaf_index), "yes" if h.is_balanced else "no",
                      _hierarchy_source(config, h.name)))
    out.append(_table(["attribute", "levels", "leaves", "balanced", "hierarchy"], hrows, cls="hier",
                      num_cols=(1, 2)))
    out.append('<p class="note">Levels are numbered as in the papers: level 1 is the root <code>*</code>, '
               "level h the original values.</p></div></div>")
    return "".join(out)


def _verification(result) -> str:
    ver = result.verification
    if ver is None:
        return '<p class="note">No verification was run.</p>'
    ok = bool(getattr(ver, "ok", False))
    out = [f'<div class="banner {"ok" if ok else "bad"}">'
           + ("Verified: the output honours every requirement, every QI cell generalises its original value, "
              "rows and non-QI columns are unchanged." if ok else "Verification FAILED: this output must not be "
              "published.") + "</div>"]
    rows = []
    for req, kk in (getattr(ver, "achieved_k", None) or {}).items():
        rows.append((f"achieved k of {req}", _fmt(kk)))
    rows.append(("suppressed records (all '*', exempt)", _fmt(getattr(ver, "n_suppressed", 0))))
    rows.append(("rows / records checked", f"{_fmt(getattr(ver, 'n_rows', 0))} / {_fmt(getattr(ver, 'n_records', 0))}"))
    out.append(_kv(rows))
    violations = list(getattr(ver, "violations", []) or [])
    if violations:
        counts = getattr(ver, "n_violations", {}) or {}
        out.append("<h3>Problems found</h3>")
        if counts:
            out.append('<p class="note">' + _e(", ".join(f"{n} {k}" for k, n in counts.items())) + "</p>")
        vrows = [(v.kind, v.column if v.column is not None else "", "" if v.row is None else v.row, v.message)
                 for v in violations[:50]]
        out.append(_table(["kind", "column", "first row", "message"], vrows, num_cols=(2,)))
    return "".join(out)


def _risk(risk_before, risk_after, n_suppressed: int, public: bool = False) -> str:
    if public and risk_after is not None:
        return _risk_after_only(risk_after, n_suppressed)
    if risk_before is None:
        return '<p class="note">Not available.</p>'
    a = risk_after
    rows = [
        ("records", risk_before.n_records, a.n_records if a else None),
        ("equivalence classes", risk_before.n_classes, a.n_classes if a else None),
        ("k achieved (smallest class)", risk_before.achieved_k, a.achieved_k if a else None),
        ("prosecutor risk, highest", risk_before.risk_max, a.risk_max if a else None),
        ("prosecutor risk, average", risk_before.risk_mean, a.risk_mean if a else None),
        (f"records at risk (risk > {risk_before.threshold:.3g}{_risk_hint(risk_before.threshold)})",
         risk_before.records_at_risk,
         a.records_at_risk if a else None),
        ("sample uniques", _pct(risk_before.sample_uniques), _pct(a.sample_uniques) if a else None),
    ]
    after_req = {r["requirement"]: r for r in (a.requirements if a else [])}
    for r in risk_before.requirements:
        ra = after_req.get(r["requirement"])
        rows.append((f"{r['requirement']}: achieved k", r["achieved_k"], ra["achieved_k"] if ra else None))
        rows.append((f"{r['requirement']}: records in classes below k", r["records_below_k"],
                     ra["records_below_k"] if ra else None))
    body = [(name, _fmt(b), _fmt(x)) for name, b, x in rows]
    out = [_table(["measure", "before (input)", "after (output)"], body, num_cols=(1, 2))]
    note = ("Prosecutor model: an attacker who knows a person is in the table re-identifies them with "
            "probability 1/|E|, E their equivalence class over all quasi-identifiers (El Emam; ARX).")
    if n_suppressed:
        note += (f" The {n_suppressed:,} suppressed record(s) (every QI cell '*') are left out of the "
                 "figures after anonymisation.")
    out.append(f'<p class="note">{_e(note)}</p>')
    return "".join(out)


def _risk_after_only(a, n_suppressed: int) -> str:
    """The risk of the published table alone (a public report)."""
    rows = [("records", a.n_records), ("equivalence classes", a.n_classes), ("k achieved (smallest class)",
            a.achieved_k), ("prosecutor risk, highest", a.risk_max), ("prosecutor risk, average", a.risk_mean),
            (f"records at risk (risk > {a.threshold:.3g}{_risk_hint(a.threshold)})", a.records_at_risk)]
    for r in a.requirements:
        rows.append((f"{r['requirement']}: achieved k", r["achieved_k"]))
    note = ("Prosecutor model: an attacker who knows a person is in the table re-identifies them with "
            "probability 1/|E|, E their equivalence class over all quasi-identifiers (El Emam; ARX).")
    if n_suppressed:
        note += f" The {n_suppressed:,} suppressed record(s) (every QI cell '*') are left out."
    return (_table(["measure", "published table"], [(n, _fmt(v)) for n, v in rows], num_cols=(1,))
            + f'<p class="note">{_e(note)}</p>')


#: At most this many equivalence classes are drawn in a sensitive attribute's plot.
MAX_CLASSES_PLOTTED = 60
#: At most this many sensitive values get a colour of their own (the rest: "other").
MAX_VALUES_COLOURED = 9


def _sensitive(result, public: bool = False) -> str:
    """Per sensitive attribute: its privacy models before and after (worst
    class, violating classes and records) and the distribution of its values
    in the output's classes."""
    cols = dict(getattr(result, "sensitive", None) or {})
    assessment = result.privacy() if hasattr(result, "privacy") else None
    models = list(assessment.models) if assessment is not None else []
    attrs = list(dict.fromkeys([*cols, *(m.attribute for m in models)]))
    if not attrs:
        return ('<p class="note">No sensitive attribute declared (configuration keys <code>sensitive:</code> or '
                "<code>privacy:</code>, options <code>--l-diversity</code> / <code>--t-closeness</code>).</p>")
    counts = result.record_counts
    codes = result.codes if result.codes is not None else result.original_codes
    out = []
    for a in attrs:
        out.append(f"<h3>{_e(a)}</h3>")
        mine = [m for m in models if m.attribute == a]
        if public:  # the after-figures only
            import dataclasses
            mine = [dataclasses.replace(m, before=None) if dataclasses.is_dataclass(m) else m for m in mine]
        out.append(_model_table(mine) if mine else '<p class="note">No privacy model set for this attribute '
                   "(only its distribution is shown).</p>")
        if a in cols and codes is not None:
            out.append(_sensitive_plot(a, cols[a], codes, counts, after=result.codes is not None,
                                       before_codes=None if public else result.original_codes))
    out.append('<p class="note">l-diversity as in Machanavajjhala et al. 2007 (distinct; entropy, Def. 4.2; '
               "recursive (c, l), Def. 4.3, shown as the c a class needs, r<sub>1</sub> / (r<sub>l</sub> + ... + "
               "r<sub>m</sub>), lower is better); t-closeness as the Earth Mover's Distance to the whole table's "
               "distribution (Li et al. 2007, Def. 2), lower is better. Before: the original table grouped by its "
               "quasi-identifiers; after: the output's classes, the suppressed records one more.</p>")
    return "".join(out)


def _model_table(models) -> str:
    def num(x) -> str:
        return "–" if x is None else (f"{x:.4g}" if np.isfinite(x) else "∞")

    rows = []
    for m in models:
        b, a = m.before, m.after
        worst = " → ".join(([_e(num(b.achieved))] if b else []) + ([_verdict(a, num(a.achieved))] if a else []))
        cls = " → ".join(_e(f"{_fmt(f.classes_violating)} of {_fmt(f.classes)}") for f in (b, a) if f)
        rec = " → ".join(_e(f"{_fmt(f.records_violating)} of {_fmt(f.records)}") for f in (b, a) if f)
        rows.append([_e(m.model), _e(m.required), worst, cls, rec])
    when = "before → after" if any(m.before and m.after for m in models) else "as it is"
    return ('<div class="scroll">' + _table(["model", "required", f"worst class, {when}",
                                             f"classes violating, {when}", f"records violating, {when}"],
                                            rows, num_cols=(2, 3, 4), raw=True) + "</div>")


def _verdict(f, text: str) -> str:
    return f'<b class="{"okv" if f.ok else "badv"}">{_e(text)}</b>'


def _sensitive_plot(attribute, column, codes: np.ndarray, counts: np.ndarray, after: bool,
                    before_codes: np.ndarray | None = None) -> str:
    """A 100% stacked bar per class (largest classes first, at most
    :data:`MAX_CLASSES_PLOTTED`) of the sensitive values' shares; the whole
    table first; homogeneous classes (one value) marked."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch


    row_class, sizes = classes_of(codes, counts)
    hist = column.histogram(row_class, len(sizes))
    n_values = np.count_nonzero(hist > 0, axis=1)
    homogeneous = n_values <= 1
    order = np.lexsort((np.arange(len(sizes)), -sizes))
    shown = order[:MAX_CLASSES_PLOTTED]
    table = column.table_hist()[0]
    top = np.argsort(-table, kind="stable")[:MAX_VALUES_COLOURED]
    rest = np.setdiff1d(np.arange(len(table)), top)
    def shares(h):
        h = np.asarray(h, dtype=np.float64)
        parts = np.concatenate([h[:, top], h[:, rest].sum(axis=1, keepdims=True)], axis=1) if len(rest) \
            else h[:, top]
        return parts / np.maximum(parts.sum(axis=1, keepdims=True), 1)
    data = shares(np.vstack([table[None, :], hist[shown]]))
    names = [str(column.labels[v]) for v in top] + (["other"] if len(rest) else [])
    from matplotlib import colormaps
    cmap = colormaps["tab10"]
    palette = [cmap(i) for i in (0, 1, 2, 3, 4, 5, 6, 8, 9)]  # tab10 without its grey, kept for "other"
    colours = [palette[i % len(palette)] for i in range(len(top))] + ([(0.75, 0.75, 0.75, 1)] if len(rest) else [])
    fig = Figure(figsize=(10, 3.4))
    ax = fig.add_subplot(1, 1, 1)
    x = np.arange(data.shape[0])
    x[1:] += 1  # a gap after the whole table's bar
    bottom = np.zeros(len(x))
    for j in range(data.shape[1]):
        ax.bar(x, data[:, j], bottom=bottom, width=0.8, color=colours[j], linewidth=0)
        bottom += data[:, j]
    hom_x = x[1:][homogeneous[shown]]
    if len(hom_x):
        ax.scatter(hom_x, np.full(len(hom_x), 1.04), marker="v", color="#a61b1b", s=22, clip_on=False, zorder=3)
    ax.set_ylim(0, 1)
    ax.yaxis.set_major_formatter(lambda v, _: f"{100 * v:.0f}%")
    ax.set_ylabel(f"share of {attribute}")
    every = max(1, int(np.ceil(len(shown) / 30)))
    ticks = [0] + [int(x[1 + i]) for i in range(0, len(shown), every)]
    labels = ["all"] + [_fmt(int(sizes[shown[i]])) for i in range(0, len(shown), every)]
    ax.set_xticks(ticks)
    ax.set_xticklabels(labels, fontsize=7.5, rotation=0 if len(ticks) <= 16 else 90)
    ax.set_xlim(-0.7, x[-1] + 0.7)
    ax.set_xlabel(("output" if after else "table") + " equivalence classes, largest first (tick: records in the "
                  "class)")
    ax.spines[["top", "right"]].set_visible(False)
    handles = [Patch(color=c, label=n if len(n) <= 24 else n[:23] + "…") for c, n in zip(colours, names)]
    if homogeneous.any():
        from matplotlib.lines import Line2D
        handles.append(Line2D([], [], marker="v", color="#a61b1b", linestyle="", label="homogeneous class"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False, fontsize=8.5)
    fig.tight_layout()
    n_hom = int(homogeneous.sum())
    note = (f"{len(sizes):,} {'output ' if after else ''}classes; {n_hom:,} of them ({_fmt(int(sizes[homogeneous].sum()))}"
            f" records) are homogeneous: every record shows one value of {attribute}, which the class therefore "
            "discloses.")
    if after and before_codes is not None:
        b_class, b_sizes = classes_of(before_codes, counts)
        b_hom = np.count_nonzero(column.histogram(b_class, len(b_sizes)) > 0, axis=1) <= 1
        note += (f" Before anonymisation, {int(b_hom.sum()):,} of the original's {len(b_sizes):,} classes "
                 f"({_fmt(int(b_sizes[b_hom].sum()))} records) were homogeneous.")
    if len(sizes) > len(shown):
        note += f" Only the {len(shown)} largest classes are drawn; 'all' is the whole table."
    return figure_img(fig) + f'<p class="note">{_e(note)}</p>'


def _risk_hint(threshold: float) -> str:
    if 0 < threshold < 1:
        size = int(np.ceil(1 / threshold - 1e-9))
        return f", i.e. in classes of fewer than {size}" if size > 1 else ""
    return ""


def _size_bins(max_size: int, k: int) -> list[tuple[int, int]]:
    """Bins [lo, hi] of class sizes: single sizes below k (at most 9 of them),
    then doubling ranges from k."""
    bins: list[tuple[int, int]] = []
    k = max(int(k), 1)
    lo = 1
    if k > 1:
        if k <= 10:
            bins += [(s, s) for s in range(1, k)]
        else:
            edges = np.unique(np.geomspace(1, k, num=6).astype(int))
            edges = [int(e) for e in edges if e < k] + [k]
            bins += [(edges[i], edges[i + 1] - 1) for i in range(len(edges) - 1)]
        lo = k
    hi = max(max_size, lo)
    width = k
    while lo <= hi:
        bins.append((lo, lo + width - 1))
        lo += width
        width *= 2
    return bins


def _class_sizes(risk_before, risk_after, k: int, public: bool = False) -> str:
    if risk_before is None or (public and risk_after is None):
        return '<p class="note">Not available.</p>'
    from matplotlib.figure import Figure

    hists = [] if public else [("before (input)", risk_before.class_size_histogram, "#9aa3ae")]
    if risk_after is not None:
        hists.append(("after (output)", risk_after.class_size_histogram, "#1f5fa8"))
    max_size = max(max(h) for _, h, _ in hists if h) if any(h for _, h, _ in hists) else 1
    bins = _size_bins(max_size, k)
    labels = [str(a) if a == b else f"{a}–{b}" for a, b in bins]
    fig = Figure(figsize=(10, 3.3))
    ax = fig.add_subplot(1, 1, 1)
    x = np.arange(len(bins))
    width = 0.8 / len(hists)
    rows = []
    for i, (name, hist, color) in enumerate(hists):
        sizes = np.array(list(hist.keys()), dtype=np.int64)
        ncls = np.array(list(hist.values()), dtype=np.int64)
        per_bin = np.array([ncls[(sizes >= a) & (sizes <= b)].sum() for a, b in bins])
        recs = np.array([(sizes * ncls)[(sizes >= a) & (sizes <= b)].sum() for a, b in bins])
        ax.bar(x + (i - (len(hists) - 1) / 2) * width, per_bin, width, label=name, color=color)
        rows.append((name, per_bin, recs))
    below = sum(1 for a, b in bins if b < k)
    if k > 1 and below:
        ax.axvline(below - 0.5, color="#a61b1b", linestyle="--", linewidth=1.2)
        ax.axvspan(-0.5, below - 0.5, color="#a61b1b", alpha=0.06)
        ax.text(below - 0.45, 1.0, f" k = {k}", color="#a61b1b", transform=ax.get_xaxis_transform(),
                va="top", ha="left", fontsize=9)
    ax.set_xticks(x)
    ax.set_xticklabels(labels, rotation=0 if len(bins) <= 14 else 45, fontsize=8.5)
    ax.set_xlim(-0.6, len(bins) - 0.4)
    ax.set_xlabel("class size (records sharing one QI combination)")
    ax.set_ylabel("equivalence classes")
    top = max(int(r[1].max()) for r in rows)
    if top > 60:  # a few big and many small bins: log scale, plain numbers
        ax.set_yscale("log")
        ax.set_ylim(0.7, top * 1.6)
        ax.yaxis.set_major_formatter(lambda v, _: f"{v:,.0f}" if v >= 1 else "")
    else:
        ax.yaxis.get_major_locator().set_params(integer=True)
    ax.spines[["top", "right"]].set_visible(False)
    ax.legend(frameon=False, fontsize=9)
    fig.tight_layout()
    table_rows = []
    for (a, b), label, *vals in zip(bins, labels, *[r[1] for r in rows], *[r[2] for r in rows]):
        n = len(rows)
        table_rows.append([label] + [f"{_fmt(vals[i])} ({_fmt(vals[n + i])} rec.)" for i in range(n)])
    tbl = _table(["class size"] + [f"classes {r[0]}" for r in rows], table_rows, num_cols=tuple(range(1, 1 + len(rows))))
    return (figure_img(fig) + '<p class="note">Classes left of the dashed line are smaller than k. '
            "Suppressed records are not counted after anonymisation.</p>"
            f"<details><summary>Numbers</summary>{tbl}</details>")


def _level_colors(height: int):
    from matplotlib import colormaps

    cmap = colormaps["YlOrRd"]
    if height == 1:
        return [cmap(0.12)]
    # index 0 = level 1 (root) ... index height-1 = leaves
    return [cmap(0.12 + 0.83 * (height - 1 - d) / (height - 1)) for d in range(height)]


def _generalisation(result, counts: np.ndarray) -> str:
    if result.codes is None:
        return '<p class="note">Not available: the output could not be read against the hierarchies.</p>'
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch


    hs = result.hierarchies
    m = len(hs)
    names = [h.name for h in hs]
    fig = Figure(figsize=(10, 0.55 * m + 1.3))
    ax = fig.add_subplot(1, 1, 1)
    rows = []
    for j, h in enumerate(hs):
        fr = level_fractions(result.codes[:, j], h, counts)
        colors = _level_colors(h.height)
        left = 0.0
        y = m - 1 - j
        for d in range(h.height - 1, -1, -1):  # leaves first (left), root last (right)
            w = float(fr[d])
            if w <= 0:
                continue
            ax.barh(y, w, left=left, color=colors[d], edgecolor="white", linewidth=0.8, height=0.7)
            if w >= 0.06:
                dark = d < (h.height - 1) / 2 or h.height == 1
                label = "*" if d == 0 else ("orig." if d == h.height - 1 else f"L{d + 1}")
                ax.text(left + w / 2, y, f"{label} {100 * w:.0f}%", ha="center", va="center", fontsize=8,
                        color="white" if dark and d != h.height - 1 else "#1f2430")
            left += w
        orig = result.original_codes[:, j] if result.original_codes is not None else None
        changed = float((counts * (result.codes[:, j] != orig)).sum() / counts.sum()) if orig is not None else None
        leaf_share = float(fr[h.height - 1]) if h.height > 1 else 1.0
        rows.append((h.name, h.height, _pct(leaf_share), _pct(fr[0]) if h.height > 1 else "–",
                     " / ".join(_pct(fr[d]) for d in range(h.height - 1, -1, -1)),
                     _pct(changed) if changed is not None else "–"))
    ax.set_yticks(range(m))
    ax.set_yticklabels([f"{n} ({h.height} levels)" for n, h in zip(reversed(names), reversed(hs))], fontsize=9)
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.6, m - 0.4)
    ax.xaxis.set_major_formatter(lambda v, _: f"{100 * v:.0f}%")
    ax.set_xlabel("share of cells at each hierarchy level")
    ax.spines[["top", "right"]].set_visible(False)
    cmap_colors = _level_colors(4)
    ax.legend(handles=[Patch(color=cmap_colors[3], label="original value (leaf level)"),
                       Patch(color=cmap_colors[2], label="generalised (darker = higher level)"),
                       Patch(color=cmap_colors[0], label="* (root)")],
              loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, frameon=False, fontsize=9)
    fig.tight_layout()
    m_ = result.metrics
    incons = list(getattr(m_, "inconsistency_per_attribute", []) or []) if m_ is not None else []
    genp = list(getattr(m_, "generalisation_portion_per_attribute", []) or []) if m_ is not None else []
    body = []
    for j, r in enumerate(rows):
        body.append(list(r) + [_fmt(incons[j], 3) if j < len(incons) else "–",
                               _fmt(genp[j], 3) if j < len(genp) else "–"])
    tbl = _table(["attribute", "levels", "original values", "at * (root)", "share per level (leaves → root)",
                  "cells changed", "inconsistency", "generalisation portion"], body, num_cols=(1, 2, 3, 5, 6, 7))
    return figure_img(fig) + tbl + ('<p class="note">L<i>n</i> is hierarchy level <i>n</i> (level 1 = <code>*</code>). '
                              "Inconsistency and generalisation portion as in Li et al. 2008, Defs. 12-13.</p>")


def _reading() -> str:
    """Which few metrics matter for what."""
    items = [
        ("Is it safe to publish?", "the verification banner, <b>k achieved</b> (at least the k required) and "
         "<b>records at risk</b> after anonymisation (0 for a k-anonymous release at the default threshold 1/k); "
         "with sensitive attributes, the worst class of each privacy model."),
        ("How much was lost?", "the <b>distortion ratio</b> (0 = unchanged, 1 = every cell <code>*</code>) sums "
         "up the generalisation in one number; <b>precision Prec</b> is its complement per cell; the "
         "<b>generalisation</b> bars show which attribute paid."),
        ("Is it useful for analysis?", "<b>discernibility DM</b> and <b>CAVG</b> (1 is ideal) penalise large "
         "classes; <b>inconsistency</b> says how mixed the levels of one attribute are (0: one level for the "
         "whole column, like global recoding); <b>classification metric CM</b> matters when the data trains a "
         "classifier."),
        ("Comparing methods", "compare the distortion ratio under the same weights, and DM or CAVG; the other "
         "figures explain the difference."),
    ]
    return '<ul class="reading">' + "".join(f"<li><b>{q}</b> {a}</li>" for q, a in items) + "</ul>"


def _roles(result, public: bool) -> str:
    """Columns without a role and linkage risks (computed on the input: left out of a public report)."""
    roles = getattr(result, "roles", None)
    if public or roles is None or not (roles.unclassified or roles.linkage):
        return ""
    out = ["<h3>Columns published unchanged</h3>"]
    if roles.unclassified:
        out.append(f'<p class="note">{_e(roles.warning())}</p>')
    if roles.linkage:
        out.append(_table(["column", "linkage risk"], [(r["column"], r["detail"]) for r in roles.linkage]))
    return "".join(out)


def _metrics(result, public: bool = False) -> str:
    m = result.metrics
    if m is None:
        return '<p class="note">Not available: the output could not be read against the hierarchies.</p>'
    d = m.as_dict()
    rows = []
    for key, value in d.items():
        if key in _SKIP_METRICS or (key == "classification_metric" and value is None):
            continue
        if public and key in _INPUT_METRICS:
            continue
        name, desc = METRIC_TEXT.get(key, (key.replace("_", " "), ""))
        rows.append(f'<tr><th>{_e(name)}</th><td class="num">{_e(_fmt(value))}</td>'
                    f'<td class="desc">{_e(desc)}</td></tr>')
    for key, value in (d.get("extra") or {}).items():
        rows.append(f'<tr><th>{_e(key)}</th><td class="num">{_e(_fmt(value))}</td><td class="desc"></td></tr>')
    bound = getattr(result, "lower_bound", None)
    if bound is not None:  # anonymize --bound
        rows.append(f'<tr><th>lower bound of any output\'s distortion ratio</th><td class="num">{_e(_fmt(bound.ratio))}'
                    '</td><td class="desc">no k-anonymous local recoding of this table'
                    + _e("".join(f" meeting {m}" for m in bound.models)) + ' has a lower distortion '
                    f'ratio (Lagrangian bound{", reached: the output is optimal" if bound.optimal else ""})</td></tr>')
        rows.append(f'<tr><th>output / lower bound</th><td class="num">{_e(_fmt(result.gap_to_bound()))}</td>'
                    '<td class="desc">how far, at most, the output is from the optimum (1 = optimal)</td></tr>')
    return ('<table class="kv metrics"><thead><tr><th>measure</th><th>value</th><th>meaning</th></tr></thead><tbody>'
            + "".join(rows) + "</tbody></table>")


def _timings(result) -> str:
    t = dict(result.timings or {})
    rows = [(k, f"{1000 * float(v):,.1f} ms") for k, v in t.items()]
    total = sum(float(v) for v in t.values())
    rows.append(("total", f"{1000 * total:,.1f} ms"))
    out = '<div class="cols"><div><h3>Steps</h3>' + _table(["step", "time"], rows, num_cols=(1,)) + "</div>"
    info = {k: v for k, v in (result.info or {}).items() if isinstance(v, (str, int, float, bool, np.integer,
                                                                         np.floating, tuple, list))}
    if info:
        irows = []
        for k, v in list(info.items())[:25]:
            text = _value_text(v)
            irows.append((k, text if len(text) <= 160 else text[:157] + "..."))
        out += (f'<div><h3>What the method did</h3><p>{_e(_details_sentence(result.method, info))}</p>'
                f"{_suppression_note(result)}<details><summary>All details</summary>{_kv(irows)}</details></div>")
    return out + "</div>"


def _suppression_note(result) -> str:
    """What a record-suppression budget did: how many records, within which budget, why."""
    s = (result.info or {}).get("suppression")
    if not s:
        return ""
    return (f"<p><strong>Record suppression</strong>: budget {_e(s['budget'])} ({_fmt(s['budget_records'])} "
            f"records); {_fmt(s['suppressed_records'])} suppressed &mdash; {_e(s['reason'])}. Distortion ratio "
            f"{_fmt(s['distortion_ratio'])} (without suppression {_fmt(s['distortion_ratio_without'])}); "
            "suppressed records count as fully generalised.</p>")


#: Algorithm details worth a phrase: key -> phrase (``{}`` the value).
_DETAIL_PHRASES = {
    "merges": "{} merges of classes", "iterations": "{} iterations", "classes_in": "{} classes at the start",
    "classes_out": "{} classes at the end", "blocks": "{} blocks", "partitions": "{} partitions",
    "cuts": "{} cuts", "nodes_checked": "{} lattice nodes checked", "lattice_size": "a lattice of {} nodes",
    "nodes_expanded": "{} nodes expanded", "generated": "{} tables generated", "expanded": "{} tables expanded",
    "steps": "{} steps", "suppressed_records": "{} records suppressed",
}


def _details_sentence(method: str, info: Mapping) -> str:
    """The algorithm's details as one short sentence (the raw details stay
    available below it)."""
    parts = []
    runs = info.get("runs")
    if isinstance(runs, (list, tuple)) and runs:
        parts.append(f"kept the best of {len(runs)} runs (run {_fmt(info.get('best_run', 0))})")
    node = info.get("node")
    if isinstance(node, (list, tuple)) and info.get("qi_names"):
        parts.append("generalised every record to the levels "
                     + ", ".join(f"{q} {lv}" for q, lv in zip(info["qi_names"], node)))
    for key, phrase in _DETAIL_PHRASES.items():
        v = info.get(key)
        if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
            parts.append(phrase.format(_fmt(v)))
        elif isinstance(v, (list, tuple)) and key == "steps" and v:
            parts.append(phrase.format(len(v)))
    if "optimal" in info:
        parts.append("proven optimal" if info["optimal"] else "not proven optimal")
    took = ""
    if "time_total" in info and isinstance(info["time_total"], (int, float, np.floating)):
        took = f" in {float(info['time_total']):.2f} s"
    if not parts:
        return f"{method} reports no details beyond the timings."
    return f"{method} " + (", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]) + took + "."


def _sample(result, sample: pd.DataFrame | None, n: int = 20) -> str:
    data = result.data if sample is None else sample
    if data is None:
        return '<p class="note">Not available.</p>'
    head = data.head(n)
    n_rows = len(result.suppressed) if result.suppressed is not None else len(data)
    qi_names = [h.name for h in result.hierarchies]
    changed = None
    if result.codes is not None and result.original_codes is not None:
        order = getattr(result, "row_order", None)  # a shuffled output: its rows are the input's order[i]
        rows = np.asarray(order[:n]) if order is not None else np.arange(min(n, len(result.codes)))
        changed = result.codes[rows] != result.original_codes[rows]
    header = "".join(f'<th class="qi">{_e(c)}</th>' if c in qi_names else f"<th>{_e(c)}</th>" for c in head.columns)
    body = []
    for i in range(len(head)):
        cells = []
        for c in head.columns:
            v = head[c].iloc[i]
            text = "" if (not isinstance(v, str) and pd.isna(v)) else str(v)
            cls = ""
            if changed is not None and c in qi_names and changed[i, qi_names.index(c)]:
                cls = ' class="gen"'
            cells.append(f"<td{cls}>{_e(text)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    spec = result.spec
    dropped = [c for c in spec.identifiers if c not in data.columns] if spec is not None else []
    note = (f"First {len(head)} of {n_rows:,} rows. Quasi-identifier columns have a blue header; "
            "generalised cells are highlighted.")
    if dropped:
        note += f" Dropped direct identifier column(s): {', '.join(map(str, dropped))}."
    return (f'<div class="scroll"><table class="sample"><thead><tr>{header}</tr></thead><tbody>'
            + "".join(body) + f'</tbody></table></div><p class="note">{_e(note)}</p>')


def _utility(result, utility, public: bool) -> str:
    """The utility section (:mod:`hieranon.report_utility`)."""

    if public or utility is False or result.codes is None:
        return utility_section(None, public=public) if result.codes is not None or public else \
            '<p class="note">Not available: the output could not be read against the hierarchies.</p>'
    if utility is None or utility is True:
        utility = result.risk_cache.get("utility:last") or result.utility()
    return utility_section(utility)


# ------------------------------------------------------------------ public
def render_report(original_df: pd.DataFrame | None, result, config=None, *, counts=None, title: str | None = None,
                  input_name: str | None = None, output_name: str | None = None, threshold: float | None = None,
                  sample_rows: int = 20, sample: pd.DataFrame | None = None, public: bool = False,
                  utility=None) -> str:
    """The HTML report of ``result`` (an :class:`~hieranon.result.AnonymizationResult`).

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
        "summary": _summary(result, risk_before, risk_after, public),
        "configuration": _configuration(result, config),
        "verification": _verification(result),
        "risk": _risk(risk_before, risk_after, n_sup, public) + _roles(result, public),
        "sensitive": _sensitive(result, public),
        "class-sizes": _class_sizes(risk_before, risk_after, k, public),
        "generalisation": _generalisation(result, cnt),
        "utility": _utility(result, utility, public),
        "reading": _reading(),
        "metrics": _metrics(result, public),
        "timings": _timings(result),
        "sample": _sample(result, sample, sample_rows),
    }
    title = title or "hieranon anonymisation report" + (" (public)" if public else "")
    what = ""
    if input_name or output_name:
        what = f"{_e(input_name or '?')} → {_e(output_name or '?')} · "
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    nav = "".join(f'<a href="#{sid}">{_e(name)}</a>' for sid, name in SECTIONS.items())
    sections = "".join(f'<section id="{sid}"><h2>{_e(SECTIONS[sid])}</h2>{parts[sid]}</section>' for sid in SECTIONS)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body><main>"
        f"<header><h1>{_e(title)}</h1><p>{what}method <b>{_e(result.method)}</b> · "
        f"generated {_e(stamp)} by hieranon {_e(__version__)}</p></header>"
        f"<nav>{nav}</nav>{sections}"
        "<footer>hieranon generalises quasi-identifier values in attribute hierarchies; every output is verified "
        "independently before it is written. Levels, distortion and risk measures follow the papers cited in "
        "the project's documentation.</footer>"
        "</main></body></html>\n"
    )


def write_report(path, original_df: pd.DataFrame, result, config=None, *, overwrite: bool = False,
                 **kwargs) -> Path:
    """Render the report (see :func:`render_report` for ``kwargs``) and write
    it to ``path`` atomically (an existing file replaced only with ``overwrite``)."""

    return write_text(render_report(original_df, result, config, **kwargs), path, overwrite=overwrite)


def evaluate_pair(original: pd.DataFrame, anonymised: pd.DataFrame, quasi_identifiers: Sequence[str] | None = None,
                  hierarchies=None, requirements=None, k: int | None = None, *, spec=None, counts: str | None = None,
                  weights: str = "uniform", beta: float = 1.0, priorities=None, class_column: str | None = None,
                  missing: str = "error", identifiers: Sequence[str] = (), method: str = "existing table",
                  params: Mapping | None = None, lower_bound: bool = False,
                  built: Mapping | None = None, suppressed_records: str = "class"):
    """An :class:`~hieranon.result.AnonymizationResult` for an anonymised table
    made elsewhere, so that :func:`render_report` can describe it.

    The job is ``spec`` (an :class:`~hieranon.spec.AnonymizationSpec`), or
    the keyword arguments (``counts`` the count column) as in
    :func:`hieranon.anonymize`. The original is encoded once
    (:func:`hieranon.spec.build_problem`); the pair is verified with
    :func:`hieranon.verify.verify` (which never raises on a failed check) and
    measured with :func:`hieranon.metrics.compute` under the spec's cost
    model. When some output cell does not generalise its original value the
    codes and metrics cannot be computed: they are ``None`` and the report
    says so. Identifier columns of ``original`` absent from ``anonymised``
    are taken as dropped. ``lower_bound`` also bounds every local recoding's
    distortion from below (:mod:`hieranon.bounds`; ``result.lower_bound``,
    when the metrics exist). ``built``: the spec's hierarchies, already built.
    ``suppressed_records``: rows of ``*`` are a class of their own
    (``"class"``, the library's convention) or left out as ARX publishes them
    (``"removed"``); the verdict and the metrics' achieved k follow it alike.
    """

    if spec is None:
        spec = AnonymizationSpec.from_arguments(
            quasi_identifiers, hierarchies, k, requirements=requirements, count_column=counts, weights=weights,
            beta=beta, priorities=priorities, class_column=class_column, missing=missing, identifiers=identifiers,
            params=params)
    qis = spec.quasi_identifiers
    dropped = [c for c in spec.identifiers if c in original.columns and c not in anonymised.columns]
    orig = original.drop(columns=dropped) if dropped else original
    timings: dict[str, float] = {}
    t = time.perf_counter()
    prepared = build_problem(orig, spec, hierarchies=built)
    problem, enc = prepared.problem, prepared.table
    reqs = problem.requirements
    if not reqs:
        raise RequirementError("no anonymity requirement: give k or at least one requirement")
    timings["encode"] = time.perf_counter() - t
    t = time.perf_counter()
    report = verify(orig, anonymised, qis, prepared.hierarchies, reqs, missing=spec.missing, encoded=enc,
                    privacy=problem.privacy, suppressed_records=suppressed_records)
    timings["verify"] = time.perf_counter() - t
    codes = metrics = None
    suppressed = np.zeros(enc.n_rows, dtype=bool)
    decodable = not ({"rows", "columns", "not_generalisation"} & report.kinds)
    if decodable:
        t = time.perf_counter()
        codes = encode_generalised(enc, anonymised.reset_index(drop=True))
        if (codes < 0).any():
            codes = None
        else:
            all_root = M.suppressed_mask(codes)
            metrics = M.compute(enc.codes, codes, enc.hierarchies, problem.k, enc.counts, problem.cost, qis,
                                problem.class_labels, suppressed=all_root, requirements=reqs)
            if suppressed_records == "class" and all_root.any():  # the rows of '*' are a class: k counts it
                metrics = dataclasses.replace(
                    metrics, achieved_k=int(group(codes, enc.counts).sizes.min()),
                    achieved_k_per_requirement={**metrics.achieved_k_per_requirement, **report.achieved_k})
            suppressed = all_root
        timings["metrics"] = time.perf_counter() - t
    result = AnonymizationResult(anonymised, metrics, report, method, dict(params or spec.params), reqs, suppressed,
                                 timings, {}, codes, enc.codes, enc.hierarchies, spec=spec, counts=enc.counts,
                                 privacy_models=list(problem.privacy),
                                 sensitive=sensitive_columns(orig, spec.sensitive, enc.counts))
    if lower_bound and metrics is not None:

        t = time.perf_counter()
        result.lower_bound = problem_lower_bound(problem, upper=metrics.distortion, start=codes)
        timings["lower_bound"] = time.perf_counter() - t
    return result
