"""The reading guide, quality metrics, timings and output-sample sections of the HTML report."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..page import esc, fmt, html_table, kv_table, value_text

__all__ = ["INPUT_METRICS", "METRIC_TEXT", "SKIP_METRICS", "metrics_section", "reading_section", "sample_section",
           "timings_section"]

#: Human names and one-line meanings of the fields of :class:`hieranon.evaluation.metrics.Metrics`.
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
INPUT_METRICS = {"distinct_rows_input", "row_ratio"}
SKIP_METRICS = {"qi_names", "inconsistency_per_attribute", "generalisation_portion_per_attribute", "extra",
                 "achieved_k_per_requirement"}  # per requirement: shown in the verification section


def reading_section() -> str:
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


def metrics_section(result, public: bool = False) -> str:
    """Every quality metric with its meaning (and the lower bound, when computed)."""
    m = result.metrics
    if m is None:
        return '<p class="note">Not available: the output could not be read against the hierarchies.</p>'
    d = m.as_dict()
    rows = []
    for key, value in d.items():
        if key in SKIP_METRICS or (key == "classification_metric" and value is None):
            continue
        if public and key in INPUT_METRICS:
            continue
        name, desc = METRIC_TEXT.get(key, (key.replace("_", " "), ""))
        rows.append(f'<tr><th>{esc(name)}</th><td class="num">{esc(fmt(value))}</td>'
                    f'<td class="desc">{esc(desc)}</td></tr>')
    for key, value in (d.get("extra") or {}).items():
        rows.append(f'<tr><th>{esc(key)}</th><td class="num">{esc(fmt(value))}</td><td class="desc"></td></tr>')
    bound = getattr(result, "lower_bound", None)
    if bound is not None:  # anonymize --bound
        rows.append(f'<tr><th>lower bound of any output\'s distortion ratio</th><td class="num">{esc(fmt(bound.ratio))}'
                    '</td><td class="desc">no k-anonymous local recoding of this table'
                    + esc("".join(f" meeting {m}" for m in bound.models)) + ' has a lower distortion '
                    f'ratio (Lagrangian bound{", reached: the output is optimal" if bound.optimal else ""})</td></tr>')
        rows.append(f'<tr><th>output / lower bound</th><td class="num">{esc(fmt(result.gap_to_bound()))}</td>'
                    '<td class="desc">how far, at most, the output is from the optimum (1 = optimal)</td></tr>')
    return ('<table class="kv metrics"><thead><tr><th>measure</th><th>value</th><th>meaning</th></tr></thead><tbody>'
            + "".join(rows) + "</tbody></table>")


def timings_section(result) -> str:
    """Time per step and what the method reports about its run."""
    t = dict(result.timings or {})
    rows = [(k, f"{1000 * float(v):,.1f} ms") for k, v in t.items()]
    total = sum(float(v) for v in t.values())
    rows.append(("total", f"{1000 * total:,.1f} ms"))
    out = '<div class="cols"><div><h3>Steps</h3>' + html_table(["step", "time"], rows, num_cols=(1,)) + "</div>"
    info = {k: v for k, v in (result.info or {}).items() if isinstance(v, (str, int, float, bool, np.integer,
                                                                         np.floating, tuple, list))}
    if info:
        irows = []
        for k, v in list(info.items())[:25]:
            text = value_text(v)
            irows.append((k, text if len(text) <= 160 else text[:157] + "..."))
        out += (f'<div><h3>What the method did</h3><p>{esc(_details_sentence(result.method, info))}</p>'
                f"{_suppression_note(result)}<details><summary>All details</summary>{kv_table(irows)}</details></div>")
    return out + "</div>"


def _suppression_note(result) -> str:
    """What a record-suppression budget did: how many records, within which budget, why."""
    s = (result.info or {}).get("suppression")
    if not s:
        return ""
    return (f"<p><strong>Record suppression</strong>: budget {esc(s['budget'])} ({fmt(s['budget_records'])} "
            f"records); {fmt(s['suppressed_records'])} suppressed &mdash; {esc(s['reason'])}. Distortion ratio "
            f"{fmt(s['distortion_ratio'])} (without suppression {fmt(s['distortion_ratio_without'])}); "
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
        parts.append(f"kept the best of {len(runs)} runs (run {fmt(info.get('best_run', 0))})")
    node = info.get("node")
    if isinstance(node, (list, tuple)) and info.get("qi_names"):
        parts.append("generalised every record to the levels "
                     + ", ".join(f"{q} {lv}" for q, lv in zip(info["qi_names"], node)))
    for key, phrase in _DETAIL_PHRASES.items():
        v = info.get(key)
        if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
            parts.append(phrase.format(fmt(v)))
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


def sample_section(result, sample: pd.DataFrame | None, n: int = 20) -> str:
    """The first ``n`` rows of the output, generalised cells highlighted."""
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
    header = "".join(f'<th class="qi">{esc(c)}</th>' if c in qi_names else f"<th>{esc(c)}</th>" for c in head.columns)
    body = []
    for i in range(len(head)):
        cells = []
        for c in head.columns:
            v = head[c].iloc[i]
            text = "" if (not isinstance(v, str) and pd.isna(v)) else str(v)
            cls = ""
            if changed is not None and c in qi_names and changed[i, qi_names.index(c)]:
                cls = ' class="gen"'
            cells.append(f"<td{cls}>{esc(text)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    spec = result.spec
    dropped = [c for c in spec.identifiers if c not in data.columns] if spec is not None else []
    note = (f"First {len(head)} of {n_rows:,} rows. Quasi-identifier columns have a blue header; "
            "generalised cells are highlighted.")
    if dropped:
        note += f" Dropped direct identifier column(s): {', '.join(map(str, dropped))}."
    return (f'<div class="scroll"><table class="sample"><thead><tr>{header}</tr></thead><tbody>'
            + "".join(body) + f'</tbody></table></div><p class="note">{esc(note)}</p>')


