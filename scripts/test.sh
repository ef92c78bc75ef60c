#!/usr/bin/env bash
# The whole test suite: set up, then every test in the release profile, which
# shares its build with scripts/example.sh (a cold build is long on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
# A one-off build keeps no incremental cache (~600 MB of disk less; a CI machine once ran out of
# space linking). Set CARGO_INCREMENTAL=1 to keep it while developing.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
bash scripts/setup.sh
# The set-up checks themselves, against fake layouts (e.g. clang without libclang-dev).
bash scripts/setup-test.sh
cargo test --release --locked --all-targets
