"""The references table: every author-year citation in the package names one
of its papers, and no word that means something only inside this repository
(the file numbers under which the papers are stored, sections of the internal
specification, issue numbers) is left in the package's text."""
import re
from pathlib import Path

import pytest

import hieranon
import hieranon_experiments
from hieranon.core.references import REFERENCES, Reference, lookup

SRC = Path(hieranon.__file__).parent
#: The package and the research harness (outside it, but its report is read too).
ROOTS = (SRC, Path(hieranon_experiments.__file__).parent)
TEXT_SUFFIXES = {".py", ".yaml", ".yml", ".json", ".html", ".md", ".txt", ".css", ".js"}

NAME = r"(?:de |van |von )?[A-Z][\w\-]+"
#: "Name YEAR", "Name et al. YEAR", "Name & Name YEAR", "Name, Name & Name YEAR" ("and" for "&"),
#: the year optionally in parentheses
CITATION = re.compile(rf"\b({NAME})(?: et al\.|(?:, {NAME})*,? (?:&|and) {NAME})?,? \(?((?:19|20)\d\d)\b")
INTERNAL = re.compile(r"\bseeds? 00\d|\bSPEC\b|\b[Ii]ssues? #?\d+")


def package_files(table: bool = True):
    """The text files of the package and the research harness; ``table=False``
    leaves out the references table itself (its venues carry years: "ICDE 2006")."""
    return sorted(p for root in ROOTS for p in root.rglob("*") if p.suffix in TEXT_SUFFIXES
                  and "__pycache__" not in p.parts and (table or p.name != "references.py"))


def shown(path: Path) -> Path:
    """``path`` from the folder holding its package (``hieranon/...``, ``hieranon_experiments/...``)."""
    return next(path.relative_to(root.parent) for root in ROOTS if path.is_relative_to(root))


def joined(text: str) -> tuple[str, list[int]]:
    """``text`` with each line break and the indentation, comment mark or
    string quote around it read as one space (a citation may span lines), and
    ``&amp;`` as ``&``; with the line number of every character kept."""
    out, lines, line = [], [], 1
    for piece in re.finditer(r"&amp;|[ \t]*\"?\n[ \t]*(?:#:? ?|f?\")?|.", text, re.S):
        s = piece.group(0)
        if "\n" in s:
            out.append(" "), lines.append(line)
            line += 1
        else:
            out.append("&" if s == "&amp;" else s), lines.append(line)
    return "".join(out), lines


def citations(path: Path):
    text, lines = joined(path.read_text(encoding="utf-8"))
    for m in CITATION.finditer(text):
        yield lines[m.start()], m.group(0), m.group(1).split()[-1], int(m.group(2))


def test_parser_reads_the_citation_forms(tmp_path):
    text = ("as in Li et al. 2006, Def. 5; (Sun, Wang & Li 2008) and Gionis & Tassa 2009, "
            "Li, Li and\n    Venkatasubramanian 2007; de Waal &amp; Willenborg 1999; Fisher (1981).")
    p = tmp_path / "x.py"
    p.write_text(text)
    assert [(line, s, y) for line, _, s, y in citations(p)] == [
        (1, "Li", 2006), (1, "Sun", 2008), (1, "Gionis", 2009), (1, "Li", 2007), (2, "Waal", 1999), (2, "Fisher", 1981)]


def test_every_citation_names_a_reference():
    unknown = [f"{shown(p)}:{line}: {cite!r}"
               for p in package_files(table=False) for line, cite, surname, year in citations(p)
               if not lookup(surname, year)]
    assert not unknown, "citations with no entry in hieranon.core.references.REFERENCES:\n" + "\n".join(unknown)


def test_the_core_papers_are_cited():
    cited = {(s, y) for p in package_files(table=False) for _, _, s, y in citations(p)}
    for key in ("li2006", "li2008", "sun2008", "han2014", "machanavajjhala2007", "li2007"):
        ref = REFERENCES[key]
        assert (ref.surname, ref.year) in cited, ref.cite()


def test_no_repository_internal_words():
    found = [f"{shown(p)}:{i}: {line.strip()}"
             for p in package_files() for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if INTERNAL.search(line)]
    assert not found, "words that mean nothing outside this repository:\n" + "\n".join(found)


@pytest.mark.parametrize("key", sorted(REFERENCES))
def test_entries_are_complete(key):
    ref = REFERENCES[key]
    assert isinstance(ref, Reference) and ref.authors and ref.title and ref.venue
    assert 1900 < ref.year < 2100
    assert lookup(ref.surname, ref.year)


def test_cite_forms():
    assert REFERENCES["sweeney2002"].cite() == "Sweeney 2002"
    assert REFERENCES["gionis2009"].cite() == "Gionis & Tassa 2009"
    assert REFERENCES["sun2008"].cite() == "Sun, Wang & Li 2008"
    assert REFERENCES["li2006"].cite() == "Li et al. 2006"
    assert REFERENCES["dewaal1999"].surname == "Waal"
