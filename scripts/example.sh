#!/usr/bin/env bash
# The main job on a bundled example: set up, build once (release), and run it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo build --release --locked
bc=target/release/boardcall
echo "== built-in boards"; $bc boards
echo "== a weight 1 mm clear of the 3-line"; $bc call --board shuffleboard-22ft --x 40 --y 122.03
