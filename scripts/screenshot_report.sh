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
chromium="${CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}"
if [ -z "$chromium" ]; then
    echo "screenshot_report.sh: chromium not found (apt-get install chromium, or set CHROMIUM=...)" >&2
    exit 2
fi
width="${WIDTH:-1280}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

data="$("$python" -c 'from hieranon.datasets import example_path; print(example_path().parent)')"
# a first run compiles and caches numba kernels, so the report's timings are those of a normal run
"$python" -m hieranon anonymize "$data/patients.csv" --config "$data/patients.yaml" -o "$tmp/warm-up.csv" -q
"$python" -m hieranon anonymize "$data/patients.csv" --config "$data/patients.yaml" \
    -o "$tmp/patients-anonymised.csv" --report "$tmp/report.html" -q

# a tall window; the blank space below the page is cropped afterwards
"$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --hide-scrollbars --user-data-dir="$tmp/profile" --screenshot="$tmp/full.png" \
    --window-size="$width,7000" "file://$tmp/report.html" >/dev/null 2>&1

mkdir -p "$(dirname "$out")"
"$python" - "$tmp/full.png" "$out" <<'EOF'
import sys
from PIL import Image

src, dst = sys.argv[1], sys.argv[2]
im = Image.open(src).convert("RGB")
w, h = im.size
bg = im.getpixel((w // 2, h - 1))  # the page background below the content
px = im.load()
bottom = h
while bottom > 1 and all(px[x, bottom - 1] == bg for x in range(0, w, 4)):
    bottom -= 1
im = im.crop((0, 0, w, min(h, bottom + 24)))
im.quantize(colors=128, method=Image.Quantize.MEDIANCUT).save(dst, optimize=True)
print(f"{dst}: {im.size[0]}x{im.size[1]}")
EOF
