#!/usr/bin/env bash
# The core crate's tests built for AArch64 and run under QEMU user-mode
# emulation: the NEON batch path (`Isa::Neon`) checked bit for bit against
# the scalar kernels, as `tests/batch.rs` does for every x86-64 path.
# Optional (not part of CI): it needs the target's standard library and an
# emulator, which a fresh machine does not have:
#   rustup target add aarch64-unknown-linux-gnu
#   apt-get install qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu"
cargo clippy --target aarch64-unknown-linux-gnu -p segdist --all-targets -- -D warnings
cargo test --release --target aarch64-unknown-linux-gnu -p segdist "$@"
