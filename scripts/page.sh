#!/usr/bin/env bash
# The interactive page (web/): build it, serve it, test it.
#
#   scripts/page.sh            build, then serve on http://127.0.0.1:8321/
#   scripts/page.sh build      build only: web/pkg/segdist.wasm
#   scripts/page.sh test       build, then the browser tests (Chromium)
#
# The first run installs what it needs (scripts/wasm-toolchain.sh: Debian's
# rustc-web, extracted under target/, wasm-ld; with `test`, Chromium and
# playwright-core): about a minute and 100-300 MB of downloads, once.
set -euo pipefail
cd "$(dirname "$0")/.."

what=${1:-serve}
port=${PORT:-8321}

build() {
    local browser=""
    [[ $what == test ]] && browser=--browser
    local rustc
    rustc=$(scripts/wasm-toolchain.sh $browser | tail -1)
    local major
    major=$(cat target/wasm-toolchain/llvm-major)
    echo "page: building segdist-wasm for wasm32-unknown-unknown" >&2
    # The standard library is rebuilt for wasm32 from rustc-web's source
    # (-Zbuild-std, unlocked on stable cargo by RUSTC_BOOTSTRAP). Its own
    # target folder: another rustc, other fingerprints. Size over speed
    # nowhere: the page runs the same optimised code as the CLI.
    RUSTC="$rustc" RUSTC_BOOTSTRAP=1 \
        CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER="wasm-ld-$major" \
        CARGO_PROFILE_RELEASE_PANIC=abort \
        CARGO_PROFILE_RELEASE_LTO=true \
        CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 \
        CARGO_PROFILE_RELEASE_STRIP=symbols \
        cargo build --locked --release -p segdist-wasm \
        --target wasm32-unknown-unknown --target-dir target/wasm \
        -Zbuild-std=std,panic_abort
    mkdir -p web/pkg
    cp target/wasm/wasm32-unknown-unknown/release/segdist_wasm.wasm web/pkg/segdist.wasm.tmp
    mv web/pkg/segdist.wasm.tmp web/pkg/segdist.wasm
    # The bundled example data, as the CLI's demo has it.
    cp examples/helsinki/roads.geojson examples/helsinki/points.geojson web/pkg/
    echo "page: web/pkg/segdist.wasm, $(stat -c %s web/pkg/segdist.wasm) bytes" >&2
}

case "$what" in
    build)
        build
        ;;
    serve)
        build
        echo "page: http://127.0.0.1:$port/ (Ctrl-C to stop)" >&2
        exec node web/serve.mjs "$port"
        ;;
    test)
        build
        # The native answers the page is checked against.
        cargo build --locked --release --bin segdist
        (cd web && node --test tests/)
        ;;
    *)
        echo "usage: scripts/page.sh [serve|build|test]" >&2
        exit 2
        ;;
esac
