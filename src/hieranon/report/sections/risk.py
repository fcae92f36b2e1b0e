"""The re-identification risk and sensitive-attribute sections of the HTML
report: risk before and after, columns without a role, and the privacy models
of each sensitive attribute with the distribution of its values per class."""

from __future__ import annotations

import dataclasses

import numpy as np

from ...evaluation.statement import homogeneous_classes
from ...privacy.assess import classes_of
from ..figures import figure_img
from ..page import esc, fmt, html_table, pct

# matplotlib is imported inside the functions that draw: it is slow to load and only a report with plots needs it

__all__ = ["MAX_CLASSES_PLOTTED", "MAX_VALUES_COLOURED", "risk_models_section", "risk_section", "roles_section",
           "sensitive_section"]


def risk_section(risk_before, risk_after, n_suppressed: int, public: bool = False) -> str:
    """Prosecutor re-identification risk before and after (after only in a public report)."""
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
        ("sample uniques", pct(risk_before.sample_uniques), pct(a.sample_uniques) if a else None),
    ]
    mb, ma = risk_before.models, (a.models if a else None)
    if mb is not None:
        after_rows = _model_rows(ma) if ma is not None else [(None, None)] * 4
        rows += [(label, b, x) for (label, b), (_, x) in zip(_model_rows(mb), after_rows)]
    ib, ia = risk_before.individual_risk, (a.individual_risk if a else None)
    if ib is not None:
        after_rows = _individual_rows(ia) if ia is not None else [(None, None)] * 3
        rows += [(label, b, x) for (label, b), (_, x) in zip(_individual_rows(ib), after_rows)]
    if risk_before.suda is not None:
        rows += [(label, b, None) for label, b in _suda_rows(risk_before.suda)]
    after_req = {r["requirement"]: r for r in (a.requirements if a else [])}
    for r in risk_before.requirements:
        ra = after_req.get(r["requirement"])
        rows.append((f"{r['requirement']}: achieved k", r["achieved_k"], ra["achieved_k"] if ra else None))
        rows.append((f"{r['requirement']}: records in classes below k", r["records_below_k"],
                     ra["records_below_k"] if ra else None))
    body = [(name, fmt(b), fmt(x)) for name, b, x in rows]
    out = [html_table(["measure", "before (input)", "after (output)"], body, num_cols=(1, 2))]
    note = ("Prosecutor model: an attacker who knows a person is in the table re-identifies them with "
            "probability 1/|E|, E their equivalence class over all quasi-identifiers (El Emam; ARX).")
    if n_suppressed:
        note += (f" The {n_suppressed:,} suppressed record(s) (every QI cell '*') are left out of the "
                 "figures after anonymisation.")
    out.append(f'<p class="note">{esc(note + _model_note(mb) + _individual_note(ib, risk_before.suda))}</p>')
    return "".join(out)


def _individual_rows(r) -> list[tuple[str, object]]:
    """The individual-risk rows of one table (sampling weights, Benedetti & Franconi 1998)."""
    return [("individual risk, highest", r.highest), ("individual risk, mean", r.mean),
            ("expected re-identifications (global risk)", f"{r.global_expected:.2f} ({_share(r.global_share)})")]


def _suda_rows(s) -> list[tuple[str, object]]:
    """The SUDA rows of the original."""
    return [(f"records with a minimal sample unique (up to {s.max_size} QIs)",
             f"{s.records_with_msu:,} ({_share(s.share_with_msu)})"),
            ("DIS-SUDA score, highest / mean", f"{s.highest_dis_suda:.4f} / {s.mean_dis_suda:.4g}")]


def _individual_note(r, s) -> str:
    out = ""
    if r is not None:
        out += (f" Individual risk: the expected 1/F of each record's population class F given its sample class "
                f"and sampling weights ({r.weights}; Benedetti & Franconi 1998, as sdcMicro); the global risk "
                "is their sum.")
    if s is not None:
        out += (f" SUDA (Elliot, Manning & Ford 2002): minimal sample uniques of the input over sets of up to "
                f"{s.max_size} of its {s.n_attributes} quasi-identifiers, scored as sdcMicro does; DIS-SUDA with the "
                f"sampling fraction {s.dis:.4g}{' (assumed)' if s.dis_assumed else ''}.")
    return out


def _model_rows(m) -> list[tuple[str, object]]:
    """The journalist, marketer and population-uniqueness rows of one table's risk models."""
    return [("journalist risk, average", m.journalist), ("marketer risk", m.marketer),
            ("population uniques: Pitman / Zayatz / SNB", " / ".join(_share(v) for v in (m.pitman, m.zayatz, m.snb))),
            (f"population uniques: Dankar et al. ({m.dankar_model})", _share(m.dankar))]


def _share(x: float) -> str:
    """A share of records as a percentage, small ones with their significant digits."""
    return f"{100 * float(x):.3g}%"


def _model_note(m) -> str:
    if m is None:
        return ""
    basis = "assumed (not given)" if m.sampling_fraction_assumed else "given"
    return (f" Journalist and marketer: each record's population class taken as its class in the table (no "
            f"population table), as ARX does. Population uniques (shares of the population; Dankar et al. 2012): "
            f"sampling fraction {m.sampling_fraction:.4g}, {basis}, population {m.population_size:,}.")


def _risk_after_only(a, n_suppressed: int) -> str:
    """The risk of the published table alone (a public report)."""
    rows = [("records", a.n_records), ("equivalence classes", a.n_classes), ("k achieved (smallest class)",
            a.achieved_k), ("prosecutor risk, highest", a.risk_max), ("prosecutor risk, average", a.risk_mean),
            (f"records at risk (risk > {a.threshold:.3g}{_risk_hint(a.threshold)})", a.records_at_risk)]
    rows += _model_rows(a.models) if a.models is not None else []
    rows += _individual_rows(a.individual_risk) if a.individual_risk is not None else []
    for r in a.requirements:
        rows.append((f"{r['requirement']}: achieved k", r["achieved_k"]))
    note = ("Prosecutor model: an attacker who knows a person is in the table re-identifies them with "
            "probability 1/|E|, E their equivalence class over all quasi-identifiers (El Emam; ARX).")
    if n_suppressed:
        note += f" The {n_suppressed:,} suppressed record(s) (every QI cell '*') are left out."
    return (html_table(["measure", "published table"], [(n, fmt(v)) for n, v in rows], num_cols=(1,))
            + f'<p class="note">{esc(note)}</p>')


#: At most this many equivalence classes are drawn in a sensitive attribute's plot.
MAX_CLASSES_PLOTTED = 60
#: At most this many sensitive values get a colour of their own (the rest: "other").
MAX_VALUES_COLOURED = 9


def sensitive_section(result, public: bool = False) -> str:
    """Per sensitive attribute: its privacy models before and after (worst
    class, violating classes and records) and the distribution of its values
    in the output's classes."""
    cols = dict(getattr(result, "sensitive", None) or {})
    assessment = result.privacy() if hasattr(result, "privacy") else None
    models = [m for m in (assessment.models if assessment is not None else []) if m.attribute is not None]
    attrs = list(dict.fromkeys([*cols, *(m.attribute for m in models)]))
    if not attrs:
        return ('<p class="note">No sensitive attribute declared (configuration keys <code>sensitive:</code> or '
                "<code>privacy:</code>, options <code>--l-diversity</code> / <code>--t-closeness</code>).</p>")
    counts = result.record_counts
    codes = result.codes if result.codes is not None else result.original_codes
    out = []
    for a in attrs:
        out.append(f"<h3>{esc(a)}</h3>")
        mine = [m for m in models if m.attribute == a]
        if public:  # the after-figures only
            mine = [dataclasses.replace(m, before=None) if dataclasses.is_dataclass(m) else m for m in mine]
        out.append(_model_table(mine) if mine else '<p class="note">No privacy model set for this attribute '
                   "(only its distribution is shown).</p>")
        empty = (assessment.missing or {}).get(a) if mine else None
        if empty:
            out.append(f'<p class="note">{esc(f"{empty:.1%}")} of the records have an empty cell here; the models '
                       "count it as one value of its own (a class holding two values and empty cells is distinct "
                       "3-diverse).</p>")
        if a in cols and codes is not None:
            out.append(_sensitive_plot(a, cols[a], codes, counts, after=result.codes is not None,
                                       before_codes=None if public else result.original_codes))
    out.append('<p class="note">l-diversity as in Machanavajjhala et al. 2007 (distinct; entropy, Def. 4.2; '
               "recursive (c, l), Def. 4.3, shown as the c a class needs, r<sub>1</sub> / (r<sub>l</sub> + ... + "
               "r<sub>m</sub>), lower is better); t-closeness as the Earth Mover's Distance to the whole table's "
               "distribution (Li et al. 2007, Def. 2), lower is better. Before: the original table grouped by its "
               "quasi-identifiers; after: the output's classes, the suppressed records one more.</p>")
    return "".join(out)


def risk_models_section(result, public: bool = False) -> str:
    """The risk-based privacy models of the job (k-map, delta-presence,
    average risk, population uniqueness): the value each reaches before and
    after, and the classes violating a per-class one; empty without them."""
    assessment = result.privacy() if hasattr(result, "privacy") else None
    models = [m for m in (assessment.models if assessment is not None else []) if m.attribute is None]
    if not models:
        return ""
    if public:
        models = [dataclasses.replace(m, before=None) for m in models]
    rows = []
    for m in models:
        b, a = m.before, m.after
        value = " → ".join(([esc(fmt(b.achieved))] if b else []) + ([_verdict(a, fmt(a.achieved))] if a else []))
        scope = "whole table" if (a or b).table_ok is not None else "worst class"
        cls = ("–" if (a or b).table_ok is not None else
               " → ".join(esc(f"{fmt(f.classes_violating)} of {fmt(f.classes)}") for f in (b, a) if f))
        rows.append([esc(m.model), f"{value} ({scope})", cls])
    when = "before → after" if any(m.before and m.after for m in models) else "as it is"
    note = ("Risk-based privacy models, checked on the release like k: k-map and delta-presence against the "
            "population table given (Sweeney 2002; El Emam and Dankar 2008; Nergiz, Atzori and Clifton 2007), "
            "average re-identification risk as the prosecutor's expected share of records re-identified, "
            "population uniqueness by the estimator named (Dankar et al. 2012).")
    return ("<h3>Risk-based privacy models</h3>" + '<div class="scroll">'
            + html_table(["model", f"value, {when}", f"classes violating, {when}"], rows,
                         num_cols=(1, 2), raw=True) + f'</div><p class="note">{esc(note)}</p>')


def _model_table(models) -> str:
    def num(x) -> str:
        return "–" if x is None else (f"{x:.4g}" if np.isfinite(x) else "∞")

    rows = []
    for m in models:
        b, a = m.before, m.after
        worst = " → ".join(([esc(num(b.achieved))] if b else []) + ([_verdict(a, num(a.achieved))] if a else []))
        cls = " → ".join(esc(f"{fmt(f.classes_violating)} of {fmt(f.classes)}") for f in (b, a) if f)
        rec = " → ".join(esc(f"{fmt(f.records_violating)} of {fmt(f.records)}") for f in (b, a) if f)
        rows.append([esc(m.model), esc(m.required), worst, cls, rec])
    when = "before → after" if any(m.before and m.after for m in models) else "as it is"
    return ('<div class="scroll">' + html_table(["model", "required", f"worst class, {when}",
                                             f"classes violating, {when}", f"records violating, {when}"],
                                            rows, num_cols=(2, 3, 4), raw=True) + "</div>")


def _verdict(f, text: str) -> str:
    return f'<b class="{"okv" if f.ok else "badv"}">{esc(text)}</b>'


def _sensitive_plot(attribute, column, codes: np.ndarray, counts: np.ndarray, after: bool,
                    before_codes: np.ndarray | None = None) -> str:
    """A 100% stacked bar per class (largest classes first, at most
    :data:`MAX_CLASSES_PLOTTED`) of the sensitive values' shares; the whole
    table first; homogeneous classes (one value) marked."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch


    row_class, sizes = classes_of(codes, counts)
    hist = column.histogram(row_class, len(sizes))
    homogeneous = homogeneous_classes(column, row_class, len(sizes))
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
    labels = ["all"] + [fmt(int(sizes[shown[i]])) for i in range(0, len(shown), every)]
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
    note = (f"{len(sizes):,} {'output ' if after else ''}classes; {n_hom:,} of them "
            f"({fmt(int(sizes[homogeneous].sum()))} records) are homogeneous: every record shows one value of "
            f"{attribute}, which the class therefore discloses.")
    if after and before_codes is not None:
        b_class, b_sizes = classes_of(before_codes, counts)
        b_hom = homogeneous_classes(column, b_class, len(b_sizes))
        note += (f" Before anonymisation, {int(b_hom.sum()):,} of the original's {len(b_sizes):,} classes "
                 f"({fmt(int(b_sizes[b_hom].sum()))} records) were homogeneous.")
    if len(sizes) > len(shown):
        note += f" Only the {len(shown)} largest classes are drawn; 'all' is the whole table."
    return figure_img(fig) + f'<p class="note">{esc(note)}</p>'


def _risk_hint(threshold: float) -> str:
    if 0 < threshold < 1:
        size = int(np.ceil(1 / threshold - 1e-9))
        return f", i.e. in classes of fewer than {size}" if size > 1 else ""
    return ""


def roles_section(result, public: bool) -> str:
    """Columns without a role and linkage risks (computed on the input: left out of a public report)."""
    roles = getattr(result, "roles", None)
    if public or roles is None or not (roles.unclassified or roles.linkage):
        return ""
    out = ["<h3>Columns published unchanged</h3>"]
    if roles.unclassified:
        out.append(f'<p class="note">{esc(roles.warning())}</p>')
    if roles.linkage:
        out.append(html_table(["column", "linkage risk"], [(r["column"], r["detail"]) for r in roles.linkage]))
    return "".join(out)


