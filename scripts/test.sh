#!/usr/bin/env bash
# Every test of the project: the Rust workspace (unit, integration and doc
# tests, and the README's examples), then the Python package's suite.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo test --workspace --locked
scripts/test-python.sh
