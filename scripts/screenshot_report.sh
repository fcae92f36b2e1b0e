#!/usr/bin/env bash
# Regenerate docs/report.png: anonymise the shipped example with an HTML
# report, render the report in headless Chromium, crop the empty space below
# the page and palette-compress the PNG (it must stay under 500 KB).
#
# Usage, from anywhere:  scripts/screenshot_report.sh [OUT.png]   (default docs/report.png)
# Needs Chromium (Debian: apt-get install chromium) and the project's venv
# (or PYTHON=/path/to/python with hieranon installed).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
out="$(realpath -m "${1:-$repo/docs/report.png}")"
python="${PYTHON:-$repo/.venv/bin/python}"
source "$repo/scripts/screenshot_lib.sh"
chromium="$(find_chromium screenshot_report.sh)"
width="${WIDTH:-1280}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

data="$("$python" -c 'from hieranon.io.datasets import example_path; print(example_path().parent)')"
# a first run compiles and caches numba kernels, so the report's timings are those of a normal run
"$python" -m hieranon anonymize "$data/patients.csv" --config "$data/patients.yaml" -o "$tmp/warm-up.csv" -q
"$python" -m hieranon anonymize "$data/patients.csv" --config "$data/patients.yaml" \
    -o "$tmp/patients-anonymised.csv" --report "$tmp/report.html" -q

shoot "$python" "$chromium" "$tmp/report.html" "$out" "$width" 7000 "$tmp"
