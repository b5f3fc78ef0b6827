#!/usr/bin/env bash
# Every test of the project: the Rust workspace (unit, integration and doc
# tests, and the README's examples), the collision layer's and the index's
# optional features and the collision example, the SQL crate (its own workspace), the
# Python package's suite, then the interactive page in a real browser.
set -euo pipefail
cd "$(dirname "$0")/.."

# SEGDIST_CLIPPY=1 (what .ci/run sets): the workspace's crates are
# compiled for their tests by clippy's driver, warnings denied, so that CI
# builds each of them once, linted and tested, instead of a check build to
# lint them (with every dependency checked too: Arrow, Parquet, pyo3...)
# and another to test them. `cargo test` builds every target `cargo clippy
# --all-targets` lints (libraries, binaries, tests, examples; the workspace
# has no benches). segdist-sql's tests too: a check build of DataFusion and
# Ballista beside their build for the tests was some ten minutes of CPU.
lint=()
if [[ "${SEGDIST_CLIPPY:-}" == 1 ]]; then
    driver=$(rustup which clippy-driver)
    lint=(env RUSTC_WORKSPACE_WRAPPER="$driver" CLIPPY_ARGS=-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__)
    # The driver must deny warnings through CLIPPY_ARGS (how `cargo clippy`
    # passes `-- -D warnings`): a file with a lint must fail, or the run
    # would lint nothing and say nothing.
    canary=$(mktemp -d)
    echo 'pub fn f(v: &Vec<i32>) -> usize { v.len() }' > "$canary/lib.rs"
    if "${lint[@]}" "$driver" rustc --edition 2021 --crate-type lib --emit=metadata \
        -o "$canary/lib.rmeta" "$canary/lib.rs" > /dev/null 2>&1; then
        rm -rf "$canary"
        echo "SEGDIST_CLIPPY: clippy-driver did not deny a lint given CLIPPY_ARGS; lint with cargo clippy instead" >&2
        exit 1
    fi
    rm -rf "$canary"
fi

# segdist-sql (its own workspace and target folder: DataFusion and Ballista,
# debug profile; its tests start a real scheduler and two executors on
# loopback) builds and runs in the background from the start, its output
# kept in a log shown at the end: its build has long stretches on one core,
# and the steps below have their own (tests, pip, pytest, the browser).
# (In a session of its own, so that the scheduler and executors its tests
# start are stopped with it, whatever ends this script.) Linted as it
# builds when SEGDIST_CLIPPY=1, as the workspace below.
sql_log=$(mktemp)
setsid "${lint[@]}" cargo test --manifest-path crates/segdist-sql/Cargo.toml --locked > "$sql_log" 2>&1 &
sql_pid=$!

# The release CLI, which the Python tests and the page test against, builds
# in the background from the start too (cargo locks each profile's folder
# on its own): it was the critical path once it waited for the test build,
# 10-11 minutes on about one core after the tests had run, most of them
# waited for (PERFORMANCE-NOTES.md, "CI on a slower machine"). Its output
# is shown only if it fails; it is waited for before test-python.sh, whose
# own build of it then finds it done.
cli_log=$(mktemp)
cargo build --release --locked --bin segdist > "$cli_log" 2>&1 &
cli_pid=$!
trap 'kill -- -"$sql_pid" 2> /dev/null || kill "$sql_pid" 2> /dev/null || true; kill "$cli_pid" 2> /dev/null || true; rm -f "$sql_log" "$cli_log"' EXIT

# (Not segdist-bench: it has no tests, clippy checks it, and its test build
# compiled every peer it measures, parry, rapier and geo among them, at the
# test profile's opt-level 2: some ten minutes of CI on two cores.)
# The collision layer's glam and mint types and the index's geo-types
# conversions are tested in the same run, their features on: run on their
# own (`-p segdist-index --features geo-types`), cargo unified the
# dependencies' features differently and rebuilt segdist, the index and
# the collision layer, two and a half minutes of CI.
tests=(cargo test --workspace --exclude segdist-bench --locked
    --features segdist-collide/glam,segdist-collide/mint,segdist-index/geo-types)
"${lint[@]}" "${tests[@]}" --no-run
"${lint[@]}" "${tests[@]}"
# The collision layer's example run short: a crowd in a maze, judged every
# frame (exits 1 on any overlap or crossing). The example is the one
# `cargo test` just built (the test profile, optimised): a release build of
# it cost CI a minute more.
"${CARGO_TARGET_DIR:-target}/debug/examples/crowd" --agents 2000 --frames 60 --size 60 --out target/crowd-test.svg
if ! wait "$cli_pid"; then
    cat "$cli_log"
    echo "the release build of the CLI failed" >&2
    exit 1
fi
scripts/test-python.sh
# The interactive page: segdist-wasm built for WebAssembly and the page
# tested in Chromium against the CLI. The first run installs the toolchain
# and the browser (as root, or through sudo); SEGDIST_SKIP_PAGE=1 skips it.
if [[ "${SEGDIST_SKIP_PAGE:-}" != 1 ]]; then
    scripts/page.sh test
fi
echo "== segdist-sql (run in the background since the start)"
if wait "$sql_pid"; then
    grep -E "^ *(test result|Running|Doc-tests)" "$sql_log" || true
else
    cat "$sql_log"
    echo "segdist-sql's tests failed" >&2
    exit 1
fi
