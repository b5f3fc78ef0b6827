#!/usr/bin/env bash
# segdist's Python package against shapely, in one run on this machine:
# JSON lines on stdout, a Markdown table on stderr.
# Usage: scripts/bench-python.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/py-env.sh
"$VENV/bin/python" crates/segdist-py/bench/vs_shapely.py "$@"
