#!/usr/bin/env bash
# Review pictures for the close calls of every rendered fixture (issue 7):
# `boardcall review --all-close` on each fixture's image, camera and board,
# the board located in the frame as in real use. One PNG and one JSON record
# per fixture that has a close call, in OUT (default target/review).
#
#   scripts/review-fixtures.sh [FIXTURES_DIR] [OUT]
#
# Exit status: 0 when every fixture was reviewed (with or without close calls) or
# refused (the board not located: exit 4, printed); 1 when any review failed.
set -u
cd "$(dirname "$0")/.."
FIXTURES=${1:-fixtures/scenes}
OUT=${2:-target/review}
BIN=target/release/boardcall
[ -x "$BIN" ] || cargo build --release
mkdir -p "$OUT"
failed=0
for dir in "$FIXTURES"/*/; do
    name=$(basename "$dir")
    [ -f "$dir/truth.json" ] || continue
    board=$(sed -n 's/^  "board": "\(.*\)",$/\1/p' "$dir/truth.json")
    image=$(sed -n 's/^  "image": "\(.*\)",$/\1/p' "$dir/truth.json")
    out=$("$BIN" review "$dir/$image" --board "$board" --camera "$dir/camera.yaml" --all-close \
            -o "$OUT/$name.png" --record "$OUT/$name.json" 2>&1)
    case $? in
        0) [ -n "$out" ] && printf '%s\n' "$out" | sed "s|^|$name: |" ;;
        # Exit 4: the board was not located in the frame; no calls, so nothing to review.
        4) echo "$name: refused: $out" ;;
        *) echo "$name: FAILED: $out"; failed=1 ;;
    esac
done
echo "pictures: $(ls "$OUT"/*.png 2>/dev/null | wc -l) in $OUT"
exit $failed
