#!/usr/bin/env bash
# Fetch GNU md5sum from another Debian release and print the path of a program that runs
# it, for the compatibility suite: MD5SUM=$(scripts/coreutils-release.sh trixie) cargo
# test --release -p md5x-cli --test compat.
#
# md5x does what coreutils 9.7 (Debian 13, "trixie") does where releases differ (README,
# "The command"); the machines CI runs on have Debian 12's 9.1. This takes coreutils,
# libc6 and libssl3t64 from the release's archive on deb.debian.org, unpacks them under
# $CACHE/<release>/root (nothing is installed on the system), and builds a small wrapper
# that starts that md5sum with that release's dynamic loader and libraries, keeping
# argv[0] (the suite runs md5sum as "md5sum", whose name starts its messages).
#
# Usage: scripts/coreutils-release.sh [RELEASE]     (default trixie)
# Environment: CACHE (default /tmp/md5x-coreutils), MIRROR (default
# http://deb.debian.org/debian), CC (default cc).
# Prints the wrapper's path on stdout; exits 2, saying why on stderr, where it cannot.
set -euo pipefail

REL=${1:-trixie}
CACHE=${CACHE:-/tmp/md5x-coreutils}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
CC=${CC:-cc}
DIR=$CACHE/$REL
ROOT=$DIR/root
WRAP=$DIR/md5sum
fail() { echo "coreutils-release: $*" >&2; exit 2; }

if [ -x "$WRAP" ] && "$WRAP" --version >/dev/null 2>&1; then
    echo "$WRAP"
    exit 0
fi
for t in curl xz dpkg-deb "$CC"; do
    command -v "$t" >/dev/null || fail "needs $t"
done
mkdir -p "$DIR"
curl -fsS --retry 3 -o "$DIR/Packages.xz" "$MIRROR/dists/$REL/main/binary-amd64/Packages.xz" ||
    fail "could not fetch $MIRROR/dists/$REL/main/binary-amd64/Packages.xz"
xz -dc "$DIR/Packages.xz" >"$DIR/Packages" || fail "could not unpack $REL's package index"
rm -rf "$ROOT"
mkdir -p "$ROOT"
for pkg in coreutils libc6 libssl3t64; do
    file=$(awk -v p="Package: $pkg" '$0 == p { on = 1 } on && /^Filename: / { print $2; exit }' \
        "$DIR/Packages")
    [ -n "$file" ] || fail "no $pkg in $REL"
    curl -fsS --retry 3 -o "$DIR/pkg.deb" "$MIRROR/$file" || fail "could not fetch $file"
    dpkg-deb -x "$DIR/pkg.deb" "$ROOT" || fail "could not unpack $file"
    rm -f "$DIR/pkg.deb"
done
rm -f "$DIR/Packages" "$DIR/Packages.xz"
LIB=$ROOT/usr/lib/x86_64-linux-gnu
[ -x "$LIB/ld-linux-x86-64.so.2" ] && [ -x "$ROOT/usr/bin/md5sum" ] ||
    fail "no loader or md5sum in what $REL holds"

# execv(loader, [loader, --library-path, LIB, --argv0, argv[0], md5sum, args...])
cat >"$DIR/wrap.c" <<'EOF'
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv) {
    char **a = calloc((size_t)argc + 6, sizeof *a);
    int n = 0;
    if (!a) return 127;
    a[n++] = LIB "/ld-linux-x86-64.so.2";
    a[n++] = "--library-path";
    a[n++] = LIB;
    a[n++] = "--argv0";
    a[n++] = argv[0];
    a[n++] = ROOT "/usr/bin/md5sum";
    for (int i = 1; i < argc; i++) a[n++] = argv[i];
    execv(a[0], a);
    return 127;
}
EOF
"$CC" -O2 -DLIB="\"$LIB\"" -DROOT="\"$ROOT\"" -o "$WRAP" "$DIR/wrap.c" ||
    fail "could not build the wrapper"
"$WRAP" --version >/dev/null 2>&1 || fail "$REL's md5sum does not run here"
echo "$WRAP"
