#!/usr/bin/env bash
# Runs each differential fuzz target (fuzz/: kernel, batch, index) for
# SECONDS (default 30), all at once (libFuzzer runs on one core: one after
# another, they left a core idle for the whole run); exits non-zero when
# any failed, whose input libFuzzer leaves in fuzz/artifacts/TARGET/.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#   scripts/fuzz.sh build     # only install cargo-fuzz if missing and build
#                             # the targets (.ci/run does it in the background)
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
[[ "$seconds" == build ]] && exit 0
# Each target in the background, its output in a log of its own; then
# each is waited for and reported in turn.
declare -A pid log
for t in "${targets[@]}"; do
    echo "fuzz: $t for $seconds s" >&2
    log[$t]=$(mktemp)
    # Inputs up to 512 bytes from the start: enough for dozens of queries
    # or a small network, rather than grown into over a long run.
    cargo +nightly fuzz run "$t" -- -max_total_time="$seconds" -max_len=512 -len_control=0 > "${log[$t]}" 2>&1 &
    pid[$t]=$!
done
failed=0
for t in "${targets[@]}"; do
    if wait "${pid[$t]}"; then
        echo "fuzz: $t: $(grep -E "^Done" "${log[$t]}")" >&2
    else
        tail -60 "${log[$t]}" >&2
        echo "fuzz: $t failed; the input is in fuzz/artifacts/$t/" >&2
        failed=1
    fi
    rm -f "${log[$t]}"
done
exit $failed
