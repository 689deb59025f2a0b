#!/usr/bin/env bash
# Coverage-guided fuzzing of md5x (fuzz/: cargo-fuzz, libFuzzer with AddressSanitizer):
# each target for SECONDS (default 45) from a fixed seed, after fmt and clippy of the
# fuzz crate. `scripts/fuzz.sh 600` fuzzes for ten minutes a target; MD5X_FUZZ_TARGETS
# picks targets, MD5X_FUZZ_SEED the seed (0: a new one each run). The test command
# runs it for 25 s a target. Needs a nightly toolchain (the sanitizer) and installs
# cargo-fuzz; exits 2 when either cannot be had, 1 when a target fails (its input is
# then saved under fuzz/artifacts/TARGET/; `cargo +nightly fuzz run TARGET FILE` runs
# it again).
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
secs=${1:-45}
seed=${MD5X_FUZZ_SEED:-1}
targets=${MD5X_FUZZ_TARGETS:-parse lines streams many readers lanes server}

rustup toolchain list 2>/dev/null | grep -q nightly || exit 2
case $(cargo fuzz --version 2>/dev/null) in
"cargo-fuzz 0.13."*) ;;
*) cargo install -q --locked cargo-fuzz@0.13.2 || exit 2 ;;
esac

cargo fmt --check
cargo clippy -q --all-targets -- -D warnings
cargo +nightly fuzz build
mkdir -p target
for t in $targets; do
    log=target/fuzz-$t.log
    if cargo +nightly fuzz run "$t" -- -seed="$seed" -max_total_time="$secs" \
        -print_final_stats=1 >"$log" 2>&1; then
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
        cov=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | grep -oE 'cov: [0-9]+ ft: [0-9]+' || true)
        echo "fuzz target $t: ${runs:-?} runs in ${secs} s, no failure ($cov)"
    else
        # Without libFuzzer's progress lines: the panic or sanitizer report, the input.
        grep -vE '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse|INITED)' "$log" | tail -n 200
        echo "fuzz target $t FAILED: the input is under fuzz/artifacts/$t/" >&2
        exit 1
    fi
done
