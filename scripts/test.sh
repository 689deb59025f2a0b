#!/usr/bin/env bash
# Every test md5x has, on a fresh machine: installs what it needs, then runs
# formatting, lints and the whole test suite. CI (.ci/run) runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step's header carries the minutes since the start, so a slow step shows on the log.
SECONDS=0
say() { printf '== [%d:%02d] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }
need() { command -v "$1" >/dev/null 2>&1; }
apt_install() {
    if need apt-get; then
        [ -n "${APT_UPDATED:-}" ] || { apt-get update -qq >/dev/null; APT_UPDATED=1; }
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
    fi
}
# The hashlib reference test runs python3; the CLI compatibility suite runs GNU md5sum.
need python3 || apt_install python3
need md5sum || apt_install coreutils
# The CLI's compatibility suite runs once, against Debian 13's md5sum 9.7: what md5x
# follows where GNU releases differ, fetched from Debian's archive
# (scripts/coreutils-release.sh). Where it cannot be fetched, the suite runs against
# this machine's md5sum, which must then be GNU's 9.1 to 9.7 (the suite knows how those
# differ from md5x; Ubuntu 25.10 and later ship uutils' md5sum, and 9.10 and later
# differ from 9.7 in ways md5x does not follow: README, "The command"). MD5SUM=path,
# given to this script, picks another.
need curl || apt_install curl
need xz || apt_install xz-utils
need cc || apt_install gcc
gnu97=$(scripts/coreutils-release.sh trixie) || gnu97=
if [ -n "${MD5SUM:-}" ]; then
    say "the compat suite runs against MD5SUM=$MD5SUM"
elif [ -n "$gnu97" ]; then
    say "the compat suite runs against GNU coreutils 9.7 (Debian 13): $gnu97"
    export MD5SUM=$gnu97
else
    say "the compat suite runs against this machine's md5sum ($(md5sum --version 2>/dev/null | sed -n 1p)): Debian 13's 9.7 could not be had here (above)"
fi
# The Python tools' virtual environment, .venv (the pytest stages, Wasmtime).
make_venv() {
    if [ ! -x .venv/bin/python ]; then
        python3 -m venv .venv 2>/dev/null || { apt_install python3-venv; python3 -m venv .venv; }
    fi
}
need cargo || { echo "cargo (Rust) is required: https://rustup.rs" >&2; exit 1; }
rustup component add rustfmt clippy >/dev/null 2>&1 || true

say "cargo fmt --check"
cargo fmt --all -- --check
say "cargo clippy -D warnings"
cargo clippy --workspace --all-targets -- -D warnings
say "cargo clippy (no_std, no default features; and with digest 0.10's traits)"
cargo clippy -p md5x --no-default-features --lib -- -D warnings
cargo clippy -p md5x --no-default-features --features digest010 --lib -- -D warnings
say "cargo clippy (all features: rayon, tokio, digest010)"
cargo clippy -p md5x --all-targets --all-features -- -D warnings
say "cargo doc -D warnings (library docs: default and all features, and no_std)"
for feats in "" --all-features --no-default-features; do
    RUSTDOCFLAGS="-D warnings" cargo doc -q --no-deps -p md5x $feats
done
# Miri and the fuzzers run on one core each for minutes: they run beside the steps
# below (start_bg), and their report comes at the end. Miri (undefined-behaviour checker) over the
# library's unit tests, where the nightly toolchain with miri can be had here; then
# coverage-guided fuzzing (fuzz/, scripts/fuzz.sh): each target 25 s from a fixed seed,
# every backend of this CPU against md-5, under AddressSanitizer. Either says NOT RUN
# plainly when its tools cannot be had. (rustup runs here, not beside the others.)
miri=0
if rustup toolchain list 2>/dev/null | grep -q nightly &&
    { cargo +nightly miri --version >/dev/null 2>&1 ||
      rustup component add miri rust-src --toolchain nightly >/dev/null 2>&1; }; then
    miri=1
fi
# The oldest Rust that Cargo.toml's rust-version promises: its toolchain installed here
# (rustup), the workspace checked with it beside the other steps, in target/msrv.
msrv=$(sed -n 's/^rust-version = "\(.*\)"$/\1/p' Cargo.toml)
msrv_ok=0
[ -n "$msrv" ] && rustup toolchain install "$msrv" --profile minimal >/dev/null 2>&1 && msrv_ok=1
miri_and_fuzz() {
    if [ "$msrv_ok" = 1 ]; then
        say "cargo check with Rust $msrv (Cargo.toml's rust-version): every crate, target and feature"
        CARGO_TARGET_DIR=target/msrv cargo "+$msrv" check -q --workspace --all-targets --all-features
        CARGO_TARGET_DIR=target/msrv cargo "+$msrv" check -q -p md5x --no-default-features --lib
    else
        say "cargo check with Rust ${msrv:-?} (Cargo.toml's rust-version): NOT RUN (rustup could not install it here)"
    fi
    if [ "$miri" = 1 ]; then
        say "cargo miri test (library unit tests)"
        MIRIFLAGS="${MIRIFLAGS:-}" cargo +nightly miri test -p md5x --lib
        # The x32 ABI is x86-64 with 4-byte pointers, where the x86-64 assembly (tables
        # of 8-byte pointers, `usize` operands as 64-bit registers) must not be built:
        # any of it would fail this lint (a sub-register operand). Rust ships no x32
        # library here, so its `core` and `alloc` are built from nightly's source.
        say "cargo clippy for x32 (x86_64-unknown-linux-gnux32, no_std): portable kernels only"
        cargo +nightly clippy -q -Zbuild-std=core,alloc --target x86_64-unknown-linux-gnux32 \
            -p md5x --lib --no-default-features -- -D warnings
    else
        say "miri and the x32 lint: NOT RUN (no nightly toolchain with miri and rust-src on this machine)"
    fi
    say "cargo fuzz (fuzz/: libFuzzer with AddressSanitizer, 25 s a target)"
    local fz=0
    scripts/fuzz.sh 25 || fz=$?
    case $fz in
        0) ;;
        2) say "fuzzing: NOT RUN (no nightly toolchain or cargo-fuzz here)" ;;
        *) return "$fz" ;;
    esac
}
# start_bg LOG COMMAND...: COMMAND runs beside the steps below, its output in LOG, in a
# process group of its own (set -m), stopped should this script end first; its pid is
# left in bg_pid.
mkdir -p target
bg_pids=()
stop_bg() { for p in "${bg_pids[@]}"; do kill -- -"$p" 2>/dev/null || true; done; }
trap stop_bg EXIT
start_bg() {
    local log=$1
    shift
    set -m
    ("$@") >"$log" 2>&1 </dev/null &
    bg_pid=$!
    set +m
    bg_pids+=("$bg_pid")
}
say "Rust $msrv, Miri, then the fuzzers: running beside the steps below (their report comes last)"
start_bg target/miri-fuzz.log miri_and_fuzz
miri_pid=$bg_pid

say "cargo test (release: the large-input tests hash gigabytes)"
cargo test --workspace --release
# The library with all its features, built in the `cross` profile: Cargo's default
# release profile, the one a crate that depends on md5x builds it with. (The check
# after it builds in that profile too, and then finds the dependencies built: the two
# took 120 s alone, where this one in the release profile and the check took 180.)
say "cargo test (library with all features: par_hash_many, the Server's AsyncWrite, digest 0.10's traits)"
cargo test -p md5x --profile cross --all-features --lib --test many_lanes --test server \
    --test digest010 -- --skip past_4_gib
cargo test -p md5x --profile cross --all-features --doc
# A crate that depends on md5x builds it with Cargo's default release profile (16
# codegen units, no LTO), not with this workspace's (one unit, thin LTO). There a
# closure around intrinsics in a lane kernel stayed out of line, without the kernel's
# target features, and each of its intrinsics became a call: the generic AVX2 kernel
# ran 4.0-4.3 cycles/byte instead of 0.50-0.55 (docs/performance.md). So the kernels
# are built that way too (the workspace's profile `cross` is that profile), and no
# intrinsic may be left as a function of its own.
if [ "$(uname -m)" = x86_64 ] && need nm; then
    say "the lane kernels in a dependent crate's release profile: no intrinsic out of line"
    cargo build -q --profile cross -p md5x --example many_report
    syms=$(nm -C target/cross/examples/many_report)
    # (A binary without its symbols would pass below without anything checked.)
    if ! grep -q 'md5x::kernels::' <<<"$syms"; then
        echo "no md5x symbols in the dependent-profile build: nothing to check" >&2
        exit 1
    fi
    stray=$(grep 'core_arch::' <<<"$syms" | grep -v '::_xgetbv$' || true)
    if [ -n "$stray" ]; then
        echo "intrinsics compiled out of line (each one a call in a kernel):" >&2
        echo "$stray" >&2
        exit 1
    fi
else
    say "the lane kernels in a dependent crate's release profile: NOT RUN (not x86-64, or no nm)"
fi

# AVX-512: where this CPU lacks it, the library's unit tests, scalar_kernels and
# many_lanes run with MD5X_BACKEND=avx512 on an emulated Skylake-X (Bochs, booting
# Debian's kernel); said plainly when the emulator cannot be set up. Its setup (apt-get,
# the kernel, a static build) runs here; the emulation itself, about 10 minutes of one
# core, runs beside the steps below, and its report comes at the end.
emu_pid=
# (MD5X_EMULATE_AVX512=1 runs the emulation where the CPU has AVX512F too.)
if grep -qw avx512f /proc/cpuinfo 2>/dev/null && [ "${MD5X_EMULATE_AVX512:-}" != 1 ]; then
    say "AVX-512: ran natively above (this CPU has AVX512F)"
else
    say "AVX-512 under emulation (Bochs, Skylake-X model): scripts/avx512-emu.sh, set up"
    emu=0
    EMU_SETUP_ONLY=1 scripts/avx512-emu.sh || emu=$?
    case $emu in
        0)
            say "AVX-512 under emulation: running beside the steps below (its report comes last)"
            EMU_SKIP_APT=1 EMU_SKIP_BUILD=1 start_bg target/avx512-emu.log scripts/avx512-emu.sh
            emu_pid=$bg_pid
            ;;
        2) say "AVX-512 emulation: NOT RUN (the emulator could not be set up here)" ;;
        *) exit "$emu" ;;
    esac
fi

# aarch64 (the NEON lane kernels and the portable kernel) under qemu-user, with Debian's
# cross linker; said plainly when the toolchain cannot be had here.
apt_install qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross || true
if need qemu-aarch64 && need aarch64-linux-gnu-gcc &&
    rustup target add aarch64-unknown-linux-gnu >/dev/null 2>&1; then
    say "cargo test on aarch64 under qemu (NEON)"
    export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
    export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu"
    # One test at a time: chains.rs and vectors.rs start python3 for their references,
    # and qemu-user can deadlock a child forked while another guest thread runs (a CI
    # run on 2026-11-28 hung for 20 minutes in `md5_par_against_python_reference`, the
    # child parked on a futex before it could exec python3). Should it hang all the
    # same, each command is stopped after 15 minutes (it takes 1-2, building included)
    # and run once more, said on the log; a second hang, or any failure, fails the run.
    arm() {
        local cmd=(timeout -k 30 900 cargo test -p md5x --profile cross
            --target aarch64-unknown-linux-gnu "$@") rc=0
        "${cmd[@]}" || rc=$?
        if [ "$rc" = 124 ]; then
            say "aarch64: stopped after 15 minutes (a hang under qemu-user); once more"
            "${cmd[@]}"
        else
            return "$rc"
        fi
    }
    # All but the 4 GiB messages, which emulation makes too slow.
    arm --lib --test many_lanes --test scalar_kernels --test chains -- --test-threads=1 \
        --skip past_4_gib
    arm --test vectors -- --skip more_than_4_gib --test-threads=1
else
    say "aarch64: NOT RUN (no qemu-user, aarch64 cross linker or Rust target here)"
fi

# 32 bits (i686, run natively with Debian's 32-bit C library): every length and
# position past 4 GiB must stay in 64 bits where usize has 32 (ARM NAS boxes and old
# PCs hash backups of that size); the library's tests and the command's, whose large
# files and ETag parts pass 4 GiB. Then big-endian (s390x under qemu-user): MD5 reads
# little-endian words, and every conversion must say so. Then wasm32 (WASI and the
# bare target): the library must compile and lint clean, and its tests run as a WASI
# program under Wasmtime (scripts/wasi-run.py): no threads (its fallbacks to this
# thread run), no processes (the Python references say NOT RUN, as under Wine), and
# positioned reads made of a seek and a read.
apt_install gcc-i686-linux-gnu libc6-dev-i386-cross libc6-i386 lib32gcc-s1 \
    gcc-s390x-linux-gnu libc6-dev-s390x-cross || true
if need i686-linux-gnu-gcc && [ -e /lib/ld-linux.so.2 ] &&
    rustup target add i686-unknown-linux-gnu >/dev/null 2>&1; then
    say "cargo clippy for i686 (32-bit), tests included: what x86_64 leaves out"
    cargo clippy --target i686-unknown-linux-gnu -p md5x -p md5x-cli --all-targets -- -D warnings
    say "cargo test on i686 (32-bit): the library and the command"
    # (MD5X_SHIM_CC: the libraries the read-error tests preload into md5x are 32-bit too.)
    CARGO_TARGET_I686_UNKNOWN_LINUX_GNU_LINKER=i686-linux-gnu-gcc MD5X_SHIM_CC=i686-linux-gnu-gcc \
        cargo test --profile cross --target i686-unknown-linux-gnu -p md5x -p md5x-cli \
        --lib --bins --tests
else
    say "i686 (32-bit): NOT RUN (no i686 cross linker, 32-bit C library or Rust target here)"
fi
# A free-threaded CPython (3.14t, no GIL) for the last pytest run. Neither Debian 12 nor
# PyPI has such a build, so it is built from CPython's tagged source as the Go module
# proxy serves it (the one source archive this machine reaches), checked against a
# pinned SHA-256, into target/: fetched here (apt-get and the network), then built
# beside the steps below, its output in target/cpython-build.log. (In the foreground
# it took 3-4 minutes of 2 cores. Beside s390x, whose tests under qemu run one at a
# time, it made that step 2.5 minutes longer on a Zen 5: where the cores are busy,
# little is won, but nothing is lost.)
ft_version=3.14.7
ft_sha256=e79b1270b4b62593f6686c8db8edd384b4a9b14e5824a8c9fce0a95656dd6321
ft=$PWD/target/cpython-$ft_version-t
ft_zip=target/cpython-$ft_version.zip
fetch_free_threaded() {
    dpkg -s make unzip libssl-dev libffi-dev zlib1g-dev >/dev/null 2>&1 ||
        apt_install make unzip libssl-dev libffi-dev zlib1g-dev
    curl -fsS --retry 3 -o "$ft_zip" \
        "https://proxy.golang.org/github.com/python/cpython/@v/v$ft_version+incompatible.zip" || return 2
    echo "$ft_sha256  $ft_zip" | sha256sum -c --quiet || return 1
}
build_free_threaded() {
    local work=target/cpython-src src
    rm -rf "$work" && mkdir -p "$work"
    unzip -q "$ft_zip" -d "$work"
    src=$(echo "$work"/github.com/python/cpython@*)
    # A module archive keeps no file modes: the build's own scripts made runnable.
    chmod +x "$src"/configure "$src"/install-sh "$src"/config.guess "$src"/config.sub \
        "$src"/Tools/*/*.sh "$src"/Tools/*/*.py
    # (Without CPython's own test modules, which pytest does not need: less to
    # build, install and byte-compile.)
    (cd "$src" && ./configure --disable-gil --disable-test-modules --prefix="$ft" &&
        make -j"$(nproc)" && make install) || return 1
    rm -rf "$work" "$ft_zip"
}
ft_status=0 ft_pid=
if [ ! -x "$ft/bin/python3" ]; then
    fetch_free_threaded || ft_status=$?
    if [ "$ft_status" = 0 ]; then
        say "free-threaded CPython $ft_version: building beside the steps below (target/cpython-build.log)"
        start_bg target/cpython-build.log build_free_threaded
        ft_pid=$bg_pid
    fi
fi
if need qemu-s390x && need s390x-linux-gnu-gcc &&
    rustup target add s390x-unknown-linux-gnu >/dev/null 2>&1; then
    say "cargo clippy for s390x (big-endian), tests included"
    cargo clippy --target s390x-unknown-linux-gnu -p md5x --all-targets -- -D warnings
    say "cargo test on s390x under qemu (big-endian)"
    # All but the messages past 4 GiB, which emulation makes too slow (i686 and
    # x86_64 run those); one test at a time, as on aarch64.
    CARGO_TARGET_S390X_UNKNOWN_LINUX_GNU_LINKER=s390x-linux-gnu-gcc \
        CARGO_TARGET_S390X_UNKNOWN_LINUX_GNU_RUNNER="qemu-s390x -L /usr/s390x-linux-gnu" \
        timeout -k 30 1200 cargo test -p md5x --profile cross --target s390x-unknown-linux-gnu \
        --lib --test many_lanes --test scalar_kernels --test chains --test vectors \
        --test digest_traits -- --test-threads=1 --skip past_4_gib --skip more_than_4_gib
else
    say "s390x (big-endian): NOT RUN (no qemu-user, s390x cross linker or Rust target here)"
fi
if rustup target add wasm32-wasip1 wasm32-unknown-unknown >/dev/null 2>&1; then
    say "cargo clippy for wasm32 (WASI, unknown): the library, default and all features"
    for t in wasm32-wasip1 wasm32-unknown-unknown; do
        cargo clippy --target "$t" -p md5x --lib -- -D warnings
        cargo clippy --target "$t" -p md5x --lib --all-features -- -D warnings
    done
    say "cargo test on wasm32-wasip1 under Wasmtime (simd128; no threads, no processes)"
    # Built with simd128, so that every test runs both the portable and the simd128
    # backends (clippy above checked the build without it); its kernel and its tests
    # linted too. The tests that need threads say "ignored" with that reason;
    # backend_env.rs, whose cases are child processes, is left out; the messages past
    # 4 GiB too (i686 runs them where usize has 32 bits). A hang is stopped after 20
    # minutes (it takes 2-3).
    export CARGO_TARGET_WASM32_WASIP1_RUSTFLAGS="-C target-feature=+simd128"
    cargo clippy --target wasm32-wasip1 -p md5x --all-targets -- -D warnings
    make_venv
    .venv/bin/python -m pip install -q --disable-pip-version-check 'wasmtime>=50,<51'
    CARGO_TARGET_WASM32_WASIP1_RUNNER="$PWD/.venv/bin/python $PWD/scripts/wasi-run.py" \
        MD5X_TEST_NO_PYTHON=1 timeout -k 30 1200 cargo test -p md5x --profile cross \
        --target wasm32-wasip1 --lib --test many_lanes --test scalar_kernels --test chains \
        --test vectors --test digest_traits --test server -- --skip past_4_gib \
        --skip more_than_4_gib
    unset CARGO_TARGET_WASM32_WASIP1_RUSTFLAGS
else
    say "wasm32: NOT RUN (rustup could not add the wasm32 targets here)"
fi

# Other systems. Windows: the library's tests, built with MinGW and run under Wine
# (scripts/windows-wine.sh), and the Python module compiled and linted for it; the
# command is for Unix only (README). macOS: nothing here runs it, so the library, the
# command and the Python module must compile and pass clippy for both of its CPUs
# (no test targets: the benchmarks' criterion builds C code that needs Apple's SDK).
# Under Wine: the unit and integration tests, without the doc tests (examples of the
# API's computing, the same on every system; the ones that open files are no_run) and
# without the messages past 4 GiB (the same arithmetic as on x86_64 Linux, where they
# run).
say "Windows: the library's tests under Wine (scripts/windows-wine.sh)"
win=0
scripts/windows-wine.sh --lib --tests -- --skip past_4_gib --skip more_than_4_gib || win=$?
case $win in
    0) cargo clippy --target x86_64-pc-windows-gnu -p md5x -p md5x-py --lib -- -D warnings ;;
    2) say "Windows: NOT RUN (Wine, MinGW or the Rust target could not be set up here)" ;;
    *) exit "$win" ;;
esac
if rustup target add x86_64-apple-darwin aarch64-apple-darwin >/dev/null 2>&1; then
    for t in x86_64-apple-darwin aarch64-apple-darwin; do
        say "macOS ($t): cargo clippy --workspace --lib --bins"
        cargo clippy --target "$t" --workspace --lib --bins -- -D warnings
    done
else
    say "macOS: NOT RUN (rustup could not add the apple-darwin targets here)"
fi

# Python-side tests: S3 ETags against a real S3 API (moto's server on 127.0.0.1).
say "pytest (S3 ETags against moto)"
make_venv
# The Python module first: its ETags are checked against S3 too. It is built once, for
# the stable ABI of 3.11 and later, and that wheel serves 3.12+ below as well.
rm -rf target/wheels
.venv/bin/python -m pip wheel -q --disable-pip-version-check --no-deps -w target/wheels ./crates/md5x-py
wheel=$(echo target/wheels/md5x-*-abi3-*.whl)
[ -f "$wheel" ] || { echo "no abi3 wheel of md5x was built: $(ls target/wheels)" >&2; exit 1; }
# (--force-reinstall: a venv left by an earlier run holds the same version number.)
.venv/bin/python -m pip install -q --disable-pip-version-check 'moto[server]>=5,<6' 'boto3>=1.34' 'pytest>=8' numpy 'mypy>=1.11'
.venv/bin/python -m pip install -q --disable-pip-version-check --force-reinstall --no-deps "$wheel"
.venv/bin/python -m pytest -q -rs tests/s3

say "pytest (Python module md5x against hashlib)"
.venv/bin/python -m pytest -q -rs tests/python

# The Python suite again, in a venv of its own (made once) with the interpreter given,
# and the module given (the wheel above, or its source to build).
pytest_in_venv() {
    local venv=$1 python=$2 module=$3
    [ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check pytest numpy 'mypy>=1.11'
    "$venv/bin/python" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps "$module"
    "$venv/bin/python" -m pytest -q -rs tests/python
}

# Some tests need Python 3.12+ (buffers exported by Python code, PEP 688) and skip on
# an older interpreter: the suite runs again under the newest 3.12+ this machine has
# (the module is built for the stable ABI of 3.11 and later), in a venv under target/.
# (pyenv's shims run only the selected version: its installs are looked at directly.)
newer=
pyenv_root=$(pyenv root 2>/dev/null) || pyenv_root=
for py in python3.14 python3.13 python3.12 \
    $(ls -d "$pyenv_root"/versions/3.1[2-9]* 2>/dev/null | sort -rV | sed 's|$|/bin/python3|'); do
    if "$py" -c 'import sys, venv; assert sys.version_info >= (3, 12)' >/dev/null 2>&1; then
        newer=$py
        break
    fi
done
if [ -n "$newer" ]; then
    say "pytest again under $($newer --version) (the tests for 3.12+)"
    pytest_in_venv target/venv-newer "$newer" "$wheel"
else
    say "pytest under Python 3.12+: NOT RUN (no python3.12 or later here; the tests for 3.12+ skipped above)"
fi

# The suite once more under the free-threaded CPython 3.14t built beside the steps
# above (from s390x on): the module must import without turning the GIL back on, and
# tests/python/test_threads.py's threads then run in parallel in its code (a lost
# update there fails only without a GIL).
if [ -n "$ft_pid" ]; then
    say "free-threaded CPython $ft_version: waiting for its build (started before s390x)"
    wait "$ft_pid" || ft_status=$?
fi
if [ "$ft_status" = 2 ]; then
    say "pytest under free-threaded CPython: NOT RUN (CPython $ft_version's source could not be fetched from proxy.golang.org)"
else
    if [ "$ft_status" != 0 ]; then
        # (The log is this run's only where the build started; a failed fetch said why.)
        [ -z "$ft_pid" ] || tail -n 40 target/cpython-build.log >&2
        echo "free-threaded CPython $ft_version: fetching or building it failed (above)" >&2
        exit 1
    fi
    "$ft/bin/python3" -c 'import sysconfig; assert sysconfig.get_config_var("Py_GIL_DISABLED")'
    say "pytest again under $("$ft/bin/python3" -VV | head -1)"
    # (A free-threaded build has no stable ABI: the module is built for it.)
    pytest_in_venv "target/venv-ft-$ft_version" "$ft/bin/python3" ./crates/md5x-py
fi

say "Rust $msrv, Miri and the fuzzers (started before the release tests): their report"
mf=0
wait "$miri_pid" || mf=$?
cat target/miri-fuzz.log
[ "$mf" = 0 ] || { echo "The check with Rust $msrv, Miri or a fuzz target failed (above)" >&2; exit "$mf"; }
if [ -n "$emu_pid" ]; then
    say "AVX-512 under emulation (started before aarch64): its report"
    emu=0
    wait "$emu_pid" || emu=$?
    cat target/avx512-emu.log
    case $emu in
        0) ;;
        2) say "AVX-512 emulation: NOT RUN (the emulator could not be set up here)" ;;
        *) exit "$emu" ;;
    esac
fi
bg_pids=()
say "all tests passed"
