#!/usr/bin/env bash
# Builds the page into web/dist/: murk-web for wasm32, its JavaScript
# bindings (wasm-bindgen-cli of the version Cargo.lock pins, installed when
# missing), the page, and the demo scenario with its map. With `--serve`
# it then serves the page on http://127.0.0.1:8000 (loopback only).
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/[^0-9.]/, ""); print; exit }' Cargo.lock)
if ! wasm-bindgen --version 2>/dev/null | grep -qx "wasm-bindgen $version"; then
  echo "== installing wasm-bindgen-cli $version"
  # Not `--locked`: its lockfile pins a webpki-roots release the registry
  # no longer serves. `--debug` builds it in a quarter of the time, and it
  # still processes murk's module in about two seconds.
  cargo install -q wasm-bindgen-cli --version "$version" --debug
fi
echo "== building murk-web for wasm32"
cargo build -q -p murk-web --lib --target wasm32-unknown-unknown --profile web
rm -rf web/dist
wasm-bindgen --target web --no-typescript --out-dir web/dist/pkg target/wasm32-unknown-unknown/web/murk_web.wasm
cp web/www/index.html web/www/main.js assets/demo.json web/dist/
mkdir -p web/dist/maps
cp assets/maps/lak303d.map web/dist/maps/
echo "== the page is in web/dist ($(du -sh web/dist | cut -f1))"
if [ "${1:-}" = "--serve" ]; then
  echo "== serving it on http://127.0.0.1:8000 (a browser with WebGPU runs both backends; without it, the CPU)"
  exec python3 -m http.server --bind 127.0.0.1 --directory web/dist 8000
fi
