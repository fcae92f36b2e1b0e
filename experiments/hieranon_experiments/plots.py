"""Figures of the experiments (matplotlib, Agg; small PNGs)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .core import LABELS, RANDOMISED, Grid

# matplotlib is imported inside the functions that draw (with the Agg backend set first): slow to load

STYLE = {
    "kaca1": dict(marker="o", color="tab:blue"), "kaca2": dict(marker="s", color="tab:green"),
    "fulldomain": dict(marker="^", color="tab:red"), "mondrian": dict(marker="D", color="tab:purple"),
    "dbca": dict(marker="o", color="tab:orange"), "dbca-cm": dict(marker="s", color="tab:brown"),
}
DPI = 96


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 9, "axes.titlesize": 10, "legend.fontsize": 8})
    return plt


def _logy(ax):
    """Log y axis with plain-number tick labels at 1, 2, 5 x 10^n."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())


def _seeds(n: int) -> str:
    return f"{n} seed" + ("" if n == 1 else "s")


def _line(ax, df: pd.DataFrame, method: str, x: str, y: str, seeds: int, scale: float = 1.0):
    d = df[df.method == method].sort_values(x)
    if d.empty:
        return
    xs = d[x].to_numpy()
    ys = d[y].to_numpy(dtype=float) * scale
    label = LABELS.get(method, method)
    if method in RANDOMISED and f"{y}_min" in d and seeds > 1:
        lo = ys - d[f"{y}_min"].to_numpy(dtype=float) * scale
        hi = d[f"{y}_max"].to_numpy(dtype=float) * scale - ys
        ax.errorbar(xs, ys, yerr=[np.maximum(lo, 0), np.maximum(hi, 0)], capsize=3, ms=5,
                    label=f"{label}: mean, min-max of {_seeds(seeds)}", **STYLE[method])
    else:
        suffix = f" (mean of {_seeds(seeds)})" if method in RANDOMISED else ""
        ax.plot(xs, ys, ms=5, label=label + suffix, **STYLE[method])


def _xaxis(ax, x: str, values):
    if x == "k":
        ax.set_xscale("log")
        ax.minorticks_off()
        ax.set_xticks(list(values))
        ax.set_xticklabels([str(v) for v in values])
        ax.set_xlabel("k (anonymity parameter)")
    else:
        ax.set_xticks(list(values))
        ax.set_xlabel("QI size q (first q attributes of the papers' order)")
    ax.grid(alpha=0.3)


def _save(fig, path: Path, title: str, legend_ax=None):
    """Title on top, one legend for the whole figure at the bottom (from ``legend_ax``)."""
    import textwrap

    n_lines = 0
    wrapped = []
    for part in title.split("\n"):
        lines = textwrap.wrap(part, width=int(fig.get_figwidth() * 13))
        n_lines += len(lines)
        wrapped += lines
    fig.suptitle("\n".join(wrapped), fontsize=9)
    top = 1 - (0.02 + 0.16 * n_lines / fig.get_figheight())
    bottom = 0.0
    if legend_ax is not None:
        handles, labels = legend_ax.get_legend_handles_labels()
        fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 4), frameon=False)
        bottom = 0.075 if fig.get_figheight() < 6 else 0.05
    fig.tight_layout(rect=(0, bottom, 1, top))
    fig.savefig(path, dpi=DPI)
    # a 256-colour palette keeps every figure well under 200 KB, with no visible loss for line plots
    from PIL import Image

    with Image.open(path) as img:
        pal = img.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    pal.save(path, optimize=True)
    import matplotlib.pyplot as plt

    plt.close(fig)


# -------------------------------------------------------------- experiment 1
def exp1(summary: pd.DataFrame, path: Path, grid: Grid, n: int) -> None:
    plt = _plt()
    ks = sorted(summary.k.unique())
    fig, axes = plt.subplots(2, len(ks), figsize=(5.2 * len(ks), 7.6), squeeze=False)
    qs = sorted(summary.q.unique())
    for col, k in enumerate(ks):
        d = summary[summary.k == k]
        for m in ("kaca1", "fulldomain"):
            _line(axes[0, col], d, m, "q", "time_s", grid.seeds)
            _line(axes[1, col], d, m, "q", "distortion_ratio", grid.seeds)
        _logy(axes[0, col])
        axes[0, col].set_ylabel("execution time [s] (wall, log scale)")
        axes[0, col].set_title(f"({'ac'[col] if col < 2 else '?'}) execution time, k = {k}")
        axes[1, col].set_ylabel("distortion ratio [0-1] (uniform WHD)")
        axes[1, col].set_title(f"({'bd'[col] if col < 2 else '?'}) distortion ratio, k = {k}")
        for ax in axes[:, col]:
            _xaxis(ax, "q", qs)
    _save(fig, path, f"Exp. 1 (Li et al. 2006 Fig. 2): KACA1 vs least-distortion full-domain generalisation "
                     "on UCI Adult "
                     f"({n:,} records, ARX hierarchies; 9th QI = salary-class), uniform weights; KACA1 over "
                     f"{grid.seeds} seeds, full-domain time = mean of {grid.repeats} "
                     f"run{'s' if grid.repeats != 1 else ''}; grid '{grid.name}'",
          legend_ax=axes[1, 0])


# -------------------------------------------------------------- experiment 2
def exp2(summary: pd.DataFrame, path: Path, grid: Grid, n: int, x: str) -> None:
    plt = _plt()
    fig, axes = plt.subplots(2, 3, figsize=(15, 8.4))
    xs = sorted(summary[x].unique())
    panels = [
        ("distortion", "(a) distortion", "total distortion [height-weighted WHD, sum over records]", False, 1.0),
        ("dm", "(b) discernibility DM", "DM = sum |E|^2 [records^2, log scale]", True, 1.0),
        ("cavg", "(c) normalised avg. class size CAVG", "CAVG = (n / #classes) / k [ratio, log scale]", True, 1.0),
        ("inconsistency", "(d) inconsistency", "inconsistency (max over attributes) [%]", False, 100.0),
        ("top_fraction", "(e) values generalised to the top", "QI cells at the root [% of all cells]", False, 100.0),
        ("time_s", "(f) execution time", "execution time [s] (wall, log scale)", True, 1.0),
    ]
    for ax, (y, title, ylab, log, scale) in zip(axes.ravel(), panels):
        for m in ("kaca1", "kaca2", "fulldomain", "mondrian"):
            _line(ax, summary, m, x, y, grid.seeds, scale)
        if log:
            _logy(ax)
        if y == "inconsistency":
            ax.axhline(10, color="grey", ls=":", lw=1)
            ax.text(xs[0], 11, "KACA2 cap 10%", fontsize=7, color="grey")
        ax.set_title(title)
        ax.set_ylabel(ylab)
        _xaxis(ax, x, xs)
    if x == "k":
        conf = f"first {int(summary.q.iloc[0])} QIs, k in {{{', '.join(map(str, xs))}}}"
        name = "Fig. 4"
    else:
        conf = f"k = {int(summary.k.iloc[0])}, QI size 1..{max(xs)}"
        name = "Fig. 5"
    _save(fig, path, f"Exp. 2 (Li et al. 2008 {name}): UCI Adult ({n:,} records, ARX hierarchies), {conf}, height "
                     f"weights beta = 1; KACA1/KACA2 over {grid.seeds} seeds (bars: min-max); grid '{grid.name}'",
          legend_ax=axes[0, 0])


# -------------------------------------------------------------- experiment 3
def exp3(summary: pd.DataFrame, path: Path, grid: Grid, n: int) -> None:
    plt = _plt()
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.8))
    ks = sorted(summary.k.unique())
    panels = [("distortion", "(Fig. 2) total distortion", "total distortion [uniform WHD, sum over records]", False),
              ("cm", "(Fig. 3) classification metric CM", "CM [fraction of records penalised]", False),
              ("time_s", "(Fig. 4) running time", "running time [s] (wall, log scale)", True)]
    for ax, (y, title, ylab, log) in zip(axes, panels):
        for m in ("mondrian", "dbca", "dbca-cm"):
            _line(ax, summary, m, "k", y, grid.exp3_seeds)
        if log:
            _logy(ax)
        ax.set_title(title)
        ax.set_ylabel(ylab)
        _xaxis(ax, "k", ks)
    _save(fig, path, f"Exp. 3 (Sun, Wang & Li 2008 Figs 2-4): UCI Adult ({n:,} records, 8 QIs, ARX hierarchies), "
                     "class = "
                     f"salary-class, uniform WHD, no priorities, DBCA:CM penalty 1; DBCA variants over "
                     f"{grid.exp3_seeds} seed(s); grid '{grid.name}'", legend_ax=axes[0])


# -------------------------------------------------------------- experiment 4
def exp4(table: pd.DataFrame, path: Path) -> None:
    """Horizontal grouped bars per (worked example, method): precision,
    output/input rows, naive Bayes accuracy; paper vs hieranon."""
    plt = _plt()
    labels = [f"{r['short']}: {r['method_label']}" for _, r in table.iterrows()]
    y = np.arange(len(labels))[::-1].astype(float)
    fig, axes = plt.subplots(1, 3, figsize=(14, 0.42 * len(labels) + 2.2), sharey=True)
    panels = [("precision Prec", "ours_precision", "paper_precision", "precision Prec [0-1]"),
              ("output / input rows", "ours_row_ratio", "paper_row_ratio", "distinct output rows / input rows [0-1]"),
              ("naive Bayes accuracy", "ours_accuracy", "paper_accuracy", "10-fold CV accuracy [0-1]")]
    for ax, (title, ours, paper, xlab) in zip(axes, panels):
        pv = pd.to_numeric(table[paper], errors="coerce").to_numpy(dtype=float)
        ov = pd.to_numeric(table[ours], errors="coerce").to_numpy(dtype=float)
        ax.barh(y + 0.2, pv, 0.4, label="paper", color="lightgrey", edgecolor="black")
        ax.barh(y - 0.2, ov, 0.4, label="hieranon", color="tab:blue")
        ax.set_xlim(0, 1.05)
        ax.set_xlabel(xlab)
        ax.set_title(title)
        ax.grid(alpha=0.3, axis="x")
    axes[0].set_yticks(y)
    axes[0].set_yticklabels(labels)
    axes[-1].legend(loc="lower right")
    _save(fig, path, "Exp. 4 (Arca & Hewett worked examples), paper vs hieranon: Sec. 4.3 (Fig. 4 table, "
                     "R = <{edu,sex,hrs},4>), "
                     "Case 1 (Fig. 11), Case 2 (Figs 13-16, R = {<{edu,sex},4>, <{sex,hrs},11>}), Case 3 (Fig. 19, "
                     "input reconstructed); no grey bar = the paper reports no value; accuracy: categorical NB, "
                     "10-fold CV on records")
