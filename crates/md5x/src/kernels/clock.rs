//! The clock's yardstick: a chain of dependent one-cycle `add`s in inline assembly.
//!
//! Each `add` reads the result of the one before it, so the chain runs at exactly one
//! add per core cycle on any out-of-order core, whatever its width; the compiler cannot
//! fold it because it cannot see into the `asm!`. `crate::clock` times this chain next
//! to the work it measures, which turns seconds into core cycles without performance
//! counters (and without `rdtsc`, whose ticks are not core cycles on most machines).
//!
//! The addend is a register, never an immediate. Intel's cores since Golden Cove fold a
//! chain of `add reg, imm` at rename (it costs no execution cycle): on a Xeon of that
//! kind (family 6 model 0xA7 as the guest reports it, 2026-11-25) `add x, 1` ran 16.7
//! per nanosecond, while `add x, y`, `xor x, y`, `lea`, and the 3-cycle `imul` and
//! `crc32` chains all agreed on a 4.16 GHz clock. The renamer does not know a
//! register's value, so `add x, y` stays one cycle per add, as it is on every AMD core.

/// Dependent adds per loop iteration. The loop counter (`dec`/`jnz`) is a second,
/// independent chain that runs alongside, so an iteration costs `CHAIN` cycles.
pub(crate) const CHAIN: u64 = 1000;

/// Whether [`add_chain`] is the exact one-add-per-cycle assembly chain on this target
/// (x86-64 and aarch64), rather than the approximate fallback.
pub(crate) const EXACT: bool = cfg!(any(
    all(target_arch = "x86_64", target_pointer_width = "64"),
    target_arch = "aarch64"
));

/// Run `iters * CHAIN` dependent adds; returns their sum, `iters * CHAIN`.
#[inline(never)]
pub(crate) fn add_chain(iters: u64) -> u64 {
    let mut x: u64 = 0;
    if iters == 0 {
        return x;
    }
    #[cfg(all(target_arch = "x86_64", target_pointer_width = "64"))]
    {
        let mut n = iters;
        // SAFETY: register arithmetic only: no memory, no stack, and the loop ends
        // because `n` starts at 1 or more and falls by one per iteration.
        unsafe {
            core::arch::asm!(
                "2:",
                ".rept 1000",
                "add {x}, {one}",
                ".endr",
                "dec {n}",
                "jnz 2b",
                x = inout(reg) x,
                n = inout(reg) n,
                one = in(reg) 1u64,
                options(nomem, nostack),
            );
        }
        let _ = n;
    }
    #[cfg(target_arch = "aarch64")]
    {
        let mut n = iters;
        // SAFETY: register arithmetic only: no memory, no stack, and the loop ends
        // because `n` starts at 1 or more and falls by one per iteration.
        unsafe {
            core::arch::asm!(
                "2:",
                ".rept 1000",
                "add {x}, {x}, {one}",
                ".endr",
                "subs {n}, {n}, #1",
                "b.ne 2b",
                x = inout(reg) x,
                n = inout(reg) n,
                one = in(reg) 1u64,
                options(nomem, nostack),
            );
        }
        let _ = n;
    }
    #[cfg(not(any(
        all(target_arch = "x86_64", target_pointer_width = "64"),
        target_arch = "aarch64"
    )))]
    {
        // No assembly here: an opaque dependent chain, slower than one add per cycle,
        // so the clock reads low (see `EXACT`).
        for _ in 0..iters * CHAIN {
            x = core::hint::black_box(x.wrapping_add(1));
        }
    }
    x
}

#[cfg(test)]
mod tests {
    #[test]
    #[cfg_attr(miri, ignore = "inline assembly")]
    fn chain_counts_every_add() {
        assert_eq!(super::add_chain(0), 0);
        assert_eq!(super::add_chain(3), 3 * super::CHAIN);
    }
}
