"""The job's settings (k, seed, missing, beta, risk_threshold) are checked in
one place: the same value is refused with the same error type whether it
comes from the API, a configuration file or the command line, and the message
names the setting as the user gave it."""

from __future__ import annotations

import numpy as np
import pytest

from hieranon import hierarchy as H
from hieranon.job import config as C
from hieranon.job.settings import SettingError, check_setting
from hieranon.job.spec import AnonymizationSpec

BAD = [("k", 0), ("k", 2.5), ("k", True), ("seed", -1), ("seed", "3"), ("missing", "skip"), ("beta", 0.5),
       ("beta", float("inf")), ("beta", float("nan")), ("risk_threshold", 0), ("risk_threshold", 1.5)]
HS = {"a": H.suppression("a", ["x", "y"])}


@pytest.mark.parametrize("name, value", BAD)
def test_one_error_type_however_the_value_comes_in(name, value):
    with pytest.raises(SettingError) as api:
        AnonymizationSpec(hierarchies=HS, **{name: value})
    with pytest.raises(SettingError) as cfg:
        C.parse({"quasi_identifiers": {"a": {"suppress": True}}, name: value})
    assert api.value.name == cfg.value.name == name
    assert str(api.value) == str(cfg.value)
    assert str(cfg.value).startswith(f"{name}: expected ") and repr(value) in str(cfg.value)
    with pytest.raises(SettingError) as cli:
        check_setting(name, value, origin=f"--{name}")
    assert str(cli.value).startswith(f"--{name} ") and cli.value.origin == f"--{name}"


def test_accepted_values_become_plain_python():
    spec = AnonymizationSpec(hierarchies=HS, k=np.int8(2), seed=np.uint16(3), beta=np.float32(1.5),
                             risk_threshold=np.int64(1), missing="root")
    assert [(v, type(v)) for v in (spec.k, spec.seed, spec.beta, spec.risk_threshold)] == [
        (2, int), (3, int), (1.5, float), (1.0, float)]
    cfg = C.parse({"quasi_identifiers": {"a": {"suppress": True}}, "k": np.int64(4), "missing": "value"})
    assert (cfg.k, type(cfg.k), cfg.missing, cfg.beta, cfg.seed, cfg.risk_threshold) == (4, int, "value", 1.0,
                                                                                          None, None)
