"""Derive the synthetic-Adult model (marginal and conditional frequencies)
from UCI Adult, for ``hieranon.io.datasets.synthetic``.

Only aggregate frequencies are written (no record), rounded, to
``src/hieranon/data/synthetic_adult_model.json``. Run once:

    HIERANON_ADULT_DIR=../shared/datasets/adult python scripts/make_synthetic_model.py
"""

import json
import os
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from hieranon.io.datasets import synthetic as S  # noqa: E402

COLS = ("age workclass fnlwgt education education-num marital-status occupation relationship race sex "
        "capital-gain capital-loss hours-per-week native-country salary-class").split()


def load(directory: Path) -> pd.DataFrame:
    parts = []
    for name in ("adult.data", "adult.test"):
        parts.append(pd.read_csv(directory / name, header=None, names=COLS, skipinitialspace=True, dtype=str,
                                 comment="|"))
    df = pd.concat(parts).dropna()
    df = df[~(df == "?").any(axis=1)].copy()
    df["salary-class"] = df["salary-class"].str.rstrip(".")
    df["age"] = df["age"].astype(int)
    return df


def freq(series: pd.Series, values) -> list[int]:
    counts = series.value_counts()
    return [int(counts.get(v, 0)) for v in values]


def conditional(df, target, given, values) -> dict:
    out = {}
    for key, part in df.groupby(given):
        key = key if isinstance(key, tuple) else (key,)
        out["|".join(map(str, key))] = freq(part[target], values)
    return out


def main():
    directory = Path(os.environ.get("HIERANON_ADULT_DIR", "../shared/datasets/adult"))
    df = load(directory)
    df["age_band"] = S.age_band(df["age"].to_numpy())
    df["edu_group"] = df["education"].map(S.EDUCATION_GROUP)
    v = S.VALUES
    model = {
        "source": "UCI Adult (45,222 records without '?'), aggregate counts only",
        "age": freq(df["age"], v["age"]),
        "sex": freq(df["sex"], v["sex"]),
        "race": freq(df["race"], v["race"]),
        "marital-status|age_band,sex": conditional(df, "marital-status", ["age_band", "sex"], v["marital-status"]),
        "education|age_band": conditional(df, "education", ["age_band"], v["education"]),
        "occupation|sex,edu_group": conditional(df, "occupation", ["sex", "edu_group"], v["occupation"]),
        "workclass|occupation": conditional(df, "workclass", ["occupation"], v["workclass"]),
        "native-country|race": conditional(df, "native-country", ["race"], v["native-country"]),
        "salary-class|edu_group,sex,age_band": conditional(df, "salary-class", ["edu_group", "sex", "age_band"],
                                                           v["salary-class"]),
    }
    out = Path(__file__).resolve().parents[1] / "src" / "hieranon" / "data" / "synthetic_adult_model.json"
    out.write_text(json.dumps(model, separators=(",", ":")))
    print(f"wrote {out} ({out.stat().st_size} bytes) from {len(df)} records")


if __name__ == "__main__":
    main()
