"""The report opens with the release statement: what holds and what does
not in one list and one style, the attacker models in plain words, the
columns released unchanged, records suppressed and cells generalised to *
apart, and the groups that lost most detail (left out of a public report)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from hieranon import report as R
from hieranon.hierarchies import readers as H
from hieranon.io.datasets import example_path
from hieranon.job.pipeline import anonymize


def _release(**kw):
    df = pd.read_csv(example_path("patients.csv"), dtype=str)
    hs = {"gender": H.suppression("gender", df["gender"]),
          "age": H.intervals("age", df["age"].astype(int), [5, 10, 20]),
          "postcode": H.masking("postcode", df["postcode"])}
    df["flag"] = np.where(np.arange(len(df)) < 5, "yes", "no")
    return anonymize(df, list(hs), hs, 3, seed=0, identifiers=["id"], sensitive=["diagnosis", "flag"],
                     insensitive=["readmitted", "date_of_birth"], **kw)


def _first_section(html: str) -> tuple[str, str]:
    sid, body = re.search(r'<section id="([^"]+)">(.*?)</section>', html, flags=re.S).groups()
    return sid, body


def test_the_report_opens_with_what_holds_and_what_does_not_in_one_style():
    result = _release()
    sid, body = _first_section(R.render_report(None, result))
    assert sid == "statement" == list(R.SECTIONS)[0]
    items = re.findall(r"<li><b class=\"(okv|badv)\">[^<]*</b>(.*?)</li>", body)
    st = result.statement()
    assert [(cls == "okv", text.strip()) for cls, text in items] == [
        (ok, text.replace("'", "&#x27;")) for ok, text in st.lines()]
    assert items[0][0] == "okv" and {cls for cls, _ in items[1:]} == {"badv"}
    assert any("&#x27;flag&#x27;" in text and "no privacy model" in text for _, text in items)
    assert any("near-unique" in text and "date_of_birth" in text for _, text in items)
    # plain words: the attacker models, what was released unchanged, the records and cells
    assert "<i>Prosecutor</i>" in body and "chance of at most 1/3" in body and "<i>Journalist</i>" in body
    assert "date_of_birth (insensitive)" in body and "flag (sensitive, no privacy model)" in body
    assert not re.search(r"\bid\b", re.search(r"Released unchanged.</b>(.*?)</p>", body).group(1))  # dropped
    assert st.cells_text() in body.replace("&#x27;", "'")
    assert "Groups of records that lost most" in body


def test_a_public_report_names_no_group_of_input_values():
    result = _release(shuffle=True)
    _, body = _first_section(R.render_report(None, result, public=True))
    assert "Groups of records that lost most" not in body and "Cells changed per quasi-identifier" in body
    assert "rows keep the input" not in body  # shuffled


def test_risk_based_models_are_named_in_what_holds_and_in_the_risk_section():
    from hieranon.privacy import AverageRisk

    result = _release(privacy=[AverageRisk(0.1)])
    html = R.render_report(None, result)
    _, body = _first_section(html)
    assert "average risk &lt;= 0.1" in re.search(r'<b class="okv">[^<]*</b>(.*?)</li>', body).group(1)
    risk = re.search(r'<section id="risk">(.*?)</section>', html, flags=re.S).group(1)
    row = re.search(r"<tr><td>average risk &lt;= 0.1</td>(.*?)</tr>", risk).group(1)
    sizes = pd.DataFrame(result.data).groupby(["gender", "age", "postcode"]).size()
    assert f"{len(sizes) / sizes.sum():.4f}" in row and "whole table" in row
    sensitive = re.search(r'<section id="sensitive">(.*?)</section>', html, flags=re.S).group(1)
    assert "<h3>None</h3>" not in sensitive and "average risk" not in sensitive
