//! Multi-chain modes: MD5-P(K) (RFC 1810's block-interleaved chains) and the S3
//! multipart ETag. See `docs/modes.md` for their definitions and test vectors.
//!
//! Both cut one message into independent MD5 chains and hash the concatenated chain
//! digests. The results are not MD5 digests of the message: never print one where a
//! plain MD5 is expected.

use core::fmt;
use core::str::FromStr;

use crate::hasher::{finish, state_to_digest, Buffered, INIT};
use crate::many::MAX_LANES;
use crate::{Backend, Digest, Md5};

/// MD5 of the empty string: the digest of a chain that got no block.
const EMPTY_MD5: Digest = Digest::new([
    0xd4, 0x1d, 0x8c, 0xd9, 0x8f, 0x00, 0xb2, 0x04, 0xe9, 0x80, 0x09, 0x98, 0xec, 0xf8, 0x42, 0x7e,
]);

/// An invalid chain count for MD5-P(K): K must be 4, 8 or 16.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvalidChainCount(pub usize);

impl fmt::Display for InvalidChainCount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MD5-P(K) needs K = 4, 8 or 16, not {}", self.0)
    }
}

impl core::error::Error for InvalidChainCount {}

/// MD5-P(K) of `data`: K chains of interleaved 64-byte blocks, then MD5 of their digests.
///
/// ```
/// // docs/modes.md: MD5-P8 of the empty message.
/// let d = md5x::chains::md5_par(b"", 8).unwrap();
/// assert_eq!(d.to_string(), "e7dd4330655dc61ec7f53e526532adfa");
/// assert!(md5x::chains::md5_par(b"", 5).is_err());
/// ```
pub fn md5_par(data: &[u8], k: usize) -> Result<Digest, InvalidChainCount> {
    let mut h = ParMd5::new(k)?;
    h.update(data);
    Ok(h.finalize())
}

/// Streaming MD5-P(K): full blocks go to the chains round-robin as they arrive, so it
/// needs no look-ahead; [`finalize`](ParMd5::finalize) pads every chain on its own.
///
/// ```
/// let mut h = md5x::chains::ParMd5::new(4).unwrap();
/// h.update(b"hello ");
/// h.update(b"world");
/// assert_eq!(h.finalize(), md5x::chains::md5_par(b"hello world", 4).unwrap());
/// ```
#[derive(Clone)]
pub struct ParMd5 {
    k: usize,
    states: [[u32; 4]; 16],
    /// Full blocks taken so far (mod 2^64).
    blocks: u64,
    buf: [u8; 64],
    buf_len: u8,
    backend: Backend,
}

impl ParMd5 {
    /// A new MD5-P(K) hasher; `k` is 4, 8 or 16.
    pub fn new(k: usize) -> Result<Self, InvalidChainCount> {
        Self::with_backend(k, Backend::active())
    }

    /// A new MD5-P(K) hasher on a chosen backend: its lane kernel runs the K chains
    /// side by side; a single-stream backend runs them one after the other.
    ///
    /// ```
    /// use md5x::{chains::ParMd5, Backend};
    /// let mut h = ParMd5::with_backend(16, Backend::Portable).unwrap();
    /// h.update([7u8; 5000]);
    /// assert_eq!(h.finalize(), md5x::chains::md5_par(&[7u8; 5000], 16).unwrap());
    /// ```
    ///
    /// # Panics
    ///
    /// If this CPU cannot run `backend` (see [`Backend::is_supported`]).
    pub fn with_backend(k: usize, backend: Backend) -> Result<Self, InvalidChainCount> {
        if !matches!(k, 4 | 8 | 16) {
            return Err(InvalidChainCount(k));
        }
        backend.assert_supported();
        Ok(ParMd5 {
            k,
            states: [INIT; 16],
            blocks: 0,
            buf: [0; 64],
            buf_len: 0,
            backend,
        })
    }

    /// The number of chains, K.
    pub fn chains(&self) -> usize {
        self.k
    }

    /// Feed more bytes.
    pub fn update(&mut self, data: impl AsRef<[u8]>) {
        let blocks = self.feed(data.as_ref());
        if !blocks.is_empty() {
            self.take_blocks(blocks);
        }
    }

    /// Give consecutive full blocks to their chains.
    fn take_blocks(&mut self, mut blocks: &[[u8; 64]]) {
        let k = self.k;
        // Up to the next multiple of K, block by block.
        while !blocks.is_empty() && !self.blocks.is_multiple_of(k as u64) {
            self.one_block(&blocks[0]);
            blocks = &blocks[1..];
        }
        // Whole rounds of K blocks: chain j takes block j of every round.
        let rounds = blocks.len() / k;
        let (whole, rest) = blocks.split_at(rounds * k);
        compress_rounds(self.backend, &mut self.states[..k], whole);
        self.blocks = self.blocks.wrapping_add(whole.len() as u64);
        for b in rest {
            self.one_block(b);
        }
    }

    fn one_block(&mut self, block: &[u8; 64]) {
        let j = (self.blocks % self.k as u64) as usize;
        self.backend
            .compress(&mut self.states[j], core::slice::from_ref(block));
        self.blocks = self.blocks.wrapping_add(1);
    }

    /// The MD5-P(K) digest of everything fed so far; the hasher is unchanged.
    pub fn finalize(&self) -> Digest {
        let k = self.k as u64;
        let tail_chain = self.blocks % k;
        let mut outer = Md5::with_backend(self.backend);
        for j in 0..k {
            let full = self.blocks / k + u64::from(j < self.blocks % k);
            let tail: &[u8] = if j == tail_chain {
                &self.buf[..usize::from(self.buf_len)]
            } else {
                &[]
            };
            if full == 0 && tail.is_empty() {
                // A chain that got nothing (most of them, for a message under K
                // blocks): its digest is MD5 of the empty string, no compression.
                outer.update(EMPTY_MD5.as_bytes());
                continue;
            }
            let mut s = self.states[j as usize];
            let len = full.wrapping_mul(64).wrapping_add(tail.len() as u64);
            finish(self.backend, &mut s, tail, len);
            outer.update(state_to_digest(&s).as_bytes());
        }
        outer.finalize()
    }

    /// Start over with the same K.
    pub fn reset(&mut self) {
        self.states = [INIT; 16];
        self.blocks = 0;
        self.buf_len = 0;
    }
}

impl Buffered for ParMd5 {
    #[inline(always)]
    fn partial(&mut self) -> (&mut [u8; 64], &mut u8) {
        (&mut self.buf, &mut self.buf_len)
    }

    #[inline(always)]
    fn complete(&mut self) {
        let block = self.buf;
        self.take_blocks(core::slice::from_ref(&block));
    }
}

#[cfg(feature = "std")]
write_by_update! {
    /// Feeds the bytes written, so a reader can be copied in with `std::io::copy`.
    ///
    /// ```
    /// let mut h = md5x::chains::ParMd5::new(8).unwrap();
    /// std::io::copy(&mut &[7u8; 5000][..], &mut h).unwrap();
    /// assert_eq!(h.finalize(), md5x::chains::md5_par(&[7; 5000], 8).unwrap());
    /// ```
    ParMd5, update
}

impl fmt::Debug for ParMd5 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ParMd5")
            .field("k", &self.k)
            .field("blocks", &self.blocks)
            .finish()
    }
}

/// Hash whole rounds: `blocks.len()` is a multiple of `states.len()` (K), and chain j
/// takes blocks j, j + K, j + 2K, ...
///
/// With a lane kernel, the K chains run side by side in the vector lanes, each lane
/// reading its chain's blocks where they lie (a stride of K blocks; no copy). The
/// rounds go in slabs that stay in the L2 cache while every batch of chains reads its
/// share (more than one batch when K exceeds the kernel's lanes, as K = 16 on SSE2).
fn compress_rounds(backend: Backend, states: &mut [[u32; 4]], blocks: &[[u8; 64]]) {
    let k = states.len();
    if blocks.is_empty() {
        return;
    }
    let kernel = backend.lane_kernel().filter(|kern| kern.min_live <= k);
    let Some(kernel) = kernel else {
        // Single-stream backends: chain by chain over a slab that stays in cache.
        for slab in blocks.chunks(k * 64) {
            for (j, state) in states.iter_mut().enumerate() {
                for round in slab.chunks_exact(k) {
                    backend.compress(state, core::slice::from_ref(&round[j]));
                }
            }
        }
        return;
    };
    // 2048 rounds of 16 blocks: 2 MiB; fewer rounds for smaller K (same bytes).
    const SLAB_BYTES: usize = 1 << 21;
    let rounds_per_slab = (SLAB_BYTES / (64 * k)).max(1);
    // Batches of even size: K = 16 on SSE2's 12 lanes runs as two batches of 8 (two
    // groups each), not 12 and then 4 in a lone group, which is latency-bound. (A
    // smaller slab for the second batch to find in L2 was slower from memory.)
    let batches = k.div_ceil(kernel.lanes);
    let per = k
        .div_ceil(batches)
        .next_multiple_of(kernel.width)
        .min(kernel.lanes);
    for slab in blocks.chunks(rounds_per_slab * k) {
        let bytes = slab.as_flattened();
        let rounds = slab.len() / k;
        let mut first = 0;
        while first < k {
            let n = (k - first).min(per);
            let groups = n.div_ceil(kernel.width);
            let kern = crate::many::narrow_for(backend, n)
                .or_else(|| backend.lane_kernel_groups(groups))
                .unwrap_or(kernel);
            let mut views: [&[u8]; MAX_LANES] = [&[]; MAX_LANES];
            let mut st = [0u32; 4 * MAX_LANES];
            for l in 0..kern.lanes {
                // Idle lanes repeat the batch's first chain; their results are dropped.
                let j = first + if l < n { l } else { 0 };
                views[l] = &bytes[64 * j..];
                for w in 0..4 {
                    st[kern.at(l, w)] = states[j][w];
                }
            }
            (kern.strided)(
                &mut st[..4 * kern.lanes],
                &views[..kern.lanes],
                rounds,
                64 * k,
            );
            for l in 0..n {
                states[first + l] = core::array::from_fn(|w| st[kern.at(l, w)]);
            }
            first += n;
        }
    }
}

/// S3 limits on multipart uploads.
pub mod limits {
    /// Smallest part size S3 accepts (all parts but the last): 5 MiB.
    pub const MIN_PART_SIZE: u64 = 5 << 20;
    /// Largest part size: 5 GiB.
    pub const MAX_PART_SIZE: u64 = 5 << 30;
    /// Most parts in one upload.
    pub const MAX_PARTS: u64 = 10_000;
    /// Largest object one PUT uploads (a single PUT's ETag is its MD5): 5 GiB. A
    /// larger object is uploaded in parts, so its ETag is always `hex-N`.
    pub const MAX_PUT_SIZE: u64 = 5 << 30;
    /// The AWS CLI's default part size and multipart threshold: 8 MiB.
    pub const DEFAULT_PART_SIZE: u64 = 8 << 20;

    /// Whether one PUT takes an object of `size` bytes: the error for a larger one
    /// ([`MAX_PUT_SIZE`]). [`ETag::single_put`](super::ETag::single_put) checks this;
    /// callers that know the size before they read (a file's length) check it first.
    ///
    /// ```
    /// use md5x::chains::{limits, EtagError};
    /// assert_eq!(limits::check_single_put(limits::MAX_PUT_SIZE), Ok(()));
    /// let big = limits::MAX_PUT_SIZE + 1;
    /// assert_eq!(limits::check_single_put(big), Err(EtagError::PutTooLarge(big)));
    /// ```
    pub const fn check_single_put(size: u64) -> Result<(), super::EtagError> {
        if size > MAX_PUT_SIZE {
            return Err(super::EtagError::PutTooLarge(size));
        }
        Ok(())
    }
}

/// Why an S3 ETag cannot be computed with these settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EtagError {
    /// The part size is outside S3's 5 MiB ..= 5 GiB.
    PartSize(u64),
    /// The input needs more than 10,000 parts of this size.
    TooManyParts {
        /// Parts the input needs.
        parts: u64,
        /// The part size.
        part_size: u64,
    },
    /// The input is below the threshold, so a single PUT, and larger than one PUT
    /// takes ([`limits::MAX_PUT_SIZE`]); its size in bytes.
    PutTooLarge(u64),
}

impl fmt::Display for EtagError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            EtagError::PartSize(p) => write!(
                f,
                "part size {p} bytes is outside S3's limits ({} to {} bytes)",
                limits::MIN_PART_SIZE,
                limits::MAX_PART_SIZE
            ),
            EtagError::TooManyParts { parts, part_size } => write!(
                f,
                "{parts} parts of {part_size} bytes: S3 allows at most {} parts; use a larger part size",
                limits::MAX_PARTS
            ),
            EtagError::PutTooLarge(size) => write!(
                f,
                "{size} bytes in a single PUT: S3 takes at most {} bytes in one; use a lower threshold",
                limits::MAX_PUT_SIZE
            ),
        }
    }
}

impl core::error::Error for EtagError {}

/// The number of parts a multipart upload of `size` bytes uses, or `None` for a
/// single PUT (`size < threshold`). An empty multipart upload has one (empty) part.
pub fn part_count(size: u64, part_size: u64, threshold: u64) -> Option<u64> {
    if size < threshold {
        None
    } else {
        Some(size.div_ceil(part_size.max(1)).max(1))
    }
}

/// Streaming S3 ETag.
///
/// Below the threshold the ETag is the object's MD5; at or above it, the MD5 of the
/// parts' MD5s followed by `-N`.
///
/// ```
/// use md5x::chains::Etag;
/// let mut e = Etag::new(5 << 20, 5 << 20).unwrap();
/// e.update(b"small object");
/// let tag = e.finalize().unwrap();
/// assert_eq!(tag.parts(), None);
/// assert_eq!(tag.digest(), md5x::md5(b"small object"));
/// ```
#[derive(Clone, Debug)]
pub struct Etag {
    part_size: u64,
    threshold: u64,
    total: u64,
    /// The current part.
    part: Md5,
    /// MD5 of the finished parts' digests, and how many there are.
    outer: Md5,
    parts: u64,
    /// The whole object's MD5, kept only while it may end below the threshold and the
    /// first part does not already cover it.
    whole: Option<Md5>,
}

impl Default for Etag {
    /// The AWS CLI's defaults: 8 MiB parts, 8 MiB threshold.
    fn default() -> Self {
        Self::new(limits::DEFAULT_PART_SIZE, limits::DEFAULT_PART_SIZE)
            .unwrap_or_else(|_| unreachable!("the defaults are within S3's limits"))
    }
}

impl Etag {
    /// An ETag computation with this part size and multipart threshold.
    pub fn new(part_size: u64, threshold: u64) -> Result<Self, EtagError> {
        Self::with_backend(Backend::active(), part_size, threshold)
    }

    /// [`Etag::new`] hashing on `backend` (which the caller checked is supported).
    fn with_backend(backend: Backend, part_size: u64, threshold: u64) -> Result<Self, EtagError> {
        if !(limits::MIN_PART_SIZE..=limits::MAX_PART_SIZE).contains(&part_size) {
            return Err(EtagError::PartSize(part_size));
        }
        let md5 = || Md5::with_backend(backend);
        let whole = (part_size < threshold).then(md5);
        Ok(Etag {
            part_size,
            threshold,
            total: 0,
            part: md5(),
            outer: md5(),
            parts: 0,
            whole,
        })
    }

    /// The part size in bytes.
    pub fn part_size(&self) -> u64 {
        self.part_size
    }

    /// The multipart threshold in bytes.
    pub fn threshold(&self) -> u64 {
        self.threshold
    }

    /// Feed more bytes of the object.
    pub fn update(&mut self, data: impl AsRef<[u8]>) {
        let mut data = data.as_ref();
        if let Some(w) = &mut self.whole {
            if self.total < self.threshold {
                w.update(data);
            }
        }
        self.total = self.total.wrapping_add(data.len() as u64);
        if self.whole.is_some() && self.total >= self.threshold {
            self.whole = None;
        }
        while !data.is_empty() {
            let room = self.part_size - self.part.len();
            let n = room.min(data.len() as u64) as usize;
            self.part.update(&data[..n]);
            data = &data[n..];
            if self.part.len() == self.part_size {
                self.outer.update(self.part.finalize().as_bytes());
                self.parts += 1;
                self.part.reset();
            }
        }
    }

    /// The ETag of everything fed so far; the state is unchanged. An error where it
    /// needs more than 10,000 parts, or, below the threshold, is more than one PUT
    /// takes (5 GiB): no upload could have given it an ETag.
    pub fn finalize(&self) -> Result<ETag, EtagError> {
        let Some(parts) = part_count(self.total, self.part_size, self.threshold) else {
            let d = match &self.whole {
                Some(w) => w.finalize(),
                None => self.part.finalize(),
            };
            return ETag::single_put(d, self.total);
        };
        if parts > limits::MAX_PARTS {
            return Err(EtagError::TooManyParts {
                parts,
                part_size: self.part_size,
            });
        }
        let mut outer = self.outer.clone();
        if !self.part.is_empty() || self.parts == 0 {
            outer.update(self.part.finalize().as_bytes());
        }
        Ok(ETag::multipart(outer.finalize(), parts as u32))
    }
}

#[cfg(feature = "std")]
write_by_update! {
    /// Feeds the bytes written, so an object can be copied in with `std::io::copy` (for
    /// a file, [`etag_file`] reads and hashes its parts side by side, on every core).
    ///
    /// ```
    /// use md5x::chains::Etag;
    /// let body = vec![3u8; 6 << 20];
    /// let mut e = Etag::new(5 << 20, 5 << 20).unwrap();
    /// std::io::copy(&mut &body[..], &mut e).unwrap();
    /// let tag = e.finalize().unwrap();
    /// assert_eq!(tag.parts(), Some(2));
    /// assert_eq!(tag, md5x::chains::s3_etag(&body, 5 << 20, 5 << 20).unwrap());
    /// ```
    Etag, update
}

/// S3 ETag of bytes in memory.
///
/// ```
/// let tag = md5x::chains::s3_etag(&[], 8 << 20, 8 << 20).unwrap();
/// assert_eq!(tag.to_string(), "d41d8cd98f00b204e9800998ecf8427e");
/// ```
pub fn s3_etag(data: &[u8], part_size: u64, threshold: u64) -> Result<ETag, EtagError> {
    let mut e = Etag::new(part_size, threshold)?;
    e.update(data);
    e.finalize()
}

/// An S3 ETag value: a digest, and the part count of a multipart upload.
///
/// Displays as `hex` or `hex-N`; parses either, with or without the double quotes S3
/// puts around it, and a part count only as S3 writes it (1 to 10,000, no leading
/// zeros).
///
/// ```
/// use md5x::chains::ETag;
/// let t: ETag = "\"b92c0b7f108a97d63e0b49bc2bd039d8-3\"".parse().unwrap();
/// assert_eq!(t.parts(), Some(3));
/// assert_eq!(t.to_string(), "b92c0b7f108a97d63e0b49bc2bd039d8-3");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ETag {
    digest: Digest,
    parts: Option<u32>,
}

impl ETag {
    /// The ETag of a single PUT: the object's MD5.
    pub fn single(digest: Digest) -> Self {
        ETag {
            digest,
            parts: None,
        }
    }

    /// The ETag of a single PUT of `size` bytes whose MD5 is `digest`, or the error for
    /// an object larger than one PUT takes ([`limits::MAX_PUT_SIZE`]): no upload gives
    /// such an object its MD5 as its ETag.
    ///
    /// ```
    /// use md5x::chains::{limits, ETag, EtagError};
    /// let d = md5x::md5(b"abc");
    /// assert_eq!(ETag::single_put(d, 3), Ok(ETag::single(d)));
    /// // 5 GiB itself is one PUT; a byte more is not.
    /// assert_eq!(ETag::single_put(d, limits::MAX_PUT_SIZE), Ok(ETag::single(d)));
    /// let big = limits::MAX_PUT_SIZE + 1;
    /// assert_eq!(ETag::single_put(d, big), Err(EtagError::PutTooLarge(big)));
    /// ```
    pub fn single_put(digest: Digest, size: u64) -> Result<Self, EtagError> {
        limits::check_single_put(size)?;
        Ok(ETag::single(digest))
    }

    /// The ETag of a multipart upload of `parts` parts. The count is not checked: S3
    /// makes 1 to 10,000 parts, and only those parse back from the displayed form.
    pub fn multipart(digest: Digest, parts: u32) -> Self {
        ETag {
            digest,
            parts: Some(parts),
        }
    }

    /// The hex part of the ETag.
    pub fn digest(&self) -> Digest {
        self.digest
    }

    /// The part count, for a multipart upload.
    pub fn parts(&self) -> Option<u32> {
        self.parts
    }
}

impl fmt::Display for ETag {
    /// `hex` or `hex-N`, padded to a width where one is given (`{:>40}`), as
    /// [`Digest`]'s `Display` is.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // 32 hex digits, '-', at most 10 digits of a u32: on the stack.
        let mut buf = [0u8; 43];
        buf[..32].copy_from_slice(self.digest.to_hex().as_str().as_bytes());
        let mut len = 32;
        if let Some(n) = self.parts {
            buf[32] = b'-';
            let digits = n.checked_ilog10().unwrap_or(0) as usize + 1;
            let mut v = n;
            for d in buf[33..33 + digits].iter_mut().rev() {
                *d = b'0' + (v % 10) as u8;
                v /= 10;
            }
            len = 33 + digits;
        }
        f.pad(core::str::from_utf8(&buf[..len]).map_err(|_| fmt::Error)?)
    }
}

/// Why a string is not an ETag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParseETagError;

impl fmt::Display for ParseETagError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an S3 ETag is 32 hex digits, optionally followed by -N (N from 1 to 10000)")
    }
}

impl core::error::Error for ParseETagError {}

impl FromStr for ETag {
    type Err = ParseETagError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s
            .strip_prefix('"')
            .and_then(|s| s.strip_suffix('"'))
            .unwrap_or(s);
        let (hex, parts) = match s.split_once('-') {
            None => (s, None),
            Some((hex, n)) => {
                // Digits only, without leading zeros: the one spelling S3 (and
                // `Display`) gives a count.
                if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) || n.starts_with('0') {
                    return Err(ParseETagError);
                }
                let n: u32 = n.parse().map_err(|_| ParseETagError)?;
                if n == 0 || u64::from(n) > limits::MAX_PARTS {
                    return Err(ParseETagError);
                }
                (hex, Some(n))
            }
        };
        let digest = Digest::from_hex(hex).map_err(|_| ParseETagError)?;
        Ok(ETag { digest, parts })
    }
}

/// S3 ETag of a file, hashing many parts at once: side by side in the vector lanes of
/// every core, read with positioned reads.
///
/// Parts of the full part size go in batches of up to [`Backend::lanes`] to a worker
/// thread, which reads a chunk of each part in turn and runs the lane kernel over all
/// of them; a shorter last part is hashed on its own. The file's size is read once at
/// the start; a file of two parts or more that shrinks while it is read is an error
/// (`UnexpectedEof`), never a wrong ETag. What has no size to go by (a pipe, a device,
/// a `/proc` file, which says it is empty), a single PUT (a file below the threshold)
/// and a file of one part (a `/sys` file says 4096 bytes and holds fewer) are read
/// through to their end, in order, on one thread: the ETag is of what was read.
/// Settings outside S3's limits give an `InvalidInput` error carrying the
/// [`EtagError`].
///
/// ```no_run
/// let tag = md5x::chains::etag_file("big.iso", 8 << 20, 8 << 20, 0).unwrap();
/// println!("{tag}");
/// ```
///
/// `threads` = 0 means one per available core.
#[cfg(feature = "std")]
pub fn etag_file(
    path: impl AsRef<std::path::Path>,
    part_size: u64,
    threshold: u64,
    threads: usize,
) -> std::io::Result<ETag> {
    etag_file_with(
        Backend::active(),
        path,
        part_size,
        threshold,
        threads,
        &|_| Ok(()),
    )
}

/// [`etag_file`] on a chosen backend, calling `progress` with the length of each read
/// as it is done, from any of the threads. An error from `progress` stops the work:
/// each thread returns at its next read, and the error is returned (a caller that
/// is told to stop, by a user's Ctrl-C or a deadline, does not wait for the rest of a
/// large file; an `Interrupted` error comes back as `Other`).
///
/// ```no_run
/// use std::sync::atomic::{AtomicU64, Ordering};
/// let read = AtomicU64::new(0);
/// let count = |n| {
///     read.fetch_add(n, Ordering::Relaxed);
///     Ok(())
/// };
/// let backend = md5x::Backend::active();
/// let tag = md5x::chains::etag_file_with(backend, "big.iso", 8 << 20, 8 << 20, 0, &count)?;
/// println!("{tag}: {} bytes", read.load(Ordering::Relaxed));
/// # Ok::<(), std::io::Error>(())
/// ```
///
/// # Panics
///
/// If this CPU cannot run `backend` (see [`Backend::is_supported`]).
#[cfg(feature = "std")]
pub fn etag_file_with(
    backend: Backend,
    path: impl AsRef<std::path::Path>,
    part_size: u64,
    threshold: u64,
    threads: usize,
    progress: &(dyn Fn(u64) -> std::io::Result<()> + Sync),
) -> std::io::Result<ETag> {
    use std::io::{Error, ErrorKind};
    backend.assert_supported();
    let invalid = |e: EtagError| Error::new(ErrorKind::InvalidInput, e);
    // (Also the check of the settings against S3's limits.)
    let mut streaming = Etag::with_backend(backend, part_size, threshold).map_err(invalid)?;
    let file = std::fs::File::open(path)?;
    let meta = file.metadata()?;
    let size = meta.len();
    if meta.is_file() && size < threshold {
        // The single PUT's limit, said before 5 GiB are read for it.
        limits::check_single_put(size).map_err(invalid)?;
    }
    if !meta.is_file() || size == 0 || size < threshold || size <= part_size {
        // What is not a regular file (a pipe, a device), a file that says it is empty
        // (a `/proc` file says so whatever it holds), a single PUT and a file of one
        // part are read through to their end, in order: the ETag is of what the file
        // holds when read (a `/sys` file says 4096 bytes and holds fewer; a file that
        // grows to the threshold meanwhile gets a multipart ETag). One part is one
        // thread's work anyway.
        read_to_end(Reported(&file, progress), &mut streaming)?;
        return streaming.finalize().map_err(invalid);
    }
    // (Not 0: `size` is at least 1, and the part size was checked.)
    let parts = size.div_ceil(part_size);
    if parts > limits::MAX_PARTS {
        return Err(invalid(EtagError::TooManyParts { parts, part_size }));
    }
    let threads = match threads {
        0 => crate::tuning::cores(),
        n => n,
    }
    .clamp(1, parts as usize);
    // Jobs: runs of consecutive full-size parts, at most one kernel's lanes each and
    // spread over the threads; then the short last part, if any, alone.
    let full = if size.is_multiple_of(part_size) {
        parts
    } else {
        parts - 1
    };
    let lanes = backend.lane_kernel().map_or(1, |k| k.lanes) as u64;
    let per_job = lanes.min(full.div_ceil(threads as u64)).max(1);
    let mut jobs: alloc::vec::Vec<(u64, u64)> = (0..full)
        .step_by(per_job as usize)
        .map(|first| (first, per_job.min(full - first)))
        .collect();
    if full < parts {
        jobs.push((full, 1));
    }
    let next = core::sync::atomic::AtomicUsize::new(0);
    let digests = std::sync::Mutex::new(alloc::vec![Digest::new([0; 16]); parts as usize]);
    // One worker: jobs off the shared counter until none are left.
    let work = || -> std::io::Result<()> {
        let mut bufs = alloc::vec::Vec::new();
        loop {
            let i = next.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
            let Some(&(first, count)) = jobs.get(i) else {
                return Ok(());
            };
            let start = first * part_size;
            let len = part_size.min(size - start);
            let out = hash_parts(backend, &file, start, len, count, &mut bufs, progress)?;
            let mut all = digests.lock().unwrap_or_else(|p| p.into_inner());
            all[first as usize..][..out.len()].copy_from_slice(&out);
        }
    };
    std::thread::scope(|s| -> std::io::Result<()> {
        // Fewer threads where a process limit refuses some; none: this one works.
        let workers: alloc::vec::Vec<_> = (0..threads.min(jobs.len()))
            .map_while(|_| std::thread::Builder::new().spawn_scoped(s, work).ok())
            .collect();
        if workers.is_empty() {
            work()?;
        }
        for w in workers {
            w.join().unwrap_or_else(|p| std::panic::resume_unwind(p))?;
        }
        Ok(())
    })?;
    let mut outer = Md5::with_backend(backend);
    for d in digests.into_inner().unwrap_or_else(|p| p.into_inner()) {
        outer.update(d.as_bytes());
    }
    Ok(ETag::multipart(outer.finalize(), parts as u32))
}

/// The S3 ETags of one input for several part sizes at once, read once: for an ETag
/// whose part size is unknown, where every part size that gives its part count is a
/// candidate (`md5x -c` checks `hex-N` lines so). Trying the candidates one after the
/// other reads the input once for each, every one of them for a file whose ETag
/// matches none (a damaged file); here the candidates whose current parts start at the
/// same offset share one MD5, and the distinct ones are hashed side by side in the
/// vector lanes (on up to `threads` threads; 0 means one per core).
///
/// The input is read to its end. Each result is what [`s3_etag`] gives for that part
/// size over the same bytes: an [`EtagError`] for a part size outside S3's limits or
/// an input that needs more than 10,000 parts of it (or, below the threshold, is larger
/// than a single PUT takes). The outer error is the reader's.
///
/// ```
/// use md5x::chains::{etags_by_part_size, s3_etag};
/// let data = vec![7u8; 17 << 20];
/// let sizes = [5 << 20, 8 << 20, 9 << 20];
/// let tags = etags_by_part_size(&data[..], &sizes, 8 << 20, 1).unwrap();
/// for (tag, &p) in tags.iter().zip(&sizes) {
///     assert_eq!(*tag, s3_etag(&data, p, 8 << 20));
/// }
/// ```
#[cfg(feature = "std")]
pub fn etags_by_part_size(
    reader: impl std::io::Read,
    part_sizes: &[u64],
    threshold: u64,
    threads: usize,
) -> std::io::Result<alloc::vec::Vec<Result<ETag, EtagError>>> {
    etags_by_part_size_with(Backend::active(), reader, part_sizes, threshold, threads)
}

/// [`etags_by_part_size`] on a chosen backend.
///
/// # Panics
///
/// If this CPU cannot run `backend` (see [`Backend::is_supported`]).
#[cfg(feature = "std")]
pub fn etags_by_part_size_with(
    backend: Backend,
    mut reader: impl std::io::Read,
    part_sizes: &[u64],
    threshold: u64,
    threads: usize,
) -> std::io::Result<alloc::vec::Vec<Result<ETag, EtagError>>> {
    use alloc::vec::Vec;
    backend.assert_supported();
    /// Read at most this much at a time (less up to the next part boundary).
    const CHUNK: u64 = 1 << 20;
    /// One part size's progress: where its current part starts, and the MD5 of its
    /// finished parts' digests.
    struct Candidate {
        part_size: u64,
        start: u64,
        outer: Md5,
        parts: u64,
    }
    let mut cands: Vec<Result<Candidate, EtagError>> = part_sizes
        .iter()
        .map(|&part_size| match part_size {
            limits::MIN_PART_SIZE..=limits::MAX_PART_SIZE => Ok(Candidate {
                part_size,
                start: 0,
                outer: Md5::with_backend(backend),
                parts: 0,
            }),
            _ => Err(EtagError::PartSize(part_size)),
        })
        .collect();
    // One MD5 per distinct start of a current part, in increasing order of start; the
    // one at 0 also stays while the input may end below the threshold (its ETag is
    // then the MD5 of the whole).
    let mut starts: Vec<u64> = alloc::vec![0];
    let mut hashers: Vec<Md5> = alloc::vec![Md5::with_backend(backend)];
    let at = |starts: &[u64], start: u64| {
        starts
            .binary_search(&start)
            .unwrap_or_else(|_| unreachable!("every current part has its stream"))
    };
    let threads = match threads {
        0 => crate::tuning::cores(),
        n => n,
    };
    let mut buf = alloc::vec![0u8; CHUNK as usize];
    let mut pos = 0u64;
    loop {
        let boundary = cands
            .iter()
            .flatten()
            .map(|c| c.start + c.part_size)
            .min()
            .unwrap_or(u64::MAX);
        let want = CHUNK.min(boundary - pos) as usize;
        let n = match crate::many::read_some(&mut reader, &mut buf[..want])? {
            0 => break,
            n => n,
        };
        update_all(&mut hashers, &buf[..n], threads);
        pos += n as u64;
        for c in cands.iter_mut().flatten() {
            if pos == c.start + c.part_size {
                c.outer
                    .update(hashers[at(&starts, c.start)].finalize().as_bytes());
                c.parts += 1;
                c.start = pos;
            }
        }
        if cands.iter().flatten().any(|c| c.start == pos) {
            starts.push(pos);
            hashers.push(Md5::with_backend(backend));
        }
        let keep: Vec<bool> = starts
            .iter()
            .map(|&s| (s == 0 && pos < threshold) || cands.iter().flatten().any(|c| c.start == s))
            .collect();
        let mut k = keep.iter();
        starts.retain(|_| k.next() == Some(&true));
        let mut k = keep.iter();
        hashers.retain(|_| k.next() == Some(&true));
    }
    Ok(cands
        .into_iter()
        .map(|c| {
            let c = c?;
            if part_count(pos, c.part_size, threshold).is_none() {
                return ETag::single_put(hashers[at(&starts, 0)].finalize(), pos);
            }
            let (mut outer, mut parts) = (c.outer, c.parts);
            if c.start < pos || parts == 0 {
                outer.update(hashers[at(&starts, c.start)].finalize().as_bytes());
                parts += 1;
            }
            if parts > limits::MAX_PARTS {
                return Err(EtagError::TooManyParts {
                    parts,
                    part_size: c.part_size,
                });
            }
            Ok(ETag::multipart(outer.finalize(), parts as u32))
        })
        .collect())
}

/// Feed `data` to every hasher, side by side in the lanes ([`crate::update_many`]); a
/// lane set of hashers or more per thread on up to `threads` threads (fewer where a
/// process limit refuses some), this one among them.
#[cfg(feature = "std")]
fn update_all(hashers: &mut [Md5], data: &[u8], threads: usize) {
    let Some(first) = hashers.first() else {
        return;
    };
    let per = hashers
        .len()
        .div_ceil(threads.max(1))
        .max(first.backend().lanes());
    let update = |hs: &mut [Md5]| crate::update_many(hs, &alloc::vec![data; hs.len()]);
    if per >= hashers.len() {
        return update(hashers);
    }
    let helpers = hashers.len().div_ceil(per).min(threads) - 1;
    let work = std::sync::Mutex::new(hashers.chunks_mut(per).collect::<alloc::vec::Vec<_>>());
    let take = || work.lock().unwrap_or_else(|p| p.into_inner()).pop();
    let drain = || {
        while let Some(hs) = take() {
            update(hs);
        }
    };
    std::thread::scope(|s| {
        for _ in 0..helpers {
            if std::thread::Builder::new().spawn_scoped(s, drain).is_err() {
                break;
            }
        }
        drain();
    });
}

/// S3 ETags of many open files at once, on this thread: the parts of every file (and
/// each file below the threshold, whole) hashed side by side in the vector lanes, a
/// chunk of each at a time, with positioned reads (as [`update_many_from`] reads).
/// For many files, such as a tool that checks a directory against a bucket's listing;
/// [`etag_file`] spreads one file's parts over every core instead. In the order given.
///
/// As in [`etag_file`]: a file of two parts or more is read up to the size it has when
/// this starts, and one that shrinks meanwhile is an `UnexpectedEof` error, never a
/// wrong ETag; a single PUT, and a file of one part, is read to its end (one that
/// reaches the threshold, or passes the part size, meanwhile is read again, for the
/// ETag of what it holds then); what is not a regular file, and
/// a file that says it is empty (a `/proc` file), is read through to its end, one at a
/// time (what is not a regular file from its current position, the others from their
/// start); settings outside S3's limits are an `InvalidInput` error carrying the
/// [`EtagError`], for every file, and so is a file that needs more than 10,000 parts,
/// for that file. (On Unix and Windows the positioned reads leave a regular file's
/// offset where it was; elsewhere, WASI among them, a seek and a read stand in for
/// each, and the offset moves.)
///
/// [`update_many_from`]: crate::update_many_from
///
/// ```no_run
/// let files = [std::fs::File::open("a.iso")?, std::fs::File::open("b.bin")?];
/// let refs: Vec<&std::fs::File> = files.iter().collect();
/// for tag in md5x::chains::etag_files(&refs, 8 << 20, 8 << 20) {
///     println!("{}", tag?);
/// }
/// # Ok::<(), std::io::Error>(())
/// ```
#[cfg(feature = "std")]
pub fn etag_files(
    files: &[&std::fs::File],
    part_size: u64,
    threshold: u64,
) -> alloc::vec::Vec<std::io::Result<ETag>> {
    etag_files_with(Backend::active(), files, part_size, threshold, &|_| Ok(()))
}

/// [`etag_files`] on a chosen backend, calling `progress` with the length of each
/// read as it is done (for a progress line: a batch of large files can take minutes).
/// An error from `progress` ends the read it was called for: the file read is given
/// that error, and so is each other file at its next read while `progress` keeps
/// returning errors (to stop the whole batch at once; an `Interrupted` error comes
/// back as `Other`, since read loops retry `Interrupted`).
///
/// # Panics
///
/// If this CPU cannot run `backend` (see [`Backend::is_supported`]).
#[cfg(feature = "std")]
pub fn etag_files_with(
    backend: Backend,
    files: &[&std::fs::File],
    part_size: u64,
    threshold: u64,
    progress: &dyn Fn(u64) -> std::io::Result<()>,
) -> alloc::vec::Vec<std::io::Result<ETag>> {
    use alloc::vec::Vec;
    use std::io::{Error, ErrorKind};
    backend.assert_supported();
    let invalid = |e: EtagError| Error::new(ErrorKind::InvalidInput, e);
    if let Err(e) = Etag::with_backend(backend, part_size, threshold) {
        return files.iter().map(|_| Err(invalid(e))).collect();
    }
    // A file read through to its end, in order, into one streaming ETag.
    let read_through = |reader: &mut dyn std::io::Read| {
        let mut e =
            Etag::with_backend(backend, part_size, threshold).expect("the settings were checked");
        read_to_end(reader, &mut e).and_then(|()| e.finalize().map_err(invalid))
    };
    // ... from its start, with positioned reads.
    let stream = |file: &std::fs::File| {
        read_through(&mut PartReader {
            file,
            at: 0,
            end: u64::MAX,
            to_eof: true,
            progress,
        })
    };
    // What each file comes to: a result already, or its parts' readers, from
    // `first` on, `parts` of them (a single PUT: one, with no part count).
    enum Plan {
        Done(std::io::Result<ETag>),
        Parts { first: usize, parts: Option<u64> },
    }
    let mut readers = Vec::new();
    let plans: Vec<Plan> = files
        .iter()
        .map(|&file| {
            let meta = match file.metadata() {
                Ok(m) => m,
                Err(e) => return Plan::Done(Err(e)),
            };
            let size = meta.len();
            if !meta.is_file() {
                // (No positions to read at: read in order, from where it is.)
                return Plan::Done(read_through(&mut Reported(file, progress)));
            }
            if size == 0 {
                // A `/proc` file says it is empty whatever it holds.
                return Plan::Done(stream(file));
            }
            let parts = part_count(size, part_size, threshold);
            if let Some(n) = parts.filter(|&n| n > limits::MAX_PARTS) {
                return Plan::Done(Err(invalid(EtagError::TooManyParts {
                    parts: n,
                    part_size,
                })));
            }
            let first = readers.len();
            if parts.is_none() {
                // The single PUT's limit, before the read.
                if let Err(e) = limits::check_single_put(size) {
                    return Plan::Done(Err(invalid(e)));
                }
            }
            if parts.is_none() || parts == Some(1) {
                // A single PUT, or one part, is read to its end, in case the file
                // holds other than it says (a `/sys` file says 4096 bytes and holds
                // fewer): a single PUT up to the threshold, one part up to a byte
                // past the part size; one that reaches it is read again below.
                let end = match parts {
                    None => threshold,
                    _ => part_size.saturating_add(1),
                };
                readers.push(PartReader {
                    file,
                    at: 0,
                    end,
                    to_eof: true,
                    progress,
                });
                return Plan::Parts { first, parts };
            }
            let mut at = 0;
            loop {
                let end = size.min(at + part_size);
                readers.push(PartReader {
                    file,
                    at,
                    end,
                    to_eof: false,
                    progress,
                });
                at = end;
                if at == size {
                    break;
                }
            }
            Plan::Parts { first, parts }
        })
        .collect();
    let mut hashers = alloc::vec![Md5::with_backend(backend); readers.len()];
    let mut results: Vec<Option<std::io::Result<()>>> =
        crate::update_many_from(&mut hashers, &mut readers)
            .into_iter()
            .map(Some)
            .collect();
    plans
        .into_iter()
        .map(|plan| {
            let (first, parts) = match plan {
                Plan::Done(r) => return r,
                Plan::Parts { first, parts } => (first, parts),
            };
            let n = parts.unwrap_or(1) as usize;
            for r in &mut results[first..first + n] {
                r.take().unwrap_or(Ok(()))?;
            }
            let hashed = &hashers[first..first + n];
            let read = readers[first].at;
            Ok(match parts {
                // It grew to the threshold while it was read: its ETag is a multipart
                // one, of what it holds now.
                None if read >= threshold => return stream(readers[first].file),
                None => ETag::single_put(hashed[0].finalize(), read).map_err(invalid)?,
                // One part that holds other than its size said: past the part size,
                // more parts, of what it holds now; below the threshold, a single PUT.
                Some(1) if read > part_size => return stream(readers[first].file),
                Some(1) if read < threshold => {
                    ETag::single_put(hashed[0].finalize(), read).map_err(invalid)?
                }
                Some(p) => {
                    let mut outer = Md5::with_backend(backend);
                    for h in hashed {
                        outer.update(h.finalize().as_bytes());
                    }
                    ETag::multipart(outer.finalize(), p as u32)
                }
            })
        })
        .collect()
}

/// Bytes `at..end` of a file, for [`etag_files`]: positioned reads, and running out of
/// file before `end` an `UnexpectedEof` error that says the file shrank, or, with
/// `to_eof`, the end of what is read.
#[cfg(feature = "std")]
struct PartReader<'a> {
    file: &'a std::fs::File,
    at: u64,
    end: u64,
    to_eof: bool,
    progress: &'a dyn Fn(u64) -> std::io::Result<()>,
}

#[cfg(feature = "std")]
impl std::io::Read for PartReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = usize::try_from(self.end - self.at).unwrap_or(usize::MAX);
        let want = buf.len().min(left);
        if want == 0 {
            return Ok(0);
        }
        let got = if self.to_eof {
            read_at(self.file, &mut buf[..want], self.at)?
        } else {
            read_full_at(self.file, &mut buf[..want], self.at)?;
            want
        };
        self.at += got as u64;
        told(self.progress, got)?;
        Ok(got)
    }
}

/// A file read in order, each read's length told to a progress callback, whose error
/// ends the read.
#[cfg(feature = "std")]
struct Reported<'a, P: ?Sized>(&'a std::fs::File, &'a P);

#[cfg(feature = "std")]
impl<P: Fn(u64) -> std::io::Result<()> + ?Sized> std::io::Read for Reported<'_, P> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let got = std::io::Read::read(&mut self.0, buf)?;
        told(self.1, got)?;
        Ok(got)
    }
}

/// Tell `progress` of a read of `n` bytes. Its `Interrupted` error is handed on as
/// `Other`: read loops retry `Interrupted`, and would lose the bytes just read.
#[cfg(feature = "std")]
fn told<P: Fn(u64) -> std::io::Result<()> + ?Sized>(progress: &P, n: usize) -> std::io::Result<()> {
    progress(n as u64).map_err(|e| match e.kind() {
        std::io::ErrorKind::Interrupted => std::io::Error::other(e),
        _ => e,
    })
}

/// Feed `e` what `reader` gives up to its end, in order (for what is not a regular
/// file: there are no positions to read parts at).
#[cfg(feature = "std")]
fn read_to_end(mut reader: impl std::io::Read, e: &mut Etag) -> std::io::Result<()> {
    let mut buf = alloc::vec![0u8; 1 << 20];
    loop {
        match crate::many::read_some(&mut reader, &mut buf)? {
            0 => return Ok(()),
            n => e.update(&buf[..n]),
        }
    }
}

/// MD5 of `count` consecutive ranges of `len` bytes of `file`, the first at `start`,
/// read a chunk of each in turn and hashed side by side in the lanes (or one by one
/// where the lanes would not pay; `hash_jobs` decides). `bufs` is the caller's
/// reusable read buffers; `progress` is told each read's length, and its error ends
/// the work.
#[cfg(feature = "std")]
fn hash_parts(
    backend: Backend,
    file: &std::fs::File,
    start: u64,
    len: u64,
    count: u64,
    bufs: &mut alloc::vec::Vec<alloc::vec::Vec<u8>>,
    progress: &(dyn Fn(u64) -> std::io::Result<()> + Sync),
) -> std::io::Result<alloc::vec::Vec<Digest>> {
    let n = count as usize;
    let kernel = crate::many::shape_for(backend, n);
    // Chunks of 256 KiB per part: 16 lanes read 4 MiB per round, which stays in L2/L3
    // between the read and the hash.
    const CHUNK: usize = 256 << 10;
    // (In u64 until it is at most CHUNK: a part may pass 4 GiB, which a 32-bit usize
    // cannot hold.)
    let chunk = (len.div_ceil(64) * 64).min(CHUNK as u64).max(64) as usize;
    bufs.resize_with(n, alloc::vec::Vec::new);
    for b in bufs.iter_mut() {
        b.resize(chunk, 0);
    }
    let mut states = alloc::vec![INIT; n];
    // The last read's length: the part's partial block, if any, ends there.
    let mut done = 0u64;
    let mut last = 0;
    while done < len {
        last = (len - done).min(chunk as u64) as usize;
        for (p, b) in bufs.iter_mut().enumerate() {
            read_full_at(file, &mut b[..last], start + p as u64 * len + done)?;
            told(progress, last)?;
        }
        let whole = last / 64 * 64;
        let mut jobs: alloc::vec::Vec<(&[u8], &mut [u32; 4])> = bufs
            .iter()
            .zip(states.iter_mut())
            .map(|(b, s)| (&b[..whole], s))
            .collect();
        crate::lanes::hash_jobs(kernel.as_ref(), backend, &mut jobs);
        done += last as u64;
    }
    // Every read but the last is whole blocks (`chunk` is a multiple of 64).
    let tail = last / 64 * 64..last;
    Ok(states
        .iter_mut()
        .zip(bufs.iter())
        .map(|(s, b)| {
            finish(backend, s, &b[tail.clone()], len);
            state_to_digest(s)
        })
        .collect())
}

/// Fill `buf` from `file` at `offset` with positioned reads; running out of file is
/// an `UnexpectedEof` error that says the file shrank.
#[cfg(feature = "std")]
fn read_full_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        match read_at(file, &mut buf[done..], offset + done as u64)? {
            0 => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "file shrank while it was read",
                ))
            }
            k => done += k,
        }
    }
    Ok(())
}

/// One positioned read of `file` into `buf` at `offset` (0 at its end), again where it
/// was interrupted.
#[cfg(feature = "std")]
fn read_at(file: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    #[cfg(unix)]
    use std::os::unix::fs::FileExt;
    #[cfg(windows)]
    use std::os::windows::fs::FileExt;
    loop {
        #[cfg(unix)]
        let got = file.read_at(buf, offset);
        #[cfg(windows)]
        let got = file.seek_read(buf, offset);
        #[cfg(not(any(unix, windows)))]
        let got = seek_and_read(file, buf, offset);
        match got {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            r => return r,
        }
    }
}

/// A positioned read where the platform has none in stable Rust (WASI, among others):
/// a seek, then a read. The threads of `etag_file` read parts of one file at once, so
/// every such pair runs under one lock; the file's own offset moves (`etag_files`
/// says so).
#[cfg(all(feature = "std", not(any(unix, windows))))]
fn seek_and_read(mut file: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    use std::io::{Read, Seek, SeekFrom};
    static POSITIONED: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _held = POSITIONED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    file.seek(SeekFrom::Start(offset))?;
    file.read(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_chain_is_md5_of_nothing() {
        assert_eq!(EMPTY_MD5, crate::md5(b""));
        // Short messages leave chains empty; the shortcut must agree with hashing
        // every chain (the chains test file checks the same against hashlib).
        for k in [4, 8, 16] {
            for len in [0, 1, 65, 64 * k - 1] {
                let data: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
                let mut outer = Md5::new();
                for j in 0..k {
                    let mut chain = Md5::new();
                    for (b, block) in data.chunks(64).enumerate() {
                        if b % k == j {
                            chain.update(block);
                        }
                    }
                    outer.update(chain.finalize().as_bytes());
                }
                assert_eq!(
                    md5_par(&data, k).unwrap(),
                    outer.finalize(),
                    "K={k} len={len}"
                );
            }
        }
    }
}
