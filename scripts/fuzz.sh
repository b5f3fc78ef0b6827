#!/usr/bin/env bash
# Runs each differential fuzz target (fuzz/: kernel, batch, index) for
# SECONDS (default 30), one after another; exits non-zero on the first
# failure, whose input libFuzzer leaves in fuzz/artifacts/TARGET/.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#
# Needs the nightly toolchain (sanitizers) and cargo-fuzz, which it installs
# from the registry when missing (a few minutes, once). The corpus grows in
# fuzz/corpus/TARGET/ (not committed).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-30}
shift || true
targets=("$@")
[[ ${#targets[@]} == 0 ]] && targets=(kernel batch index)

if ! cargo fuzz --version > /dev/null 2>&1; then
    echo "fuzz: installing cargo-fuzz" >&2
    cargo install cargo-fuzz --locked --quiet
fi
cargo +nightly fuzz build
for t in "${targets[@]}"; do
    echo "fuzz: $t for $seconds s" >&2
    log=$(mktemp)
    # Inputs up to 512 bytes from the start: enough for dozens of queries
    # or a small network, rather than grown into over a long run.
    if cargo +nightly fuzz run "$t" -- -max_total_time="$seconds" -max_len=512 -len_control=0 > "$log" 2>&1; then
        grep -E "^Done" "$log" >&2
        rm -f "$log"
    else
        tail -60 "$log" >&2
        rm -f "$log"
        echo "fuzz: $t failed; the input is in fuzz/artifacts/$t/" >&2
        exit 1
    fi
done
