#!/usr/bin/env bash
# Regenerate docs/report-utility.png: the report's "Utility for analysis" section
# on UCI Adult (45,222 records, the papers' 8 QIs, ARX's hierarchies, k = 10,
# the default method, target salary-class), rendered by headless Chromium.
#
# The report is made by the CLI (anonymize, then report --utility --target);
# for the picture, a copy of the page hides every other section with one CSS
# rule, so the section is shown exactly as the browser lays it out at the
# report's width. The blank space below is cropped and the PNG palette-compressed.
#
# Usage:  HIERANON_ADULT_DIR=... scripts/screenshot_utility.sh [OUT.png]   (default docs/report-utility.png)
# Needs Chromium (Debian: apt-get install chromium), the project's venv (or
# PYTHON=...) and the Adult folder (adult.data, adult.test, hierarchies/).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
out="$(realpath -m "${1:-$repo/docs/report-utility.png}")"
python="${PYTHON:-$repo/.venv/bin/python}"
source "$repo/scripts/screenshot_lib.sh"
chromium="$(find_chromium screenshot_utility.sh)"
adult="${HIERANON_ADULT_DIR:?set HIERANON_ADULT_DIR to the folder holding adult.data and hierarchies/}"
width="${WIDTH:-1280}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

"$python" -c "
from hieranon.io.datasets import load_adult
load_adult('$adult', download=False, hierarchies=False).frame.to_csv('$tmp/adult.csv', index=False)"
qis=()
for q in age workclass education marital-status occupation race sex native-country; do
    qis+=(--qi "$q=$adult/hierarchies/adult_hierarchy_$q.csv")
done
"$python" -m hieranon anonymize "$tmp/adult.csv" -o "$tmp/adult-k10.csv" "${qis[@]}" -k 10 -q
"$python" -m hieranon report "$tmp/adult.csv" "$tmp/adult-k10.csv" "${qis[@]}" -k 10 --method kaca+ --utility \
    --target salary-class -o "$tmp/report.html" -q

# only the header and the utility section
sed 's#</style>#nav,section:not(\#utility),footer{display:none}</style>#' "$tmp/report.html" > "$tmp/utility.html"
shoot "$python" "$chromium" "$tmp/utility.html" "$out" "$width" 4000 "$tmp"
