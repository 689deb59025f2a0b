//! Which x86-64 core this is, for the few tuning choices that were measured to differ
//! between cores of one ISA: AVX2's table and prefetch on AMD's Zen generations
//! (`avx2.rs`), AVX-512's group speeds and loops on Intel's cores and where its 4-lane
//! `xmm` kernel runs (Intel, Zen 4: `avx512.rs`), and the single-stream kernel's
//! AVX-512 variant, Intel's only (`x86_64.rs`). Read with `cpuid` once, then cached.
//! Correctness never depends on it: every answer picks among kernels that compute the
//! same digests.

/// Read: neither AMD nor Intel (0 in the cache means not read yet).
const OTHER: u32 = 1;
/// Read: Intel (no family or model kept: nothing uses them).
const INTEL: u32 = 2;
/// Read: AMD, with `family << 8 | model` in the low 16 bits.
#[cfg(all(target_arch = "x86_64", target_pointer_width = "64", not(miri)))]
const AMD: u32 = 0x1_0000;

/// This CPU, as one of the constants above: [`read`] once, then cached.
fn id() -> u32 {
    use core::sync::atomic::{AtomicU32, Ordering};
    static ID: AtomicU32 = AtomicU32::new(0);
    let mut id = ID.load(Ordering::Relaxed);
    if id == 0 {
        id = read();
        ID.store(id, Ordering::Relaxed);
    }
    id
}

/// The vendor (and AMD's family and model) from `cpuid`.
#[cfg(all(target_arch = "x86_64", target_pointer_width = "64", not(miri)))]
fn read() -> u32 {
    use core::arch::x86_64::__cpuid;
    // SAFETY: `cpuid` exists on every x86-64 CPU; leaves 0 and 1 always do.
    // (A safe function in newer Rust; `unsafe` before, hence the allow.)
    #[allow(unused_unsafe)]
    let (vendor, sig) = unsafe { (__cpuid(0), __cpuid(1)) };
    // Family: base 0xF plus the extended family field; model: the extended model field
    // above the base one.
    let family = ((sig.eax >> 8) & 0xF) + ((sig.eax >> 20) & 0xFF);
    let model = ((sig.eax >> 4) & 0xF) | ((sig.eax >> 12) & 0xF0);
    match (vendor.ebx, vendor.edx, vendor.ecx) {
        // "AuthenticAMD"
        (0x6874_7541, 0x6974_6e65, 0x444d_4163) => AMD | (family & 0xFF) << 8 | model,
        // "GenuineIntel"
        (0x756e_6547, 0x4965_6e69, 0x6c65_746e) => INTEL,
        _ => OTHER,
    }
}

/// No `cpuid` here (another architecture, or Miri): no tuning by vendor.
#[cfg(not(all(target_arch = "x86_64", target_pointer_width = "64", not(miri))))]
fn read() -> u32 {
    OTHER
}

/// An AMD CPU's family and model (with their extended fields), `None` on other vendors.
/// (Only AVX2's x86-64 kernels ask.)
#[cfg(all(target_arch = "x86_64", target_pointer_width = "64", not(miri)))]
pub(crate) fn amd_family_model() -> Option<(u32, u32)> {
    let id = id();
    (id & AMD != 0).then_some(((id >> 8) & 0xFF, id & 0xFF))
}

/// Whether this is an AMD CPU of the given family (25: Zen 3 and Zen 4, of which only
/// Zen 4 has AVX-512; 26: Zen 5). False on other vendors.
#[cfg(all(target_arch = "x86_64", target_pointer_width = "64", not(miri)))]
pub(crate) fn amd_family(family: u32) -> bool {
    let id = id();
    id & AMD != 0 && (id >> 8) & 0xFF == family
}

/// Whether this is an Intel CPU.
pub(crate) fn intel() -> bool {
    id() == INTEL
}

#[cfg(test)]
mod tests {
    /// The vendor, family and model agree with what Linux read (`/proc/cpuinfo`).
    #[test]
    #[cfg(all(
        target_os = "linux",
        target_arch = "x86_64",
        target_pointer_width = "64",
        not(miri)
    ))]
    fn agrees_with_proc_cpuinfo() {
        let info = std::fs::read_to_string("/proc/cpuinfo").expect("/proc/cpuinfo");
        let field = |name: &str| -> std::string::String {
            let line = info
                .lines()
                .find(|l| l.split(':').next().map(str::trim) == Some(name));
            line.and_then(|l| l.split(':').nth(1))
                .unwrap_or("")
                .trim()
                .into()
        };
        let vendor = field("vendor_id");
        std::eprintln!(
            "cpu: {vendor}, family {}, model {}",
            field("cpu family"),
            field("model")
        );
        assert_eq!(super::intel(), vendor == "GenuineIntel");
        match super::amd_family_model() {
            Some((family, model)) => {
                assert_eq!(vendor, "AuthenticAMD");
                assert_eq!(field("cpu family"), std::format!("{family}"));
                assert_eq!(field("model"), std::format!("{model}"));
            }
            None => assert_ne!(vendor, "AuthenticAMD"),
        }
    }
}
