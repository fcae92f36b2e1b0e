"""Data sets: UCI Adult (from a path, the environment, the cache, a download)
and the shipped example."""

from __future__ import annotations

import io
import urllib.error
from datetime import date

import numpy as np
import pandas as pd
import pytest

from hieranon.core.table import encode, group
from hieranon.hierarchies import readers as H
from hieranon.io import datasets
from hieranon.io.datasets import (
    ADULT_ENV,
    ADULT_QI_ORDER,
    AdultDataNotFoundError,
    example_path,
    load_adult,
    load_example,
)

HEIGHTS = {"age": 5, "workclass": 3, "education": 4, "marital-status": 3, "occupation": 3,
           "race": 2, "sex": 2, "native-country": 3, "salary-class": 2}

# Made-up records in UCI's layout (not rows of the real files); the test file
# starts with UCI's comment line and its labels end with ".".
FAKE_DATA = """\
25, Private, 100000, HS-grad, 9, Never-married, Sales, Own-child, White, Female, 0, 0, 40, United-States, <=50K
61, Local-gov, 200000, Masters, 14, Widowed, Prof-specialty, Unmarried, Black, Female, 0, 0, 35, Jamaica, >50K
33, ?, 150000, Some-college, 10, Divorced, ?, Unmarried, White, Male, 0, 0, 20, United-States, <=50K

"""
FAKE_TEST = """\
|1x3 Cross validator
47, Self-emp-inc, 120000, Doctorate, 16, Separated, Sales, Not-in-family, Asian-Pac-Islander, Male, 0, 0, 60, ?, >50K.
19, Private, 90000, 11th, 7, Never-married, Handlers-cleaners, Own-child, White, Male, 0, 0, 25, Mexico, <=50K.
"""


@pytest.fixture(scope="module")
def adult(adult_path):
    return load_adult(adult_path)


@pytest.fixture
def no_env(monkeypatch, tmp_path):
    """No HIERANON_ADULT_DIR and an empty user cache."""
    monkeypatch.delenv(ADULT_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "hieranon" / "adult"


def write_fake(d):
    d.mkdir(parents=True, exist_ok=True)
    (d / "adult.data").write_text(FAKE_DATA)
    (d / "adult.test").write_text(FAKE_TEST)
    return d


# ------------------------------------------------------------------ Adult
def test_adult_records_and_columns(adult, adult_path):
    df = adult.frame
    assert len(df) == 45222
    assert list(df.columns) == list(datasets.ADULT_COLUMNS)
    assert df["age"].dtype.kind == "i" and df["hours-per-week"].dtype.kind == "i"
    assert df["age"].between(17, 90).all()
    assert not (df == "?").any().any() and not df.isna().any().any()
    assert set(df["salary-class"]) == {"<=50K", ">50K"}  # the test file's trailing "." is gone
    assert not df["workclass"].str.startswith(" ").any()
    assert list(df.index) == list(range(45222))
    assert adult.path == adult_path


def test_adult_all_records(adult_path):
    full = load_adult(adult_path, drop_missing=False, hierarchies=False)
    df = full.frame
    assert len(df) == 48842
    assert full.hierarchies == {}
    # "?" cells are missing values; exactly the records with one are dropped by default
    assert not (df == "?").any().any()
    has_missing = df.isna().any(axis=1)
    assert int((~has_missing).sum()) == 45222
    assert set(df.columns[df.isna().any()]) == {"workclass", "occupation", "native-country"}
    # adult.data comes first, then adult.test, each in file order (checked by a plain split)
    plain = []
    for name in ("adult.data", "adult.test"):
        for line in (adult_path / name).read_text().splitlines():
            fields = line.split(", ")
            if len(fields) == 15:
                plain.append((int(fields[0]), int(fields[2]), fields[14].rstrip(".")))
    assert len(plain) == 48842
    assert list(zip(df["age"], df["fnlwgt"], df["salary-class"])) == plain


def test_adult_hierarchies(adult):
    assert list(adult.quasi_identifiers) == list(ADULT_QI_ORDER)
    assert set(adult.hierarchies) == set(HEIGHTS)
    for name, height in HEIGHTS.items():
        h = adult.hierarchies[name]
        assert h.name == name
        assert h.height == height, name
        assert h.is_balanced
    # every QI value is a leaf of its hierarchy
    for q in ADULT_QI_ORDER:
        values = set(adult.frame[q].astype(str))
        assert values <= set(adult.hierarchies[q].leaf_index), q
    t = encode(adult.frame, adult.qis(), adult.hierarchies)
    assert t.codes.shape == (45222, 9) and (t.codes > 0).all()
    # ARX's age bins are off by one at the edges (SPEC 6): 20 sits in 15-19
    age = adult.hierarchies["age"]
    assert age.labels[age.parent[age.leaf_index["20"]]] == "15-19"


def test_adult_qis(adult):
    assert adult.qis(3) == ["age", "workclass", "education"]
    assert adult.qis(9) == list(ADULT_QI_ORDER) == adult.qis()
    assert list(adult.hierarchies_for(2)) == ["age", "workclass"]
    for bad in (0, 10):
        with pytest.raises(ValueError, match="between 1 and 9"):
            adult.qis(bad)
    assert ADULT_QI_ORDER[:8] == ("age", "workclass", "education", "marital-status", "occupation", "race",
                                  "sex", "native-country")


def test_adult_env_var_honoured(adult_path, monkeypatch, no_env):
    monkeypatch.setenv(ADULT_ENV, str(adult_path))
    data = load_adult(hierarchies=False, download=False)
    assert data.path == adult_path and len(data.frame) == 45222
    # an explicit directory wins over the environment variable
    other = write_fake(no_env.parent / "elsewhere")
    assert len(load_adult(other, hierarchies=False, download=False).frame) == 3


def test_adult_env_var_wrong_gives_clear_error(tmp_path, monkeypatch, no_env):
    monkeypatch.setenv(ADULT_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(AdultDataNotFoundError) as info:
        load_adult(download=False)
    msg = str(info.value)
    assert str(tmp_path / "nowhere") in msg and str(no_env) in msg
    assert ADULT_ENV in msg and "adult.data" in msg and "downloading is disabled" in msg


def test_adult_missing_directory_no_download(tmp_path, no_env):
    missing = tmp_path / "does-not-exist"
    with pytest.raises(FileNotFoundError) as info:
        load_adult(missing, download=False)
    assert isinstance(info.value, AdultDataNotFoundError)
    msg = str(info.value)
    assert str(missing) in msg and ADULT_ENV in msg and datasets.ADULT_URL in msg
    assert not missing.exists()  # nothing created


def test_adult_cache_dir_honours_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert datasets.adult_cache_dir() == tmp_path / "xdg" / "hieranon" / "adult"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert datasets.adult_cache_dir() == tmp_path / "home" / ".cache" / "hieranon" / "adult"


def test_adult_read_from_cache_and_parsing(no_env):
    write_fake(no_env)
    data = load_adult(hierarchies=False, download=False)
    assert data.path == no_env
    df = data.frame
    # 5 records, the 2 with a "?" dropped; UCI's comment line is skipped
    assert df["age"].tolist() == [25, 61, 19]
    assert df["salary-class"].tolist() == ["<=50K", ">50K", "<=50K"]
    assert df["native-country"].tolist() == ["United-States", "Jamaica", "Mexico"]
    assert df["age"].dtype.kind == "i" and df["fnlwgt"].tolist() == [100000, 200000, 90000]
    full = load_adult(hierarchies=False, download=False, drop_missing=False).frame
    assert len(full) == 5
    assert full["workclass"].isna().tolist() == [False, False, True, False, False]
    assert full["native-country"].isna().tolist() == [False, False, False, True, False]
    assert full["salary-class"].tolist()[3] == ">50K"


def test_adult_hierarchies_missing_or_elsewhere(adult_path, no_env):
    write_fake(no_env)
    with pytest.raises(AdultDataNotFoundError, match=r"'age'.*adult_hierarchy_age\.csv"):
        load_adult(download=False)
    data = load_adult(download=False, hierarchy_dir=adult_path / "hierarchies")
    assert {n: h.height for n, h in data.hierarchies.items()} == HEIGHTS
    t = encode(data.frame, data.qis(), data.hierarchies)
    assert t.n_rows == 3


class FakeResponse(io.BytesIO):
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def test_adult_download_into_cache(monkeypatch, no_env):
    fetched = []

    def fake_urlopen(url, timeout=None):
        fetched.append(url)
        return FakeResponse((FAKE_DATA if url.endswith("adult.data") else FAKE_TEST).encode())

    monkeypatch.setattr(datasets.urllib.request, "urlopen", fake_urlopen)
    data = load_adult(hierarchies=False)
    assert fetched == [datasets.ADULT_URL + "adult.data", datasets.ADULT_URL + "adult.test"]
    assert data.path == no_env and len(data.frame) == 3
    assert sorted(p.name for p in no_env.iterdir()) == ["adult.data", "adult.test"]  # no temp files left
    # a second load finds the cached files and does not download again
    load_adult(hierarchies=False)
    assert len(fetched) == 2


def test_adult_download_into_given_directory(monkeypatch, tmp_path, no_env):
    monkeypatch.setattr(datasets.urllib.request, "urlopen",
                        lambda url, timeout=None: FakeResponse(FAKE_TEST.encode()))
    target = tmp_path / "mine"
    data = load_adult(target, hierarchies=False)
    assert data.path == target and (target / "adult.data").is_file()
    assert not no_env.exists()


def test_adult_offline_gives_clear_error(monkeypatch, no_env):
    def offline(url, timeout=None):
        raise urllib.error.URLError("no network")

    monkeypatch.setattr(datasets.urllib.request, "urlopen", offline)
    with pytest.raises(AdultDataNotFoundError) as info:
        load_adult()
    msg = str(info.value)
    assert "no network" in msg and ADULT_ENV in msg and str(no_env) in msg
    assert not any(no_env.iterdir())  # no partial file left behind


def test_adult_interrupted_download_leaves_no_partial_file(monkeypatch, no_env):
    class Broken(FakeResponse):
        def read(self, *a):
            raise TimeoutError("timed out")

    monkeypatch.setattr(datasets.urllib.request, "urlopen", lambda url, timeout=None: Broken(b""))
    with pytest.raises(AdultDataNotFoundError, match="timed out"):
        load_adult()
    assert list(no_env.iterdir()) == []


# ------------------------------------------------------------------ example
def test_example_loads_and_hierarchies_cover_it():
    ex = load_example()
    df = ex.frame
    assert 60 <= len(df) <= 120
    assert list(df.columns[:6]) == ["id", "gender", "age", "postcode", "date_of_birth", "diagnosis"]
    assert df["id"].is_unique
    assert df["age"].dtype.kind == "i"
    assert ex.quasi_identifiers == ["gender", "age", "postcode", "date_of_birth"]
    assert ex.k == 3 and ex.identifying == ["id"] and ex.sensitive == ["diagnosis"]
    assert ex.path == example_path() and ex.path.name == "patients.csv"
    assert {q: h.height for q, h in ex.hierarchies.items()} == {"gender": 2, "age": 5, "postcode": 5,
                                                                "date_of_birth": 4}
    for q, h in ex.hierarchies.items():
        assert h.name == q and h.is_balanced
    t = encode(df, ex.quasi_identifiers, ex.hierarchies)  # every value is covered
    assert t.n_rows == len(df)
    assert df["postcode"].str.fullmatch(r"4[346]\d\d").all()
    # realistic: some (gender, age, postcode) combinations are shared, some unique
    sizes = group(t.codes[:, :3]).sizes
    assert (sizes == 1).any() and (sizes >= 2).any()
    full = group(t.codes).sizes
    assert (full == 1).any() and (full >= 2).any()  # twins share every QI


def test_example_dates_match_ages():
    df = load_example().frame
    dob = pd.to_datetime(df["date_of_birth"], format="%d/%m/%Y")
    ref = date(2024, 7, 1)
    age = ref.year - dob.dt.year - ((dob.dt.month > ref.month) | ((dob.dt.month == ref.month) & (dob.dt.day > ref.day)))
    np.testing.assert_array_equal(age.to_numpy(), df["age"].to_numpy())


def test_example_hierarchy_files_built_by_builders():
    ex = load_example()
    df = ex.frame
    expected = {
        "gender": H.suppression("gender", ["female", "male"]),
        "age": H.intervals("age", range(0, 120), [5, 10, 20]),
        "postcode": H.masking("postcode", df["postcode"]),
        "date_of_birth": H.dates("date_of_birth", df["date_of_birth"], "dmy"),
    }

    def groups(h):  # the leaves under every node, level by level (labels aside: the files use older ones)
        below = {}
        for leaf in h.leaves:
            for d in range(1, h.depth[leaf]):
                below.setdefault((d, int(h.ancestors[leaf, d])), set()).add(h.labels[leaf])
        return {(d, frozenset(s)) for (d, _), s in below.items()}

    for q, h in expected.items():
        shipped = H.from_arx_csv(example_path(f"patients_hierarchy_{q}.csv"), q)
        assert set(shipped.leaf_index) == set(h.leaf_index) and groups(shipped) == groups(h), q
    p = ex.hierarchies["postcode"]
    assert [p.labels[a] for a in p.ancestors[p.leaf_index["4351"]]] == ["*", "4***", "43**", "435*", "4351"]


def test_example_path_errors():
    assert example_path("patients.yaml").is_file()
    with pytest.raises(FileNotFoundError, match="nothing.csv"):
        example_path("nothing.csv")


def test_adult_hierarchies_downloaded_next_to_the_data(monkeypatch, adult_path, no_env):
    """With the data but not the hierarchies in the cache, load_adult fetches
    ARX's nine files into its hierarchies/ folder (served here from the real
    files), once; offline it still says where to put them."""
    write_fake(no_env)
    fetched = []

    def fake_urlopen(url, timeout=None):
        fetched.append(url)
        assert url.startswith(datasets.ARX_HIERARCHY_URL)
        return FakeResponse((adult_path / "hierarchies" / url.rsplit("/", 1)[1]).read_bytes())

    monkeypatch.setattr(datasets.urllib.request, "urlopen", fake_urlopen)
    data = load_adult()
    assert len(fetched) == 9
    assert {n: h.height for n, h in data.hierarchies.items()} == HEIGHTS
    assert sorted(p.name for p in (no_env / "hierarchies").iterdir()) == sorted(
        f"adult_hierarchy_{q}.csv" for q in datasets.ADULT_QI_ORDER)  # no temp files left
    load_adult()
    assert len(fetched) == 9  # cached: not fetched again


def test_adult_hierarchies_offline_gives_clear_error(monkeypatch, no_env):
    write_fake(no_env)

    def offline(url, timeout=None):
        raise urllib.error.URLError("no network")

    monkeypatch.setattr(datasets.urllib.request, "urlopen", offline)
    with pytest.raises(AdultDataNotFoundError, match=r"'age'.*adult_hierarchy_age\.csv.*arx-deidentifier"):
        load_adult()
