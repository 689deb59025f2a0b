#!/usr/bin/env bash
# Run md5x's test binaries on an emulated AVX-512 CPU.
#
# Neither qemu's TCG nor this project's machines (AMD Zen 1) run AVX-512, so this boots
# Debian's stock kernel in Bochs (full-system emulation; Debian's bochs 2.7 is built
# with EVEX support) with a CPU model that has AVX-512F/CD/BW/DQ/VL, from an ISO whose
# initramfs holds busybox and md5x's statically linked test binaries. The guest's init
# runs each binary with MD5X_BACKEND=avx512 (the process default backend; it panics if
# the CPU cannot run it), prints markers with each exit status on the serial console,
# and powers off. This script reads the serial log and exits non-zero unless the guest
# reported avx512f, every binary passed, and avx512 was among the backends run.
#
# Exit status: 0 all passed; 1 a test failed, the guest lacked AVX-512 or did not finish;
# 2 the emulator could not be set up here (packages, kernel, build): nothing was run.
#
# scripts/test.sh runs it with the library's unit tests, scalar_kernels and many_lanes
# (about 10 minutes on 2 cores: 3.5 to boot, 4 for many_lanes); the rest on demand:
#   EMU_BINS="chains server vectors digest_traits backend_env" scripts/avx512-emu.sh
# (chains took 25 minutes, server 4, under emulation on a Zen 1.)
#
# Usage: scripts/avx512-emu.sh [TEST_FILTER...]
#   Filters (libtest name substrings) are passed to every binary.
# Environment (all optional):
#   EMU_WORK          scratch folder                       (/tmp/emu-work)
#   CARGO_TARGET_DIR  cargo's target folder                (/tmp/emu-target)
#   EMU_CPU           Bochs cpu model                      (corei7_skylake_x;
#                     corei7_icelake_u and tigerlake also have AVX-512)
#   EMU_BINS          which test binaries, in order        (see BINS below)
#   EMU_BACKEND       MD5X_BACKEND in the guest, '' = unset (avx512)
#   EMU_TIMEOUT       seconds before the guest is killed   (5400)
#   EMU_IPS           Bochs instructions per emulated second (200000000)
#   EMU_SKIP          test names to --skip in every binary (more_than_4_gib and the
#                     past_4_gib tests, which hash 4 GiB and more on the job manager's
#                     arithmetic, the same for every backend, and run natively on
#                     x86_64 and i686: under Bochs the first had not ended in 22
#                     minutes, on a Zen 3 machine, 2026-11-30; and the
#                     tests that run python3, which the guest lacks, always are)
#   EMU_KARGS         extra kernel arguments               (clearcpuid=xsaves,xsavec)
#   EMU_SKIP_APT=1    do not apt-get install the tools
#   EMU_SKIP_BUILD=1  reuse the test binaries from the last build
#   EMU_SETUP_ONLY=1  install the tools, fetch the kernel, build the test binaries, and
#                     exit (0, or 2 as above) without booting: scripts/test.sh does
#                     this in the foreground (apt-get must not run beside its own), then
#                     boots with EMU_SKIP_APT=1 EMU_SKIP_BUILD=1 in the background
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=${EMU_WORK:-/tmp/emu-work}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/tmp/emu-target}
CPU=${EMU_CPU:-corei7_skylake_x}
BACKEND=${EMU_BACKEND-avx512}
TIMEOUT=${EMU_TIMEOUT:-5400}
IPS=${EMU_IPS:-200000000}
# lib = the library's unit tests. backend_env sets MD5X_BACKEND itself for its children
# and runs without it. vectors' 4 GiB test is skipped (hours under emulation).
BINS=${EMU_BINS:-"md5x scalar_kernels many_lanes"}
FILTERS=("$@")
# Bochs 2.7 reports the standard-format XSAVE area size (2688) in CPUID.(0xD,1).EBX,
# where the compacted size (2432) belongs; Linux then finds an "XSAVE consistency
# problem" and turns XSAVE off, and with it AVX, AVX2 and AVX-512. Hiding XSAVES and
# XSAVEC makes the kernel use the standard format, whose sizes Bochs reports right.
KARGS=${EMU_KARGS-clearcpuid=xsaves,xsavec}

mkdir -p "$WORK"
log() { printf '[avx512-emu] %s\n' "$*" >&2; }
# Until the guest boots, a failure means the emulator could not be set up: exit 2.
trap 'log "setup failed (line $LINENO): nothing was run"; exit 2' ERR

# --- 1. tools -------------------------------------------------------------------------
PKGS=(bochs bochsbios vgabios bochs-x xvfb xauth isolinux syslinux-common xorriso cpio
      busybox-static util-linux jq)
if [[ ${EMU_SKIP_APT:-0} != 1 ]]; then
  missing=()
  for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    log "installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
fi

# --- 2. kernel: Debian's current stock amd64 image ------------------------------------
kimg() { apt-cache depends linux-image-amd64 2>/dev/null |
         awk '/Depends: linux-image-[0-9]/ {print $2; exit}'; }
KIMG=$(kimg)
[[ -n $KIMG ]] || { apt-get update -qq; KIMG=$(kimg); }
KVER=${KIMG#linux-image-}
VMLINUZ=$WORK/kernel/boot/vmlinuz-$KVER
if [[ ! -f $VMLINUZ ]]; then
  log "fetching kernel $KIMG"
  rm -rf "$WORK/kernel" "$WORK"/linux-image-*.deb
  (cd "$WORK" && apt-get download "$KIMG" 2>&1 | grep -v "^W: Download is performed unsandboxed" || true)
  dpkg-deb -x "$WORK"/"$KIMG"_*.deb "$WORK/kernel"
fi

# --- 3. static test binaries ----------------------------------------------------------
HOST=x86_64-unknown-linux-gnu
if [[ ${EMU_SKIP_BUILD:-0} != 1 || ! -f $WORK/build.json ]]; then
  log "building md5x's tests (static; the profile cross: release without LTO)"
  # Only the test binaries BINS names (md5x: the library's unit tests).
  sel=()
  for b in $BINS; do
    if [[ $b == md5x ]]; then sel+=(--lib); else sel+=(--test "$b"); fi
  done
  # --target keeps build scripts and proc-macros dynamic; only the tests are static.
  (cd "$ROOT" && RUSTFLAGS="-C target-feature=+crt-static" \
     cargo test -p md5x --profile cross --no-run --target $HOST --message-format=json "${sel[@]}" \
     >"$WORK/build.json.new" 2>"$WORK/build.err") ||
    { tail -30 "$WORK/build.err" >&2; exit 1; }
  mv "$WORK/build.json.new" "$WORK/build.json"
fi

if [[ ${EMU_SETUP_ONLY:-0} == 1 ]]; then
  log "set up: tools, kernel $KVER and the test binaries are ready"
  exit 0
fi

# --- 4. initramfs ---------------------------------------------------------------------
RD=$WORK/initramfs
rm -rf "$RD"
mkdir -p "$RD"/{bin,sbin,proc,sys,dev,tmp,tests,etc}
cp /bin/busybox "$RD/bin/busybox"
for b in $BINS; do
  exe=$(jq -r --arg n "$b" 'select(.reason=="compiler-artifact" and .profile.test==true
          and .target.name==$n and .executable!=null) | .executable' "$WORK/build.json" | tail -1)
  [[ -n $exe && -x $exe ]] || { log "no test binary named $b"; exit 1; }
  file -b "$exe" | grep -q "static" || { log "$exe is not static"; exit 1; }
  cp "$exe" "$RD/tests/$b"
done

{
  echo '#!/bin/busybox sh'
  echo "BINS='$BINS'"
  echo "BACKEND='$BACKEND'"
  printf 'FILTERS=%q\n' "${FILTERS[*]:-}"
  skips=""; for n in more_than_4_gib past_4_gib python ${EMU_SKIP:-}; do skips="$skips --skip $n"; done
  echo "SKIPS='$skips'"
  cat <<'EOF'
/bin/busybox --install -s /bin
export PATH=/bin:/sbin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mount -t tmpfs tmp /tmp
export TMPDIR=/tmp HOME=/tmp RUST_BACKTRACE=1
echo "EMU-BOOTED"
echo "EMU-CPU-MODEL: $(grep -m1 '^model name' /proc/cpuinfo)"
echo "EMU-CPU-FLAGS: $(grep -m1 '^flags' /proc/cpuinfo)"
echo "EMU-MEM: $(grep -m1 MemTotal /proc/meminfo)"
dmesg | grep -iE "fpu|xsave|xstate|avx" | sed 's/^/EMU-DMESG: /'
for t in $BINS; do
  args="--test-threads=1 $SKIPS"
  echo "EMU-START $t"
  if [ "$t" = backend_env ] || [ -z "$BACKEND" ]; then
    env -u MD5X_BACKEND /tests/$t $args $FILTERS 2>&1
  else
    env MD5X_BACKEND="$BACKEND" /tests/$t $args $FILTERS 2>&1
  fi
  echo "EMU-END $t rc=$?"
done
echo "EMU-ALL-DONE"
# poweroff -f does not wait for the serial port to drain what is queued for it.
sleep 10
poweroff -f
EOF
} >"$RD/init"
chmod +x "$RD/init"
(cd "$RD" && find . | cpio -o -H newc --quiet) >"$WORK/initrd.img"

# --- 5. bootable ISO (isolinux) -------------------------------------------------------
ISO=$WORK/iso
rm -rf "$ISO"
mkdir -p "$ISO/isolinux" "$ISO/boot"
cp /usr/lib/ISOLINUX/isolinux.bin /usr/lib/syslinux/modules/bios/ldlinux.c32 "$ISO/isolinux/"
cp "$VMLINUZ" "$ISO/boot/vmlinuz"
cp "$WORK/initrd.img" "$ISO/boot/initrd.img"
cat >"$ISO/isolinux/isolinux.cfg" <<EOF
SERIAL 0 115200
DEFAULT md5x
PROMPT 0
TIMEOUT 0
LABEL md5x
  KERNEL /boot/vmlinuz
  APPEND initrd=/boot/initrd.img console=ttyS0,115200 rdinit=/init panic=-1 mitigations=off loglevel=4 $KARGS
EOF
xorriso -as mkisofs -quiet -o "$WORK/boot.iso" -b isolinux/isolinux.bin -c isolinux/boot.cat \
  -no-emul-boot -boot-load-size 4 -boot-info-table "$ISO" 2>/dev/null

# --- 6. Bochs -------------------------------------------------------------------------
SERIAL=$WORK/serial.txt
cat >"$WORK/bochsrc" <<EOF
# display: X on a private Xvfb (Debian's bochs has no 'nogui'; its 'term' library
# writes the screen to a pty of its own that nobody reads, and hangs once that fills)
display_library: x
config_interface: textconfig
memory: guest=2048, host=2048
cpu: model=$CPU, count=1, ips=$IPS, reset_on_triple_fault=1, ignore_bad_msrs=1
romimage: file=/usr/share/bochs/BIOS-bochs-latest
vgaromimage: file=/usr/share/vgabios/vgabios.bin
pci: enabled=1, chipset=i440fx
ata0: enabled=1, ioaddr1=0x1f0, ioaddr2=0x3f0, irq=14
ata0-master: type=cdrom, path=$WORK/boot.iso, status=inserted
boot: cdrom
com1: enabled=1, mode=file, dev=$SERIAL
clock: sync=none, time0=utc
mouse: enabled=0
log: $WORK/bochs.log
panic: action=fatal
error: action=report
info: action=report
debug: action=ignore
EOF

trap - ERR
rm -f "$SERIAL" "$WORK/bochs.log" "$WORK/timed.txt"
: >"$SERIAL"
log "booting $KIMG in Bochs, cpu model $CPU (timeout ${TIMEOUT}s)"
T0=$(date +%s)
# Debian's bochs has its debugger built in: it stops at a prompt before the first
# instruction, so -rc feeds it 'continue'. setsid: one process group to stop at the end.
echo c >"$WORK/bochs-debugger.rc"
setsid xvfb-run -a -s "-screen 0 1024x768x24 -nolisten tcp" \
  bochs-bin -q -f "$WORK/bochsrc" -rc "$WORK/bochs-debugger.rc" \
  </dev/null >"$WORK/bochs-screen.txt" 2>&1 &
BPID=$!
# Stamp each serial line with host seconds since boot (own process group, to stop it).
T0=$T0 SERIAL=$SERIAL setsid bash -c 'tail -n +1 -F "$SERIAL" 2>/dev/null |
  while IFS= read -r line; do
    line=${line%$'"'"'\r'"'"'}
    printf "%5d %s\n" $(( $(date +%s) - T0 )) "$line"
  done' >"$WORK/timed.txt" 2>/dev/null </dev/null &
TPID=$!
cleanup() {
  kill -- -"$BPID" 2>/dev/null || true
  kill -- -"$TPID" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM
status=timeout
while :; do
  if grep -q "^EMU-ALL-DONE" "$SERIAL" 2>/dev/null; then status=done; sleep 2; break; fi
  if ! kill -0 "$BPID" 2>/dev/null; then
    status=exited; grep -q "^EMU-ALL-DONE" "$SERIAL" && status=done; break
  fi
  if (( $(date +%s) - T0 > TIMEOUT )); then break; fi
  sleep 2
done
ELAPSED=$(( $(date +%s) - T0 ))
sleep 1
cleanup
trap - EXIT
tr -d '\r' <"$SERIAL" >"$WORK/serial.clean.txt"

# --- 7. report ------------------------------------------------------------------------
S=$WORK/serial.clean.txt
echo "=== Bochs $CPU, kernel $KVER: guest $status after ${ELAPSED}s (serial log: $SERIAL)"
grep -m1 "^EMU-CPU-MODEL" "$S" || true
flags=$(grep -m1 "^EMU-CPU-FLAGS" "$S" || true)
echo "AVX-512 flags: $(tr ' ' '\n' <<<"$flags" | grep -E '^avx512' | tr '\n' ' ')"
fail=0
grep -qw avx512f <<<"$flags" || { echo "FAIL: guest CPU flags lack avx512f"; fail=1; }
ran_avx512=0
for b in $BINS; do
  start=$(awk -v b="$b" '$2=="EMU-START" && $3==b {print $1; exit}' "$WORK/timed.txt")
  end=$(awk -v b="$b" '$2=="EMU-END" && $3==b {print $1; exit}' "$WORK/timed.txt")
  endl=$(awk -v b="$b" '$2=="EMU-END" && $3==b {print $4; exit}' "$WORK/timed.txt")
  section=$(awk -v b="$b" '$0=="EMU-START " b {on=1; next} on && /^EMU-END / {exit} on' "$S")
  result=$(grep -E "^test result:" <<<"$section" | tail -1 || true)
  backends=$(grep -o "md5x backends run here: .*" <<<"$section" | head -1 || true)
  grep -q "md5x backends run here: .*avx512" <<<"$section" && ran_avx512=1
  if [[ -z $endl ]]; then
    echo "--- $b: did not finish"; fail=1; continue
  fi
  rc=${endl##*rc=}
  secs=$(( end - start ))
  echo "--- $b: rc=$rc, ${secs}s wall; ${result:-no result line}"
  [[ -n $backends ]] && echo "    $backends"
  if [[ $rc != 0 ]]; then
    fail=1
    grep -E "^test .*FAILED$|panicked|^failures:|^    [a-z_:]+$|^---- " <<<"$section" | head -40 | sed 's/^/    /'
  fi
done
[[ $ran_avx512 == 1 ]] || { echo "FAIL: no binary reported avx512 among the backends run"; fail=1; }
[[ $status == done ]] || { echo "FAIL: guest $status before finishing"; tail -20 "$S"; fail=1; }
if [[ $fail == 0 ]]; then echo "=== PASS: all binaries passed on emulated $CPU with avx512 run"; fi
exit $fail
