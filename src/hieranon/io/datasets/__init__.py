"""Data sets: UCI Adult (the papers' benchmark) and a small shipped example.

UCI Adult is **not** shipped with hieranon. :func:`load_adult` reads
``adult.data`` and ``adult.test`` (UCI Machine Learning Repository, CC BY 4.0)
and ARX's standard hierarchies ``hierarchies/adult_hierarchy_<name>.csv``
(from the ARX project, https://github.com/arx-deidentifier/arx, folder
``data/``) from a directory given as an argument, by the environment variable
``HIERANON_ADULT_DIR``, or from the user cache ``~/.cache/hieranon/adult``
(``$XDG_CACHE_HOME/hieranon/adult``). When the data files are in none of these
it downloads ``adult.data`` and ``adult.test`` from UCI into the cache (or
into the directory given as argument), and ARX's hierarchy files from the ARX
repository into its ``hierarchies/`` subfolder when they are missing there
(or pass ``hierarchy_dir``).

:func:`load_example` loads ``patients.csv``, a small made-up table shipped
with the package, with its hierarchies and configuration (``patients.yaml``).
"""

from __future__ import annotations

import logging
import os
import tempfile
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import pandas as pd

from ...core.safeyaml import load_yaml
from ...core.tree import Hierarchy
from ...hierarchies.readers import from_arx_csv, from_file

__all__ = [
    "ADULT_COLUMNS", "ADULT_QI_ORDER", "ADULT_URL", "ADULT_ENV", "AdultData", "AdultDataNotFoundError",
    "ExampleData", "adult_cache_dir", "find_adult_dir", "load_adult", "load_adult_hierarchies",
    "example_path", "load_example",
]

log = logging.getLogger(__name__)

#: Environment variable naming the directory that holds the Adult files.
ADULT_ENV = "HIERANON_ADULT_DIR"
#: Where :func:`load_adult` downloads the data files from.
ADULT_URL = "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/"
ADULT_FILES = ("adult.data", "adult.test")
#: Where :func:`load_adult` downloads ARX's ``adult_hierarchy_<name>.csv`` files from.
ARX_HIERARCHY_URL = "https://raw.githubusercontent.com/arx-deidentifier/arx/master/data/"
#: Column names of ``adult.data``/``adult.test``; QI columns use the names of
#: ARX's hierarchy files.
ADULT_COLUMNS = (
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
    "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week",
    "native-country", "salary-class",
)
#: The papers' QI order; "QI size q" means the first q names (Li et al. 2006 uses all nine).
ADULT_QI_ORDER = (
    "age", "workclass", "education", "marital-status", "occupation", "race", "sex",
    "native-country", "salary-class",
)
_ADULT_INT_COLUMNS = ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week")


class AdultDataNotFoundError(FileNotFoundError):
    """The Adult files are not where hieranon looked and could not be downloaded."""


@dataclass
class AdultData:
    """UCI Adult with ARX's hierarchies.

    Attributes
    ----------
    frame : DataFrame
        One row per record (adult.data first, then adult.test), all 15 columns;
        ``age`` and the other numeric columns are integers.
    hierarchies : dict[str, Hierarchy]
        ARX's hierarchy of each QI (empty when loaded with ``hierarchies=False``).
    quasi_identifiers : list[str]
        The papers' QI order (:data:`ADULT_QI_ORDER`).
    path : Path
        The directory the data was read from.
    """

    frame: pd.DataFrame
    hierarchies: dict[str, Hierarchy]
    quasi_identifiers: list[str] = field(default_factory=lambda: list(ADULT_QI_ORDER))
    path: Path | None = None

    def qis(self, q: int | None = None) -> list[str]:
        """The first ``q`` quasi-identifiers of the papers' order (all when None)."""
        if q is None:
            return list(self.quasi_identifiers)
        if not 1 <= q <= len(self.quasi_identifiers):
            raise ValueError(f"QI size must be between 1 and {len(self.quasi_identifiers)}, got {q}")
        return list(self.quasi_identifiers[:q])

    def hierarchies_for(self, q: int | None = None) -> dict[str, Hierarchy]:
        """The hierarchies of the first ``q`` QIs."""
        return {name: self.hierarchies[name] for name in self.qis(q)}


# ------------------------------------------------------------------ locating
def adult_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/hieranon/adult``, default ``~/.cache/hieranon/adult``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "hieranon" / "adult"


def _has_files(d: Path) -> bool:
    return all((d / f).is_file() for f in ADULT_FILES)


def _candidates(path) -> list[Path]:
    if path is not None:
        return [Path(path).expanduser()]
    out = []
    env = os.environ.get(ADULT_ENV)
    if env:
        out.append(Path(env).expanduser())
    out.append(adult_cache_dir())
    return out


def _not_found(searched: Sequence[Path], reason: str = "") -> AdultDataNotFoundError:
    where = ", ".join(str(p) for p in searched)
    return AdultDataNotFoundError(
        f"UCI Adult data files {' and '.join(ADULT_FILES)} not found (looked in: {where})"
        f"{'; ' + reason if reason else ''}. Download them from {ADULT_URL} (with ARX's hierarchies "
        "adult_hierarchy_<name>.csv from https://github.com/arx-deidentifier/arx/tree/master/data "
        f"in a 'hierarchies' subfolder) into {adult_cache_dir()}, or put them in any directory and set "
        f"{ADULT_ENV}=<directory> or pass the directory to load_adult()."
    )


def _download(target: Path, timeout: float = 60.0, base_url: str = ADULT_URL,
              names: Sequence[str] = ADULT_FILES) -> None:
    """Fetch the missing files ``names`` from ``base_url`` into ``target``
    (each to a temp file, renamed when complete)."""
    target.mkdir(parents=True, exist_ok=True)
    for name in names:
        dest = target / name
        if dest.is_file():
            continue
        url = base_url + name
        log.info("downloading %s to %s", url, dest)
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".part", dir=target)
        try:
            with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=timeout) as resp:
                while chunk := resp.read(1 << 16):
                    out.write(chunk)
            os.replace(tmp, dest)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def find_adult_dir(path=None, *, download: bool = True) -> Path:
    """The directory holding ``adult.data`` and ``adult.test``.

    Looks in ``path`` when given (only there), else in ``$HIERANON_ADULT_DIR``
    and then the user cache. When the files are not found and ``download`` is
    true, they are downloaded from UCI into ``path`` (if given) or the cache.
    Raises :class:`AdultDataNotFoundError` (a ``FileNotFoundError``) saying
    where to put the files when they are missing and cannot be downloaded.
    """
    searched = _candidates(path)
    for d in searched:
        if _has_files(d):
            return d
    if not download:
        raise _not_found(searched, "downloading is disabled")
    target = searched[0] if path is not None else adult_cache_dir()
    try:
        _download(target)
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        raise _not_found(searched, f"downloading from {ADULT_URL} into {target} failed ({exc})") from exc
    return target


# ------------------------------------------------------------------ reading
def _read_adult_file(path: Path) -> pd.DataFrame:
    # adult.test starts with a "|1x3 Cross validator" line and its labels end with "."
    df = pd.read_csv(
        path, header=None, names=list(ADULT_COLUMNS), sep=",", skipinitialspace=True, comment="|",
        skip_blank_lines=True, dtype=str, keep_default_na=False, engine="c",
    )
    for c in df.columns:
        df[c] = df[c].str.strip()
    df["salary-class"] = df["salary-class"].str.rstrip(".")
    incomplete = df["salary-class"].isna() | (df["salary-class"] == "")
    if incomplete.any():
        i = int(incomplete.to_numpy().nonzero()[0][0])
        raise ValueError(f"{path}: record {i + 1} has fewer than {len(ADULT_COLUMNS)} fields")
    return df


def load_adult_hierarchies(directory, names: Sequence[str] = ADULT_QI_ORDER) -> dict[str, Hierarchy]:
    """ARX's ``adult_hierarchy_<name>.csv`` files of ``directory`` (a folder
    holding them, or an Adult folder with a ``hierarchies`` subfolder)."""
    directory = Path(directory)
    if (directory / "hierarchies").is_dir():
        directory = directory / "hierarchies"
    out = {}
    for name in names:
        f = directory / f"adult_hierarchy_{name}.csv"
        if not f.is_file():
            raise AdultDataNotFoundError(
                f"ARX hierarchy file for attribute {name!r} not found: {f}. Get ARX's Adult hierarchies "
                "(adult_hierarchy_<name>.csv) from https://github.com/arx-deidentifier/arx/tree/master/data "
                f"and put them in {directory}, or pass hierarchies=False"
            )
        out[name] = from_arx_csv(f, name)
    return out


def _download_hierarchies(adult_dir: Path) -> None:
    """Fetch ARX's hierarchy files missing from ``adult_dir/hierarchies``
    (a folder already holding them all is left alone; offline, the error of
    :func:`load_adult_hierarchies` says what to do)."""
    hdir = adult_dir / "hierarchies"
    names = [f"adult_hierarchy_{q}.csv" for q in ADULT_QI_ORDER]
    if all((hdir / n).is_file() for n in names):
        return
    try:
        _download(hdir, base_url=ARX_HIERARCHY_URL, names=names)
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        log.warning("downloading ARX's Adult hierarchies from %s into %s failed (%s)", ARX_HIERARCHY_URL, hdir, exc)


def load_adult(path=None, *, hierarchies: bool = True, drop_missing: bool = True, download: bool = True,
               hierarchy_dir=None) -> AdultData:
    """Load UCI Adult (``adult.data`` + ``adult.test``, 48,842 records).

    Parameters
    ----------
    path : directory, optional
        Where the files are; default ``$HIERANON_ADULT_DIR``, then the user
        cache (see :func:`find_adult_dir`).
    hierarchies : bool
        Also load ARX's hierarchies of the nine QIs from ``<dir>/hierarchies/``
        (or ``hierarchy_dir``).
    drop_missing : bool
        Drop every record with a ``?`` (45,222 records remain -- the papers'
        data set). Otherwise ``?`` cells become missing values (NaN), which
        :func:`hieranon.core.table.encode` rejects unless ``missing='root'``.
    download : bool
        Download the data files from UCI, and ARX's hierarchies from the ARX
        repository, when they are not found.
    """
    d = find_adult_dir(path, download=download)
    frame = pd.concat([_read_adult_file(d / f) for f in ADULT_FILES], ignore_index=True)
    unknown = frame == "?"
    if drop_missing:
        frame = frame.loc[~unknown.any(axis=1)].reset_index(drop=True)
    else:
        frame = frame.mask(unknown)
    for c in _ADULT_INT_COLUMNS:
        frame[c] = pd.to_numeric(frame[c], errors="raise").astype("int64")
    hs = {}
    if hierarchies:
        if hierarchy_dir is None and download:
            _download_hierarchies(d)
        hs = load_adult_hierarchies(hierarchy_dir if hierarchy_dir is not None else d)
    return AdultData(frame=frame, hierarchies=hs, quasi_identifiers=list(ADULT_QI_ORDER), path=d)


# ------------------------------------------------------------------ example
@dataclass
class ExampleData:
    """The shipped example table with its configuration.

    Attributes
    ----------
    frame : DataFrame
        The table (``age`` integer, everything else text).
    hierarchies : dict[str, Hierarchy]
        One per quasi-identifier, loaded from the files the config names.
    quasi_identifiers : list[str]
    k : int
    identifying, sensitive : list[str]
        Direct identifiers (to be removed) and sensitive attributes.
    config : dict
        The parsed YAML configuration.
    path : Path
        The CSV file.
    """

    frame: pd.DataFrame
    hierarchies: dict[str, Hierarchy]
    quasi_identifiers: list[str]
    k: int
    identifying: list[str]
    sensitive: list[str]
    config: dict
    path: Path


#: Column types of patients.csv (postcodes and dates stay text).
_EXAMPLE_DTYPES = {"id": str, "gender": str, "age": "int64", "postcode": str, "date_of_birth": str,
                   "diagnosis": str, "readmitted": str}


def example_path(name: str = "patients.csv") -> Path:
    """Path of a file shipped in ``hieranon/data`` (default the example table;
    ``"patients.yaml"`` is its configuration)."""
    p = Path(str(resources.files("hieranon") / "data" / name))
    if not p.is_file():
        raise FileNotFoundError(f"hieranon ships no data file {name!r} (looked for {p})")
    return p


def _as_list(x) -> list[str]:
    if x is None:
        return []
    if isinstance(x, str):
        return [x]
    return [str(v) for v in x]


def load_example() -> ExampleData:
    """The made-up ``patients.csv`` table, its hierarchies and ``patients.yaml``."""
    cfg_path = example_path("patients.yaml")
    config = load_yaml(cfg_path.read_text(encoding="utf-8"), source=f"shipped file {cfg_path}")
    csv_path = cfg_path.parent / config.get("input", "patients.csv")
    qis = config["quasi_identifiers"]
    frame = pd.read_csv(csv_path, dtype=_EXAMPLE_DTYPES, keep_default_na=False)
    hs = {q: from_file(cfg_path.parent / spec, q) for q, spec in qis.items()}
    return ExampleData(
        frame=frame, hierarchies=hs, quasi_identifiers=list(qis), k=int(config["k"]),
        identifying=_as_list(config.get("identifiers", config.get("identifying"))),
        sensitive=_as_list(config.get("sensitive")),
        config=config, path=csv_path,
    )
