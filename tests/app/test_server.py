"""The workbench's endpoints (FastAPI's TestClient): the token, the upload
limit, the messages of bad input, a run from start to download, and its cancel."""

from __future__ import annotations

import html
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

import hieranon.app.runs as runs_module
from app_support import TOKEN
from hieranon.core.progress import stage


def wait(client, job_id: str, timeout: float = 240.0) -> dict:
    end = time.monotonic() + timeout
    while True:
        s = client.get(f"/runs/{job_id}/status").json()
        if s["state"] != "running" or time.monotonic() > end:
            return s
        time.sleep(0.1)


def alerts(text: str) -> list[str]:
    found = re.findall(r'role="alert"[^>]*>(.*?)</p>', text, re.S)
    return [html.unescape(re.sub(r"<[^>]+>", "", m)).strip() for m in found if m.strip()]


def load_example(client, patients) -> None:
    table, config = patients
    assert client.post("/config", data={"path": str(config)}).status_code == 200
    assert client.post("/table", data={"path": str(table)}).status_code == 200


def test_every_request_needs_the_token(client):
    from fastapi.testclient import TestClient

    bare = TestClient(client.app)
    for url in ("/", "/static/app.js", "/runs/r1/status"):
        assert bare.get(url).status_code == 403
    assert bare.get("/?token=wrong").status_code == 403
    assert bare.post("/table", data={"path": "x.csv"}).status_code == 403
    first = bare.get(f"/?token={TOKEN}")  # the printed address: sets the cookie the pages go on with
    assert first.status_code == 200 and "hieranon workbench" in first.text
    assert "samesite=strict" in first.headers["set-cookie"].lower()
    assert bare.get("/static/app.js").status_code == 200
    assert client.get("/", headers={"Host": "evil.example:8000"}).status_code == 403  # DNS rebinding


def test_upload_over_the_limit_is_refused_unread(client, tmp_path):
    big = b"a,b\n" + b"1,2\n" * 20000  # 80 kB > the fixture's 64 kB
    r = client.post("/table", files={"upload": ("big.csv", big, "text/csv")})
    assert r.status_code == 413
    assert any("over the limit of 64 kB" in a and "path" in a for a in alerts(r.text))
    assert client.state.wb.table is None
    assert not list(Path(client.state.workdir).glob("upload-*"))  # nothing kept of it


def test_upload_a_table_and_preview_it(client, patients):
    r = client.post("/table", files={"upload": ("patients.csv", patients[0].read_bytes(), "text/csv")})
    assert r.status_code == 200 and r.url.fragment == "roles"
    assert "patients.csv: 80 rows, 7 columns" in r.text
    assert re.search(r"<td>male</td>", r.text)
    assert client.state.wb.table.name == "patients.csv"


def test_bad_table_path_and_bad_configuration_say_what_to_do(client, tmp_path):
    r = client.post("/table", data={"path": str(tmp_path / "absent.csv")})
    assert r.status_code == 400
    assert alerts(r.text) == [f"table {tmp_path / 'absent.csv'}: no such file; give the path of a CSV, Parquet or "
                              "Excel file"]
    bad = tmp_path / "bad.yaml"
    bad.write_text("k: 3\nquasi_identifier: {age: {suppress: true}}\n")
    r = client.post("/config", data={"path": str(bad)})
    assert r.status_code == 400
    assert "did you mean 'quasi_identifiers'" in alerts(r.text)[0]


def test_roles_show_the_tools_hints(client, patients):
    load_example(client, patients)
    page = client.get("/").text
    row = re.search(r"<label for=\"role-\d+\">id</label>.*?</tr>", page, re.S).group(0)
    assert "100%" in row and 'value="identifier" selected' in row
    # an unchanged column that copies a quasi-identifier is flagged
    client.post("/roles", data={"role-id": "identifier", "role-gender": "qi", "role-age": "qi", "role-postcode": "qi",
                                "role-date_of_birth": "qi", "role-diagnosis": "sensitive",
                                "role-readmitted": "insensitive"})
    assert client.state.wb.roles()["readmitted"] == "insensitive"
    r = client.post("/roles", data={"role-age": "boss"})
    assert r.status_code == 400 and "role 'age=boss'" in alerts(r.text)[0]


def test_a_bad_hierarchy_gets_a_message_and_changes_nothing(client, patients):
    load_example(client, patients)
    before = dict(client.state.wb.raw["quasi_identifiers"])
    arx = "male;*\n"  # no 'female'
    r = client.post("/hierarchy", data={"column": "gender"}, files={"upload": ("gender.csv", arx.encode(), "text/csv")})
    assert r.status_code == 400
    assert alerts(r.text)[0] == ("hierarchy of 'gender': attribute 'gender': value(s) 'female' not found among the "
                                 "leaves of its hierarchy -- add them to the hierarchy file")
    r = client.post("/hierarchy", data={"column": "age", "builder": "groups", "argument": "2,5"})
    assert r.status_code == 400
    assert "group sizes [2, 5] must be whole numbers >= 1, each a multiple of the previous one" in alerts(r.text)[0]
    assert client.state.wb.raw["quasi_identifiers"] == before


def test_a_built_hierarchy_is_previewed_level_by_level(client, patients):
    load_example(client, patients)
    r = client.post("/hierarchy", data={"column": "postcode", "builder": "mask", "argument": "4"})
    assert r.status_code == 200
    p = client.state.wb.preview("postcode")
    assert [lv["step"] for lv in p.levels] == [0, 1, 2, 3, 4]
    assert p.levels[-1]["distinct"] == 1 and p.levels[-1]["under_k"] == 0
    assert p.levels[0]["under_k"] > 0  # most postcodes alone leave classes under k=3
    assert "Levels of postcode" in r.text


def test_requirements_are_checked(client, patients):
    load_example(client, patients)
    r = client.post("/requirements", data={"k": "three"})
    assert r.status_code == 400 and alerts(r.text) == ["k: expected a whole number, got 'three'"]
    r = client.post("/requirements", data={"k": "4", "max_suppression": "lots"})
    assert r.status_code == 400 and "max_suppression" in alerts(r.text)[0]
    r = client.post("/requirements", data={"k": "4", "method": "kaca2", "l-diagnosis": "2"})
    assert r.status_code == 200
    assert client.state.wb.raw["k"] == 4 and client.state.wb.raw["privacy"] == {"diagnosis": [{"l_diversity": 2.0}]}


def test_a_run_gives_the_release_the_command_line_reproduces(client, patients, tmp_path):
    load_example(client, patients)
    client.post("/requirements", data={"k": "4", "l-diagnosis": "2"})
    started = client.post("/runs", headers={"Accept": "application/json"}).json()
    assert wait(client, started["id"])["state"] == "done"
    page = client.get(f"/runs/{started['id']}").text
    assert "k = 4, distinct 2-diversity of &#39;diagnosis&#39;: verified" in page
    assert "Risk before and after" in page and "<iframe" in page
    release = client.get(f"/runs/{started['id']}/release.csv")
    assert release.headers["content-disposition"].endswith('filename="patients-anonymised.csv"')
    assert client.get(f"/runs/{started['id']}/report.html").text.lstrip().lower().startswith("<!doctype html")
    folder = tmp_path / "custodian"
    folder.mkdir()
    (folder / "hieranon-config.yaml").write_bytes(client.get(f"/runs/{started['id']}/config.yaml").content)
    command = client.get(f"/runs/{started['id']}/command.txt").text.strip()
    assert command == f"hieranon anonymize {patients[0]} --config hieranon-config.yaml -o patients-anonymised.csv"
    done = subprocess.run([sys.executable, "-m", "hieranon", *command.split()[1:], "-q"], cwd=folder,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (folder / "patients-anonymised.csv").read_bytes() == release.content


def test_risk_based_models_set_on_the_page_are_met_by_the_run(client, patients):
    load_example(client, patients)
    r = client.post("/requirements", data={"k": "3", "average_risk": "0.08", "population_uniqueness": "0.01",
                                           "sampling_fraction": "0.05"})
    assert r.status_code == 200, alerts(r.text)
    raw = client.state.wb.raw
    assert raw["risk_models"] == {"average_risk": 0.08, "population_uniqueness": 0.01}
    assert raw["population"] == {"sampling_fraction": 0.05}
    started = client.post("/runs", headers={"Accept": "application/json"}).json()
    assert wait(client, started["id"])["state"] == "done"
    result = client.state.runs[started["id"]].result
    sizes = result.data.groupby(["gender", "age", "postcode", "date_of_birth"]).size()
    assert len(sizes) / sizes.sum() <= 0.08  # the average risk, counted here
    assert "average risk &lt;= 0.08" in client.get(f"/runs/{started['id']}").text
    r = client.post("/requirements", data={"k": "3", "average_risk": "2"})
    assert r.status_code == 400 and "average-risk" in alerts(r.text)[0]
    client.post("/requirements", data={"k": "3"})  # emptied: the models are gone
    assert "risk_models" not in client.state.wb.raw and "population" not in client.state.wb.raw


def test_a_run_not_ready_says_what_is_missing(client, patients):
    client.post("/table", data={"path": str(patients[0])})
    r = client.post("/runs", headers={"Accept": "application/json"})
    assert r.status_code == 400
    assert r.json()["error"] == "before running: mark at least one column quasi-identifying; set k"


def test_cancel_stops_a_run_within_seconds(client, patients, monkeypatch):
    release = []

    def endless(data, spec, **kwargs):  # a solver that reports progress and would run for ever
        with stage("solving", 1e9) as s:
            while not release:
                s.advance()
                time.sleep(0.01)

    monkeypatch.setattr(runs_module, "run", endless)
    load_example(client, patients)
    started = client.post("/runs", headers={"Accept": "application/json"}).json()
    while (s := client.get(started["status"]).json())["stage"] != "solving":
        assert s["state"] == "running", s
        time.sleep(0.05)
    t = time.monotonic()
    r = client.post(f"/runs/{started['id']}/cancel", headers={"Accept": "application/json"}).json()
    assert r["stopped"] and r["state"] == "cancelled" and time.monotonic() - t < 2
    assert "cancelled" in client.get(f"/runs/{started['id']}").text
    assert client.get(f"/runs/{started['id']}/release.csv").status_code == 409


@pytest.mark.slow
def test_explore_runs_a_grid_and_links_each_point(client, patients):
    load_example(client, patients)
    client.post("/requirements", data={"k": "3", "l-diagnosis": "2"})
    started = client.post("/explore", data={"ks": "2,4", "method1": "kaca+", "method2": "kaca2",
                                            "without_model": "on"}, headers={"Accept": "application/json"}).json()
    assert wait(client, started["id"])["state"] == "done"
    page = client.get(f"/explore/{started['id']}").text
    runs = re.findall(r'<a href="/runs/(r\d+)"[^>]*><circle', page)
    assert len(runs) == 8  # 2 k x 2 methods x with / without the model
    assert page.count("stroke-dasharray") == 2  # the lower bounds drawn, with and without the model
    results = [r.result for r in client.state.runs.values() if r.result is not None]
    assert len(results) == 8 and all(r.lower_bound is not None for r in results)
    assert all(r.metrics.distortion_ratio >= r.lower_bound.ratio - 1e-9 for r in results)
    assert all(client.get(f"/runs/{r}").status_code == 200 for r in runs)


def test_the_library_and_the_command_line_never_import_the_web_packages():
    code = ("import sys, hieranon, hieranon.cli, hieranon.job.pipeline, hieranon.report; "
            "print(sorted(m for m in ('fastapi', 'uvicorn', 'starlette', 'multipart') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
