"""Claims, verdicts and ``REPORT.md``, computed from the CSVs an experiment run wrote.

Every claim of the papers' experiment sections is a :class:`Claim` with the paper's statement, the paper's number
where it gives one, our measured number and a verdict: ``holds``, ``partly``
or ``does not hold`` (``not run`` when its experiment's CSV is absent).
"""

from __future__ import annotations

import json
import math
import re
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .worked import PAPER

HOLDS, PARTLY, FAILS, NOT_RUN = "holds", "partly", "does not hold", "not run"
BADGE = {HOLDS: "✅ holds", PARTLY: "🟡 partly", FAILS: "❌ does not hold", NOT_RUN: "— not run"}
REL_TOL = 1e-9


@dataclass
class Claim:
    id: str
    experiment: int
    source: str
    statement: str
    paper: str
    ours: str
    verdict: str
    why: str = ""

    def row(self) -> str:
        return f"| {self.id} | {_cell(self.short())} | {_cell(self.paper)} | {_cell(self.ours_short())} | " \
               f"{BADGE[self.verdict]} |"

    def short(self) -> str:
        s = self.statement
        return s if len(s) <= 110 else s[:107] + "..."

    def ours_short(self) -> str:
        s = re.split(r"\.\s+(?=[A-Z])", self.ours)[0]
        return s if len(s) <= 120 else s[:117] + "..."


def _cell(s: str) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def _f(x, nd=3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if isinstance(x, (int, np.integer)):
        return f"{int(x):,}"
    ax = abs(float(x))
    if ax >= 1e6:
        return f"{x:.3g}"
    if ax >= 1000:
        return f"{x:,.0f}"
    if ax != 0 and ax < 10 ** -nd:
        return f"{x:.{nd}g}"
    return f"{x:.{nd}f}"


def _pct(x, nd=1) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.{nd}f}%"


def _le(a, b) -> bool:
    return a <= b + REL_TOL * max(abs(a), abs(b), 1.0)


def _lt(a, b) -> bool:
    return a < b - REL_TOL * max(abs(a), abs(b), 1.0)


def _count_verdict(n_ok: int, n: int) -> str:
    if n == 0:
        return NOT_RUN
    if n_ok == n:
        return HOLDS
    return PARTLY if n_ok > 0 else FAILS


def _read(out: Path, name: str) -> pd.DataFrame | None:
    p = out / name
    return pd.read_csv(p) if p.exists() else None


def _not_run(ids_statements, experiment) -> list[Claim]:
    return [Claim(i, experiment, src, st, paper, "experiment not run", NOT_RUN) for i, src, st, paper in
            ids_statements]


# =================================================================== exp 1
E1 = [
    ("E1.1", "Li et al. 2006 sec. 6 (Fig. 2)",
     "The distortion ratio of KACA is 5.57 times lower than that of Incognito "
     "(the least-distortion full-domain generalisation) on average.", "5.57x"),
    ("E1.2", "Li et al. 2006 sec. 6 (Fig. 2)",
     "On average, the execution time of KACA is larger than that of Incognito.",
     "no number (figure)"),
    ("E1.3", "Li et al. 2006 sec. 6 (Fig. 2)", "The execution time of both algorithms increases with the QI size.",
     "no number (figure)"),
    ("E1.4", "Li et al. 2006 sec. 6 (Fig. 2)",
     "The distortion ratio increases with the QI size.", "no number (figure)"),
    ("E1.5", "Li et al. 2006 sec. 6 (Fig. 2)", "When k increases, the distortion ratio of all algorithms increases.",
     "no number (figure)"),
]


def _series(s: pd.DataFrame, method: str, k: int, col: str) -> pd.Series:
    d = s[(s.method == method) & (s.k == k)].sort_values("q")
    return pd.Series(d[col].to_numpy(dtype=float), index=d.q.to_numpy())


def claims_exp1(out: Path) -> list[Claim]:
    s = _read(out, "exp1_summary.csv")
    if s is None:
        return _not_run(E1, 1)
    ks = sorted(s.k.unique())
    kaca = s[s.method == "kaca1"].set_index(["k", "q"])
    fd = s[s.method == "fulldomain"].set_index(["k", "q"])
    idx = kaca.index.intersection(fd.index)
    rk, rf = kaca.loc[idx, "distortion_ratio"], fd.loc[idx, "distortion_ratio"]
    factor = rf / rk
    n = len(idx)
    lower = int((rk < rf).sum())
    ratio_of_means = rf.mean() / rk.mean()
    per_k = {k: rf.xs(k).mean() / rk.xs(k).mean() for k in ks}
    geo = float(np.exp(np.log(factor).mean()))
    ours = (f"ratio of the mean distortion ratios {ratio_of_means:.2f}x (full-domain mean {rf.mean():.3f}, KACA1 "
            f"mean {rk.mean():.4f}; per k: " + ", ".join(f"k={k}: {v:.2f}x" for k, v in per_k.items()) +
            f"). Per configuration the factor ranges {factor.min():.2f}x-{factor.max():.0f}x (median "
            f"{factor.median():.2f}x, geometric mean {geo:.2f}x; QI size 1 gives the largest factors). KACA1 is lower "
            f"in {lower}/{n} configurations.")
    if lower == n and 5.57 / 1.3 <= ratio_of_means <= 5.57 * 1.3:
        v, why = HOLDS, ""
    elif lower == n:
        v = PARTLY
        why = (f"KACA1's distortion ratio is lower than the full-domain optimum's in every configuration, as claimed, "
               f"but the factor is {ratio_of_means:.1f}x rather than 5.57x"
               + (" -- KACA1 does even better here than in the paper. " if ratio_of_means > 5.57 else ". ") +
               "Likely reasons: the paper's 'on average' is not defined and the factor depends strongly on how the "
               "configurations are averaged (see the range; at k=10 alone it is "
               f"{per_k.get(10, float('nan')):.2f}x, close to the paper's) and on k; and the paper's hierarchies "
               "are not ARX's (its Table 2 heights match ARX's files under neither reading, see the notes), which "
               "changes both methods' distortion.")
    else:
        v, why = FAILS, "KACA1 is not lower than the full-domain optimum in every configuration."
    claims = [Claim("E1.1", 1, E1[0][1], E1[0][2], E1[0][3], ours, v, why)]

    tk, tf = kaca.loc[idx, "time_s"], fd.loc[idx, "time_s"]
    slower = int((tk > tf).sum())
    ours = (f"mean time KACA1 {tk.mean():.3f} s vs full-domain {tf.mean():.3f} s (ratio {tk.mean() / tf.mean():.2f}); "
            f"KACA1 slower in {slower}/{n} configurations; at the largest QI size: " +
            ", ".join(f"k={k}: {kaca.loc[(k, max(s.q)), 'time_s']:.3f} s vs {fd.loc[(k, max(s.q)), 'time_s']:.3f} s"
                      for k in ks) + ".")
    if tk.mean() > tf.mean() and slower > n / 2:
        v, why = HOLDS, ""
    elif tk.mean() > tf.mean() or slower > 0:
        v = PARTLY
        why = ("The two implementations are close: ours are a numba-compiled KACA1 with an exact branch-and-bound "
               "nearest-class search (not the paper's O(|E|·|Es|) scan) and a full-domain lattice search with "
               "Flash-style pruning and vectorised group-bys, so the paper's C/C++ timings do not carry over; "
               "wall times on a shared 2-core machine also carry noise of tens of ms.")
    else:
        v = FAILS
        why = ("Our KACA1 (numba, exact branch-and-bound nearest-class search instead of the paper's full scan) is "
               "faster than our full-domain search on Adult; the paper's claim is about its implementations.")
    claims.append(Claim("E1.2", 1, E1[1][1], E1[1][2], E1[1][3], ours, v, why))

    parts, ok_all, n_all = [], 0, 0
    for m, name in (("kaca1", "KACA1"), ("fulldomain", "full-domain")):
        for k in ks:
            t = _series(s, m, k, "time_s")
            inc = int((np.diff(t.to_numpy()) > 0).sum())
            ok_all += inc
            n_all += len(t) - 1
            parts.append(f"{name} k={k}: {t.iloc[0]:.3f} s at q={t.index[0]} -> {t.iloc[-1]:.3f} s at q={t.index[-1]} "
                         f"({inc}/{len(t) - 1} steps up)")
    grows = all(_series(s, m, k, "time_s").iloc[-1] > _series(s, m, k, "time_s").iloc[0]
                for m in ("kaca1", "fulldomain") for k in ks)
    v = HOLDS if grows and ok_all >= 0.75 * n_all else (PARTLY if grows else FAILS)
    why = "" if v == HOLDS else ("Time grows overall but not at every step: at small QI sizes the times are a few "
                                 "ms and noise on the shared machine and the lattice shape (the full-domain search "
                                 "checks few nodes when a low node is already k-anonymous) dominate.")
    claims.append(Claim("E1.3", 1, E1[2][1], E1[2][2], E1[2][3], "; ".join(parts) + ".", v, why))

    parts, bad = [], []
    for m, name in (("kaca1", "KACA1"), ("fulldomain", "full-domain")):
        for k in ks:
            r = _series(s, m, k, "distortion_ratio")
            dec = [int(q) for q, d in zip(r.index[1:], np.diff(r.to_numpy())) if d < -1e-12]
            parts.append(f"{name} k={k}: {r.iloc[0]:.4f} -> {r.iloc[-1]:.4f}" + (f" (drops at q={dec})" if dec else
                                                                               " (never drops)"))
            bad += [(name, k, q) for q in dec]
    kaca_mono = not any(b[0] == "KACA1" for b in bad)
    v = HOLDS if not bad else (PARTLY if kaca_mono or len(bad) < 4 else FAILS)
    why = "" if not bad else (("KACA1's ratio rises with every added attribute; " if kaca_mono else "") +
                               "the full-domain optimum's does not always: its absolute distortion never drops (a "
                               "k-anonymous node for q+1 attributes projects to one for q), but the ratio divides by "
                               "the distortion of the fully generalised table, n*q with uniform weights, so when the "
                               "added attribute is generalised little the ratio falls.")
    claims.append(Claim("E1.4", 1, E1[3][1], E1[3][2], E1[3][3], "; ".join(parts) + ".", v, why))

    if len(ks) >= 2:
        lo, hi = ks[0], ks[-1]
        checks = []
        for m in ("kaca1", "fulldomain"):
            a, b = _series(s, m, lo, "distortion_ratio"), _series(s, m, hi, "distortion_ratio")
            common = a.index.intersection(b.index)
            checks += [(m, q, a[q], b[q]) for q in common]
        okc = sum(_le(a, b) for _, _, a, b in checks)
        strict = sum(_lt(a, b) for _, _, a, b in checks)
        equal_q = [f"{'KACA1' if m == 'kaca1' else 'full-domain'} q={q}" for m, q, a, b in checks if not _lt(a, b)]
        ours = (f"ratio at k={hi} >= at k={lo} in {okc}/{len(checks)} (method, QI size) pairs, strictly larger in "
                f"{strict}" + (f" (equal: {', '.join(equal_q)})" if equal_q else "") + ".")
        v = HOLDS if okc == len(checks) else _count_verdict(okc, len(checks))
        why = "" if v == HOLDS else "Some configurations have a lower ratio at the larger k; see the numbers."
        if v == HOLDS and equal_q:
            why = ("Holds as 'never decreases'; where the full-domain optimum is the same lattice node for both k "
                   "(e.g. QI size 1-2) the ratio is equal, not larger.")
    else:
        ours, v, why = "only one k in this run", NOT_RUN, ""
    claims.append(Claim("E1.5", 1, E1[4][1], E1[4][2], E1[4][3], ours, v, why))
    return claims


# =================================================================== exp 2
E2 = [
    ("E2.1", "Li et al. 2008 sec. 8 (Figs 4-5)",
     "KACA1 is best on distortion, discernibility (DM) and normalised average "
     "class size (CAVG): 'KACA1 performs consistently better than other methods'.", "no number (figures)"),
    ("E2.2", "Li et al. 2008 sec. 8",
     "KACA1's inconsistency is the highest; 'in some cases the inconsistency of tables "
     "produced by KACA1 can be 70 percent'.", "up to 70%"),
    ("E2.3", "Li et al. 2008 sec. 8", "KACA2's inconsistency is capped by 10 percent (max_inconsist = 10%).", "<= 10%"),
    ("E2.4", "Li et al. 2008 sec. 8", "KACA2's distortion is in between the distortions of local (KACA1) and global "
     "(Incognito) recoding.", "no number (figures)"),
    ("E2.5", "Li et al. 2008 sec. 8", "Based on DM and CAVG, both KACA1 and KACA2 are better than Multi (Mondrian).",
     "no number (figures)"),
    ("E2.6", "Li et al. 2008 sec. 8",
     "Incognito (global recoding) performs best on inconsistency: it is always zero.", "0"),
    ("E2.7", "Li et al. 2008 sec. 8",
     "Incognito generalises more than 50 percent of the values to the top in some cases.",
     "> 50% in some cases"),
    ("E2.8", "Li et al. 2008 sec. 8 (additional)",
     "With the increase of k, the inconsistency of KACA2 gets closer to that "
     "of Incognito (i.e. towards 0).", "no number (figure)"),
    ("E2.9", "Li et al. 2008 sec. 8 (additional)",
     "Both KACA1 and KACA2 are not as efficient as Incognito and Multi on "
     "Adult.", "no number (not plotted)"),
]


def claims_exp2(out: Path) -> list[Claim]:
    s = _read(out, "exp2_summary.csv")
    if s is None:
        return _not_run(E2, 2)
    s = s.copy()
    configs = s[["figure", "q", "k"]].drop_duplicates().itertuples(index=False)
    configs = [tuple(c) for c in configs]
    n = len(configs)

    def val(m, c, col):
        d = s[(s.method == m) & (s.figure == c[0]) & (s.q == c[1]) & (s.k == c[2])]
        return float(d[col].iloc[0]) if len(d) else float("nan")

    def cname(c):
        return f"{'Fig. 4' if c[0] == 'fig4' else 'Fig. 5'} q={c[1]} k={c[2]}"

    claims = []
    # E2.1
    others = ("kaca2", "fulldomain", "mondrian")
    parts, tot_ok, fails = [], 0, []
    for col, name in (("distortion", "distortion"), ("dm", "DM"), ("cavg", "CAVG")):
        ok = [c for c in configs if all(_le(val("kaca1", c, col), val(o, c, col)) for o in others)]
        ok_paper = [c for c in configs
                    if all(_le(val("kaca1", c, col), val(o, c, col)) for o in ("kaca2", "fulldomain"))]
        parts.append(f"{name}: best (or tied) in {len(ok)}/{n}" + (f" ({len(ok_paper)}/{n} against KACA2 and the "
                                                                   f"global method only)" if len(ok_paper) != len(ok)
                                                                   else ""))
        tot_ok += len(ok)
        fails += [f"{name} at {cname(c)} (best: " + min(others, key=lambda o: val(o, c, col)) + ")"
                  for c in configs if c not in ok]
    v = _count_verdict(tot_ok, 3 * n)
    why = "" if v == HOLDS else ("Where KACA1 is not best: " + "; ".join(fails[:8]) + ("..." if len(fails) > 8 else "")
                                 + ". Our Mondrian cuts along the hierarchies and prints each partition as the lowest "
                                 "common ancestor (so its distortion is measurable, which the paper's Multi was not); "
                                 "at small QI sizes KACA1 and KACA2 coincide (ties count as best).")
    claims.append(Claim("E2.1", 2, E2[0][1], E2[0][2], E2[0][3], "; ".join(parts) + ".", v, why))

    # E2.2
    k1max = s[s.method == "kaca1"]["inconsistency_max"].max() if "inconsistency_max" in s else \
        s[s.method == "kaca1"]["inconsistency"].max()
    k1mean_max = s[s.method == "kaca1"]["inconsistency"].max()
    at = s[(s.method == "kaca1")].sort_values("inconsistency").iloc[-1]
    high_paper = [c for c in configs if all(_le(val(o, c, "inconsistency"), val("kaca1", c, "inconsistency"))
                                            for o in ("kaca2", "fulldomain"))]
    high_all = [c for c in configs if all(_le(val(o, c, "inconsistency"), val("kaca1", c, "inconsistency"))
                                          for o in others)]
    mond_higher = [cname(c) for c in configs
                   if _lt(val("kaca1", c, "inconsistency"), val("mondrian", c, "inconsistency"))]
    ours = (f"max KACA1 inconsistency {_pct(k1mean_max)} (mean over seeds; single run max {_pct(k1max)}) at "
            f"{cname((at.figure, at.q, at.k))}; highest of KACA1/KACA2/global in {len(high_paper)}/{n} configurations, "
            f"highest of all four (with Mondrian) in {len(high_all)}/{n}.")
    if len(high_paper) == n and 0.6 <= k1mean_max <= 0.8:
        v = HOLDS if len(high_all) == n else PARTLY
    else:
        v = PARTLY if len(high_paper) >= n / 2 else FAILS
    why = ""
    if v != HOLDS:
        why = ("KACA1 is the most inconsistent of the methods the paper measured (KACA1, KACA2, Incognito)" +
               (" in every configuration" if len(high_paper) == n else "") +
               f" and reaches {_pct(k1mean_max, 0)} (paper: up to 70%); " +
               (f"but our Mondrian, whose inconsistency the paper did not measure, is higher at "
                f"{', '.join(mond_higher)} (median cuts leave cells at many levels)." if mond_higher else ""))
    claims.append(Claim("E2.2", 2, E2[1][1], E2[1][2], E2[1][3], ours, v, why))

    # E2.3
    col = "inconsistency_max" if "inconsistency_max" in s else "inconsistency"
    k2 = s[s.method == "kaca2"]
    k2max = float(k2[col].max())
    over = [cname((r.figure, r.q, r.k)) for r in k2.itertuples() if getattr(r, col) > 0.10 + 1e-12]
    ours = f"max KACA2 inconsistency over all configurations and seeds {_pct(k2max, 2)}" + \
           (f"; above 10% at {', '.join(over)}" if over else "; <= 10% everywhere") + "."
    v = HOLDS if not over else FAILS
    why = "" if v == HOLDS else "KACA2's final step should push every attribute below the cap; see the configurations."
    claims.append(Claim("E2.3", 2, E2[2][1], E2[2][2], E2[2][3], ours, v, why))

    # E2.4
    btw = [c for c in configs if _le(val("kaca1", c, "distortion"), val("kaca2", c, "distortion"))
           and _le(val("kaca2", c, "distortion"), val("fulldomain", c, "distortion"))]
    not_btw = [f"{cname(c)} (KACA1 {_f(val('kaca1', c, 'distortion'), 0)}, "
               f"KACA2 {_f(val('kaca2', c, 'distortion'), 0)}, global {_f(val('fulldomain', c, 'distortion'), 0)})"
               for c in configs if c not in btw]
    ours = f"KACA1 <= KACA2 <= global in {len(btw)}/{n} configurations" + \
           (f"; not at {'; '.join(not_btw)}" if not_btw else "") + "."
    v = _count_verdict(len(btw), n)
    why = "" if v == HOLDS else "KACA2's global pre-generalisation can exceed the full-domain optimum's distortion."
    claims.append(Claim("E2.4", 2, E2[3][1], E2[3][2], E2[3][3], ours, v, why))

    # E2.5
    parts, okn, fail_parts, lost = [], 0, [], set()
    for m, name in (("kaca1", "KACA1"), ("kaca2", "KACA2")):
        for colm, cn in (("dm", "DM"), ("cavg", "CAVG")):
            better = [c for c in configs if _lt(val(m, c, colm), val("mondrian", c, colm))]
            tied = [c for c in configs if c not in better and _le(val(m, c, colm), val("mondrian", c, colm))]
            okn += len(better) + len(tied)
            parts.append(f"{name} {cn} < Mondrian in {len(better)}/{n}" + (f" (tied in {len(tied)}: "
                                                                           f"{', '.join(cname(c) for c in tied)})"
                                                                           if tied else ""))
            worse = [c for c in configs if c not in better and c not in tied]
            if worse:
                lost.add(name)
                w = max(worse, key=lambda c: val(m, c, colm) / max(val("mondrian", c, colm), 1e-300))
                fail_parts.append(f"{name} {cn} worse in {len(worse)}/{n}, most at {cname(w)}: "
                                  f"{_f(val(m, w, colm))} vs Mondrian {_f(val('mondrian', w, colm))}")
    v = _count_verdict(okn, 4 * n)
    why = ""
    if v != HOLDS:
        why = "; ".join(fail_parts) + ". "
        if "KACA1" not in lost:
            why += ("KACA1 is better than (or, where every method yields the same classes, tied with) Mondrian "
                    "everywhere. ")
        if "KACA2" in lost:
            why += ("KACA2's global steps (before KACA1, by Lemma 4's bound, and after it, to keep every attribute's "
                    "inconsistency under 10%) merge many classes into large ones, so its DM and CAVG grow far above a "
                    "multidimensional partitioning's, whose classes stay close to k. ")
        why += ("The paper's Multi treated attributes as fully ordered without hierarchies; ours cuts along the "
                "hierarchies, a finer partitioning, which makes it a stronger baseline on DM and CAVG.")
    claims.append(Claim("E2.5", 2, E2[4][1], E2[4][2], E2[4][3], "; ".join(parts) + ".", v, why))

    # E2.6
    fdmax = float(s[s.method == "fulldomain"]["inconsistency"].max())
    claims.append(Claim("E2.6", 2, E2[5][1], E2[5][2], E2[5][3], f"max full-domain inconsistency {_f(fdmax, 4)} over "
                        f"{n} configurations.", HOLDS if fdmax == 0 else FAILS,
                        "" if fdmax == 0 else "a full-domain output should have every attribute at one level"))

    # E2.7
    fd = s[s.method == "fulldomain"]
    top = fd.sort_values("top_fraction").iloc[-1]
    over = [cname((r.figure, r.q, r.k)) for r in fd.itertuples() if r.top_fraction > 0.5]
    ours = (f"fraction of all QI cells at the root for the full-domain optimum: max {_pct(top.top_fraction)} at "
            f"{cname((top.figure, top.q, top.k))}, min {_pct(fd.top_fraction.min())}; above 50% in "
            f"{len(over)}/{n} configurations" + (f" ({', '.join(over)})" if over else "") + ".")
    v = HOLDS if over else (PARTLY if top.top_fraction >= 0.5 else FAILS)
    why = "" if v == HOLDS else ("exactly half of the cells at the root is the most we see" if v == PARTLY else
                                 "The full-domain optimum under height weights never puts more than half the cells "
                                 "at the root here.")
    claims.append(Claim("E2.7", 2, E2[6][1], E2[6][2], E2[6][3], ours, v, why))

    # E2.8
    f4 = s[(s.figure == "fig4") & (s.method == "kaca2")].sort_values("k")
    if len(f4) >= 2:
        inc = f4.inconsistency.to_numpy()
        ks = f4.k.to_list()
        rho = pd.Series(inc).corr(pd.Series(ks, dtype=float), method="spearman")
        ours = ("KACA2 inconsistency vs k (Fig. 4): " + ", ".join(f"k={k}: {_pct(x)}" for k, x in zip(ks, inc)) +
                f"; Spearman rank correlation with k {rho:+.2f}.")
        v = HOLDS if inc[-1] < inc[0] and rho < -0.5 else (PARTLY if inc[-1] < inc[0] else FAILS)
        why = "" if v == HOLDS else ("KACA2's inconsistency is set by whichever attribute its last global step leaves "
                                     "just under the 10% cap, which depends on k non-monotonically; the trend toward "
                                     "0 is weak or absent here.")
    else:
        ours, v, why = "only one k in this run", NOT_RUN, ""
    claims.append(Claim("E2.8", 2, E2[7][1], E2[7][2], E2[7][3], ours, v, why))

    # E2.9
    parts, okn = [], 0
    for m, name in (("kaca1", "KACA1"), ("kaca2", "KACA2")):
        for o, on in (("fulldomain", "global"), ("mondrian", "Mondrian")):
            slower = [c for c in configs if val(m, c, "time_s") > val(o, c, "time_s")]
            okn += len(slower)
            parts.append(f"{name} slower than {on} in {len(slower)}/{n}")
    mt = {m: s[s.method == m].time_s.mean() for m in ("kaca1", "kaca2", "fulldomain", "mondrian")}
    ours = "; ".join(parts) + ". Mean times: " + ", ".join(f"{m} {t:.3f} s" for m, t in mt.items()) + "."
    v = _count_verdict(okn, 4 * n)
    why = "" if v == HOLDS else ("Our KACA uses an exact branch-and-bound nearest-class search compiled with numba "
                                 "(the paper names the quadratic scan as the bottleneck to optimise), so it is "
                                 "competitive with the global and Mondrian implementations; all are well under a "
                                 "second here.")
    claims.append(Claim("E2.9", 2, E2[8][1], E2[8][2], E2[8][3], ours, v, why))
    return claims


# =================================================================== exp 3
E3 = [
    ("E3.1", "Sun, Wang & Li 2008 sec. 4 (Fig. 2)", "DBCA:CM results in the least distortion for all k values.",
     "no number (figure)"),
    ("E3.2", "Sun, Wang & Li 2008 sec. 4 (Fig. 2)", "The distortion of DBCA is very close to that of DBCA:CM.",
     "no number (figure)"),
    ("E3.3", "Sun, Wang & Li 2008 sec. 4", "Both DBCA variants have lower distortion than Mondrian (MPA), for every k.",
     "no number (figure)"),
    ("E3.4", "Sun, Wang & Li 2008 sec. 4 (Fig. 3)", "DBCA:CM has the lowest CM: lower than DBCA and Mondrian.",
     "no number (figure)"),
    ("E3.5", "Sun, Wang & Li 2008 sec. 4 (Fig. 3)",
     "Even without the modification, DBCA produces less classification error "
     "(CM) than Mondrian (MPA) for every k value.", "no number (figure)"),
    ("E3.6", "Sun, Wang & Li 2008 sec. 4 (Fig. 4)", "The execution time of DBCA is higher than that of Mondrian (MPA).",
     "no number (figure)"),
]


def claims_exp3(out: Path) -> list[Claim]:
    s = _read(out, "exp3_summary.csv")
    if s is None:
        return _not_run(E3, 3)
    ks = sorted(s.k.unique())

    def val(m, k, col):
        d = s[(s.method == m) & (s.k == k)]
        return float(d[col].iloc[0]) if len(d) else float("nan")

    claims = []
    ok = [k for k in ks if _le(val("dbca-cm", k, "distortion"), min(val("dbca", k, "distortion"),
                                                                    val("mondrian", k, "distortion")))]
    best = {k: min(("mondrian", "dbca", "dbca-cm"), key=lambda m: val(m, k, "distortion")) for k in ks}
    ours = f"DBCA:CM least in {len(ok)}/{len(ks)} k values; least per k: " + \
           ", ".join(f"k={k}: {best[k]}" for k in ks) + "."
    v = _count_verdict(len(ok), len(ks))
    above = [k for k in ks if val("dbca-cm", k, "distortion") > val("dbca", k, "distortion")]
    why = "" if v == HOLDS else (
        f"DBCA:CM is above DBCA at {len(above)}/{len(ks)} k values. It adds a penalty to the distance of a record of "
        "another class, so it trades distortion for class purity (its CM is far lower, E3.4); DBCA picks the nearest "
        "neighbours by distance alone, so it is expected to distort less. The paper's Fig. 2 showing DBCA:CM lowest "
        "is likely a labelling slip or a penalty too small to change any choice.")
    claims.append(Claim("E3.1", 3, E3[0][1], E3[0][2], E3[0][3], ours, v, why))

    rel = {k: (val("dbca-cm", k, "distortion") - val("dbca", k, "distortion")) / val("dbca", k, "distortion")
           for k in ks}
    ours = "DBCA:CM distortion relative to DBCA: " + ", ".join(f"k={k}: {r:+.1%}" for k, r in rel.items()) + "."
    mx = max(abs(r) for r in rel.values())
    v = HOLDS if mx <= 0.10 else (PARTLY if mx <= 0.25 else FAILS)
    why = "" if v == HOLDS else f"The largest gap is {mx:.1%} (we call 'very close' within 10%)."
    claims.append(Claim("E3.2", 3, E3[1][1], E3[1][2], E3[1][3], ours, v, why))

    parts, okn, fails = [], 0, []
    for m, name in (("dbca", "DBCA"), ("dbca-cm", "DBCA:CM")):
        okk = [k for k in ks if _lt(val(m, k, "distortion"), val("mondrian", k, "distortion"))]
        okn += len(okk)
        parts.append(f"{name} < Mondrian in {len(okk)}/{len(ks)}")
        fails += [f"{name} k={k}: {val(m, k, 'distortion'):,.0f} vs {val('mondrian', k, 'distortion'):,.0f}"
                  for k in ks if k not in okk]
    ours = "; ".join(parts) + " (" + ", ".join(f"k={k}: DBCA {val('dbca', k, 'distortion'):,.0f}, DBCA:CM "
                                               f"{val('dbca-cm', k, 'distortion'):,.0f}, Mondrian "
                                               f"{val('mondrian', k, 'distortion'):,.0f}" for k in ks) + ")."
    v = _count_verdict(okn, 2 * len(ks))
    why = "" if v == HOLDS else ("Not at " + "; ".join(fails) + ". DBCA's greedy clusters (a centre plus its k-1 "
                                 "nearest remaining records, leftovers added at the end) lose their edge as k grows, "
                                 "while Mondrian's median cuts adapt to all attributes at once; DBCA:CM pays its class "
                                 "penalty on top. Our Mondrian cuts along the hierarchies and prints lowest common "
                                 "ancestors, a stronger baseline than an ordered-domain MPA.")
    claims.append(Claim("E3.3", 3, E3[2][1], E3[2][2], E3[2][3], ours, v, why))

    ok = [k for k in ks if _lt(val("dbca-cm", k, "cm"), min(val("dbca", k, "cm"), val("mondrian", k, "cm")))]
    ours = f"DBCA:CM lowest CM in {len(ok)}/{len(ks)} k values (" + \
           ", ".join(f"k={k}: {val('dbca-cm', k, 'cm'):.3f} vs DBCA {val('dbca', k, 'cm'):.3f}, Mondrian "
                     f"{val('mondrian', k, 'cm'):.3f}" for k in ks) + ")."
    v = _count_verdict(len(ok), len(ks))
    why = "" if v == HOLDS else "see the numbers"
    claims.append(Claim("E3.4", 3, E3[3][1], E3[3][2], E3[3][3], ours, v, why))

    ok = [k for k in ks if _lt(val("dbca", k, "cm"), val("mondrian", k, "cm"))]
    ours = f"DBCA CM < Mondrian CM in {len(ok)}/{len(ks)} k values (" + \
           ", ".join(f"k={k}: {val('dbca', k, 'cm'):.3f} vs {val('mondrian', k, 'cm'):.3f}" for k in ks) + ")."
    v = _count_verdict(len(ok), len(ks))
    gap = max(abs(val("dbca", k, "cm") - val("mondrian", k, "cm")) for k in ks)
    why = "" if v == HOLDS else ("DBCA ignores the class label, so whether its clusters are purer than Mondrian's "
                                 "partitions is incidental; the two stay within "
                                 f"{100 * gap:.1f} percentage points of each other at every k, DBCA lower at small k "
                                 "and Mondrian at large k, as with distortion (E3.3).")
    claims.append(Claim("E3.5", 3, E3[4][1], E3[4][2], E3[4][3], ours, v, why))

    ok = [k for k in ks if val("dbca", k, "time_s") > val("mondrian", k, "time_s")]
    ours = f"DBCA slower in {len(ok)}/{len(ks)} k values (" + \
           ", ".join(f"k={k}: {val('dbca', k, 'time_s'):.2f} s vs {val('mondrian', k, 'time_s'):.2f} s"
                     for k in ks) + ")."
    v = _count_verdict(len(ok), len(ks))
    claims.append(Claim("E3.6", 3, E3[5][1], E3[5][2], E3[5][3], ours, v, "" if v == HOLDS else "see the numbers"))
    return claims


# =================================================================== exp 4
E4 = [
    ("E4.1", "Arca & Hewett sec. 4.3 (Fig. 5)", "HeuristicMin returns T1 (education generalised to High, "
     "4 rows, 0 violations) after generating 9 tables; precision 0.89.", "9 tables, 4 rows, Prec 0.89"),
    ("E4.2", "Arca & Hewett sec. 5.1.1", "MinGen needs 14 cell generalisations at best and prefers T9 "
     "(Prec 0.95) over the equally minimal T10 (Prec 0.92).", "14 steps, Prec 0.95 vs 0.92"),
    ("E4.3", "Arca & Hewett sec. 5.1.2", "AllMin returns lattice node [1,0,0], the same table as "
     "HeuristicMin.", "[1,0,0], Prec 0.89"),
    ("E4.4", "Arca & Hewett Fig. 10(c)",
     "Comparison table: precision 0.95/0.89/0.89, rows 5/4/4, generalisations 14/7/7, "
     "generalisations to find the solution trial-and-error/14/9, solution space 240/24/24 (MinGen/AllMin/HM).",
     "see statement"),
    ("E4.5", "Arca & Hewett sec. 5.2.1 (Fig. 11)", "Case 1: HeuristicMin and TDS both keep 4 of 7 rows with 100% naive "
     "Bayes accuracy; HeuristicMin's table is closer to the original.", "7->4 rows, 100%, 100%"),
    ("E4.6", "Arca & Hewett sec. 5.2.2 (Fig. 16)", "Case 2 (two requirements): HeuristicMin and TDS both "
     "return the 5-row table of Figure 16(a), with 80% accuracy.", "9->5 rows, 80%"),
    ("E4.7", "Arca & Hewett sec. 5.2.3 (Fig. 19(d))", "Case 3: O/I row ratio HM 8/10, TDS 4/10, BUG 7/10; precision "
     "0.67/0.5/0.67; accuracy 63%/100%/100%.", "8/10, 4/10, 7/10; 0.67/0.5/0.67; 63/100/100%"),
]


def claims_exp4(out: Path) -> list[Claim]:
    t = _read(out, "exp4_comparison.csv")
    if t is None:
        return _not_run(E4, 4)
    t10 = _read(out, "exp4_t10.csv")

    def r(case, method):
        d = t[(t.case == case) & (t.method == method)]
        return d.iloc[0] if len(d) else None

    def acc(x):
        return "n/a" if x is None or pd.isna(x) else f"{100 * x:.0f}%"

    claims = []
    hm = r("sec43", "heuristicmin")
    ok = hm is not None and bool(hm.matches_paper_table) and hm.ours_search == 9 and round(hm.ours_precision, 2) == 0.89
    claims.append(Claim("E4.1", 4, E4[0][1], E4[0][2], E4[0][3],
                        f"T1 {'reproduced' if hm.matches_paper_table else 'NOT reproduced'}; {int(hm.ours_search)} "
                        f"tables generated; {int(hm.ours_rows_out)} rows; Prec {hm.ours_precision:.4f}.",
                        HOLDS if ok else FAILS))
    mg = r("sec43", "mingen")
    t10p = float(t10[t10.item.str.startswith("T10 precision")].ours.iloc[0]) if t10 is not None else float("nan")
    t10s = int(t10[t10.item.str.startswith("T10 record")].ours.iloc[0]) if t10 is not None else -1
    mgr = r("sec43", "mingen-records")
    ok = bool(mg.matches_paper_table) and mg.ours_steps_records == 14 and round(mg.ours_precision, 2) == 0.95 and \
        round(t10p, 2) == 0.92 and t10s == 14
    claims.append(Claim("E4.2", 4, E4[1][1], E4[1][2], E4[1][3],
                        f"MinGen (distinct rows as units, exact MILP): {int(mg.ours_steps_records)} record-cell steps, "
                        f"returns T9 ({'matches' if mg.matches_paper_table else 'differs'}), Prec "
                        f"{mg.ours_precision:.4f}; T10 also takes {t10s} steps, Prec {t10p:.4f}. (Record-level "
                        f"recoding, which may split a row, needs {int(mgr.ours_steps_records)} steps.)",
                        HOLDS if ok else FAILS))
    am = r("sec43", "allmin")
    ok = bool(am.matches_paper_table) and "[1, 0, 0]" in str(am.note)
    claims.append(Claim("E4.3", 4, E4[2][1], E4[2][2], E4[2][3],
                        f"AllMin: {am.note}; table {'= T1' if am.matches_paper_table else '!= T1'}, Prec "
                        f"{am.ours_precision:.4f}.", HOLDS if ok else FAILS))
    # E4.4: the table
    same = (round(mg.ours_precision, 2), round(am.ours_precision, 2), round(hm.ours_precision, 2)) == (0.95, 0.89, 0.89)
    rows_same = (mg.ours_rows_out, am.ours_rows_out, hm.ours_rows_out) == (5, 4, 4)
    gens_same = (mg.ours_steps_records, am.ours_steps_rows, hm.ours_steps_rows) == (14, 7, 7)
    search_same = (int(am.ours_search), int(hm.ours_search)) == (14, 9)
    space_same = am.ours_space == 24
    ours = (f"precision {mg.ours_precision:.2f}/{am.ours_precision:.2f}/{hm.ours_precision:.2f}; rows "
            f"{int(mg.ours_rows_out)}/{int(am.ours_rows_out)}/{int(hm.ours_rows_out)}; generalisations "
            f"{int(mg.ours_steps_records)} (record cells)/{int(am.ours_steps_rows)}/{int(hm.ours_steps_rows)} (rows x "
            f"steps) -- in record cells {int(mg.ours_steps_records)}/{int(am.ours_steps_records)}/"
            f"{int(hm.ours_steps_records)}; search effort MILP/{int(am.ours_search)} lattice nodes checked/"
            f"{int(hm.ours_search)} tables generated; AllMin lattice size {int(am.ours_space)}.")
    n_ok = sum([same, rows_same, gens_same, search_same, space_same])
    v = HOLDS if n_ok == 5 else PARTLY if n_ok >= 3 else FAILS
    why = ""
    if v != HOLDS:
        why = ("Precision, rows and generalisation counts match (the paper counts MinGen's generalisations in record "
               "cells but AllMin's and HeuristicMin's in distinct rows: '7 from generalising seven rows'; in record "
               "cells they are 40). " if same and rows_same and gens_same else "") + \
              ("AllMin's search effort differs: the paper counts the 14 states of lattice levels 1-3 it visits; our "
               "AllMin binary-searches the height and settles nodes with predictive tagging, checking "
               f"{int(am.ours_search)} nodes. " if not search_same else "") + \
              "MinGen's solution space (240) is not a quantity our exact MILP enumerates."
    claims.append(Claim("E4.4", 4, E4[3][1], E4[3][2], E4[3][3], ours, v, why))

    h1, t1 = r("case1", "heuristicmin"), r("case1", "tds")
    ok_rows = (h1.ours_rows_in, h1.ours_rows_out, t1.ours_rows_out) == (7, 4, 4)
    ok_acc = round(h1.ours_accuracy, 2) == 1.0 and round(t1.ours_accuracy, 2) == 1.0
    ok_closer = h1.ours_precision > t1.ours_precision
    ok_tab = bool(h1.matches_paper_table) and bool(t1.matches_paper_table)
    ours = (f"HM {int(h1.ours_rows_in)}->{int(h1.ours_rows_out)} rows, accuracy {acc(h1.ours_accuracy)}, Prec "
            f"{h1.ours_precision:.2f}; TDS {int(t1.ours_rows_in)}->{int(t1.ours_rows_out)} rows, accuracy "
            f"{acc(t1.ours_accuracy)}, Prec {t1.ours_precision:.2f}; both tables = Figures 11(b)/(c): {ok_tab}.")
    v = HOLDS if ok_rows and ok_acc and ok_closer and ok_tab else PARTLY
    claims.append(Claim("E4.5", 4, E4[4][1], E4[4][2], E4[4][3], ours, v, "" if v == HOLDS else "see the numbers"))

    h2, t2, h2s = r("case2", "heuristicmin"), r("case2", "tds"), r("case2", "heuristicmin-subtree")
    ok_tab = bool(h2.matches_paper_table) and bool(t2.matches_paper_table)
    ok_acc = round(h2.ours_accuracy, 2) == 0.80 and round(t2.ours_accuracy, 2) == 0.80
    ours = (f"HM {int(h2.ours_rows_in)}->{int(h2.ours_rows_out)} rows (Figure 16(a): {bool(h2.matches_paper_table)}), "
            f"TDS {int(t2.ours_rows_in)}->{int(t2.ours_rows_out)} rows (Figure 16(a): {bool(t2.matches_paper_table)}); "
            f"accuracy {acc(h2.ours_accuracy)} (std over folds {acc(h2.ours_accuracy_std)}) for both; the input "
            f"table itself scores {acc(h2.input_accuracy)}.")
    v = HOLDS if ok_tab and ok_acc else (PARTLY if ok_tab else FAILS)
    why = ""
    if v != HOLDS:
        why = (f"The tables are exactly Figure 16(a); the accuracy differs ({acc(h2.ours_accuracy)} vs 80%): with 34 "
               "records, 10-fold cross-validation has 3-4 test records per fold, so one record more or less in error "
               "moves the score by ~3 points, and the paper's classifier settings (Weka's naive Bayes and fold split, "
               "presumably) are not given. Predicting each row's majority class on this table is right for 29/34 = "
               "85% of the records.") if ok_tab else "The table differs from Figure 16(a)."
        if h2s is not None:
            why += (f" With whole-subtree sibling generalisation (siblings='subtree', every attribute a cut) "
                    f"HeuristicMin finds a larger satisfying table ({int(h2s.ours_rows_out)} rows) that the paper's "
                    "sibling reading cannot reach.")
    claims.append(Claim("E4.6", 4, E4[5][1], E4[5][2], E4[5][3], ours, v, why))

    rows3 = {m: r("case3", m) for m in ("heuristicmin", "tds", "bug")}
    if all(x is not None for x in rows3.values()):
        ours = "; ".join(f"{x.method_label}: O/I {int(x.ours_rows_out)}/{int(x.ours_rows_in)}, Prec "
                         f"{x.ours_precision:.2f}, accuracy {acc(x.ours_accuracy)}, table = paper's: "
                         f"{bool(x.matches_paper_table)}" for x in rows3.values()) + "."
        match = {m: (x.ours_rows_out == x.paper_rows_out and round(x.ours_precision, 2) == round(x.paper_precision, 2))
                 for m, x in rows3.items()}
        accm = {m: abs(x.ours_accuracy - x.paper_accuracy) < 0.05 for m, x in rows3.items()}
        n_ok = sum(match.values()) + sum(accm.values())
        v = HOLDS if n_ok == 6 else PARTLY if n_ok >= 3 else FAILS
        why = ("The input table is reconstructed from Figure 19's result tables (the paper prints Figure 17 only as an "
               "image), the age taxonomy is the one TDS's result implies. ")
        if not match["tds"]:
            why += ("TDS differs: age is in no requirement, so specialising it costs no anonymity (AnonyLoss 0) and "
                    "TDS's score ranks it first, all the way down to the leaves; the paper's TDS stops at "
                    "[0,40)/[40,99) (its text also says TDS 'chooses to specialise application', which its own Figure "
                    "19(a) contradicts). ")
        if not accm["heuristicmin"]:
            h3 = rows3["heuristicmin"]
            why += (f"HM's table is exactly Figure 19(c) but its 10-fold naive Bayes accuracy is "
                    f"{acc(h3.ours_accuracy)}, not 63%: on 83 records the score depends on the fold split and "
                    "classifier settings the paper does not give; the class mixing that lowers it is reproduced.")
        claims.append(Claim("E4.7", 4, E4[6][1], E4[6][2], E4[6][3], ours, v, why.strip()))
    return claims


# =================================================================== report
def all_claims(out: Path) -> list[Claim]:
    return claims_exp1(out) + claims_exp2(out) + claims_exp3(out) + claims_exp4(out)


def _md_table(df: pd.DataFrame) -> str:
    cols = list(df.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for r in df.itertuples(index=False):
        lines.append("| " + " | ".join(_cell(x) for x in r) + " |")
    return "\n".join(lines)


def _mean_spread(row, col, pct=False, nd=4) -> str:
    f = (lambda x: _pct(x, 1)) if pct else (lambda x: _f(x, nd))
    if row.get("runs", 1) > 1 and f"{col}_std" in row and not pd.isna(row[f"{col}_std"]) and row[f"{col}_std"] > 0:
        return f"{f(row[col])} ± {f(row[col + '_std'])}"
    return f(row[col])


def _exp_numbers(out: Path, e: int) -> str:
    if e == 1:
        s = _read(out, "exp1_summary.csv")
        if s is None:
            return ""
        rows = []
        for (k, q), d in s.groupby(["k", "q"]):
            a = d[d.method == "kaca1"].iloc[0].to_dict()
            b = d[d.method == "fulldomain"].iloc[0].to_dict()
            rows.append({"k": k, "q": q, "KACA1 ratio (mean ± std)": _mean_spread(a, "distortion_ratio"),
                         "full-domain ratio": _f(b["distortion_ratio"], 4),
                         "factor": f"{b['distortion_ratio'] / a['distortion_ratio']:.2f}x",
                         "KACA1 time s": _mean_spread(a, "time_s", nd=3), "full-domain time s": _f(b["time_s"], 3)})
        return _md_table(pd.DataFrame(rows))
    if e == 2:
        s = _read(out, "exp2_summary.csv")
        if s is None:
            return ""
        rows = []
        for (fig, q, k), d in s.groupby(["figure", "q", "k"], sort=False):
            for m in ("kaca1", "kaca2", "fulldomain", "mondrian"):
                x = d[d.method == m]
                if x.empty:
                    continue
                x = x.iloc[0].to_dict()
                rows.append({"fig": fig[-1], "q": q, "k": k, "method": m,
                             "distortion (height WHD)": _mean_spread(x, "distortion", nd=1),
                             "DM": _f(x["dm"]), "CAVG": _f(x["cavg"], 2),
                             "inconsist.": _mean_spread(x, "inconsistency", pct=True),
                             "at top": _pct(x["top_fraction"]), "time s": _f(x["time_s"], 3)})
        return _md_table(pd.DataFrame(rows))
    if e == 3:
        s = _read(out, "exp3_summary.csv")
        if s is None:
            return ""
        rows = []
        for k, d in s.groupby("k"):
            for m in ("mondrian", "dbca", "dbca-cm"):
                x = d[d.method == m]
                if x.empty:
                    continue
                x = x.iloc[0].to_dict()
                rows.append({"k": k, "method": m, "distortion (uniform WHD)": _mean_spread(x, "distortion", nd=1),
                             "CM": _mean_spread(x, "cm", nd=4), "time s": _mean_spread(x, "time_s", nd=2),
                             "classes": _f(x["classes"], 0)})
        return _md_table(pd.DataFrame(rows))
    if e == 4:
        t = _read(out, "exp4_comparison.csv")
        if t is None:
            return ""
        parts = []
        for case, d in t.groupby("case", sort=False):
            parts.append(f"**{PAPER[case]['title']}**\n")
            rows = []
            for x in d.itertuples(index=False):
                def pv(col, x=x):
                    v = getattr(x, col)
                    if v is None or (isinstance(v, float) and math.isnan(v)):
                        return "—"
                    if isinstance(v, float) and v.is_integer():
                        return str(int(v))
                    return str(v)
                rows.append({
                    "method": x.method_label,
                    "precision (paper / ours)": f"{pv('paper_precision')} / {x.ours_precision:.2f}",
                    "rows in->out (paper / ours)": (f"{pv('paper_rows_in')}->{pv('paper_rows_out')}"
                                                    if not pd.isna(x.paper_rows_out) else "—") +
                    f" / {x.ours_rows_in}->{x.ours_rows_out}",
                    "generalisations (paper / ours: record cells, row cells)":
                        f"{pv('paper_steps')} / {x.ours_steps_records}, {pv('ours_steps_rows')}",
                    "NB accuracy (paper / ours)": (f"{pv('paper_accuracy')} / "
                                                   + ("—" if pd.isna(x.ours_accuracy) else f"{x.ours_accuracy:.3f}")),
                    "search (paper / ours)": f"{pv('paper_search')} / {pv('ours_search')}",
                    "same table as paper": ("—" if pd.isna(x.matches_paper_table)
                                            else str(bool(x.matches_paper_table))),
                    "verified": str(bool(x.verified)),
                })
            parts.append(_md_table(pd.DataFrame(rows)))
            parts.append("\nResults: " + "; ".join(f"{x.method_label}: {x.result}" for x in d.itertuples()) + "\n")
        return "\n".join(parts)
    return ""


EXP_TEXT = {
    1: ("Experiment 1 — Li et al. 2006 Fig. 2: KACA vs the least-distortion full-domain generalisation",
        "UCI Adult, 45,222 records, ARX hierarchies; QI size q = 1..9 (the first q of age, workclass, education, "
        "marital-status, occupation, race, sex, native-country, salary-class); k = 2 and k = 10; uniform WHD weights. "
        "KACA1 (the paper's KACA: Li et al. 2006 Algorithm 1 = Li et al. 2008 KACA1) over seeds 0..n-1; "
        "the full-domain optimum "
        "(`fulldomain`: the k-anonymous lattice node of least distortion, which is what Incognito's optimal "
        "full-domain search returns under this metric, no suppression) is deterministic, its time is the mean of "
        "repeated runs. "
        "Distortion ratio = distortion / distortion of the fully generalised table.",
        ["exp1_fig2.png"]),
    2: ("Experiment 2 — Li et al. 2008 Figs 4 and 5: KACA1, KACA2, Incognito, Mondrian",
        "UCI Adult, ARX hierarchies, height weights beta = 1 (distortion and the methods' objective). Fig. 4: the "
        "first six QIs, k in {2, 5, 10, 20, 50, 100}; Fig. 5: k = 10, QI size 1..8. KACA1 and KACA2 (max "
        "inconsistency 10%) over seeds; full-domain optimum (least height-weighted distortion) and Mondrian (strict, "
        "median cuts along the hierarchies, partitions printed as lowest common ancestors) deterministic. 'At top' "
        "= fraction of all QI cells generalised to the root.",
        ["exp2_fig4.png", "exp2_fig5.png"]),
    3: ("Experiment 3 — Sun, Wang & Li 2008 Figs 2-4: Mondrian (MPA), DBCA, DBCA:CM",
        "UCI Adult, 8 QIs, ARX hierarchies, class = salary-class; k in {2, 5, 10, 25, 50, 100}; total distortion "
        "under uniform WHD without priorities (the paper does not say which priorities its figures use); CM = "
        "fraction of records whose class differs from their equivalence class's majority; DBCA:CM penalty 1. DBCA "
        "and DBCA:CM (seeded tie-breaks) over seeds; Mondrian deterministic.",
        ["exp3_fig2-4.png"]),
    4: ("Experiment 4 — Arca & Hewett worked examples and comparison tables",
        "The paper's small tables, typed in `hieranon.io.datasets.paper_tables`: Sec. 4.3 (Figure 4 table, "
        "R = <{edu,sex,hrs},4>) with MinGen, AllMin, HeuristicMin (Figure 10(c)); Case 1 (Figure 11) "
        "and Case 2 (Figures 13-16) with HeuristicMin and TDS (and BUG, not in the paper's tables); "
        "Case 3 (Figure 19) on an input reconstructed from the paper's result tables. Accuracy: categorical naive "
        "Bayes, 10-fold stratified cross-validation (seed 0) on the generalised table expanded to one row per record "
        "(`hieranon.evaluation.utility.naive_bayes_accuracy`). Case 4 is printed only as images and is not reproduced.",
        ["exp4_worked_examples.png"]),
}


def write_report(out, info: dict | None = None) -> Path:
    out = Path(out)
    info = info or {}
    claims = all_claims(out)
    exps = info.get("experiments", {})
    lines = ["# Reproducing the papers' experiments", ""]
    lines += ["Generated by `hieranon experiments" + (" --quick" if info.get("grid_name") == "quick" else "") +
              f"` on {time.strftime('%Y-%m-%d')}. Every number below is read from the CSVs in this folder; "
              "every anonymised output was checked by the independent verifier "
              "(`hieranon.evaluation.verify.verify_codes`)" +
              (" -- **failures: " + "; ".join(info["verification_failures"]) + "**"
               if info.get("verification_failures") else " and passed") + ".", ""]
    m = info.get("machine", {})
    if m:
        load = m.get("load_average_at_start") or m.get("load_average") or [float("nan")]
        lines.append(f"Machine: {m.get('cpu', '?')}, {m.get('cores', m.get('logical_cpus', '?'))} logical CPUs, shared "
                     f"with other work (1-min load average at start {_f(load[0], 2)}); "
                     f"Python {m.get('python')}, "
                     f"numpy {m.get('numpy')}, numba {m.get('numba')}, hieranon {m.get('hieranon')}. Times are wall "
                     "seconds of the algorithm alone (data encoding, verification and metrics excluded), numba "
                     "kernels compiled beforehand; they are noisy on a shared machine.")
        lines.append("")
    if exps:
        lines.append("| experiment | grid | seeds (randomised methods) | run time | finished |")
        lines.append("|---|---|---|---|---|")
        for e in sorted(exps, key=int):
            x = exps[e]
            gp = x.get("grid_params", {})
            nseeds = gp.get("exp3_seeds" if e == "3" else "seeds", "—") if e != "4" else "—"
            lines.append(f"| {e} | {x.get('grid')} | {nseeds} | {x.get('seconds', 0):.0f} s | {x.get('finished')} |")
        if info.get("last_run_seconds") is not None:
            last = ", ".join(map(str, info.get("last_run_experiments", [])))
            lines.append(f"\nLast invocation (experiments {last}): "
                         f"{info['last_run_seconds']:.0f} s wall in total, numba warm-up included.")
        lines.append("")
        grids = {x.get("grid") for x in exps.values()}
        if "quick" in grids:
            lines += ["> **Reduced grid (`--quick`)**: fewer seeds and configurations than the papers; verdicts may "
                      "differ from the full run's.", ""]
    counts = {v: sum(c.verdict == v for c in claims) for v in (HOLDS, PARTLY, FAILS, NOT_RUN)}
    lines += ["## Verdicts", "",
              f"{len(claims)} claims: {counts[HOLDS]} hold, {counts[PARTLY]} partly hold, {counts[FAILS]} do not hold"
              + (f", {counts[NOT_RUN]} not run" if counts[NOT_RUN] else "") + ". Details, numbers and likely reasons "
              "are in each experiment's section.", "",
              "| id | claim (paper) | paper's number | ours | verdict |", "|---|---|---|---|---|"]
    lines += [c.row() for c in claims]
    lines.append("")
    for e in (1, 2, 3, 4):
        title, conf, figs = EXP_TEXT[e]
        lines += [f"## {title}", "", conf, ""]
        for f in figs:
            if (out / f).exists():
                lines += [f"![{f}]({f})", ""]
        for c in (c for c in claims if c.experiment == e):
            lines += [f"### {c.id} — {BADGE[c.verdict]}", "",
                      f"- **Paper** ({c.source}): {c.statement}",
                      f"- **Paper's number**: {c.paper}",
                      f"- **Ours**: {c.ours}",
                      f"- **Verdict**: {c.verdict}" + (f". {c.why}" if c.why else "."), ""]
        nums = _exp_numbers(out, e)
        if nums:
            csvs = {1: "exp1_raw.csv, exp1_summary.csv", 2: "exp2_raw.csv, exp2_summary.csv",
                    3: "exp3_raw.csv, exp3_summary.csv", 4: "exp4_comparison.csv, exp4_t10.csv"}[e]
            lines += [f"<details><summary>Numbers ({csvs})</summary>", "", nums, "", "</details>", ""]
    lines += ["## Notes on the set-up", "",
              "- **Hierarchies.** ARX's Adult hierarchies are used as ARX distributes them. The papers' Table 2 "
              "lists heights 4/3/4/3/2/2/1/3/1 for age, workclass, education, marital-status, occupation, race, sex, "
              "native-country, salary-class; ARX's files have 5/3/4/3/3/2/2/3/2 levels, i.e. "
              "4/2/3/2/2/1/1/2/1 generalisation steps. Read as steps, the paper's workclass, education, "
              "marital-status, race and native-country trees are one level taller; read as levels, its age, "
              "occupation, sex and salary-class trees are one level shorter: the papers' trees are not ARX's. "
              "Absolute numbers therefore differ from the papers'; the claims are about orderings and trends, "
              "which is what the verdicts check.",
              "- **Incognito** is the optimal full-domain search (`fulldomain`), which returns the same node an "
              "Incognito run that picks the least-distortion k-anonymous node would; its implementation (lattice "
              "with roll-up and predictive tagging) is not Incognito's, so its *time* is not Incognito's.",
              "- **Mondrian** (Li et al. 2008's 'Multi', Sun, Wang & Li 2008's 'MPA') cuts categorical attributes "
              "along their "
              "hierarchies and prints every cell as the lowest common ancestor of its partition, so distortion and "
              "inconsistency can be measured for it (Li et al. 2008 had none for Multi).",
              "- **Spread.** Randomised methods report mean ± standard deviation over seeds in the tables, min-max "
              "bars in the figures; the raw CSVs hold every run.",
              "- Regenerate: `HIERANON_ADULT_DIR=... hieranon experiments [--quick] [--out DIR]` in a clone of "
              "hieranon (the research harness, `experiments/`, is not part of the installed package); "
              "`--only 3` reruns one experiment, `--report-only` rewrites this file and the figures from the CSVs.",
              ""]
    path = out / "REPORT.md"
    path.write_text("\n".join(lines))
    (out / "claims.json").write_text(json.dumps([c.__dict__ for c in claims], indent=2, default=str))
    return path
