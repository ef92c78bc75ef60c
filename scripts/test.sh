#!/usr/bin/env bash
# The whole test suite: set up, then every test in the release profile, which
# shares its build with scripts/example.sh (a cold build is long on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The set-up checks themselves, against fake layouts (e.g. clang without libclang-dev).
bash scripts/setup-test.sh
cargo test --release --locked --all-targets
