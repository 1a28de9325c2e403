#!/usr/bin/env bash
# Run the libFuzzer targets of fuzz/ (matrix_market, parsers, formats, options) for FUZZ_SECONDS each
# (default 60), starting from the committed seed corpus (copied to fuzz/corpus-work, so the seeds
# stay as committed). Fails on the first crash, panic, leak of the RSS limit or timeout; the input
# that did it lands in fuzz/artifacts/<target>/.
#
# Needs the nightly toolchain only: the targets are built the way `cargo fuzz build -O` builds them
# (SanitizerCoverage instrumentation for the fuzz target's code, libFuzzer from libfuzzer-sys),
# without AddressSanitizer (the library has no unsafe code on these paths). With cargo-fuzz
# installed, `cd fuzz && cargo +nightly fuzz run -O <target>` does the same with ASan.
#   FUZZ_SECONDS=1800 bash scripts/fuzz.sh        (the long local run)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${FUZZ_SECONDS:-60}
targets=${FUZZ_TARGETS:-matrix_market parsers formats options}
triple=$(rustc +nightly -vV | sed -n 's/^host: //p')
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
cargo +nightly build --quiet --release --manifest-path fuzz/Cargo.toml --bins --target "$triple" \
  --target-dir fuzz/target
for t in $targets; do
  rm -rf "fuzz/corpus-work/$t" && mkdir -p "fuzz/corpus-work/$t" "fuzz/artifacts/$t"
  cp fuzz/corpus/$t/* "fuzz/corpus-work/$t/"
  echo "== fuzz $t for ${secs}s"
  set +e
  "fuzz/target/$triple/release/$t" "fuzz/corpus-work/$t" -max_total_time="$secs" \
    -rss_limit_mb=2048 -timeout=10 -max_len=65536 -artifact_prefix="fuzz/artifacts/$t/" \
    -print_final_stats=1 2>&1 | grep -E "^(Done|stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ +DONE)|ERROR|panicked|SUMMARY|cov:" | tail -n 4
  # grep's status would hide the fuzzer's: check the fuzzer's through PIPESTATUS.
  status=${PIPESTATUS[0]}
  set -e
  if [ "$status" != 0 ]; then
    echo "fuzz $t failed (status $status); input in fuzz/artifacts/$t/"
    exit 1
  fi
done
