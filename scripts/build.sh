#!/usr/bin/env bash
# build.sh DIR KIND [TARGET...]: configures (once) and builds a meson build directory.
# KIND: release | tsan (ThreadSanitizer) | asan (AddressSanitizer + UBSan, with clang, and the
# libFuzzer targets of tests/fuzz beside the tests) | fuzz (the same build as asan).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$1 kind=$2
shift 2
# The sanitizer builds exist to run tests, not to be fast: at -O1 (what both sanitizers'
# manuals advise) a file compiles in 0.6x the time of -O2 (noc_test under ASan: 20 s against
# 33), and compiling is most of the test command's time on a fresh machine. Assertions stay on.
#
# Every kind builds as a unity build (8 sources to a translation unit): this code's headers
# (DPDK, spdlog, nlohmann-json, yaml-cpp) are parsed once per 8 files instead of once per file,
# which took the ThreadSanitizer build of its suite from 175 s to 121 s, the ASan one from
# about 500 s to 340 s and the release build from 6.5-7.8 min to about 5 on 2 CPUs. The packet
# path's figures are the same either way (README, Performance: measured both ways, interleaved).
unity=(-Dunity=on -Dunity_size=8)
sanitizer=(-Ddebug=true -Doptimization=1 -Db_ndebug=false "${unity[@]}")
case "$kind" in
  release) opts=(--buildtype=release "${unity[@]}") ;;
  # -g1 (line tables): what a sanitizer's report needs (function, file, line); full debug
  # information made each object a quarter slower to compile and twice the size.
  tsan)    opts=("${sanitizer[@]}" -Db_sanitize=thread -Dcpp_args=-g1) ;;
  # One clang build serves the ASan suite and the fuzz targets: clang compiles this code under
  # ASan + UBSan in 0.6x GCC's time (app_runner.cpp 21 s against 33), and a second build of
  # the same sources for libFuzzer was a fifth of the test command's time. Every object
  # carries libFuzzer's coverage instrumentation (-Dfuzz=true); only the targets link its
  # driver. UBSan stops at the first undefined behaviour.
  asan|fuzz) opts=("${sanitizer[@]}" -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false
                   "-Dcpp_args=-fno-sanitize-recover=undefined -g1" -Dcpp_link_args=-fno-sanitize-recover=undefined) ;;
  *) echo "build.sh: unknown kind '$kind' (release, tsan, asan, fuzz)" >&2; exit 2 ;;
esac
case "$kind" in asan|fuzz) export CC=clang CXX=clang++ ;; esac
# A directory configured otherwise (an older layout: ASan under GCC without the fuzz targets,
# a build a file at a time) is set up again from scratch, so the suites it runs are the ones
# this kind promises.
want="unity=on"
case "$kind" in
  asan|fuzz) want="unity=on fuzz=True" ;;
esac
setup=()
if [ ! -f "$dir/build.ninja" ]; then
  setup=(meson setup "$dir")
elif [ -n "$want" ] && ! meson introspect "$dir" --buildoptions 2>/dev/null | python3 -c '
import json, sys
have = {o["name"]: str(o["value"]) for o in json.load(sys.stdin)}
sys.exit(0 if all(have.get(k) == v for k, v in (w.split("=") for w in sys.argv[1:])) else 1)' $want; then
  setup=(meson setup --wipe "$dir")
fi
if [ ${#setup[@]} -ne 0 ]; then
  "${setup[@]}" "${opts[@]}" >"$dir.setup.log" 2>&1 || { cat "$dir.setup.log" >&2; exit 1; }
  rm -f "$dir.setup.log"
fi
ninja -C "$dir" "$@" >"$dir/ninja.log" 2>&1 || { grep -E 'error|FAILED' -A5 "$dir/ninja.log" | head -80 >&2; exit 1; }
