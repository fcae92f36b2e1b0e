"""Keyed pseudonyms of direct identifiers, and the randomness that protects
the people in a release.

A pseudonym is the HMAC-SHA256 (Bellare, Canetti & Krawczyk 1996; RFC 2104)
of the identifier's text under a secret key: the same value gets the same
pseudonym within a release (and across releases made with the same key), and
without the key nothing links a pseudonym back to its value -- neither the
value itself, nor its rank among the identifiers, nor the seed of the run.
The key is fresh random bytes from the operating system for every run unless
the user gives a key file (to re-link releases made with it); a key file
holds at least :data:`MIN_KEY_BYTES` bytes, e.g. made with::

    python -c "import secrets; print(secrets.token_hex(32))" > pseudonym.key

:func:`protective_rng` is the random generator of the other choices that
protect people (the row order of a shuffled release): fresh entropy from the
operating system unless a seed is given. The algorithms' own random choices
are seeded separately (:attr:`hieranon.job.spec.AnonymizationSpec.algorithm_seed`)
so that their outputs stay reproducible.
"""

from __future__ import annotations

import hmac
import logging
import os
import secrets
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.files import FileReadError, check_regular_file, os_error_message

log = logging.getLogger(__name__)

#: The shortest key accepted (bytes): 256 bits, the HMAC-SHA256 block's worth of secret.
MIN_KEY_BYTES = 32
#: The largest key file read (bytes): a key, not a data file.
MAX_KEY_BYTES = 64 * 1024
#: Hexadecimal digits of the digest a pseudonym keeps (80 bits).
PSEUDONYM_DIGITS = 20
#: How to make a key file, quoted in messages and the README.
MAKE_KEY = "python -c \"import secrets; print(secrets.token_hex(32))\" > FILE"


class PseudonymKeyError(FileReadError):
    """A pseudonym key (file) cannot be used; the message names it and says
    how to make one."""


def new_key() -> bytes:
    """A fresh random key from the operating system's entropy."""
    return secrets.token_bytes(MIN_KEY_BYTES)


def read_key(path, what: str = "pseudonym key file") -> bytes:
    """The key held in the file ``path`` (its bytes, less a final line end):
    :class:`PseudonymKeyError` naming the file when it is missing, not a
    regular file, unreadable or shorter than :data:`MIN_KEY_BYTES` bytes."""
    path = Path(path)
    try:
        check_regular_file(path, what, PseudonymKeyError, MAX_KEY_BYTES)
    except PseudonymKeyError as exc:
        raise PseudonymKeyError(f"{exc} (make one with: {MAKE_KEY})") from None
    try:
        with open(path, "rb") as fh:
            key = fh.read(MAX_KEY_BYTES + 1).rstrip(b"\r\n")
    except OSError as exc:
        raise PseudonymKeyError(f"cannot read {what} {path}: {os_error_message(exc)}") from None
    return check_key(key, f"{what} {path}")


#: Fewest distinct byte values a key holds: a key of random bytes, or their hexadecimal digits, holds far more;
#: a run of one character (``000...``) or a word repeated is no secret.
MIN_DISTINCT_KEY_BYTES = 8


def check_key(key: bytes, what: str) -> bytes:
    """``key`` if it is long enough and does not look like a placeholder;
    else :class:`PseudonymKeyError` naming ``what`` and how to make a key."""
    if len(key) < MIN_KEY_BYTES:
        raise PseudonymKeyError(f"{what} holds {len(key)} bytes; a key needs at least {MIN_KEY_BYTES} random "
                                f"bytes (make one with: {MAKE_KEY})")
    if len(set(key)) < MIN_DISTINCT_KEY_BYTES:
        raise PseudonymKeyError(f"{what} holds only {len(set(key))} distinct characters: it is no random key, and "
                                f"anyone could try it (make one with: {MAKE_KEY})")
    return bytes(key)


def as_key(key) -> bytes | None:
    """``key`` as bytes: None stays None (a fresh key per run), bytes are
    the key itself, a path (str or Path) is read with :func:`read_key`."""
    if key is None:
        return None
    if isinstance(key, (bytes, bytearray)):
        return check_key(key, "pseudonym_key")
    if isinstance(key, (str, os.PathLike)):
        if not os.path.lexists(key):  # not quoted: a str may be the secret itself, passed by mistake
            raise PseudonymKeyError("pseudonym_key: no file at the path given (the value is not repeated here, "
                                    "in case it is the key itself); pass the key as bytes or a key file's path "
                                    f"(make one with: {MAKE_KEY})")
        return read_key(key)
    raise PseudonymKeyError(f"pseudonym_key: expected bytes or a key file's path, got {type(key).__name__}")


def pseudonyms(column: pd.Series, key: bytes) -> pd.Series:
    """``ps-`` and the first :data:`PSEUDONYM_DIGITS` hexadecimal digits of
    the HMAC-SHA256 of each cell's text under ``key`` (the same value, the
    same pseudonym; missing cells stay missing). Two values whose pseudonyms
    would collide (about one chance in 2**80 per pair) are refused rather
    than merged."""
    codes, uniques = pd.factorize(column)
    digest, half = hmac.digest, PSEUDONYM_DIGITS // 2  # the one-shot HMAC (OpenSSL)
    names = np.array(["ps-" + digest(key, str(v).encode("utf-8"), "sha256")[:half].hex() for v in uniques],
                     dtype=object)
    if len(set(names)) != len(names):
        raise ValueError(f"two values of column {column.name!r} got the same pseudonym; run again (a fresh key)")
    out = np.full(len(codes), None, dtype=object)
    out[codes >= 0] = names[codes[codes >= 0]]
    return pd.Series(out, index=column.index, dtype=object)


def is_pseudonym(column: pd.Series) -> np.ndarray:
    """Per cell: is it a pseudonym as :func:`pseudonyms` writes it (missing
    cells are)?"""
    text = column.astype("string")
    return (text.str.fullmatch(rf"ps-[0-9a-f]{{{PSEUDONYM_DIGITS}}}").fillna(True)).to_numpy(dtype=bool)


def protective_rng(seed: int | None) -> np.random.Generator:
    """The generator of a random choice that protects people: seeded when the
    user gave ``seed`` (to repeat a release), else fresh entropy from the
    operating system -- never a fixed default anyone could replay."""
    return np.random.default_rng(seed)
