"""The report's page and its helpers (:mod:`hieranon.report.page`)."""

from __future__ import annotations

import numpy as np

from hieranon.report import page as P


def test_html_table_escapes_cells_and_marks_number_columns():
    html = P.html_table(["name", "<n>"], [["<b>x</b>", 3], ['a "q"', 4]], cls="kv", num_cols=(1,))
    assert html.startswith('<table class="kv"><thead><tr><th>name</th><th>&lt;n&gt;</th></tr></thead><tbody>')
    assert "<td>&lt;b&gt;x&lt;/b&gt;</td><td class=\"num\">3</td>" in html
    assert "<td>a &quot;q&quot;</td>" in html and html.endswith("</tbody></table>")
    raw = P.html_table(None, [["<i>kept</i>"]], raw=True)
    assert raw == "<table><tbody><tr><td><i>kept</i></td></tr></tbody></table>"


def test_kv_table_escapes_names_and_values():
    assert P.kv_table([("<k>", "v&w")]) == (
        '<table class="kv"><tbody><tr><th>&lt;k&gt;</th><td>v&amp;w</td></tr></tbody></table>')


def test_fmt_pct_and_value_text():
    assert [P.fmt(x) for x in (None, np.nan, True, np.int64(12345), 0.5, 1e-6, 2.5e7)] == [
        "–", "–", "yes", "12,345", "0.5000", "1e-06", "2.5e+07"]
    assert P.pct(0.1234) == "12.3%"
    assert P.value_text({"a": 2.0, "b": [1, 2, 3, 4, 5], "c": "x"}) == "(a=2, b=[1; 2; 3; 4; ... 5 items], c='x')"


def test_setting_reads_mappings_and_objects():
    class Cfg:
        k = 3

    assert P.setting({"k": 2}, "k") == 2 and P.setting(Cfg(), "k") == 3
    assert P.setting(None, "k", 5) == 5 and P.setting({}, "k", 5) == 5


def test_page_inlines_the_style_and_holds_the_sections():
    html = P.page("T &amp; U", "sub", '<a href="#s">S</a>', '<section id="s"></section>')
    assert html.startswith("<!DOCTYPE html>\n") and html.endswith("</html>\n")
    assert f"<style>{P.CSS}</style>" in html and "<title>T &amp; U</title>" in html
    assert '<nav><a href="#s">S</a></nav><section id="s"></section><footer>' in html

