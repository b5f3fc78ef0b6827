#!/usr/bin/env bash
# Installs what the page (web/) needs to build segdist for WebAssembly and to
# test it in a real browser, on a fresh Debian 12 machine, and prints nothing
# else on a second run (everything is kept under target/wasm-toolchain).
#
# Why this route: `rustup target add wasm32-unknown-unknown` cannot reach
# rustup's servers here, but Debian's registries are reachable. Debian ships
# `rustc-web`, a rustc with the wasm32 target, and the standard library's
# source. We download and extract those packages (installing rustc-web would
# remove rustup's toolchain), then build the standard library for wasm32 from
# that source with the image's stable cargo (`-Zbuild-std`, unlocked by
# RUSTC_BOOTSTRAP=1). The linker is Debian's `wasm-ld` (lld).
#
# Browser tests: Debian's `chromium` and npm's `playwright-core` (which never
# downloads a browser of its own).
#
# Usage: scripts/wasm-toolchain.sh [--browser]
#   prints the path of the rustc wrapper on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."

root=target/wasm-toolchain
mkdir -p "$root"
root=$(cd "$root" && pwd)
want_browser=0
[[ "${1:-}" == "--browser" ]] && want_browser=1

as_root() {
    if [[ $(id -u) == 0 ]]; then
        "$@"
    elif command -v sudo > /dev/null; then
        sudo "$@"
    else
        echo "wasm-toolchain: '$*' needs root (or sudo)" >&2
        exit 2
    fi
}

apt_updated=0
apt_update() {
    if [[ $apt_updated == 0 ]]; then
        echo "wasm-toolchain: apt-get update" >&2
        as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
        apt_updated=1
    fi
}

# 1. rustc-web, extracted (never installed), with its standard library source.
if [[ ! -x "$root/rustc" ]]; then
    apt_update
    version=$(apt-cache policy rustc-web | awk '/Candidate:/ {print $2}')
    if [[ -z "$version" || "$version" == "(none)" ]]; then
        echo "wasm-toolchain: Debian's rustc-web is not in the package lists" >&2
        exit 2
    fi
    # The runtime library's package is named after the version (1.96.0 -> 1.96).
    short=$(echo "$version" | sed -E 's/^([0-9]+\.[0-9]+).*/\1/')
    echo "wasm-toolchain: rustc-web $version (extracted into $root/prefix)" >&2
    debs="$root/debs"
    rm -rf "$debs" "$root/prefix"
    mkdir -p "$debs" "$root/prefix"
    # apt downloads as its own user (_apt) where it can.
    chmod a+rwx "$debs"
    (cd "$debs" && apt-get download -qq "rustc-web=$version" "libstd-rust-web-dev=$version" \
        "libstd-rust-web-$short=$version" "rust-web-src=$version" >&2)
    for deb in "$debs"/*.deb; do dpkg -x "$deb" "$root/prefix"; done
    rm -rf "$debs"
    # The LLVM that rustc-web links against, and wasm-ld.
    llvm=$(apt-cache show "libstd-rust-web-$short=$version" | sed -nE 's/.*(libllvm[0-9]+).*/\1/p' | head -1)
    major=${llvm#libllvm}
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$llvm" "lld-$major" >&2
    echo "$major" > "$root/llvm-major"
    cat > "$root/rustc" <<EOF
#!/bin/sh
# rustc-web, extracted; it needs its own librustc_driver.
LD_LIBRARY_PATH="$root/prefix/usr/lib/x86_64-linux-gnu" exec "$root/prefix/usr/bin/rustc" "\$@"
EOF
    chmod +x "$root/rustc"
fi
major=$(cat "$root/llvm-major")
if ! command -v "wasm-ld-$major" > /dev/null; then
    apt_update
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "libllvm$major" "lld-$major" >&2
fi

# 2. The browser and its driver, for the page's tests.
if [[ $want_browser == 1 ]]; then
    if ! command -v chromium > /dev/null; then
        apt_update
        echo "wasm-toolchain: installing Debian's chromium" >&2
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >&2
    fi
    if [[ ! -d web/node_modules/playwright-core ]]; then
        echo "wasm-toolchain: npm ci (playwright-core)" >&2
        (cd web && npm ci --no-audit --no-fund --silent >&2)
    fi
fi

echo "$root/rustc"
