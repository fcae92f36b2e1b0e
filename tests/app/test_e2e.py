"""The workbench in a real browser (Playwright driving Debian's Chromium):
the shipped example from load to download, ISLR Wage with hierarchies built
in the app, a bad hierarchy's message, a cancelled run, and the pages used
with the keyboard alone. Under CI a missing browser fails these tests.

With ``HIERANON_APP_SCREENSHOTS=DIR`` each step is also saved as
``DIR/NN-step.png`` at 1280 px (the README's pictures: ``docs/app``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from app_support import TOKEN, need

SHOTS = os.environ.get("HIERANON_APP_SCREENSHOTS")


@pytest.fixture
def server(tmp_path):
    """The workbench served on 127.0.0.1 in a thread: its address (with the token) and its state."""
    need("fastapi")
    uvicorn = need("uvicorn")
    from hieranon.app import bind
    from hieranon.app.server import create_app

    workdir = tmp_path / "session"
    workdir.mkdir()
    app = create_app(token=TOKEN, workdir=workdir)
    sock = bind(0)
    srv = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not srv.started:
        time.sleep(0.05)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}", app.state.hieranon
    srv.should_exit = True
    thread.join(10)


@pytest.fixture
def page(chromium, server):
    need("playwright")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
        pg = context.new_page()
        pg.set_default_timeout(30_000)
        pg.goto(f"{server[0]}/?token={TOKEN}")
        yield pg
        browser.close()


def shot(page, name: str, selector: str | None = None) -> None:
    """A screenshot of the page (or of one section) for the README, when asked for."""
    if not SHOTS:
        return
    Path(SHOTS).mkdir(parents=True, exist_ok=True)
    target = page.locator(selector) if selector else page
    target.screenshot(path=str(Path(SHOTS) / f"{name}.png"), **({} if selector else {"full_page": False}))


def alert_texts(page) -> list[str]:
    return [t.strip() for t in page.locator("[role=alert]:visible").all_inner_texts() if t.strip()]


def download(page, link_text: str, folder: Path) -> Path:
    with page.expect_download() as d:
        page.get_by_role("link", name=link_text).click()
    path = folder / d.value.suggested_filename
    d.value.save_as(path)
    return path


def test_the_shipped_example_from_load_to_download(page, patients, tmp_path):
    table, config = patients
    page.get_by_label("Path of a YAML configuration").fill(str(config))
    page.get_by_role("button", name="Load the configuration").click()
    page.get_by_label("or upload (CSV, Parquet, Excel").set_input_files(str(table))
    shot(page, "01-load", "#load")
    page.get_by_role("button", name="Load the table").click()
    page.wait_for_url(re.compile(r"#roles$"))
    assert "patients.csv: 80 rows, 7 columns" in page.locator("#load").inner_text()
    assert page.get_by_label("id", exact=True).input_value() == "identifier"
    shot(page, "02-roles", "#roles")
    shot(page, "03-hierarchies", "#hierarchies")
    page.get_by_label("k (every combination").fill("4")
    page.get_by_label("distinct l-diversity, l").fill("2")
    shot(page, "04-requirements", "#requirements")
    page.get_by_role("button", name="Save the requirements").click()
    page.get_by_role("button", name="Anonymise").click()
    page.wait_for_url(re.compile(r"/runs/r\d+$"), timeout=240_000)
    statement = page.locator("ul.statement").inner_text()
    assert "k = 4, distinct 2-diversity of 'diagnosis': verified" in statement
    page.frame_locator("iframe.report").locator("body").wait_for()
    shot(page, "06-results")
    folder = tmp_path / "downloads"
    folder.mkdir()
    release = download(page, "The release (patients-anonymised.csv)", folder)
    report = download(page, "The report (HTML)", folder)
    config_file = download(page, "The configuration (hieranon-config.yaml)", folder)
    command = download(page, "The command reproducing this run", folder).read_text().split()
    assert report.read_text().lstrip().lower().startswith("<!doctype html")
    assert command[:2] == ["hieranon", "anonymize"] and config_file.name == "hieranon-config.yaml"
    # the custodian's shell: the table where it was uploaded from, the configuration beside it
    shell = tmp_path / "shell"
    shell.mkdir()
    (shell / "patients.csv").write_bytes(table.read_bytes())
    (shell / config_file.name).write_bytes(config_file.read_bytes())
    done = subprocess.run([sys.executable, "-m", "hieranon", *command[1:], "-q"], cwd=shell, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    assert (shell / "patients-anonymised.csv").read_bytes() == release.read_bytes()
    # alternatives: a small grid, drawn against k, each point a link to its run
    page.get_by_role("link", name="Back to the workbench").click()
    page.get_by_label("k values").fill("2,4,6")
    page.get_by_label("Second method").select_option("kaca2")
    page.get_by_role("button", name="Explore").click()
    page.wait_for_url(re.compile(r"/explore/g\d+$"), timeout=240_000)
    page.locator("svg.chart").wait_for(timeout=240_000)
    page.wait_for_function("!document.querySelector('[data-poll]')", timeout=240_000)
    points = page.locator("svg.chart a")
    assert points.count() == 12  # 3 k x 2 methods x with / without the l-diversity
    assert page.locator("svg.chart polyline[stroke-dasharray]").count() == 2  # the lower bounds, with and without
    shot(page, "07-explore")
    points.first.focus()  # points may overlap; a link of the chart is reached with the keyboard too
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/runs/r\d+$"))
    assert "k = 2" in page.locator("ul.statement").inner_text()


WAGE_ROLES = {"rownames": "identifier", "year": "qi", "age": "qi", "maritl": "qi", "race": "qi", "education": "qi",
              "region": "insensitive", "jobclass": "qi", "health": "qi", "health_ins": "qi", "logwage": "sensitive",
              "wage": "qi"}


def build(page, column: str, builder: str | None = None, argument: str = "", upload: Path | None = None) -> None:
    card = page.locator(f"[id='h-{column}']")
    if upload is not None:
        card.get_by_label("or upload an ARX hierarchy").set_input_files(str(upload))
    else:
        card.get_by_label("Builder").select_option(builder)
        card.get_by_label("Argument").fill(argument)
    card.get_by_role("button", name=f"Set the hierarchy of {column}").click()
    page.wait_for_load_state()


@pytest.mark.slow
def test_wage_with_hierarchies_built_in_the_app_and_a_cancelled_run(page, wage_csv, tmp_path):
    page.get_by_label("Path on this computer").fill(str(wage_csv))
    page.get_by_role("button", name="Load the table").click()
    page.wait_for_url(re.compile(r"#roles$"))
    hints = page.locator("#roles").inner_text()
    assert "rownames" in hints and "nearly every value unique" in hints
    for column, role in WAGE_ROLES.items():
        page.get_by_label(column, exact=True).select_option(role)
    page.get_by_role("button", name="Save the roles").click()
    page.wait_for_url(re.compile(r"#hierarchies$"))
    build(page, "education", "groups", "2,5")  # a bad hierarchy: its message on the page, nothing changed
    assert any("group sizes [2, 5] must be whole numbers >= 1, each a multiple of the previous one" in t
               for t in alert_texts(page))
    shot(page, "03-bad-hierarchy", "#hierarchies")
    build(page, "education", "groups", "2,4")
    build(page, "age", "intervals", "5,10,20")
    build(page, "year", "intervals", "2,4")
    build(page, "wage", "intervals", "10,50,100")
    arx = tmp_path / "jobclass.csv"
    arx.write_text("1. Industrial;*\n2. Information;*\n")
    build(page, "jobclass", upload=arx)
    for column in ("maritl", "race", "health", "health_ins"):
        build(page, column, "suppress")
    assert not alert_texts(page)
    levels = page.locator("[id='h-age'] table").inner_text()
    assert "[20, 25)" in levels
    page.get_by_label("k (every combination").fill("10")
    page.get_by_label("t-closeness, t").fill("0.15")
    page.get_by_role("button", name="Save the requirements").click()
    # the run under t-closeness takes a while: cancelled while it solves, the page stays responsive
    page.get_by_role("button", name="Anonymise").click()
    page.locator("#run .stage").filter(has_text="solving").wait_for(timeout=240_000)
    shot(page, "05-run", "#run")
    t = time.monotonic()
    page.locator("#run").get_by_role("button", name="Cancel").click()
    page.locator("#run .stage").filter(has_text="Cancelled.").wait_for(timeout=10_000)
    assert time.monotonic() - t < 5
    assert page.locator("#run-button").is_enabled()  # ready for another run
    # without t-closeness the same table runs to a verified release
    page.goto(page.url.split("#")[0])
    page.get_by_label("t-closeness, t").fill("")
    page.get_by_role("button", name="Save the requirements").click()
    page.get_by_role("button", name="Anonymise").click()
    page.wait_for_url(re.compile(r"/runs/r\d+$"), timeout=240_000)
    assert "k = 10: verified" in page.locator("ul.statement").inner_text()


def test_keyboard_only_and_every_control_labelled(page, patients, server):
    table, config = patients
    server[1].wb.load_config(config)
    page.reload()
    page.keyboard.press("Tab")  # the skip link first
    assert page.evaluate("document.activeElement.textContent") == "Skip to the content"
    for _ in range(40):  # Tab to the table's path, type it, Enter submits the form
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.id") == "table-path":
            break
    page.keyboard.type(str(table))
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"#roles$"))
    reached = set()
    for _ in range(200):
        page.keyboard.press("Tab")
        reached.add(page.evaluate("document.activeElement.id || document.activeElement.textContent"))
        if "run-button" in reached:
            break
    assert {"role-1", "k", "method", "run-button"} <= reached
    page.keyboard.press("Enter")  # Anonymise, from the keyboard
    page.wait_for_url(re.compile(r"/runs/r\d+$"), timeout=240_000)
    for url in ("/", page.url):
        page.goto(url if url != "/" else page.url.split("/runs")[0] + "/")
        unlabelled = page.evaluate("""() => [...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
            .filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label')).map(e => e.name || e.id)""")
        assert unlabelled == []
