#!/usr/bin/env bash
# Run the library's tests as a Windows program: built for x86_64-pc-windows-gnu with
# Debian's MinGW cross compiler and run under Wine, so the code that only Windows
# compiles (positioned reads with `seek_read`, paths, no `/dev` or `/proc`) runs here.
#
# The tests that take Python's hashlib as their reference say NOT RUN (a Windows
# process under Wine cannot start the Linux python3; MD5X_TEST_NO_PYTHON=1): the md-5
# crate is the reference of their neighbours. Debian 12's Wine 8 lacks
# bcryptprimitives.dll, which Rust's std imports: scripts/wine-prng.c stands in for it.
#
# Exit status: 0 all passed; 1 a test failed, or the run hung and was stopped; 2 Wine,
# MinGW or the Rust target could not be set up here: nothing was run.
# Environment (optional): WINE_SKIP_APT=1 does not apt-get install wine64 and MinGW;
# extra arguments go to `cargo test` (e.g. `--test vectors`).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
TARGET=x86_64-pc-windows-gnu
setup_failed() { echo "windows-wine.sh: $*" >&2; exit 2; }

if [ -z "${WINE_SKIP_APT:-}" ] && command -v apt-get >/dev/null 2>&1; then
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends wine64 gcc-mingw-w64-x86-64; } >/dev/null 2>&1 ||
        setup_failed "apt-get could not install wine64 and gcc-mingw-w64-x86-64"
fi
WINE=$(command -v wine64 || true)
[ -n "$WINE" ] || WINE=/usr/lib/wine/wine64
[ -x "$WINE" ] || setup_failed "no wine64 here"
command -v x86_64-w64-mingw32-gcc >/dev/null || setup_failed "no MinGW cross compiler here"
rustup target add "$TARGET" >/dev/null 2>&1 || setup_failed "rustup could not add $TARGET"

# A Wine prefix of our own under target/, with the stand-in DLL in its system folder.
export WINEPREFIX="$ROOT/target/wine-prefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
SERVER="${WINE%64}server"
[ -x "$SERVER" ] || SERVER=$(command -v wineserver || true)
[ -n "$SERVER" ] || setup_failed "no wineserver here"
if [ ! -f "$WINEPREFIX/system.reg" ]; then
    "$WINE" wineboot --init >/dev/null 2>&1 || true
    "$SERVER" -w 2>/dev/null || true
fi
sys32="$WINEPREFIX/drive_c/windows/system32"
[ -d "$sys32" ] || setup_failed "Wine did not make its prefix at $WINEPREFIX"
x86_64-w64-mingw32-gcc -shared -O2 -o "$sys32/bcryptprimitives.dll" scripts/wine-prng.c \
    -ladvapi32 || setup_failed "MinGW could not build scripts/wine-prng.c"

export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER="$WINE"
export MD5X_TEST_NO_PYTHON=1
# One Wine server for the whole run, kept up until the end: by default it exits a few
# seconds after its last process, and a test binary that started just then failed once
# (2026-11-29: "wine client error:0: recvmsg: Connection reset by peer", before any
# test ran).
"$SERVER" -k 2>/dev/null || true
"$SERVER" -p || setup_failed "could not start a persistent wineserver"
trap '"$SERVER" -k 2>/dev/null || true' EXIT
# The first Wine process of a server starts Wine's own services (services.exe,
# winedevice.exe, rpcss.exe, ...), and they inherit its standard error and live as
# long as the server. When that first process was a doctest, its standard error was
# rustdoc's pipe, which rustdoc reads to the end: the doctest hung until the timeout,
# every time with a fresh server (2026-12-02: `wine64 x.exe 2>&1 | cat` hangs after
# `wineserver -k; wineserver -p`, and does not once the services are up). So they are
# started here, by a process whose standard streams go nowhere.
timeout -k 10 120 "$WINE" cmd.exe /c exit 0 </dev/null >/dev/null 2>&1 ||
    setup_failed "Wine could not start its services (cmd.exe /c exit 0 failed)"
# A run is stopped after 10 minutes (it takes 2-4, building included). Wine itself
# has failed now and then: on 2026-12-02 a doctest that only reads the CPU's features
# (`Backend`'s, the first one run) exited 1 with no output in one CI run of two on the
# same code; the first doctest's hangs in runs of the doctests alone were the services'
# inherited pipe (above). So a failed or stopped run is run once more, in full, and the
# script fails only if that fails too; the first run's output stays in the log above
# the notice.
for attempt in 1 2; do
    rc=0
    timeout -k 30 600 cargo test -p md5x --profile cross --target "$TARGET" "$@" || rc=$?
    [ "$rc" != 0 ] || exit 0
    [ "$rc" != 124 ] || echo "windows-wine.sh: stopped after 10 minutes (a hang under Wine?)" >&2
    echo "windows-wine.sh: attempt $attempt of 2 failed (exit $rc)" >&2
done
exit 1
