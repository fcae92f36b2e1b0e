"""Keyed pseudonyms (HMAC-SHA256), key files, and the randomness that
protects people (fresh unless a seed is given)."""

from __future__ import annotations

import hashlib
import hmac

import numpy as np
import pandas as pd
import pytest

import hieranon
from hieranon.hierarchies import readers as H
from hieranon.io.pseudonyms import (
    MIN_KEY_BYTES,
    PSEUDONYM_DIGITS,
    PseudonymKeyError,
    as_key,
    protective_rng,
    pseudonyms,
    read_key,
)


def _ids(n: int = 40) -> pd.Series:
    return pd.Series([f"P{i:03d}" for i in range(n)], name="id")


def test_pseudonyms_are_the_hmac_of_the_value():
    key = b"k" * MIN_KEY_BYTES
    ids = pd.Series(["P002", "P001", None, "P002"], name="id")
    got = pseudonyms(ids, key)
    want = "ps-" + hmac.new(key, b"P002", hashlib.sha256).hexdigest()[:PSEUDONYM_DIGITS]
    assert got[0] == got[3] == want and got[0] != got[1] and got[2] is None


def test_pseudonyms_do_not_follow_the_sort_order_of_the_values():
    """The old attack: the i-th pseudonym in sorted order belonged to the
    i-th identifier in sorted order. Keyed pseudonyms sort independently of
    their values."""
    ids = _ids()
    ranks = [pd.Series(pseudonyms(ids, as_key(bytes(range(b, b + 32))))).rank().tolist() for b in range(3)]
    assert all(r != list(map(float, range(1, len(ids) + 1))) for r in ranks)
    assert ranks[0] != ranks[1]


def test_the_default_pseudonyms_change_from_run_to_run_even_with_a_seed():
    df = pd.DataFrame({"id": _ids(), "g": ["a", "b"] * 20})
    kw = dict(hierarchies={"g": H.suppression("g", df["g"])}, k=2, identifiers=["id"],
              identifier_action="pseudonym", seed=1)
    first, second = (hieranon.anonymize(df, **kw).data["id"] for _ in range(2))
    assert not set(first) & set(second)
    # and nothing of the old seeded draw: numbers of default_rng(seed) given out in sorted order
    old = {f"ps-{int(x):010x}" for x in np.random.default_rng(1).choice(16 ** 10, size=len(df), replace=False)}
    assert not old & set(first)


@pytest.mark.parametrize("content, fragments", [
    (None, ["does not exist", "secrets.token_hex(32)"]),
    (b"short\n", ["5 bytes", f"at least {MIN_KEY_BYTES}", "secrets.token_hex(32)"]),
])
def test_a_bad_key_file_is_named_with_how_to_make_one(tmp_path, content, fragments):
    path = tmp_path / "pseudonym.key"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(PseudonymKeyError) as exc:
        read_key(path)
    assert str(path) in str(exc.value) and "\n" not in str(exc.value)
    for f in fragments:
        assert f in str(exc.value)


def test_a_key_file_gives_the_same_pseudonyms_as_its_bytes(tmp_path):
    path = tmp_path / "pseudonym.key"
    path.write_text("0123456789abcdef" * 4 + "\n")  # the documented token_hex(32) form, with its line end
    assert read_key(path) == ("0123456789abcdef" * 4).encode()
    assert pseudonyms(_ids(), as_key(str(path))).equals(pseudonyms(_ids(), ("0123456789abcdef" * 4).encode()))
    with pytest.raises(PseudonymKeyError, match="at least 32"):
        as_key(b"too short")


def test_protective_randomness_is_fresh_without_a_seed():
    n = 200
    fresh = [protective_rng(None).permutation(n) for _ in range(2)]
    assert not np.array_equal(fresh[0], fresh[1])
    assert not any(np.array_equal(f, np.random.default_rng(0).permutation(n)) for f in fresh)
    assert np.array_equal(protective_rng(7).permutation(n), protective_rng(7).permutation(n))


def test_a_key_given_as_text_that_is_no_file_is_not_repeated_in_the_message():
    secret = "0123456789abcdef" * 4  # the secret itself passed where a key file's path is expected
    with pytest.raises(PseudonymKeyError) as exc:
        as_key(secret)
    assert secret not in str(exc.value) and "bytes" in str(exc.value)


@pytest.mark.parametrize("content", ["0" * 64, "a" * 40, "abab" * 10, " " * 40])
def test_a_key_without_randomness_is_refused(tmp_path, content):
    """Long enough but no secret: anyone could try ``000...`` and reverse the pseudonyms."""
    path = tmp_path / "pseudonym.key"
    path.write_text(content + "\n")
    with pytest.raises(PseudonymKeyError, match="distinct characters"):
        read_key(path)
    with pytest.raises(PseudonymKeyError, match="distinct characters"):
        as_key(content.encode())
