"""Progress of long stages (hieranon.core.progress): events to a callback or to
logging, time left, and the API's progress hook."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import pytest

from hieranon.core import progress as P
from hieranon.hierarchies.readers import from_mapping
from hieranon.job.pipeline import anonymize


def test_a_stage_with_steps_reports_each_step_and_a_final_event():
    events = []
    with P.reporting(events.append):
        with P.stage("solving", total=4) as s:
            for _ in range(4):
                s.advance()
    assert [e.done for e in events] == [0, 1, 2, 3, 4, 4]
    assert events[-1].finished and not any(e.finished for e in events[:-1])
    assert events[-1].fraction == 1.0 and events[2].fraction == 0.5
    assert all(e.stage == "solving" for e in events)


def test_time_left_is_extrapolated_from_the_share_done():
    assert P.estimate_remaining(1, 4, 10.0) == pytest.approx(30.0)
    assert P.estimate_remaining(0, 4, 10.0) is None  # no basis yet
    assert P.estimate_remaining(0, None, 3.0, expected_seconds=10.0) == pytest.approx(7.0)
    assert P.estimate_remaining(0, None, 12.0, expected_seconds=10.0) == 0.0  # late: never negative


def test_an_interrupted_stage_sends_no_finished_event_and_the_interrupt_passes():
    events = []
    with pytest.raises(KeyboardInterrupt), P.reporting(events.append), P.stage("verifying", total=3) as s:
        s.advance()
        raise KeyboardInterrupt
    assert events and not any(e.finished for e in events)


def test_without_a_callback_stages_are_logged_not_printed(caplog, capsys):
    with caplog.at_level(logging.INFO, logger="hieranon.progress"), P.stage("encoding", detail="10 rows"):
        pass
    assert any("encoding" in r.getMessage() for r in caplog.records)
    out, err = capsys.readouterr()
    assert out == "" and err == ""


def test_logged_only_keeps_the_callback_out_until_it_ends(caplog):
    """Stages opened under ``logged_only`` go to the log, not to the
    callback set outside; after it the callback hears again."""
    events = []
    with P.reporting(events.append):
        with caplog.at_level(logging.INFO, logger="hieranon.progress"), P.logged_only(), P.stage("in a thread"):
            pass
        assert events == []
        assert any("in a thread" in r.getMessage() for r in caplog.records)
        with P.stage("after"):
            pass
    assert [e.stage for e in events if e.finished] == ["after"]


def table(n: int = 400, seed: int = 0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.choice(["x1", "x2", "y1", "y2"], n), "b": rng.choice(["p", "q", "r"], n)})
    hs = {"a": from_mapping("a", {"*": {"x": ["x1", "x2"], "y": ["y1", "y2"]}}),
          "b": from_mapping("b", {"*": ["p", "q", "r"]})}
    return df, hs


def test_the_api_reports_every_stage_of_a_run_to_its_callback():
    df, hs = table()
    from hieranon.job.pipeline import run
    from hieranon.job.spec import AnonymizationSpec

    events = []
    result = run(df, AnonymizationSpec(hierarchies=hs, k=5), progress=events.append)
    finished = [e.stage for e in events if e.finished]
    assert finished[0] == "encoding" and "verifying" in finished and "measuring" in finished
    assert any(s.startswith("solving with") for s in finished)
    assert result.verification.ok
    solving = next(e for e in events if e.stage.startswith("solving"))
    assert result.plan["mode"] in solving.detail.split(",")[0]  # the plan is named in the progress line


def test_the_rich_display_draws_nothing_off_a_terminal():
    import io

    from rich.console import Console

    buf = io.StringIO()
    show, stop = P.rich_callback(Console(file=buf, force_terminal=False))
    with P.reporting(show), P.stage("writing", total=2) as s:
        s.advance()
    stop()
    assert buf.getvalue() == ""


def test_anonymize_keyword_api_still_runs_without_progress_arguments():
    df, hs = table(200, seed=1)
    assert anonymize(df, list(hs), hs, k=4).verification.ok
