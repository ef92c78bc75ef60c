#!/usr/bin/env bash
# Installs what building boardcall needs on Debian/Ubuntu, only where missing.
# Safe to run any number of times. Used by scripts/example.sh and scripts/test.sh.
#
# It checks for what the build really uses, not for package names:
#   - an UNVERSIONED libclang.so (or libclang-N.so) in a directory the clang-sys
#     build script searches (or in $LIBCLANG_PATH): the opencv crate's binding
#     generator links it. `clang` alone is not enough: Debian's clang pulls in
#     libclang1-N (libclang.so.1) and libclang-cpp (libclang-cpp.so.N), neither
#     of which clang-sys accepts; the unversioned link comes with libclang-dev.
#   - the `opencv4` pkg-config entry (libopencv-dev), and pkg-config itself;
#   - a C++ compiler (the opencv crate compiles its C++ glue);
#   - /usr/bin/chromium (Debian's `chromium`): the scoreboard page's test
#     (tests/suite/serve_browser.rs) loads the page in headless Chromium.
#
#   scripts/setup.sh            check, and install what is missing
#   scripts/setup.sh --check    print the missing packages (one a line), install nothing
#
# SETUP_ROOT (default /) is the file-system root the checks look under: the
# test scripts/setup-test.sh runs the checks against fake layouts with it.
set -euo pipefail

ROOT=${SETUP_ROOT:-/}
ROOT=${ROOT%/}

# The directory patterns clang-sys 1.9 searches on Linux (build/common.rs, DIRECTORIES_LINUX).
CLANG_SYS_DIRS=(/usr/local/llvm*/lib* /usr/local/lib*/*/* /usr/local/lib*/* /usr/local/lib* /usr/lib*/*/* /usr/lib*/* /usr/lib*)

# True when an unversioned libclang that clang-sys links is in one of its directories.
has_linkable_libclang() {
    local dir f
    if [ -n "${LIBCLANG_PATH:-}" ]; then
        for f in "$ROOT$LIBCLANG_PATH"/libclang.so "$ROOT$LIBCLANG_PATH"/libclang-*.so; do
            [ -e "$f" ] && return 0
        done
    fi
    shopt -s nullglob
    for pattern in "${CLANG_SYS_DIRS[@]}"; do
        for dir in $ROOT$pattern; do
            [ -d "$dir" ] || continue
            for f in "$dir"/libclang.so "$dir"/libclang-*.so; do
                # libclang-cpp.so is the C++ API library, not libclang: clang-sys skips it too.
                case "$(basename "$f")" in libclang-cpp*) continue ;; esac
                [ -e "$f" ] && { shopt -u nullglob; return 0; }
            done
        done
    done
    shopt -u nullglob
    return 1
}

# True when an executable NAME is in the root's usual bin directories (or, for
# the real root, anywhere on PATH).
has_command() {
    local name=$1 dir
    if [ -z "$ROOT" ] && command -v "$name" >/dev/null 2>&1; then
        return 0
    fi
    for dir in /usr/local/bin /usr/bin /bin; do
        [ -x "$ROOT$dir/$name" ] && return 0
    done
    return 1
}

# True when the opencv4 pkg-config entry exists.
has_opencv4_pc() {
    if [ -z "$ROOT" ] && command -v pkg-config >/dev/null 2>&1 && pkg-config --exists opencv4 2>/dev/null; then
        return 0
    fi
    local f
    shopt -s nullglob
    for f in "$ROOT"/usr/lib/*/pkgconfig/opencv4.pc "$ROOT"/usr/lib/pkgconfig/opencv4.pc \
             "$ROOT"/usr/share/pkgconfig/opencv4.pc "$ROOT"/usr/local/lib/pkgconfig/opencv4.pc \
             "$ROOT"/usr/local/lib/*/pkgconfig/opencv4.pc; do
        [ -e "$f" ] && { shopt -u nullglob; return 0; }
    done
    shopt -u nullglob
    return 1
}

# The Debian packages that provide what is missing, one a line.
missing_packages() {
    has_opencv4_pc || echo libopencv-dev
    has_command pkg-config || has_command pkgconf || echo pkg-config
    has_command clang || echo clang
    has_linkable_libclang || echo libclang-dev
    has_command c++ || has_command g++ || has_command clang++ || echo g++
    # The browser test runs exactly /usr/bin/chromium (not a snap or another build on PATH).
    [ -x "$ROOT/usr/bin/chromium" ] || echo chromium
}

if [ "${1:-}" = "--check" ]; then
    missing_packages
    exit 0
fi

mapfile -t need < <(missing_packages)
if [ ${#need[@]} -gt 0 ]; then
    echo "setup: installing ${need[*]}" >&2
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
    mapfile -t still < <(missing_packages)
    if [ ${#still[@]} -gt 0 ]; then
        echo "setup: still missing after installing: ${still[*]}" >&2
        exit 1
    fi
fi

if ! command -v cargo >/dev/null 2>&1; then
    echo "setup: cargo not found: install Rust (https://rustup.rs) and run again" >&2
    exit 1
fi
