//! What the fuzz targets share: the references they compare md5x with, the backends
//! to run, and the byte pool that long messages are cut from.
//!
//! MD5's code paths depend on lengths and on how input arrives, never on the bytes'
//! values, so the targets take lengths, offsets and schedules from the fuzzer and cut
//! long messages from a fixed pseudo-random pool (the fuzzer's own bytes are short).

use std::sync::OnceLock;

use arbitrary::Arbitrary;
use md5_ref::Digest as _;
use md5x::{Backend, Digest};

/// Bytes in [`pool`]: past the lanes' 8 KiB slot buffer, the AVX-512 staged loop's
/// 16 blocks and the server's 4 KiB batches many times over, plus an offset.
pub const POOL: usize = (256 << 10) + 64;

/// Bytes one input may hash per backend (per run for `many`), so that it takes
/// milliseconds.
pub const MAX_BYTES: usize = 4 << 20;

/// Which of `n` live items (slots, streams) an operation's index `i` names.
pub fn pick(i: u8, n: usize) -> usize {
    usize::from(i) % n
}

/// A fixed pseudo-random buffer (xorshift64*), the same in every run.
pub fn pool() -> &'static [u8] {
    static POOL_BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    POOL_BYTES.get_or_init(|| {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        (0..POOL)
            .map(|_| {
                x ^= x >> 12;
                x ^= x << 25;
                x ^= x >> 27;
                (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8
            })
            .collect()
    })
}

/// MD5 by RustCrypto's `md-5`, the second implementation.
pub fn reference(data: &[u8]) -> Digest {
    Digest::from(<[u8; 16]>::from(md5_ref::Md5::digest(data)))
}

/// An `md-5` hasher fed as md5x is, to compare at any point.
#[derive(Clone, Default)]
pub struct Reference {
    md5: md5_ref::Md5,
    len: u64,
}

impl Reference {
    /// Feed bytes.
    pub fn update(&mut self, data: &[u8]) {
        self.md5.update(data);
        self.len += data.len() as u64;
    }

    /// The digest so far; the hasher goes on.
    pub fn digest(&self) -> Digest {
        Digest::from(<[u8; 16]>::from(self.md5.clone().finalize()))
    }

    /// Bytes fed so far.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether nothing was fed.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// MD5-P(K) from its definition (docs/modes.md): block i to chain i mod K, then MD5
/// over the chains' digests.
pub fn md5_par_reference(data: &[u8], k: usize) -> Digest {
    let mut chains = vec![md5_ref::Md5::new(); k];
    for (i, block) in data.chunks(64).enumerate() {
        chains[i % k].update(block);
    }
    let mut outer = md5_ref::Md5::new();
    for c in chains {
        outer.update(c.finalize());
    }
    Digest::from(<[u8; 16]>::from(outer.finalize()))
}

/// Every backend this CPU runs (the portable one first).
pub fn backends() -> Vec<Backend> {
    Backend::all_supported().collect()
}

/// Where a message's bytes come from: the fuzzer's own bytes, or the pool.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub struct Cut {
    /// From the pool (long messages), else from the fuzzer's bytes.
    pub from_pool: bool,
    pub offset: u16,
    pub len: u32,
}

impl Cut {
    /// The bytes this cut names, kept in bounds: from the pool, up to 256 KiB at any
    /// of the 64 offsets within a line, or (the offset's top bit set) ending where the
    /// pool's allocation ends, so that a read past a message's end is one past the
    /// buffer (AddressSanitizer reports it); from `own`, whatever part of it fits.
    /// A pool message's length is `len`'s low 30 bits modulo 256 B, 4 KiB, 64 KiB or
    /// 256 KiB, as its top two bits say: short messages, where padding and lane
    /// endings vary most, are as likely as long ones.
    pub fn bytes<'a>(&self, own: &'a [u8]) -> &'a [u8] {
        if self.from_pool {
            let most = [256, 4096, 65536, POOL - 64][(self.len >> 30) as usize];
            let len = (self.len & 0x3fff_ffff) as usize % (most + 1);
            let start = match self.offset & 0x8000 {
                0 => usize::from(self.offset) % 64,
                _ => POOL - len,
            };
            &pool()[start..start + len]
        } else {
            let start = usize::from(self.offset).min(own.len());
            let len = (self.len as usize).min(own.len() - start);
            &own[start..start + len]
        }
    }
}

/// `data` cut into pieces whose sizes come from `sizes` in turn, at most 1024 of
/// them, then the rest as one piece (which may be empty: an empty update).
pub fn pieces<'a>(data: &'a [u8], sizes: &[u16]) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    let mut rest = data;
    let turns = if sizes.is_empty() { 0 } else { 1024 };
    for &size in sizes.iter().cycle().take(turns) {
        if rest.is_empty() {
            break;
        }
        let (piece, tail) = rest.split_at(usize::from(size).min(rest.len()));
        out.push(piece);
        rest = tail;
    }
    out.push(rest);
    out
}
