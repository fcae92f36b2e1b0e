"""Fuzz suite of configurations and column roles through the CLI (in process):
YAML with keys given twice at random depths, nesting past the limit, alias
fans ("billion laughs"); random role assignments from the configuration and
the command line, with and without contradictions; bad numeric options.

The contract of :mod:`test_fuzz` holds for every input: exit 0 with a
verified output, or exit 1/2 with ONE line on stderr and nothing written;
never a traceback, never exit 3."""

from __future__ import annotations

import re
from itertools import combinations
from pathlib import Path

import pandas as pd
import pytest
import yaml
from hypothesis import example, given
from hypothesis import strategies as st

import hieranon
from hieranon.core.safeyaml import MAX_ALIAS_NODES, MAX_DEPTH
from hieranon.core.table import DataError
from hieranon.evaluation.roles import COMPATIBLE_ROLES
from test_fuzz import FUZZ, assert_contract, error_lines, run_cli, workdir

#: sex (M/F/W), age (numbers), n (counts), d (a diagnosis) and id (unique).
TABLE = "sex,age,n,d,id\n" + "".join(f"{s},{20 + i},{1 + i % 3},{'xyz'[i % 3]},p{i}\n"
                                     for i, s in enumerate("MFWMFWMFWMFW"))
HIER = "M;*\nF;*\nW;*\n"
BASE = "quasi_identifiers:\n  sex: h.csv\nk: 2\n"


def run_in(d: Path, *args) -> tuple[int, str, list[Path]]:
    """``hieranon anonymize`` of the table in ``d`` with ``args``; checks the
    contract and returns (exit status, stderr, the error lines)."""
    table, hier, out = d / "t.csv", d / "h.csv", d / "o.csv"
    inputs = {table, hier, *(p for p in d.iterdir())}
    code, _, err = run_cli("anonymize", table, "-o", out, *args, "-q")
    assert_contract(code, err, d, inputs, [out])
    out.unlink(missing_ok=True)  # the next run in ``d`` writes it again
    return code, err, error_lines(err)


def prepared(d: Path, config: str | None = None) -> list[str]:
    (d / "t.csv").write_text(TABLE)
    (d / "h.csv").write_text(HIER)
    if config is None:
        return []
    (d / "c.yaml").write_text(config)
    return ["-c", d / "c.yaml"]


# ------------------------------------------------------------------ YAML: keys given twice
names = st.sampled_from(["a", "b", "params", "x", "k", "tree", "1", "é"])


@st.composite
def duplicated(draw):
    """A valid configuration with one mapping, ``depth`` levels down, holding
    a key twice (block or flow style): (text, key, first line, second line)."""
    depth = draw(st.integers(0, 8))
    path = draw(st.lists(names, min_size=depth, max_size=depth))
    key = draw(names)
    flow = draw(st.booleans())
    lines = BASE.splitlines()
    if depth == 0:
        key = draw(st.sampled_from(["k", "method", "quasi_identifiers", "seed"]))
        value = {"k": "3", "method": "kaca1", "quasi_identifiers": "{age: {intervals: [5]}}", "seed": "1"}[key]
        at = draw(st.sampled_from([i for i in range(len(lines) + 1)  # between top-level entries
                                   if i == len(lines) or not lines[i].startswith(" ")]))
        first = next((i for i, ln in enumerate(lines) if ln.startswith(f"{key}:")), None)
        lines.insert(at, f"{key}: {value}")
        if first is None:  # the key was not there yet: write it twice
            lines.insert(at, f"{key}: {value}")
            return "\n".join(lines) + "\n", key, at + 1, at + 2
        first_line, second_line = sorted((first + (1 if at <= first else 0), at))
        return "\n".join(lines) + "\n", key, first_line + 1, second_line + 1
    lines.append("params:")
    indent = "  "
    for p in path[1:]:
        lines.append(f"{indent}{p}:")
        indent += "  "
    if flow:
        lines.append(f"{indent}{key}x: {{{key}: 1, other: 2, {key}: 3}}")
        n = len(lines)
        return "\n".join(lines) + "\n", key, n, n
    lines.append(f"{indent}{key}: 1")
    lines.append(f"{indent}other: 2")
    lines.append(f"{indent}{key}: 3")
    n = len(lines)
    return "\n".join(lines) + "\n", key, n - 2, n


@FUZZ
@given(case=duplicated())
@example(case=("k: 5\n" + BASE.replace("k: 2\n", "") + "k: 2\n", "k", 1, 4))  # ran with k = 2, silently
def test_fuzz_a_key_given_twice_is_refused_at_any_depth(case):
    text, key, first, second = case
    with workdir() as d:
        code, err, lines = run_in(d, *prepared(d, text))
        assert code == 2, err
        key = yaml.safe_load(key)  # as YAML reads it: 1 is a number
        assert f"{key!r} is given twice, on line {first} and line {second}" in lines[0], (text, lines)
        assert "c.yaml" in lines[0]


# ------------------------------------------------------------------ YAML: nesting
@st.composite
def deep(draw):
    depth = draw(st.integers(MAX_DEPTH + 1, 4000))
    style = draw(st.sampled_from(["flow list", "flow map", "block map", "block list"]))
    if style == "flow list":
        body = "[" * depth + "]" * depth
    elif style == "flow map":
        body = "{a: " * depth + "1" + "}" * depth
    elif style == "block map":
        return BASE + "params:\n" + "".join("  " * (i + 1) + "a:\n" for i in range(depth)) + "  " * (depth + 1) + "1\n"
    else:
        body = "- " * depth + "x"
        return BASE + "params:\n  a:\n    " + body + "\n"
    return BASE + f"params: {{a: {body}}}\n"


@FUZZ
@given(text=deep())
@example(text=BASE + "params: {a: " + "[" * 3000 + "]" * 3000 + "}\n")  # was RecursionError, exit 3
def test_fuzz_deep_nesting_is_refused_in_one_line(text):
    with workdir() as d:
        code, err, lines = run_in(d, *prepared(d, text))
        assert code == 2 and "levels deep" in lines[0], err
        assert len(lines[0]) < 300


# ------------------------------------------------------------------ YAML: alias fans
@st.composite
def alias_fans(draw):
    """Levels of anchors each listing the previous one ``fan`` times, under a
    method parameter or a hierarchy tree: (text, expanded nodes)."""
    levels, fan = draw(st.integers(1, 10)), draw(st.integers(2, 12))
    lines = ["params:", "  l0: &l0 [" + ", ".join(["lol"] * fan) + "]"]
    for i in range(1, levels + 1):
        lines.append(f"  l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * fan) + "]")
    expanded = sum(fan ** j for j in range(1, levels + 2))
    return BASE + "\n".join(lines) + "\n", expanded, levels * fan


@FUZZ
@given(case=alias_fans())
@example(case=(BASE + "params:\n  l0: &l0 [" + ", ".join(["lol"] * 9) + "]\n" + "".join(
    f"  l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]\n" for i in range(1, 9)), 10**9, 72))
def test_fuzz_alias_fans_are_refused_before_expansion(case):
    text, expanded, aliases = case
    with workdir() as d:
        code, err, lines = run_in(d, *prepared(d, text))
        assert code != 0  # the parameters l0... are no method's
        assert len(lines[0]) < 400, f"{len(lines[0])} characters"
        if expanded > 2 * MAX_ALIAS_NODES:
            assert "alias" in lines[0], lines


# ------------------------------------------------------------------ roles
#: Where a role can be given: a configuration key or a command-line option.
ROLE_FORMS = {
    "hierarchies": ("quasi_identifiers", "--qi"),
    "identifiers": ("identifiers", "--identifier"),
    "sensitive": ("sensitive", "--sensitive"),
    "insensitive": ("insensitive", "--insensitive"),
    "class_column": ("class_column", "--class-column"),
    "count_column": ("count_column", "--count-column"),
    "privacy": ("privacy", "--l-diversity"),
}
COLUMNS = ["sex", "age", "n", "d", "id"]
QI_FORMS = {"sex": "h.csv", "age": "intervals:5,10", "n": "suppress", "d": "suppress", "id": "suppress"}


@st.composite
def role_assignments(draw):
    """(column, role, from the config?) triples: each column gets 0-3 roles,
    the class and count columns at most one column each."""
    out = []
    for column in COLUMNS:
        for role in draw(st.lists(st.sampled_from(sorted(ROLE_FORMS)), max_size=3, unique=True)):
            out.append((column, role, draw(st.booleans())))
    for single in ("class_column", "count_column"):
        givens = [a for a in out if a[1] == single]
        for extra in givens[1:]:
            out.remove(extra)
    return out


def conflicting(assignments) -> set[str]:
    """The columns given contradictory roles (a privacy model makes its column sensitive)."""
    roles: dict[str, set] = {}
    for column, role, _ in assignments:
        roles.setdefault(column, set()).add("sensitive" if role == "privacy" else role)
    return {c for c, rs in roles.items()
            if any(frozenset(pair) not in COMPATIBLE_ROLES for pair in combinations(sorted(rs), 2))}


def role_arguments(d: Path, assignments) -> list:
    raw: dict = {"k": 2}
    args: list = []
    for column, role, in_config in assignments:
        key, option = ROLE_FORMS[role]
        if in_config:
            if role == "hierarchies":
                form = QI_FORMS[column]
                raw.setdefault(key, {})[column] = form if form == "h.csv" else (
                    {"intervals": [5, 10]} if column == "age" else {"suppress": True})
            elif role == "privacy":
                raw.setdefault(key, {})[column] = [{"l_diversity": 1}]
            elif role in ("class_column", "count_column"):
                raw[key] = column
            else:
                raw.setdefault(key, []).append(column)
        elif role == "hierarchies":
            args += [option, f"{column}={QI_FORMS[column] if column != 'sex' else d / 'h.csv'}"]
        elif role == "privacy":
            args += [option, f"{column}=1"]
        else:
            args += [option, column]
    return [*prepared(d, yaml.safe_dump(raw)), *args]


@FUZZ
@given(assignments=role_assignments())
@example(assignments=[("age", "hierarchies", False), ("age", "sensitive", False)])
@example(assignments=[("sex", "hierarchies", True), ("d", "sensitive", True), ("d", "insensitive", False)])
@example(assignments=[("sex", "hierarchies", True), ("id", "identifiers", True), ("id", "privacy", False)])
@example(assignments=[("sex", "hierarchies", True), ("d", "sensitive", False), ("d", "class_column", True)])
def test_fuzz_role_assignments(assignments):
    with workdir() as d:
        code, err, lines = run_in(d, *role_arguments(d, assignments))
        bad = conflicting(assignments)
        if bad:
            assert code == 2, err
            named = re.match(r"hieranon: error: (?:.*: )?column '([^']+)' is ", lines[0])
            assert named and named.group(1) in bad and "one role" in lines[0], (assignments, lines)
        else:
            assert "one role" not in err, (assignments, err)


# ------------------------------------------------------------------ numeric options
@pytest.mark.parametrize("option, value", [
    ("-k", "0"), ("-k", "-3"), ("-k", "abc"), ("--seed", "-1"), ("--beta", "0.5"), ("--beta", "nan"),
    ("--beta", "inf"), ("--risk-threshold", "0"), ("--risk-threshold", "1.5"), ("--risk-threshold", "nan"),
    ("--block-size", "1"), ("--workers", "0"), ("--max-suppression", "-1"), ("--max-suppression", "-0.5"),
    ("--max-suppression", "-5%"), ("--max-suppression", "101%"), ("--max-suppression", "150.5"),
    ("--max-suppression", "lots"),
])
def test_bad_numeric_options_are_named_and_their_suggestions_are_valid(option, value):
    with workdir() as d:
        code, err, lines = run_in(d, *prepared(d), "--qi", f"sex={d / 'h.csv'}", "--insensitive", "age,n,d,id",
                                  f"{option}={value}" if option.startswith("--") else option, *(
                                      [] if option.startswith("--") else [value]))
        assert code == 2 and option in lines[0], err
        suggested = lines[0].split("write ", 1)[1] if "write " in lines[0] else ""
        for share in re.findall(r"'([^']*%)'", suggested):
            assert run_in(d, "--qi", f"sex={d / 'h.csv'}", "-k", "2", "--max-suppression", share)[0] != 2
        for records in re.findall(r"(\d+) for records", suggested):
            assert run_in(d, "--qi", f"sex={d / 'h.csv'}", "-k", "2", "--max-suppression", records)[0] != 2


@FUZZ
@given(value=st.floats(allow_nan=True, allow_infinity=True) | st.integers(-10**6, 10**6))
def test_fuzz_max_suppression_suggests_only_what_it_accepts(value):
    with workdir() as d:
        code, err, lines = run_in(d, *prepared(d), "--qi", f"sex={d / 'h.csv'}", "-k", "2",
                                  f"--max-suppression={value}")
        if code == 2:
            suggested = lines[0].split("write ", 1)[1] if "write " in lines[0] else ""
            for share in re.findall(r"'([^']*%)'", suggested):
                assert run_in(d, "--qi", f"sex={d / 'h.csv'}", "-k", "2", "--max-suppression", share)[0] != 2
            for records in re.findall(r"(\d+) for records", suggested):
                assert run_in(d, "--qi", f"sex={d / 'h.csv'}", "-k", "2", "--max-suppression", records)[0] != 2


# ------------------------------------------------------------------ column names (API)
labels = st.sampled_from([0, 1, 2, "0", "age", "sex", 2.5, ("a", "b")])


@FUZZ
@given(columns=st.lists(labels, min_size=2, max_size=2, unique_by=str), qi_text=st.booleans())
def test_fuzz_column_labels_through_the_api(columns, qi_text):
    """Any labels: a run, or one line that never reports a column it has as missing."""
    df = pd.DataFrame({i: [20 + j % 4 for j in range(12)] for i in range(2)})
    df.columns = columns
    first = str(columns[0]) if qi_text else columns[0]
    try:
        result = hieranon.anonymize(df, [first], {first: "intervals:5,10"}, 2, insensitive=[columns[1]])
    except (DataError, ValueError) as exc:
        message = str(exc)
        assert "\n" not in message
        assert not re.search(r"no column '0'", message), message
        if not qi_text or isinstance(columns[0], str):
            assert "tuple" in message or "expected" in message, message
    else:
        assert list(result.data.columns) == columns
