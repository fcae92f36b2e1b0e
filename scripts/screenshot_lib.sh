# Shared by the screenshot scripts (sourced, not run): find Chromium, render an
# HTML page headless at a given width, crop the blank space below the page and
# palette-compress the PNG.

# find_chromium NAME: the Chromium binary (or $CHROMIUM); exit 2 naming NAME when none
find_chromium() {
    local found="${CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}"
    if [ -z "$found" ]; then
        echo "$1: chromium not found (apt-get install chromium, or set CHROMIUM=...)" >&2
        exit 2
    fi
    echo "$found"
}

# shoot PYTHON CHROMIUM HTML OUT WIDTH HEIGHT TMPDIR: render HTML in a WIDTHxHEIGHT window, write OUT
shoot() {
    local python="$1" chromium="$2" html="$3" out="$4" width="$5" height="$6" tmp="$7"
    # a tall window; the blank space below the page is cropped afterwards
    "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --hide-scrollbars --user-data-dir="$tmp/profile" --screenshot="$tmp/full.png" \
        --window-size="$width,$height" "file://$html" >/dev/null 2>&1
    mkdir -p "$(dirname "$out")"
    "$python" - "$tmp/full.png" "$out" <<'PY'
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
# an octree palette without dithering keeps colour bars smooth (a median-cut one bands them)
im.quantize(colors=256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE).save(dst, optimize=True)
print(f"{dst}: {im.size[0]}x{im.size[1]}")
PY
}
