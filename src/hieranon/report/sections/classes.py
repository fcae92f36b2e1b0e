"""The equivalence-class sizes and generalisation-per-attribute sections of the HTML report."""

from __future__ import annotations

import numpy as np

from ...evaluation.metrics import level_fractions
from ..figures import figure_img, level_colors
from ..page import fmt, html_table, pct

# matplotlib is imported inside the functions that draw: it is slow to load and only a report with plots needs it

__all__ = ["class_sizes_section", "generalisation_section", "size_bins"]


def size_bins(max_size: int, k: int) -> list[tuple[int, int]]:
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


def class_sizes_section(risk_before, risk_after, k: int, public: bool = False) -> str:
    """Histogram of equivalence class sizes before and after, binned by :func:`size_bins`."""
    if risk_before is None or (public and risk_after is None):
        return '<p class="note">Not available.</p>'
    from matplotlib.figure import Figure

    hists = [] if public else [("before (input)", risk_before.class_size_histogram, "#9aa3ae")]
    if risk_after is not None:
        hists.append(("after (output)", risk_after.class_size_histogram, "#1f5fa8"))
    max_size = max(max(h) for _, h, _ in hists if h) if any(h for _, h, _ in hists) else 1
    bins = size_bins(max_size, k)
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
    n = len(rows)
    for label, *vals in zip(labels, *[r[1] for r in rows], *[r[2] for r in rows]):
        table_rows.append([label] + [f"{fmt(vals[i])} ({fmt(vals[n + i])} rec.)" for i in range(n)])
    tbl = html_table(["class size"] + [f"classes {r[0]}" for r in rows], table_rows,
                     num_cols=tuple(range(1, 1 + len(rows))))
    return (figure_img(fig) + '<p class="note">Classes left of the dashed line are smaller than k. '
            "Suppressed records are not counted after anonymisation.</p>"
            f"<details><summary>Numbers</summary>{tbl}</details>")


def generalisation_section(result, counts: np.ndarray) -> str:
    """Share of cells at each hierarchy level, per quasi-identifier."""
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
        colors = level_colors(h.height)
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
        rows.append((h.name, h.height, pct(leaf_share), pct(fr[0]) if h.height > 1 else "–",
                     " / ".join(pct(fr[d]) for d in range(h.height - 1, -1, -1)),
                     pct(changed) if changed is not None else "–"))
    ax.set_yticks(range(m))
    ax.set_yticklabels([f"{n} ({h.height} levels)" for n, h in zip(reversed(names), reversed(hs))], fontsize=9)
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.6, m - 0.4)
    ax.xaxis.set_major_formatter(lambda v, _: f"{100 * v:.0f}%")
    ax.set_xlabel("share of cells at each hierarchy level")
    ax.spines[["top", "right"]].set_visible(False)
    cmap_colors = level_colors(4)
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
        body.append(list(r) + [fmt(incons[j], 3) if j < len(incons) else "–",
                               fmt(genp[j], 3) if j < len(genp) else "–"])
    tbl = html_table(["attribute", "levels", "original values", "at * (root)", "share per level (leaves → root)",
                  "cells changed", "inconsistency", "generalisation portion"], body, num_cols=(1, 2, 3, 5, 6, 7))
    return figure_img(fig) + tbl + ('<p class="note">L<i>n</i> is hierarchy level <i>n</i> (level 1 = <code>*</code>). '
                              "Inconsistency and generalisation portion as in Li et al. 2008, Defs. 12-13.</p>")


