#!/usr/bin/env bash
# GPU conformance and GPU benches on a machine with a real GPU, ending with a
# Markdown table for BENCHMARKS.md.
#
#   bash benches/gpu.sh            # MURK_WGPU_BACKEND picks the wgpu backend
#
# Runs the GPU tests (the corpus byte for byte and the behaviour suites in
# the backends harness; textures and zero waits per tick in the gpu test),
# then the GPU rows of the frame bench: `small`, `rts`,
# `rts-10`, `huge` frames and the `rts-static` / `rts-steady` ticks, each
# timed to the device's end of work (the bench waits for the GPU after each
# blend). The table lists criterion's median per row with the adapter.
set -euo pipefail
cd "$(dirname "$0")/.."
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"

echo "== GPU conformance"
cargo test --release -p murk-conformance --test gpu --test backends -- --ignored --nocapture 2>&1 | tee target/gpu-conformance.log | grep -E "conformance on|test result"

echo "== GPU benches"
MURK_BENCH_HUGE=1 cargo bench -p murk-benches --bench frame -- --noplot "gpu" 2>&1 | tee target/gpu-bench.log | grep -E "GPU rows|time:|^device .* all " || true

adapter=$(grep -m1 -o "GPU rows on .*" target/gpu-bench.log | sed 's/GPU rows on //')
commit=$(git rev-parse --short HEAD 2>/dev/null || echo "?")
echo
echo "Device time per pass (ms per tick):"
grep "^device " target/gpu-bench.log | sed 's/^device /  /' || true
echo
echo "GPU figures at $commit on $adapter (criterion median of the whole tick to the device's end of"
echo "work; device time per tick from timestamp queries, all passes):"
echo
echo "| row | median tick | device time per tick |"
echo "|---|---|---|"
for dir in target/criterion/frame/*gpu* target/criterion/tick/*gpu*; do
  [ -f "$dir/new/estimates.json" ] || continue
  ns=$(grep -o '"median":{"confidence_interval":{[^}]*},"point_estimate":[0-9.e+-]*' "$dir/new/estimates.json" | sed 's/.*://')
  row="$(basename "$dir" | sed 's/_gpu_1$//')/gpu/1"
  device=$(grep -m1 "^device $row all " target/gpu-bench.log | awk '{ print $4 }')
  printf '| %s/%s | %s ms | %s ms |\n' "$(basename "$(dirname "$dir")")" "$(basename "$dir")" "$(awk -v n="$ns" 'BEGIN { printf "%.3f", n / 1e6 }')" "${device:--}"
done
