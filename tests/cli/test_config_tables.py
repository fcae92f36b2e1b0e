"""The configuration names the table read and the one written (``input:``,
``output:``), a file or a database table, for anonymize, check, evaluate and
report alike: a command line that names none takes them from there."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest
from typer.testing import CliRunner

from hieranon import cli
from hieranon.io.datasets import example_path

EXAMPLE_FILES = ["patients.csv", "patients_hierarchy_age.csv", "patients_hierarchy_date_of_birth.csv",
                 "patients_hierarchy_gender.csv", "patients_hierarchy_postcode.csv"]


class Ran:
    def __init__(self, result):
        self.code, self.out, self.err = result.exit_code, result.stdout, result.stderr


def run_main(args: list[str]) -> Ran:
    return Ran(CliRunner().invoke(cli.app, args, env={"COLUMNS": "200"}))


def _job(tmp_path, extra: str):
    for name in EXAMPLE_FILES:
        shutil.copy(example_path(name), tmp_path / name)
    text = example_path("patients.yaml").read_text(encoding="utf-8").replace("input: patients.csv\n", "")
    cfg = tmp_path / "job.yaml"
    cfg.write_text(extra + text, encoding="utf-8")
    return cfg


def test_files_named_by_the_configuration(tmp_path):
    cfg = _job(tmp_path, "input: patients.csv\noutput: out/release.csv\n")
    (tmp_path / "out").mkdir()

    made = run_main(["anonymize", "--config", str(cfg), "--json", "--seed", "3"])

    assert made.code == 0, made.err
    release = pd.read_csv(tmp_path / "out" / "release.csv", dtype=str)
    direct = tmp_path / "direct.csv"
    assert run_main(["anonymize", str(tmp_path / "patients.csv"), "-o", str(direct), "--config", str(cfg),
                     "--seed", "3", "-q"]).code == 0
    assert release.equals(pd.read_csv(direct, dtype=str))  # the same job as with the paths given
    evaluated = run_main(["evaluate", "--config", str(cfg), "--json"])
    assert evaluated.code == 0 and json.loads(evaluated.out)["verified"]
    checked = run_main(["check", "--config", str(cfg), "--json"])
    assert checked.code == 1 and json.loads(checked.out)["n_records"] == len(release)  # the raw table: k = 1


def test_database_tables_named_by_the_configuration(tmp_path):
    sa = pytest.importorskip("sqlalchemy")
    db = tmp_path / "clinic.db"
    pd.read_csv(example_path("patients.csv"), dtype=str).to_sql("patients", sa.create_engine(f"sqlite:///{db}"),
                                                                index=False)
    cfg = _job(tmp_path, f"input: {{url: 'sqlite:///{db}', table: patients}}\n"
                         f"output: {{url: 'sqlite:///{db}', table: patients_anon}}\n")

    made = run_main(["anonymize", "--config", str(cfg), "-q"])

    assert made.code == 0, made.err
    with sa.create_engine(f"sqlite:///{db}").connect() as conn:
        assert conn.exec_driver_sql("SELECT COUNT(*) FROM patients_anon").scalar() == 80
    evaluated = run_main(["evaluate", "--config", str(cfg), "--json"])
    assert evaluated.code == 0 and json.loads(evaluated.out)["verified"], evaluated.err


@pytest.mark.parametrize("extra, command, words", [
    ("", ["anonymize", "-o", "x.csv"], "no INPUT: give it on the command line, or name it under 'input:'"),
    ("input: patients.csv\n", ["anonymize"], "no -o OUTPUT: give it on the command line, or name it under 'output:'"),
    ("", ["evaluate"], "no ORIGINAL"),
    ("input: sqlite:///clinic.db\n", ["check"], "input: sqlite:///clinic.db is a database; name its table"),
    ("input: {url: 'sqlite:///c.db', query: 'SELECT 1'}\noutput: {url: 'sqlite:///c.db', query: 'SELECT 1'}\n",
     ["anonymize"], "output: expected the path of a table or a database table {url: URL, table: NAME}"),
    ("input: {url: clinic.db, table: t}\n", ["check"], "input.url: expected a database URL"),
])
def test_a_missing_or_bad_table_of_the_configuration_is_one_line(tmp_path, monkeypatch, extra, command, words):
    cfg = _job(tmp_path, extra)
    monkeypatch.chdir(tmp_path)
    r = run_main([*command, "--config", str(cfg)])
    assert r.code == 2 and words in r.err, r.err
    assert len(r.err.strip().splitlines()) == 1
    assert not (tmp_path / "x.csv").exists()
