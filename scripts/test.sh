#!/usr/bin/env bash
# Every test of the project: the Rust workspace (unit, integration and doc
# tests, and the README's examples), the collision layer's and the index's
# optional features and the collision example, the SQL crate (its own workspace), the
# Python package's suite, then the interactive page in a real browser.
set -euo pipefail
cd "$(dirname "$0")/.."

# (Not segdist-bench: it has no tests, clippy checks it, and its test build
# compiled every peer it measures, parry, rapier and geo among them, at the
# test profile's opt-level 2: some ten minutes of CI on two cores.)
cargo test --workspace --exclude segdist-bench --locked
# The collision layer with its glam and mint types, and its example run
# short: a crowd in a maze, judged every frame (exits 1 on any overlap or
# crossing). The example is the one `cargo test` just built (the test
# profile, optimised): a release build of it cost CI a minute more.
cargo test -p segdist-collide --features glam,mint --locked --test interop
"${CARGO_TARGET_DIR:-target}/debug/examples/crowd" --agents 2000 --frames 60 --size 60 --out target/crowd-test.svg
# The index's optional geo-types conversions.
cargo test -p segdist-index --features geo-types --locked --test geo_types
cargo test -p segdist-index --features geo-types --locked --doc geo
# segdist-sql: its own workspace (DataFusion and Ballista), debug profile;
# its tests start a real scheduler and two executors on loopback.
cargo test --manifest-path crates/segdist-sql/Cargo.toml --locked
scripts/test-python.sh
# The interactive page: segdist-wasm built for WebAssembly and the page
# tested in Chromium against the CLI. The first run installs the toolchain
# and the browser (as root, or through sudo); SEGDIST_SKIP_PAGE=1 skips it.
if [[ "${SEGDIST_SKIP_PAGE:-}" != 1 ]]; then
    scripts/page.sh test
fi
