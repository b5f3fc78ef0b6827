#!/usr/bin/env bash
# The Python package's tests: build and install the wheel into a fresh
# virtual environment (scripts/py-env.sh), then pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/py-env.sh

# The bit-identity tests compare with the command line's output.
cargo build --release --locked --quiet --bin segdist
echo "== pytest"
SEGDIST_BIN="$PWD/target/release/segdist" "$VENV/bin/python" -m pytest -q crates/segdist-py/tests
