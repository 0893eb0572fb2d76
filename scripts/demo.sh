#!/usr/bin/env bash
# Quick start: install what is missing, build, and run the built-in default app
# (generated traffic -> parse -> drop), printing its throughput. Extra arguments go to
# `tilepipe run`, e.g. ./scripts/demo.sh --json r.json
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/bootstrap.sh
./scripts/build.sh build release
exec ./build/apps/tilepipe run conf/default.yaml "$@"
