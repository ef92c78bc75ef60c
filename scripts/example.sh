#!/usr/bin/env bash
# The main job on a bundled example: set up, build once (release), and score a
# rendered frame of a shuffleboard end: locate the board, detect and measure the
# weights, call them and score the Knock Off round.
set -euo pipefail
cd "$(dirname "$0")/.."
# A one-off build keeps no incremental cache (~600 MB of disk less; a CI machine once ran out of
# space linking). Set CARGO_INCREMENTAL=1 to keep it while developing.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
bash scripts/setup.sh
cargo build --release --locked
bc=target/release/boardcall
fx=fixtures/scenes/05-shuffleboard-22ft-line_edge
mkdir -p target/example
echo "== scoring $fx/image.jpg (annotated copy: target/example/annotated.png)"
$bc score "$fx/image.jpg" --board shuffleboard-22ft --game knock-off --camera "$fx/camera.yaml" \
    --json --annotate target/example/annotated.png
