#!/usr/bin/env bash
# bundle.sh [BUILD] [DEST]: a relocatable copy of a release build, to take tilepipe to a bigger
# x86-64 Linux host that has no DPDK (or none of the libraries) installed: the tilepipe command,
# tilepipe-bench, the message-passing kernels and libtilepipe, every shared library they and
# the DPDK drivers they load need (DPDK with its mempool, vdev, net_null/ring/pcap and event_sw
# drivers, libpcap, yaml-cpp, spdlog, hwloc, Open MPI's libmpi, ...) except the C and C++
# runtime, plus conf/ and scripts/. BUILD defaults to `build` (made with
# `./scripts/build.sh build release`), DEST to .bundle/tp.
# On the other host: `source DEST/env.sh` (sets LD_LIBRARY_PATH, points DPDK at the bundled
# drivers with -d through $TILEPIPE_EAL_DRIVERS where the host has no DPDK drivers of its own,
# and exports $TILEPIPE_BIN and $TILEPIPE_BENCH), then e.g. `scripts/bench_scaling.sh OUT`
# from DEST. EAL refuses a driver folder under a world-writable directory (such as /tmp).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
dest=${2:-.bundle/tp}
[ -x "$build/apps/tilepipe" ] || { echo "bundle.sh: no $build/apps/tilepipe: run ./scripts/build.sh $build release first" >&2; exit 1; }
pmds=$(pkg-config --variable=pmdsdir libdpdk 2>/dev/null || true)
[ -n "$pmds" ] || pmds=$(ls -d /usr/lib/x86_64-linux-gnu/dpdk/pmds-* 2>/dev/null | head -1)
[ -d "$pmds" ] || { echo "bundle.sh: DPDK's driver folder not found (pkg-config libdpdk --variable=pmdsdir)" >&2; exit 1; }

rm -rf "$dest"
mkdir -p "$dest/build/apps/bench" "$dest/build/apps/mp" "$dest/build/lib" "$dest/lib" "$dest/drivers"
cp -a conf scripts "$dest/"
cp "$build/apps/tilepipe" "$build/apps/tilepipe-plot.py" "$build/apps/plot_input.py" "$dest/build/apps/"
[ -x "$build/apps/bench/tilepipe-bench" ] && cp "$build/apps/bench/tilepipe-bench" "$dest/build/apps/bench/"
# dpdk-testpmd, where installed, for scripts/bench_replay.sh's comparison on the other host.
tpmd=$(command -v dpdk-testpmd || true)
[ -n "$tpmd" ] && cp "$tpmd" "$dest/build/apps/"
find "$build/apps/mp" -maxdepth 1 -type f -name 'tilepipe-mp-*' -perm -u+x -exec cp {} "$dest/build/apps/mp/" \;
cp -a "$build"/lib/libtilepipe*.so* "$dest/build/lib/"
# The drivers the apps and benchmarks use, loaded at start by EAL's -d. Each is one file, in
# lib/ under its soname, and drivers/ only links to it: a program that links a driver itself
# (dpdk-testpmd links bus_vdev) and then loads a second copy of it from another file gets two
# vdev buses, the devices on one and the drivers on the other ("No probed ethernet devices");
# the loader takes a link to the file it already has as that file.
for d in mempool_ring mempool_stack bus_vdev net_null net_ring net_pcap event_sw; do
  f=$(ls "$pmds"/librte_$d.so.*.* 2>/dev/null | head -1)
  if [ -z "$f" ]; then echo "bundle.sh: no $d driver in $pmds (skipped)" >&2; continue; fi
  soname=$(objdump -p "$f" | awk '$1 == "SONAME" {print $2}')
  cp -L "$f" "$dest/lib/$soname"
  ln -s "../lib/$soname" "$dest/drivers/$(basename "$f")"
done
# Every library those load, except the C/C++ runtime the other host has.
for f in "$dest"/build/apps/tilepipe "$dest"/build/apps/dpdk-testpmd "$dest"/build/apps/bench/* "$dest"/build/apps/mp/* "$dest"/lib/librte_* "$dest"/build/lib/*.so*; do
  if [ -f "$f" ]; then LD_LIBRARY_PATH="$dest/build/lib" ldd "$f" 2>/dev/null || true; fi
done | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
  grep -vE '/(libc|libm|libpthread|libdl|librt|libresolv|ld-linux-x86-64|libstdc\+\+|libgcc_s)\.so' |
  grep -v "$(cd "$dest" && pwd)" | while read -r lib; do cp -nL "$lib" "$dest/lib/"; done
cat >"$dest/env.sh" <<ENV
# Source this on the host the bundle was copied to. Where DPDK 22.11 is installed (EAL's
# compiled-in driver folder $pmds exists), EAL loads that folder's drivers, which need the
# host's own DPDK libraries: only libtilepipe comes from the bundle (a second copy of a DPDK
# library would register its drivers twice). Elsewhere every library comes from the bundle and
# EAL loads the bundled drivers (-d, through TILEPIPE_EAL_DRIVERS).
TP_ROOT=\$(cd "\$(dirname "\${BASH_SOURCE[0]}")" && pwd)
if [ -d "$pmds" ]; then
  export LD_LIBRARY_PATH="\$TP_ROOT/build/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
  unset TILEPIPE_EAL_DRIVERS
else
  export LD_LIBRARY_PATH="\$TP_ROOT/build/lib:\$TP_ROOT/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
  export TILEPIPE_EAL_DRIVERS="\$TP_ROOT/drivers"
fi
export TILEPIPE_BIN="\$TP_ROOT/build/apps/tilepipe" TILEPIPE_BENCH="\$TP_ROOT/build/apps/bench/tilepipe-bench"
if [ -x "\$TP_ROOT/build/apps/dpdk-testpmd" ]; then export TESTPMD="\$TP_ROOT/build/apps/dpdk-testpmd"; fi
ENV
echo "bundle.sh: $(du -sh "$dest" | cut -f1) in $dest; on the other host: source $dest/env.sh"
