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
chromium="${CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}"
if [ -z "$chromium" ]; then
    echo "screenshot_utility.sh: chromium not found (apt-get install chromium, or set CHROMIUM=...)" >&2
    exit 2
fi
adult="${HIERANON_ADULT_DIR:?set HIERANON_ADULT_DIR to the folder holding adult.data and hierarchies/}"
width="${WIDTH:-1280}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

"$python" -c "
from hieranon.datasets import load_adult
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
"$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --hide-scrollbars --user-data-dir="$tmp/profile" --screenshot="$tmp/full.png" \
    --window-size="$width,4000" "file://$tmp/utility.html" >/dev/null 2>&1

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
# an octree palette without dithering keeps the colour bars smooth (a median-cut one bands them)
im.quantize(colors=256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE).save(dst, optimize=True)
print(f"{dst}: {im.size[0]}x{im.size[1]}")
EOF
