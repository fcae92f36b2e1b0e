"""The pycanon oracle worker: runs inside the oracle environment (not the
suite's), answering measures of pycanon (Sáinz-Pardo Díaz and López García
2022) on tables sent to it.

Protocol, one JSON object per line on stdin and stdout:

* on start the worker writes ``{"ready": true, "pycanon": "<version>",
  "pandas": "<version>"}``;
* a request is ``{"columns": {name: [cell, ...], ...}, "qi": [name, ...],
  "sa": [name, ...], "measures": ["k", "l", "entropy_l", "recursive_cl",
  "t"]}`` (``sa`` is not needed for ``k``); cells are JSON strings, numbers or
  null, and the columns keep the order given;
* the answer is ``{"ok": {measure: value, ...}}`` (``recursive_cl`` as
  ``[c, l]``) or ``{"error": "<one line>"}``; end of input ends the worker.

It imports nothing from hieranon: it sees only the released table.
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version

import pandas as pd
from pycanon import anonymity

MEASURES = {
    "k": lambda df, qi, sa: anonymity.k_anonymity(df, qi),
    "l": lambda df, qi, sa: anonymity.l_diversity(df, qi, sa),
    "entropy_l": lambda df, qi, sa: anonymity.entropy_l_diversity(df, qi, sa),
    "recursive_cl": lambda df, qi, sa: anonymity.recursive_c_l_diversity(df, qi, sa),
    "t": lambda df, qi, sa: anonymity.t_closeness(df, qi, sa),
}


def plain(value):
    """NumPy scalars (what pycanon returns) as Python numbers for JSON."""
    return value.item()


def answer(request: dict) -> dict:
    """The measures one request asks for."""
    df = pd.DataFrame(request["columns"])
    qi, sa = request["qi"], request.get("sa", [])
    unknown = [m for m in request["measures"] if m not in MEASURES]
    if unknown:
        return {"error": f"unknown measure(s) {unknown}; known: {sorted(MEASURES)}"}
    return {"ok": {m: MEASURES[m](df, qi, sa) for m in request["measures"]}}


def main() -> None:
    print(json.dumps({"ready": True, "pycanon": version("pycanon"), "pandas": pd.__version__}), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            reply = answer(json.loads(line))
        except Exception as exc:  # the client raises it in the test that asked
            reply = {"error": f"{type(exc).__name__}: {exc}".replace("\n", " ")}
        print(json.dumps(reply, default=plain), flush=True)


if __name__ == "__main__":
    main()
