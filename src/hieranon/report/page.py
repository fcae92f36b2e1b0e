"""The page of the HTML report: its CSS, its skeleton, and the helpers every section
formats values and tables with (every value taken from the data or the
configuration is HTML-escaped)."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

import numpy as np

__all__ = ["CSS", "esc", "fmt", "kv_table", "html_table", "page", "pct", "setting", "value_text"]

#: The page's style sheet, inlined in its ``<style>`` element.
CSS = """
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
ul.statement{list-style:none;padding:0;margin:4px 0 8px;font-size:15px}ul.statement li{margin:3px 0}
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


def esc(x: object) -> str:
    """``x`` as text, HTML-escaped (quotes included)."""
    return html.escape(str(x), quote=True)


def value_text(v: object) -> str:
    """A parameter or algorithm detail as short text: numbers through :func:`fmt`,
    lists as their first items and a count, mappings as ``key=value`` pairs."""
    if isinstance(v, Mapping):
        return "(" + ", ".join(f"{k}={value_text(x)}" for k, x in v.items()) + ")"
    if isinstance(v, (list, tuple)):
        head = "; ".join(value_text(x) for x in v[:4])
        return f"[{head}; ... {len(v)} items]" if len(v) > 4 else f"[{head}]"
    if isinstance(v, (float, np.floating)) and float(v).is_integer() and abs(v) < 1e15:
        return f"{int(v):,}"
    return fmt(v, 3) if isinstance(v, (float, np.floating)) else (repr(v) if isinstance(v, str) else fmt(v))


def fmt(x: object, digits: int = 4) -> str:
    """A value as the report prints it: "–" for none or NaN, yes/no, integers with
    thousands separators, floats with ``digits`` decimals (general format when tiny or huge)."""
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


def pct(x: float) -> str:
    """A share as a percentage with one decimal."""
    return f"{100 * float(x):.1f}%"


def html_table(header: Sequence[str] | None, rows: Sequence[Sequence], cls: str = "", num_cols: Sequence[int] = (),
               raw: bool = False) -> str:
    """An HTML table (class ``cls``); the columns ``num_cols`` right-aligned as
    numbers; cells are escaped unless ``raw``."""
    out = [f'<table class="{cls}">' if cls else "<table>"]
    if header:
        out.append("<thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in header) + "</tr></thead>")
    out.append("<tbody>")
    for r in rows:
        cells = []
        for i, c in enumerate(r):
            text = c if raw else esc(c)
            cells.append(f'<td class="num">{text}</td>' if i in num_cols else f"<td>{text}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def kv_table(rows: Sequence[tuple[str, str]]) -> str:
    """A two-column table of (name, value) rows, the names as row headers."""
    return '<table class="kv"><tbody>' + "".join(
        f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in rows) + "</tbody></table>"


def setting(config: object, key: str, default: object = None) -> object:
    """``key`` of ``config``: a mapping's entry or an object's attribute (a
    :class:`~hieranon.job.config.Config` or an :class:`~hieranon.job.spec.AnonymizationSpec`)."""
    if config is None:
        return default
    if isinstance(config, Mapping):
        return config.get(key, default)
    return getattr(config, key, default)


def page(title: str, subtitle: str, nav: str, sections: str) -> str:
    """The whole document: ``title`` and ``subtitle`` as given (escaped by the
    caller), the navigation links and the sections' HTML."""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{title}</title><style>{CSS}</style></head><body><main>"
        f"<header><h1>{title}</h1><p>{subtitle}</p></header>"
        f"<nav>{nav}</nav>{sections}"
        "<footer>hieranon generalises quasi-identifier values in attribute hierarchies; every output is verified "
        "independently before it is written. Levels, distortion and risk measures follow the papers cited in "
        "the project's documentation.</footer>"
        "</main></body></html>\n"
    )
