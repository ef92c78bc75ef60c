#!/usr/bin/env bash
# Tests scripts/setup.sh's checks against fake file-system layouts (SETUP_ROOT),
# among them the failing case of a machine with clang but no libclang-dev: the
# build needs an unversioned libclang.so, which only libclang-dev provides.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0

# layout NAME FILE...: a fake root with these files (executables for */bin/*).
layout() {
    local root=$tmp/$1 f
    shift
    mkdir -p "$root"
    for f in "$@"; do
        mkdir -p "$root/$(dirname "$f")"
        : > "$root/$f"
        case "$f" in */bin/*) chmod +x "$root/$f" ;; esac
    done
    echo "$root"
}

# expect NAME "PACKAGES" [VAR=VALUE]: the check on layout NAME prints exactly PACKAGES.
expect() {
    local name=$1 want=$2 got
    shift 2
    got=$(env SETUP_ROOT="$tmp/$name" "$@" bash scripts/setup.sh --check | tr '\n' ' ' | sed 's/ $//')
    if [ "$got" = "$want" ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "setup-test: $name: expected [$want], got [$got]" >&2
    fi
}

tools=(usr/bin/clang usr/bin/c++ usr/bin/pkg-config usr/lib/x86_64-linux-gnu/pkgconfig/opencv4.pc usr/bin/chromium)

# The issue's case: clang installed (libclang1-14, libclang-cpp14), no libclang-dev.
layout clang-without-dev "${tools[@]}" usr/lib/llvm-14/lib/libclang.so.1 usr/lib/llvm-14/lib/libclang-14.so.1 \
    usr/lib/x86_64-linux-gnu/libclang-cpp.so.14 usr/lib/x86_64-linux-gnu/libclang-14.so.1 >/dev/null
expect clang-without-dev "libclang-dev"

# libclang-cpp.so (unversioned, from libclang-cpp-dev) is not libclang either.
layout clang-cpp-only "${tools[@]}" usr/lib/llvm-14/lib/libclang-cpp.so >/dev/null
expect clang-cpp-only "libclang-dev"

# Everything there: libclang-dev's unversioned link in the LLVM directory.
layout complete "${tools[@]}" usr/lib/llvm-14/lib/libclang.so >/dev/null
expect complete ""

# A versioned-name but unversioned-suffix library in the multiarch directory.
layout multiarch "${tools[@]}" usr/lib/x86_64-linux-gnu/libclang-16.so >/dev/null
expect multiarch ""

# A libclang outside the searched directories, named by LIBCLANG_PATH.
layout libclang-path "${tools[@]}" opt/llvm/lib/libclang.so >/dev/null
expect libclang-path "libclang-dev"
expect libclang-path "" LIBCLANG_PATH=/opt/llvm/lib

# A bare machine: everything is missing.
layout bare >/dev/null
expect bare "libopencv-dev pkg-config clang libclang-dev g++ chromium"

# OpenCV present but no C++ compiler (g++ provides c++).
layout no-cxx usr/bin/clang usr/bin/pkg-config usr/lib/x86_64-linux-gnu/pkgconfig/opencv4.pc usr/lib/llvm-14/lib/libclang.so usr/bin/chromium >/dev/null
expect no-cxx "g++"

# The build's tools all there, no browser for the scoreboard page's test.
layout no-browser usr/bin/clang usr/bin/c++ usr/bin/pkg-config usr/lib/x86_64-linux-gnu/pkgconfig/opencv4.pc usr/lib/llvm-14/lib/libclang.so >/dev/null
expect no-browser "chromium"

echo "setup-checks: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
