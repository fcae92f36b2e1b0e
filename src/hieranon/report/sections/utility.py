"""The "Utility for analysis" section of the HTML report (:mod:`hieranon.report`).

Renders a :class:`hieranon.evaluation.utility.UtilityReport`: the models trained on the
anonymised against the original quasi-identifiers, the loss per attribute,
the marginal distributions before and after (plots) and the association of
pairs of quasi-identifiers (Cramér's V before and after, a heat map).
matplotlib is imported only inside the plotting functions.
"""

from __future__ import annotations

import numpy as np

from ...evaluation.utility import PAIR_MEASURES
from ..figures import figure_img
from ..page import esc, html_table

# matplotlib is imported inside the functions that draw: it is slow to load and only a report with plots needs it

__all__ = ["PAIRS_LISTED", "PLOTTED_VALUES", "result_utility_section", "utility_section"]

#: Values drawn per attribute in the before/after plots (the table keeps more).
PLOTTED_VALUES = 8
#: Pairs listed in the association table (largest change of Cramér's V first).
PAIRS_LISTED = 10


def _f(x, digits: int = 4) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _num_table(header, rows) -> str:
    """A table whose columns after the first are numbers."""
    return html_table(header, rows, num_cols=range(1, len(header)))


# ------------------------------------------------------------------ models
def _models_plot(u) -> str:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5.2, 0.5 * len(u.models) + 1.3))
    ax = fig.add_subplot(1, 1, 1)
    y = np.arange(len(u.models))[::-1]
    ax.barh(y + 0.18, [m.original for m in u.models], height=0.36, color="#8fb3de", label="trained on original")
    ax.barh(y - 0.18, [m.anonymised for m in u.models], height=0.36, color="#1f5fa8", label="trained on anonymised")
    for yy, m in zip(y, u.models):
        ax.text(m.anonymised, yy - 0.18, f" {m.anonymised:.3f}", va="center", fontsize=8)
        ax.text(m.original, yy + 0.18, f" {m.original:.3f}", va="center", fontsize=8)
    if u.task == "classification" and u.baseline is not None:
        ax.axvline(u.baseline, color="#a61b1b", linestyle="--", linewidth=1)
        ax.text(u.baseline, y.max() + 0.62, " majority class", color="#a61b1b", fontsize=8, va="center")
    ax.set_yticks(y)
    ax.set_yticklabels([m.model for m in u.models], fontsize=9)
    ax.set_xlim(0, 1.08)
    ax.set_ylim(-0.6, len(u.models) - 0.2)
    ax.set_xlabel("accuracy on held-out folds" if u.task == "classification" else "R² on held-out folds")
    ax.spines[["top", "right"]].set_visible(False)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False, fontsize=8)
    fig.tight_layout()
    return figure_img(fig)


def _models(u) -> str:
    if u.target is None:
        return ('<p class="note">No target column: give <code>--target COL</code> (<code>hieranon evaluate '
                "--utility</code>, <code>hieranon report --utility</code>) or <code>result.utility(target=...)"
                "</code> to compare models trained on the original and on the anonymised table.</p>")
    score = "accuracy" if u.task == "classification" else "R²"
    rows = [(m.model, _f(m.original), _f(m.anonymised), _f(m.relative), _f(m.normalised)) for m in u.models]
    tbl = _num_table(["model", f"{score}, original", f"{score}, anonymised", f"relative {score}",
                  "relative over the baseline"], rows)
    base = (f" Majority-class accuracy (baseline): {u.baseline:.4f}." if u.task == "classification" else "")
    return (f"<h3>Analysis preserved: predicting <code>{esc(u.target)}</code> ({esc(u.task)})</h3>"
            + "".join(f'<p><b class="badv">{esc(w[0].upper() + w[1:])}.</b></p>' for w in u.warnings())
            + f'<div class="cols"><div>{tbl}</div><div>{_models_plot(u)}</div></div>'
            f'<p class="note">{esc(u.compared[0].upper() + u.compared[1:])}. '
            f"Relative = anonymised / original; relative over the baseline = (anonymised - baseline) / "
            f"(original - baseline).{esc(base)} Features: {esc(', '.join(u.features))}, every value a category "
            "(ARX's classification analysis, Prasser et al. 2017; workload-aware utility, LeFevre, DeWitt &amp; "
            "Ramakrishnan 2006).</p>")


# --------------------------------------------------------------- attributes
def _attributes(u) -> str:
    rows = [(a.name, f"{a.kept:.1%}", f"{a.generalised:.1%}", f"{a.suppressed:.1%}", f"{a.missing:.1%}",
             _f(a.granularity_loss, 3), _f(a.entropy_loss, 3), _f(a.marginal_tvd, 3)) for a in u.attributes]
    return ("<h3>Per attribute</h3>" + _num_table(
        ["attribute", "kept", "generalised", "suppressed (*)", "missing in input", "granularity loss",
         "non-uniform entropy loss", "marginal TVD"], rows)
        + '<p class="note">Shares of cells (records). Granularity loss: mean (leaves below the published node '
          "&minus; 1) / (leaves &minus; 1) (Iyengar 2002; ARX's granularity is 1 &minus; loss). Non-uniform "
          "entropy loss: information lost about the original values, 1 = all <code>*</code> (de Waal &amp; "
          "Willenborg 1999; Gionis &amp; Tassa 2009). Marginal TVD: total-variation distance between the "
          "distribution before and after, a generalised cell spread evenly over the values below it "
          "(0 = same distribution).</p>")


def _short(label: str, n: int = 18) -> str:
    return label if len(label) <= n else label[: n - 1] + "…"


def _marginals_plot(u) -> str:
    from matplotlib.figure import Figure

    attrs = u.attributes
    per_row = 2
    n_rows = (len(attrs) + per_row - 1) // per_row
    fig = Figure(figsize=(11, 2.15 * n_rows + 0.3))
    axes = fig.subplots(n_rows, 2 * per_row, squeeze=False)
    for i in range(n_rows * per_row):
        top = 0.0 if i >= len(attrs) else max(
            [v for when in ("before", "after") for k_, v in getattr(attrs[i], when).items() if k_ != "(other)"],
            default=0.0)
        for k, when in enumerate(("before", "after")):
            ax = axes[i // per_row, 2 * (i % per_row) + k]
            if i >= len(attrs):
                ax.set_axis_off()
                continue
            shares = getattr(attrs[i], when)
            items = [(k_, v) for k_, v in shares.items() if k_ != "(other)"][:PLOTTED_VALUES]
            labels = [_short(k_) for k_, _ in items][::-1]
            values = [v for _, v in items][::-1]
            ax.barh(range(len(values)), values, color="#8fb3de" if when == "before" else "#1f5fa8")
            ax.set_yticks(range(len(values)))
            ax.set_yticklabels(labels, fontsize=7)
            ax.set_xlim(0, min(1.0, 1.15 * top) or 1.0)  # the same scale before and after
            ax.tick_params(axis="x", labelsize=7)
            ax.xaxis.set_major_formatter(lambda v, _: f"{100 * v:.0f}%")
            ax.set_title(f"{_short(attrs[i].name, 22)}: {when}", fontsize=9)
            ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout(w_pad=1.2, h_pad=0.8)
    return figure_img(fig)


def _marginals(u) -> str:
    return ("<h3>Marginal distributions before and after</h3>" + _marginals_plot(u)
            + f'<p class="note">The {PLOTTED_VALUES} most frequent values of each attribute in the original '
              "(light) and in the anonymised table (dark), as shares of the records; a generalised value "
              "such as an interval or <code>*</code> is a bar of its own.</p>")


# ------------------------------------------------------------------ pairs
def _pairs_plot(u) -> str:
    from matplotlib.figure import Figure

    names = [a.name for a in u.attributes]
    n = len(names)
    mats = {w: np.full((n, n), np.nan) for w in ("before", "after")}
    for p in u.pairs:
        i, j = names.index(p.a), names.index(p.b)
        for w, v in (("before", p.before), ("after", p.after)):
            mats[w][i, j] = mats[w][j, i] = abs(v)
    fig = Figure(figsize=(10, 4.9), layout="constrained")  # two square maps: the width sets the height
    axes = fig.subplots(1, 2)
    im = None
    for ax, w in zip(axes, ("before", "after")):
        im = ax.imshow(mats[w], vmin=0, vmax=1, cmap="Blues")
        ax.set_xticks(range(n))
        ax.set_xticklabels([_short(x, 14) for x in names], rotation=45, ha="right", fontsize=8)
        ax.set_yticks(range(n))
        ax.set_yticklabels([_short(x, 14) for x in names], fontsize=8)
        ax.set_title(f"strength of association, {w}", fontsize=10)
        for i in range(n):
            for j in range(n):
                if i != j and not np.isnan(mats[w][i, j]):
                    v = mats[w][i, j]
                    ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=7,
                            color="white" if v > 0.55 else "#1f2430")
    fig.colorbar(im, ax=list(axes), shrink=0.7)
    return figure_img(fig)


def _pairs(u) -> str:
    if not u.pairs:
        return ""
    listed = sorted(u.pairs, key=lambda p: -abs(p.change))[:PAIRS_LISTED]
    rows = [(f"{p.a} × {p.b}", p.measure_name, _f(p.before, 3), _f(p.after, 3), f"{p.change:+.3f}",
             _f(p.contingency_tvd, 3)) for p in listed]
    tvds = [p.contingency_tvd for p in u.pairs if p.contingency_tvd is not None]
    summary = "; ".join(f"mean |change of {name}| over {len(c)} pairs: {float(np.mean(c)):.3f}"
                        for measure, name in PAIR_MEASURES.items()
                        if (c := [abs(p.change) for p in u.pairs if p.measure == measure]))
    if tvds:
        summary += f"; mean TVD of the pairwise contingency tables: {float(np.mean(tvds)):.3f}"
    return ("<h3>Associations between quasi-identifiers</h3>" + _pairs_plot(u)
            + f'<div class="cols"><div>{_num_table(["pair", "measure", "before", "after", "change", "TVD"], rows)}'
              f'</div><div><p class="note">{esc(summary[:1].upper() + summary[1:])}. Two categorical '
              "quasi-identifiers: Cramér's V (Cramér 1946) of the printed values, each generalised value a "
              "category; two numeric ones: Spearman's rank correlation (Spearman 1904), a generalised value taken "
              "at the middle of its range; one of each: the correlation ratio (eta) of the numeric one's "
              "ranks (the maps show the size of each, 0 to 1). The contingency TVD compares the pairwise table of "
              "the original values with the anonymised one spread evenly below each generalised value "
              f"(0 = same table). The {len(listed)} pairs whose association changed most are listed.</p>"
              "</div></div>")


def utility_section(u, public: bool = False) -> str:
    """The HTML of the utility section for the :class:`~hieranon.evaluation.utility.UtilityReport` ``u``
    (None: a note saying how to get one)."""
    if public:
        return ('<p class="note">Left out of a public report: the utility figures compare the release with '
                "the original table.</p>")
    if u is None:
        return ('<p class="note">Not computed: <code>hieranon evaluate ORIGINAL ANONYMISED --utility [--target '
                "COL]</code>, <code>hieranon report ... --utility</code> or <code>result.utility(target=...)</code> "
                "before rendering.</p>")
    return _models(u) + _attributes(u) + _marginals(u) + _pairs(u)


def result_utility_section(result, utility, public: bool) -> str:
    """The utility section of ``result``: ``utility`` a :class:`~hieranon.evaluation.utility.UtilityReport`, True or
    None for the result's last one (computed if none), False for none."""

    if public or utility is False or result.codes is None:
        return utility_section(None, public=public) if result.codes is not None or public else \
            '<p class="note">Not available: the output could not be read against the hierarchies.</p>'
    if utility is None or utility is True:
        utility = result.risk_cache.get("utility:last") or result.utility()
    return utility_section(utility)

