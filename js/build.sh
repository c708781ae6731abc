#!/usr/bin/env bash
# Builds the npm package `murk-fog` into js/pkg/ and packs it into
# target/npm/murk-fog-VERSION.tgz: murk-js for wasm32 (cargo profile `web`),
# its JavaScript bindings and TypeScript types (wasm-bindgen-cli of the
# version Cargo.lock pins, installed when missing), package.json with the
# crate's version, and the README for npm users. Prints the wasm's size
# gzipped (-9), which must stay under 2 MB.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/[^0-9.]/, ""); print; exit }' Cargo.lock)
if ! wasm-bindgen --version 2>/dev/null | grep -qx "wasm-bindgen $version"; then
  echo "== installing wasm-bindgen-cli $version"
  # As web/build.sh: not `--locked`, and `--debug` (fast to build, fast enough).
  cargo install -q wasm-bindgen-cli --version "$version" --debug
fi
target_dir=${CARGO_TARGET_DIR:-target}
echo "== building murk-js for wasm32"
cargo build -q -p murk-js --lib --target wasm32-unknown-unknown --profile web
rm -rf js/pkg
# `--target web`: an ES module that loads its wasm itself, no bundler needed.
wasm-bindgen --target web --out-name murk --out-dir js/pkg "$target_dir/wasm32-unknown-unknown/web/murk_js.wasm"
crate_version=$(cargo metadata --no-deps --format-version 1 | node -e \
  'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => console.log(JSON.parse(s).packages.find((p) => p.name === "murk-js").version))')
node -e '
  const fs = require("fs");
  const pkg = JSON.parse(fs.readFileSync("js/npm/package.json", "utf8"));
  pkg.version = process.argv[1];
  fs.writeFileSync("js/pkg/package.json", JSON.stringify(pkg, null, 2) + "\n");
' "$crate_version"
cp js/npm/README.md js/pkg/
size=$(gzip -9 -c js/pkg/murk_bg.wasm | wc -c)
echo "== murk_bg.wasm: $(wc -c < js/pkg/murk_bg.wasm) bytes, $size gzipped (-9)"
if [ "$size" -ge 2000000 ]; then echo "the wasm is over 2 MB gzipped"; exit 1; fi
mkdir -p target/npm
(cd js/pkg && npm pack --silent --pack-destination ../../target/npm >/dev/null)
# A name without the version, for the example's package.json.
cp "target/npm/murk-fog-$crate_version.tgz" target/npm/murk-fog.tgz
echo "== packed target/npm/murk-fog-$crate_version.tgz"
