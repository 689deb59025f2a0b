//! Which kernel runs: the [`Backend`] enum, CPU detection (done once, cached in an
//! atomic) and the process-wide override (`MD5X_BACKEND`, or [`Backend::force`]).

use core::fmt;
use core::str::FromStr;
use core::sync::atomic::{AtomicU8, Ordering};

use crate::kernels;

/// Run-time detection of an x86-64 feature for a lane backend (`std`), else whether
/// the build enables it; never under Miri.
macro_rules! lane_feature_detected {
    ($f:tt) => {{
        #[cfg(all(
            target_arch = "x86_64",
            target_pointer_width = "64",
            feature = "std",
            not(miri)
        ))]
        {
            std::arch::is_x86_feature_detected!($f)
        }
        #[cfg(all(
            target_arch = "x86_64",
            target_pointer_width = "64",
            not(feature = "std"),
            not(miri)
        ))]
        {
            cfg!(target_feature = $f)
        }
        #[cfg(any(not(all(target_arch = "x86_64", target_pointer_width = "64")), miri))]
        {
            false
        }
    }};
}

/// A set of MD5 kernels this crate can run.
///
/// Every backend computes exactly the same digests; they differ only in speed. The
/// process uses [`Backend::active`], which is the best backend for this CPU unless the
/// environment variable `MD5X_BACKEND` names another one (or [`Backend::force`] was
/// called). Tests and benchmarks pick backends explicitly with [`Md5::with_backend`].
///
/// ```
/// use md5x::Backend;
/// let best = Backend::detected();
/// assert!(best.is_supported());
/// assert!(Backend::all_supported().any(|b| b == Backend::Portable));
/// assert_eq!("portable".parse::<Backend>().unwrap(), Backend::Portable);
/// ```
///
/// [`Md5::with_backend`]: crate::Md5::with_backend
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Backend {
    /// Safe, portable Rust: runs everywhere, the reference for all other kernels.
    Portable,
    /// Tuned scalar x86-64 assembly: one message at MD5's latency floor (x86-64 only),
    /// in the general registers, or on Intel's cores with AVX512VL in lane 0 of `xmm`
    /// registers.
    X86_64,
    /// Multi-buffer SSE2 lanes (x86-64): 4 messages per vector register; single
    /// messages use the x86-64 kernel in the general registers.
    Sse2,
    /// Multi-buffer AVX2 lanes (x86-64): 8 messages per vector register, in
    /// interleaved groups; single messages use the x86-64 kernel in the general
    /// registers.
    Avx2,
    /// Multi-buffer AVX-512 lanes (x86-64, AVX512F): 16 messages per vector register;
    /// single messages use the x86-64 kernel.
    Avx512,
    /// Multi-buffer NEON lanes (aarch64): 4 messages per vector register; single
    /// messages use the portable kernel.
    Neon,
    /// Multi-buffer WebAssembly SIMD lanes (wasm32 built with `simd128`): 4 messages
    /// per vector; single messages use the portable kernel.
    Simd128,
}

impl Backend {
    /// Every backend this build knows, from the slowest to the fastest.
    pub const ALL: &'static [Backend] = &[
        Backend::Portable,
        Backend::X86_64,
        Backend::Sse2,
        Backend::Avx2,
        Backend::Avx512,
        Backend::Neon,
        Backend::Simd128,
    ];

    /// The backend's name, as `MD5X_BACKEND` and `--backend` spell it.
    pub const fn name(self) -> &'static str {
        match self {
            Backend::Portable => "portable",
            Backend::X86_64 => "x86_64",
            Backend::Sse2 => "sse2",
            Backend::Avx2 => "avx2",
            Backend::Avx512 => "avx512",
            Backend::Neon => "neon",
            Backend::Simd128 => "simd128",
        }
    }

    /// Whether this CPU can run the backend.
    pub fn is_supported(self) -> bool {
        match self {
            Backend::Portable => true,
            // Miri cannot run inline assembly.
            Backend::X86_64 => {
                cfg!(all(target_arch = "x86_64", target_pointer_width = "64")) && !cfg!(miri)
            }
            // The lane backends' single-stream path is the x86-64 kernel, so Miri
            // runs none of them either.
            Backend::Sse2 => {
                cfg!(all(target_arch = "x86_64", target_pointer_width = "64")) && !cfg!(miri)
            }
            Backend::Avx2 => lane_feature_detected!("avx2"),
            Backend::Avx512 => lane_feature_detected!("avx512f"),
            // ISAs that the build enables or not (wasm has no run-time detection):
            // supported where their kernel is compiled in, by their files' `cfg`.
            Backend::Neon => kernels::neon::kernel(1).is_some(),
            Backend::Simd128 => kernels::simd128::kernel(1).is_some(),
        }
    }

    /// The fastest backend this CPU supports, detected once and cached.
    pub fn detected() -> Backend {
        static DETECTED: AtomicU8 = AtomicU8::new(UNSET);
        if let Some(b) = Self::from_code(DETECTED.load(Ordering::Relaxed)) {
            return b;
        }
        let best = Self::ALL
            .iter()
            .rev()
            .copied()
            .find(|b| b.is_supported())
            .unwrap_or(Backend::Portable);
        DETECTED.store(best.code(), Ordering::Relaxed);
        best
    }

    /// The backends this CPU can run, slowest first.
    pub fn all_supported() -> impl Iterator<Item = Backend> + Clone {
        Self::ALL.iter().copied().filter(|b| b.is_supported())
    }

    /// The backend new hashers use: the one forced with [`Backend::force`], else the
    /// one `MD5X_BACKEND` names, else [`Backend::detected`]. Cached after the first call.
    ///
    /// # Panics
    ///
    /// If `MD5X_BACKEND` names an unknown backend, or one this CPU cannot run: md5x never
    /// falls back silently from a backend it was told to use. Programs that want to
    /// report that error themselves call [`Backend::from_env`] first.
    pub fn active() -> Backend {
        if let Some(b) = Self::from_code(ACTIVE.load(Ordering::Relaxed)) {
            return b;
        }
        Self::init_active()
    }

    #[cold]
    fn init_active() -> Backend {
        let chosen = match Self::from_env() {
            Ok(Some(b)) => b,
            Ok(None) => Self::detected(),
            Err(e) => panic!("MD5X_BACKEND: {e}"),
        };
        // A concurrent `force` wins over the environment.
        match ACTIVE.compare_exchange(UNSET, chosen.code(), Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => chosen,
            Err(code) => Self::from_code(code).unwrap_or(chosen),
        }
    }

    /// The backend `MD5X_BACKEND` names: `Ok(None)` when it is unset or empty, an error
    /// when it names an unknown backend or one this CPU cannot run.
    pub fn from_env() -> Result<Option<Backend>, BackendError> {
        #[cfg(feature = "std")]
        {
            match std::env::var_os("MD5X_BACKEND") {
                None => Ok(None),
                Some(v) if v.is_empty() => Ok(None),
                Some(v) => {
                    let s = v.to_string_lossy();
                    s.parse::<Backend>()?.require_supported().map(Some)
                }
            }
        }
        #[cfg(not(feature = "std"))]
        {
            Ok(None)
        }
    }

    /// Make every hasher created from now on in this process use `backend`.
    ///
    /// ```
    /// use md5x::Backend;
    /// Backend::force(Backend::Portable).unwrap();
    /// assert_eq!(Backend::active(), Backend::Portable);
    /// ```
    pub fn force(backend: Backend) -> Result<(), BackendError> {
        let b = backend.require_supported()?;
        ACTIVE.store(b.code(), Ordering::Relaxed);
        Ok(())
    }

    /// Panic unless this CPU runs it: the check each entry point that is handed a
    /// backend makes before it hashes (the panic their `# Panics` sections name).
    #[track_caller]
    pub(crate) fn assert_supported(self) {
        assert!(
            self.is_supported(),
            "md5x: backend '{self}' is not supported by this CPU"
        );
    }

    /// `Ok(self)` if this CPU runs it, else an error naming the backends it does run.
    pub fn require_supported(self) -> Result<Backend, BackendError> {
        if self.is_supported() {
            Ok(self)
        } else {
            Err(BackendError::unsupported(self))
        }
    }

    /// Compress whole blocks with this backend's single-stream kernel.
    #[inline]
    pub(crate) fn compress(self, state: &mut [u32; 4], blocks: &[[u8; 64]]) {
        match self {
            Backend::Portable => kernels::portable::compress(state, blocks),
            #[cfg(all(target_arch = "x86_64", target_pointer_width = "64"))]
            Backend::X86_64 | Backend::Avx512 => kernels::x86_64::compress(state, blocks),
            #[cfg(not(all(target_arch = "x86_64", target_pointer_width = "64")))]
            Backend::X86_64 => unreachable!("x86_64 backend on another architecture"),
            #[cfg(all(target_arch = "x86_64", target_pointer_width = "64"))]
            Backend::Sse2 | Backend::Avx2 => kernels::x86_64::compress_gpr(state, blocks),
            #[cfg(not(all(target_arch = "x86_64", target_pointer_width = "64")))]
            Backend::Sse2 | Backend::Avx2 | Backend::Avx512 => {
                unreachable!("x86-64 lane backend on another architecture")
            }
            Backend::Neon | Backend::Simd128 => kernels::portable::compress(state, blocks),
        }
    }

    /// Messages this backend hashes side by side in one core's vector lanes: 1 for the
    /// single-stream backends, else the lanes [`hash_many`](crate::hash_many) and
    /// [`Lanes`](crate::Lanes) fill (vector width times interleaved groups).
    ///
    /// ```
    /// assert_eq!(md5x::Backend::Portable.lanes(), 1);
    /// ```
    pub fn lanes(self) -> usize {
        self.lane_kernel().map_or(1, |k| k.lanes)
    }

    /// This backend's multi-buffer kernel with its default group count, if it has one
    /// and this CPU runs it.
    pub(crate) fn lane_kernel(self) -> Option<kernels::lanes::LaneKernel> {
        let groups = match self {
            Backend::Sse2 => kernels::sse2::GROUPS,
            Backend::Avx2 => kernels::avx2::GROUPS,
            Backend::Avx512 => kernels::avx512::GROUPS,
            Backend::Neon => kernels::neon::GROUPS,
            Backend::Simd128 => kernels::simd128::GROUPS,
            _ => return None,
        };
        self.lane_kernel_groups(groups)
    }

    /// The lanes of one group of this backend's lane kernels (the vector's 32-bit
    /// words), whether or not this CPU runs them; `None` for single-stream backends.
    pub(crate) const fn group_width(self) -> Option<usize> {
        match self {
            Backend::Sse2 => Some(kernels::sse2::WIDTH),
            Backend::Avx2 => Some(kernels::avx2::WIDTH),
            Backend::Avx512 => Some(kernels::avx512::WIDTH),
            Backend::Neon => Some(kernels::neon::WIDTH),
            Backend::Simd128 => Some(kernels::simd128::WIDTH),
            Backend::Portable | Backend::X86_64 => None,
        }
    }

    /// Relative throughput of this backend's lane kernel with 1, 2 and 3 groups when
    /// every lane is busy (2 groups = 100); `None` for single-stream backends.
    pub(crate) fn group_speed(self) -> Option<[u32; 3]> {
        match self {
            Backend::Sse2 => Some(kernels::sse2::SPEED),
            Backend::Avx2 => Some(kernels::avx2::speed()),
            Backend::Avx512 => Some(kernels::avx512::speed()),
            Backend::Neon => Some(kernels::neon::SPEED),
            Backend::Simd128 => Some(kernels::simd128::SPEED),
            _ => None,
        }
    }

    /// This backend's multi-buffer kernel with `groups` interleaved groups (1 to 3).
    pub(crate) fn lane_kernel_groups(self, groups: usize) -> Option<kernels::lanes::LaneKernel> {
        match self {
            Backend::Sse2 => kernels::sse2::kernel(groups),
            Backend::Avx2 => kernels::avx2::kernel(groups),
            Backend::Avx512 => kernels::avx512::kernel(groups),
            Backend::Neon => kernels::neon::kernel(groups),
            Backend::Simd128 => kernels::simd128::kernel(groups),
            _ => None,
        }
    }

    /// [`Self::lane_kernel_groups`] through the generic lane algorithm (`lanes.rs` over
    /// the ISA's primitives), where a hand-scheduled kernel is the default (SSE2, AVX2,
    /// AVX-512); the same kernel elsewhere.
    pub(crate) fn lane_kernel_generic(self, groups: usize) -> Option<kernels::lanes::LaneKernel> {
        match self {
            Backend::Sse2 => kernels::sse2::kernel_generic(groups),
            Backend::Avx2 => kernels::avx2::kernel_generic(groups),
            Backend::Avx512 => kernels::avx512::kernel_generic(groups),
            _ => self.lane_kernel_groups(groups),
        }
    }

    /// Whether this backend's lane kernels are hand-scheduled rather than the generic
    /// lane algorithm (SSE2's, AVX2's and AVX-512's: `kernels/sse2_asm.rs`,
    /// `kernels/avx2_asm.rs` and `kernels/avx512_asm.rs`).
    pub(crate) fn hand_scheduled_lanes(self) -> bool {
        matches!(self, Backend::Sse2 | Backend::Avx2 | Backend::Avx512)
    }

    const fn code(self) -> u8 {
        self as u8 + 1
    }

    fn from_code(code: u8) -> Option<Backend> {
        Self::ALL.get(usize::from(code).checked_sub(1)?).copied()
    }
}

const UNSET: u8 = 0;
static ACTIVE: AtomicU8 = AtomicU8::new(UNSET);

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Backend {
    type Err = BackendError;

    /// Parse a backend name (`portable`, `x86_64`, ...), ignoring ASCII case and
    /// surrounding whitespace.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .iter()
            .copied()
            .find(|b| b.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| BackendError::unknown(s))
    }
}

/// A backend was named that does not exist, or that this CPU cannot run.
#[derive(Clone, PartialEq, Eq)]
pub struct BackendError {
    /// `None`: the name is unknown; `Some(b)`: `b` is known but unsupported here.
    backend: Option<Backend>,
    name: [u8; 32],
    name_len: u8,
}

impl BackendError {
    fn unknown(name: &str) -> Self {
        let mut buf = [0u8; 32];
        // Keep at most 32 bytes of the name, cut at a character boundary.
        let mut len = name.len().min(32);
        while !name.is_char_boundary(len) {
            len -= 1;
        }
        buf[..len].copy_from_slice(&name.as_bytes()[..len]);
        BackendError {
            backend: None,
            name: buf,
            name_len: len as u8,
        }
    }

    fn unsupported(b: Backend) -> Self {
        let mut e = Self::unknown(b.name());
        e.backend = Some(b);
        e
    }

    /// The backend that was asked for, when it is a known one.
    pub fn backend(&self) -> Option<Backend> {
        self.backend
    }

    /// The name that was asked for (at most its first 32 bytes).
    pub fn name(&self) -> &str {
        core::str::from_utf8(&self.name[..usize::from(self.name_len)]).unwrap_or("?")
    }
}

impl fmt::Debug for BackendError {
    /// The backend and the name as text (not the name's inline buffer).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BackendError")
            .field("backend", &self.backend)
            .field("name", &self.name())
            .finish()
    }
}

impl fmt::Display for BackendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.backend {
            None => {
                write!(f, "unknown backend '{}' (known: ", self.name())?;
                list(f, Backend::ALL.iter().copied())?;
                f.write_str(")")?;
            }
            Some(b) => write!(f, "backend '{b}' is not supported by this CPU")?,
        }
        f.write_str("; this CPU supports: ")?;
        list(f, Backend::all_supported())
    }
}

fn list(f: &mut fmt::Formatter<'_>, it: impl Iterator<Item = Backend>) -> fmt::Result {
    for (i, b) in it.enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        f.write_str(b.name())?;
    }
    Ok(())
}

impl core::error::Error for BackendError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for &b in Backend::ALL {
            assert_eq!(b.name().parse::<Backend>(), Ok(b));
            assert_eq!(b.name().to_ascii_uppercase().parse::<Backend>(), Ok(b));
            assert_eq!(Backend::from_code(b.code()), Some(b));
        }
        assert_eq!(Backend::from_code(UNSET), None);
    }

    #[test]
    fn unknown_name_is_an_error_listing_supported() {
        let e = "sse9".parse::<Backend>().unwrap_err();
        assert_eq!(e.backend(), None);
        assert_eq!(e.name(), "sse9");
        let msg = e.to_string();
        assert!(msg.contains("unknown backend 'sse9'"), "{msg}");
        assert!(msg.contains("this CPU supports: portable"), "{msg}");
        // Debug shows the name as text, not its inline buffer.
        let debug = alloc::format!("{e:?}");
        assert_eq!(debug, r#"BackendError { backend: None, name: "sse9" }"#);
        // A long name is kept to its first 32 bytes, cut before a character that
        // would not fit whole.
        let long = "x".repeat(40);
        assert_eq!(long.parse::<Backend>().unwrap_err().name(), &long[..32]);
        let wide = alloc::format!("a{}", "\u{e9}".repeat(20));
        let e = wide.parse::<Backend>().unwrap_err();
        assert_eq!(e.name(), &wide[..31]);
        assert!(e.to_string().contains(&alloc::format!("'{}'", &wide[..31])));
    }

    #[test]
    fn detected_is_supported_and_best() {
        let d = Backend::detected();
        assert!(d.is_supported());
        assert_eq!(Some(d), Backend::all_supported().last());
    }
}
