//! Which x86-64 core this is, for the few tuning choices that were measured to differ
//! between cores of one ISA: AVX2's table and prefetch on AMD's Zen generations
//! (`avx2.rs`), AVX-512's group speeds on Intel's cores (`avx512.rs`), and the size of
//! the last-level cache (`hash_many`'s lane count for long messages from memory on
//! Intel, `many.rs`). Read with `cpuid` once, then cached. Correctness never depends on
//! it: every answer picks among kernels that compute the same digests.

/// Read: neither AMD nor Intel (0 in the cache means not read yet).
const OTHER: u32 = 1;
/// Read: Intel (no family or model kept: nothing uses them).
const INTEL: u32 = 2;
/// Read: AMD, with `family << 8 | model` in the low 16 bits.
#[cfg(all(target_arch = "x86_64", not(miri)))]
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
#[cfg(all(target_arch = "x86_64", not(miri)))]
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
#[cfg(not(all(target_arch = "x86_64", not(miri))))]
fn read() -> u32 {
    OTHER
}

/// An AMD CPU's family and model (with their extended fields), `None` on other vendors.
/// (Only AVX2's x86-64 kernels ask.)
#[cfg(all(target_arch = "x86_64", not(miri)))]
pub(crate) fn amd_family_model() -> Option<(u32, u32)> {
    let id = id();
    (id & AMD != 0).then_some(((id >> 8) & 0xFF, id & 0xFF))
}

/// Whether this is an Intel CPU.
pub(crate) fn intel() -> bool {
    id() == INTEL
}

/// The size in bytes of the largest cache at the last level, as `cpuid` describes it
/// (Intel's leaf 4, AMD's 0x8000001D: the same layout), read once; `None` where
/// `cpuid` does not say (another vendor or architecture, Miri, a hypervisor that hides
/// the leaf). A guest sees what its hypervisor reports, which is what Linux reports
/// in `/sys/devices/system/cpu/cpu0/cache` too.
pub(crate) fn last_level_cache() -> Option<u64> {
    use core::sync::atomic::{AtomicU64, Ordering};
    // 0: not read yet; 1: read, no answer; otherwise the size.
    static LLC: AtomicU64 = AtomicU64::new(0);
    let mut size = LLC.load(Ordering::Relaxed);
    if size == 0 {
        size = read_last_level_cache().unwrap_or(1).max(1);
        LLC.store(size, Ordering::Relaxed);
    }
    (size > 1).then_some(size)
}

#[cfg(all(target_arch = "x86_64", not(miri)))]
fn read_last_level_cache() -> Option<u64> {
    use core::arch::x86_64::{__cpuid, __cpuid_count};
    let id = id();
    // SAFETY: `cpuid` exists on every x86-64 CPU; leaves 0 and 0x80000000 always do,
    // and they say which other leaves exist, which are then the only ones asked.
    #[allow(unused_unsafe)]
    let leaf = unsafe {
        if id == INTEL && __cpuid(0).eax >= 4 {
            4
        } else if id & AMD != 0
            && __cpuid(0x8000_0000).eax >= 0x8000_001D
            // Topology extensions: leaf 0x8000001D is there.
            && __cpuid(0x8000_0001).ecx & (1 << 22) != 0
        {
            0x8000_001D
        } else {
            return None;
        }
    };
    let mut best: Option<(u32, u64)> = None;
    // (Sub-leaves end at a cache type of 0; 16 is far more than any CPU has.)
    for sub in 0..16 {
        // SAFETY: as above; the leaf exists, and any sub-leaf may be asked.
        #[allow(unused_unsafe)]
        let r = unsafe { __cpuid_count(leaf, sub) };
        let kind = r.eax & 0x1F;
        if kind == 0 {
            break;
        }
        // Data (1) and unified (3) caches; not instruction caches (2).
        if kind == 2 {
            continue;
        }
        let level = (r.eax >> 5) & 0x7;
        let ways = u64::from((r.ebx >> 22) + 1);
        let partitions = u64::from(((r.ebx >> 12) & 0x3FF) + 1);
        let line = u64::from((r.ebx & 0xFFF) + 1);
        let sets = u64::from(r.ecx) + 1;
        let size = ways * partitions * line * sets;
        // The highest level, and the largest cache there (`Option` and tuples order
        // that way).
        best = best.max(Some((level, size)));
    }
    best.map(|(_, size)| size)
}

#[cfg(not(all(target_arch = "x86_64", not(miri))))]
fn read_last_level_cache() -> Option<u64> {
    None
}

#[cfg(test)]
mod tests {
    /// The vendor, family and model agree with what Linux read (`/proc/cpuinfo`).
    #[test]
    #[cfg(all(target_os = "linux", target_arch = "x86_64", not(miri)))]
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

    /// The last-level cache's size agrees with what Linux read (the largest data or
    /// unified cache at the highest level under `/sys/devices/system/cpu/cpu0/cache`,
    /// sizes such as `32768K`), where both say.
    #[test]
    #[cfg(all(target_os = "linux", target_arch = "x86_64", not(miri)))]
    fn last_level_cache_agrees_with_sysfs() {
        let mut linux: Option<(u32, u64)> = None;
        for i in 0..16 {
            let dir = std::format!("/sys/devices/system/cpu/cpu0/cache/index{i}");
            let read = |f: &str| std::fs::read_to_string(std::format!("{dir}/{f}")).ok();
            let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size"))
            else {
                continue;
            };
            if kind.trim() == "Instruction" {
                continue;
            }
            let level: u32 = level.trim().parse().expect("a level");
            let size = size.trim();
            let bytes: u64 = match size.strip_suffix('K') {
                Some(k) => k.parse::<u64>().expect("a size") * 1024,
                None => match size.strip_suffix('M') {
                    Some(m) => m.parse::<u64>().expect("a size") << 20,
                    None => size.parse().expect("a size"),
                },
            };
            linux = linux.max(Some((level, bytes)));
        }
        let ours = super::last_level_cache();
        std::eprintln!("last-level cache: cpuid {ours:?}, Linux {linux:?}");
        match (ours, linux) {
            (Some(ours), Some((_, linux))) => assert_eq!(ours, linux),
            // (A hypervisor may hide the leaf, and a container the files.)
            _ => std::eprintln!("cache sizes: not compared (one side does not say)"),
        }
    }
}
