"""The summary, configuration and verification sections of the HTML report."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..page import esc, fmt, html_table, kv_table, pct, setting, value_text

__all__ = ["configuration_section", "summary_section", "verification_section"]


def summary_section(result, risk_before, risk_after, public: bool = False) -> str:
    """Cards of the headline figures: verdict, method, k required and achieved, loss, risk."""
    m = result.metrics
    ver = result.verification
    ok = bool(getattr(ver, "ok", False))
    k_req = max((r.k for r in result.requirements), default=None)
    verdict = ("ok", "verified") if ok else (("bad", "FAILED") if ver is not None else ("", "not run"))
    cards = [
        (*verdict, "verification"),
        *([("bad", fmt(len(gaps)), "not protected: see above")] if (gaps := result.statement().does_not_hold) else []),
        ("", esc(result.method), "method"),
        ("", fmt(k_req), "k required"),
    ]
    if m is not None:
        cards += [
            ("ok" if (k_req is None or m.achieved_k >= k_req) else "bad", fmt(m.achieved_k), "k achieved"),
            ("", fmt(m.n_records), "records"),
            ("", fmt(m.suppressed_records), "suppressed records"),
            *([("", fmt(result.statement().star_cells_total), "more cells generalised to *")]
              if result.statement().star_cells is not None else []),
            ("", fmt(m.distortion_ratio_uniform, 3), "distortion ratio (uniform)"),
            ("", fmt(m.precision, 3), "precision Prec"),
        ]
    if public and risk_after is not None:
        cards.append(("", f"{risk_after.risk_max:.3g}", "highest risk"))
        cards.append(("", fmt(risk_after.records_at_risk), "records at risk"))
    elif risk_before is not None and risk_after is not None:
        cards.append(("", f"{risk_before.risk_max:.3g} → {risk_after.risk_max:.3g}", "highest risk before → after"))
        cards.append(("", f"{pct(risk_before.sample_uniques)} → {pct(risk_after.sample_uniques)}",
                      "sample uniques before → after"))
    return '<div class="cards">' + "".join(
        f'<div class="card {c}"><div class="v">{v}</div><div class="l">{esc(label)}</div></div>'
        for c, v, label in cards) + "</div>"


def _hierarchy_source(config, name: str) -> str:
    qis = setting(config, "quasi_identifiers") or {}
    if not isinstance(qis, Mapping):  # an AnonymizationSpec: its hierarchy sources by name
        qis = setting(config, "hierarchies") or {}
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


def configuration_section(result, config) -> str:
    """The settings of the run and each quasi-identifier's hierarchy."""
    rows = [("method", result.method)]
    plan = getattr(result, "plan", None)
    if plan:
        how = "whole table" if plan["mode"] == "whole" else f"{plan['blocks']} partitioned blocks"
        rows.append(("execution", f"{how}: {plan['reason']}"))
    given = setting(config, "params")
    params = dict(given) if isinstance(given, Mapping) else {k: v for k, v in (result.params or {}).items()
                                                             if v is not None}
    rows.append(("method parameters", ", ".join(f"{k}={value_text(v)}" for k, v in params.items())
                 or "the method's defaults"))
    rows.append(("requirements", "; ".join(str(r) for r in result.requirements) or "–"))
    weights = setting(config, "weights", "uniform")
    beta = setting(config, "beta", 1.0)
    rows.append(("distortion weights", f"{weights}" + (f" (beta = {beta:g})" if weights == "height" else "")))
    pri = setting(config, "priorities")
    if pri:
        rows.append(("attribute priorities", ", ".join(f"{k}: {v}" for k, v in pri.items())
                     if isinstance(pri, Mapping) else " > ".join(map(str, pri))))
    for key, label in (("identifiers", "direct identifiers"), ("sensitive", "sensitive attributes")):
        v = setting(config, key) or []
        if v:
            action = setting(config, "identifier_action", "drop")
            extra = {"drop": " (dropped)", "mask": " (masked)", "pseudonym": " (replaced by pseudonyms)"}.get(
                action, "") if key == "identifiers" else ""
            rows.append((label, ", ".join(map(str, v)) + extra))
    for key, label in (("class_column", "class column"), ("count_column", "count column"),
                       ("missing", "missing QI values"), ("suppression_threshold", "suppression threshold"),
                       ("max_suppression", "record suppression budget")):
        v = setting(config, key)
        if v is not None:
            rows.append((label, str(v)))
    insensitive = setting(config, "insensitive") or []
    if insensitive:
        rows.append(("insensitive attributes", ", ".join(map(str, insensitive))))
    if getattr(result, "row_order", None) is not None or setting(config, "shuffle"):
        rows.append(("row order", "shuffled; the permutation is not published"))
    src = setting(config, "source")
    if src:
        rows.append(("configuration file", Path(str(src)).name))
    out = ['<div class="cols even"><div><h3>Settings</h3>', kv_table(rows), "</div><div>",
           "<h3>Quasi-identifiers and their hierarchies</h3>"]
    hrows = []
    for h in result.hierarchies:
        hrows.append((h.name, h.height, len(h.leaf_index), "yes" if h.is_balanced else "no",
                      _hierarchy_source(config, h.name)))
    out.append(html_table(["attribute", "levels", "leaves", "balanced", "hierarchy"], hrows, cls="hier",
                      num_cols=(1, 2)))
    out.append('<p class="note">Levels are numbered as in the papers: level 1 is the root <code>*</code>, '
               "level h the original values.</p></div></div>")
    return "".join(out)


def verification_section(result) -> str:
    """The independent verification's verdict, achieved k per requirement and the problems found."""
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
        rows.append((f"achieved k of {req}", fmt(kk)))
    rows.append(("suppressed records (all '*', exempt)", fmt(getattr(ver, "n_suppressed", 0))))
    rows.append(("rows / records checked", f"{fmt(getattr(ver, 'n_rows', 0))} / {fmt(getattr(ver, 'n_records', 0))}"))
    out.append(kv_table(rows))
    violations = list(getattr(ver, "violations", []) or [])
    if violations:
        counts = getattr(ver, "n_violations", {}) or {}
        out.append("<h3>Problems found</h3>")
        if counts:
            out.append('<p class="note">' + esc(", ".join(f"{n} {k}" for k, n in counts.items())) + "</p>")
        vrows = [(v.kind, v.column if v.column is not None else "", "" if v.row is None else v.row, v.message)
                 for v in violations[:50]]
        out.append(html_table(["kind", "column", "first row", "message"], vrows, num_cols=(2,)))
    return "".join(out)

