#!/usr/bin/env bash
# The package as users get it: a wheel (as `pip install .` builds it) and an sdist;
# each holds every file of src/hieranon/data, installs alone in a clean venv,
# runs the README's quick start on the example data it ships, and
# `hieranon --version` equals the installed metadata's version. The wheel
# holds the kernels compiled when it was built (the build fails if they
# cannot be), and a run of the installed wheel compiles nothing.
# Usage: .ci/check_dist.sh PYTHON_WITH_BUILD (run from the checkout).
set -euo pipefail
py="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# the sdist with `python -m build`; the wheel the way `pip install .` builds it (pip's isolated build
# environment, which reaches its packages through PYTHONPATH: the kernels are compiled in there)
"$py" -m build --sdist --outdir "$work/dist" . >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }
HIERANON_PREBUILT_KERNELS=require "$py" -m pip wheel -q --no-deps --disable-pip-version-check -w "$work/dist" . \
    >>"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }
wheel=("$work"/dist/*.whl) sdist=("$work"/dist/*.tar.gz)
[ -f "${wheel[0]}" ] && [ -f "${sdist[0]}" ] || { echo "check_dist: build made no wheel or no sdist" >&2; exit 1; }
# every shipped data file is in the wheel and in the sdist
"$py" - "${wheel[0]}" "${sdist[0]}" <<'PY'
import subprocess, sys, tarfile, zipfile
want = {p.removeprefix("src/") for p in subprocess.run(["git", "ls-files", "src/hieranon/data"], check=True,
                                                        capture_output=True, text=True).stdout.split()}
in_wheel = set(zipfile.ZipFile(sys.argv[1]).namelist())
in_sdist = {n.split("/", 1)[1].removeprefix("src/") for n in tarfile.open(sys.argv[2]).getnames() if "/" in n}
for kind, names in (("wheel", in_wheel), ("sdist", in_sdist)):
    missing = sorted(want - names)
    if missing:
        sys.exit(f"check_dist: the {kind} lacks {', '.join(missing)} (add them to package-data in pyproject.toml)")
PY
for dist in "${wheel[0]}" "${sdist[0]}"; do
    venv="$work/venv-$(basename "$dist")"
    # the sdist's own wheel build would compile the kernels again: the wheel above was built from it already
    python3 -m venv "$venv" && HIERANON_PREBUILT_KERNELS=0 "$venv/bin/pip" install -q --disable-pip-version-check "$dist"
    (
        cd "$work"  # not the checkout: only the installed package is importable
        data="$("$venv/bin/python" -c 'from importlib.resources import files; print(files("hieranon") / "data")')"
        "$venv/bin/hieranon" anonymize "$data/patients.csv" --config "$data/patients.yaml" -o out.csv --force -q
        meta="$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("hieranon"))')"
        shown="$("$venv/bin/hieranon" --version)"
        [ "$shown" = "hieranon $meta" ] || { echo "check_dist: '$shown' but the metadata says $meta" >&2; exit 1; }
        "$venv/bin/python" -c 'from hieranon.io.datasets.synthetic import synthetic_adult; synthetic_adult(50)'
        if [ "$dist" = "${wheel[0]}" ]; then
            "$venv/bin/python" - <<'PY'
from numba.core import event

compiled = []
event.register("numba:compile", type("Count", (event.Listener,), {
    "on_start": lambda self, ev: None, "on_end": lambda self, ev: compiled.append(ev)})())
import hieranon
from hieranon.core import jit
from hieranon.io.datasets.synthetic import synthetic_adult, synthetic_hierarchies

assert jit.PREBUILT, f"the wheel's prebuilt kernels were not used (cache: {jit.CACHE_DIR})"
table, hierarchies = synthetic_adult(3000, seed=7), synthetic_hierarchies()
qis = [c for c in hierarchies if c != "salary-class"]
hieranon.anonymize(table, qis, [hierarchies[q] for q in qis], 10, insensitive=["salary-class"])
assert not compiled, f"a run of the installed wheel compiled {len(compiled)} kernels"
print("check_dist: the wheel's prebuilt kernels ran kaca+ on 3,000 rows without compiling")
PY
        fi
        echo "check_dist: $(basename "$dist") installs, runs the quick start, version $meta"
    )
done
