//! [`Md5`]: the streaming hasher (buffering, padding, length), and the one-shot [`md5`].

use crate::{Backend, Digest};

/// MD5's initial state (RFC 1321, section 3.3).
pub(crate) const INIT: [u32; 4] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476];

/// Split bytes into whole 64-byte blocks and the rest.
#[inline(always)]
pub(crate) fn blocks_of(data: &[u8]) -> (&[[u8; 64]], &[u8]) {
    data.as_chunks::<64>()
}

/// A streaming hasher that keeps a block short of 64 bytes between updates: [`Md5`]
/// and `chains::ParMd5` both fill theirs through [`Buffered::feed`] (`update_many`
/// fills `Md5`'s through feed's two steps, [`Buffered::top_up`] and [`Buffered::keep`],
/// with the hashing between them in the lanes). The block stays in the owner's own
/// fields, not in a struct of its own: that way `Md5::update` compiles to the very
/// instructions it had before the two hashers shared this code, where a struct of the
/// block's own moved the fields and cost `update` a saved register
/// (`docs/performance.md`, "one partial-block fill").
pub(crate) trait Buffered {
    /// The short block's buffer and how many of its bytes are kept (under 64, but for
    /// 64 from a [`top_up`](Buffered::top_up) that fills it to the next `keep`).
    fn partial(&mut self) -> (&mut [u8; 64], &mut u8);

    /// Take the buffer, now a whole block, into the hash.
    fn complete(&mut self);

    /// Take `data`: top up the short block from its start (and [`complete`] it, if
    /// `data` fills it), and keep `data`'s tail (what follows its last whole block) as
    /// the new short block. Returns the whole blocks in between, which the caller takes
    /// into the hash before anything else is fed. Where `data` does not fill the short
    /// block, it is all kept and no blocks come back.
    ///
    /// [`complete`]: Buffered::complete
    #[inline(always)]
    fn feed<'a>(&mut self, data: &'a [u8]) -> &'a [[u8; 64]] {
        let Some((data, filled)) = self.top_up(data) else {
            return &[];
        };
        if filled {
            self.complete();
        }
        let (blocks, tail) = blocks_of(data);
        self.keep(tail);
        blocks
    }

    /// Top up the short block from the start of `data`. `None` when all of `data` was
    /// kept (the block is still short); else the rest of `data`, and whether the block
    /// is now whole (its kept count 64, until [`keep`](Buffered::keep)) rather than
    /// empty as it was.
    #[inline(always)]
    fn top_up<'a>(&mut self, data: &'a [u8]) -> Option<(&'a [u8], bool)> {
        let (buf, kept) = self.partial();
        let have = usize::from(*kept);
        if have == 0 {
            return Some((data, false));
        }
        let take = (64 - have).min(data.len());
        copy_short(&mut buf[have..have + take], &data[..take]);
        *kept = (have + take) as u8;
        (have + take == 64).then_some((&data[take..], true))
    }

    /// Keep `tail` (under 64 bytes) as the short block.
    #[inline(always)]
    fn keep(&mut self, tail: &[u8]) {
        let (buf, kept) = self.partial();
        copy_short(&mut buf[..tail.len()], tail);
        *kept = tail.len() as u8;
    }
}

/// `dst.copy_from_slice(src)`, with fewer than 16 bytes copied in place rather than by a
/// call to `memcpy`: the call cost 1-byte updates a quarter of their instructions
/// (`docs/performance.md`, "small copies in place"). As `memcpy` does inside: two
/// overlapping 8- or 4-byte words for 4 to 15 bytes, the first, middle and last byte
/// for 1 to 3. Lengths that differ go to `copy_from_slice`, which panics on them.
#[inline(always)]
fn copy_short(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    if n >= 16 || n != dst.len() {
        dst.copy_from_slice(src);
    } else if n >= 8 {
        dst[..8].copy_from_slice(&src[..8]);
        dst[n - 8..].copy_from_slice(&src[n - 8..]);
    } else if n >= 4 {
        dst[..4].copy_from_slice(&src[..4]);
        dst[n - 4..].copy_from_slice(&src[n - 4..]);
    } else if n > 0 {
        dst[0] = src[0];
        dst[n / 2] = src[n / 2];
        dst[n - 1] = src[n - 1];
    }
}

/// Pad the `tail` (fewer than 64 bytes) of a message of `total_len` bytes and compress
/// the one or two final blocks.
#[inline(always)]
pub(crate) fn finish(backend: Backend, state: &mut [u32; 4], tail: &[u8], total_len: u64) {
    debug_assert!(tail.len() < 64);
    let mut last = [[0u8; 64]; 2];
    let flat = last.as_flattened_mut();
    flat[..tail.len()].copy_from_slice(tail);
    flat[tail.len()] = 0x80;
    // The length field is the message length in bits, mod 2^64 (RFC 1321, 3.2).
    let n = if tail.len() < 56 { 1 } else { 2 };
    flat[n * 64 - 8..n * 64].copy_from_slice(&total_len.wrapping_mul(8).to_le_bytes());
    backend.compress(state, &last[..n]);
}

/// Serialize an MD5 state as the 16-byte digest (little-endian words).
#[inline(always)]
pub(crate) fn state_to_digest(state: &[u32; 4]) -> Digest {
    let mut out = [0u8; 16];
    for (chunk, w) in out.chunks_exact_mut(4).zip(state) {
        chunk.copy_from_slice(&w.to_le_bytes());
    }
    Digest::new(out)
}

/// MD5 of `data`, in one call.
///
/// ```
/// assert_eq!(md5x::md5(b"").to_string(), "d41d8cd98f00b204e9800998ecf8427e");
/// ```
#[inline]
pub fn md5(data: &[u8]) -> Digest {
    md5_with(Backend::active(), data)
}

/// MD5 of `data` with a chosen backend.
pub(crate) fn md5_with(backend: Backend, data: &[u8]) -> Digest {
    let mut state = INIT;
    let (blocks, tail) = blocks_of(data);
    backend.compress(&mut state, blocks);
    finish(backend, &mut state, tail, data.len() as u64);
    state_to_digest(&state)
}

/// Streaming MD5.
///
/// Feed bytes with [`update`](Md5::update) in pieces of any size, read the digest with
/// [`finalize`](Md5::finalize) (the hasher stays usable and can take more input).
/// With the `std` feature it is an [`std::io::Write`], so `io::copy` can feed it; with the
/// `digest` feature it implements RustCrypto's traits and drops in for `md5::Md5`.
///
/// Where `digest::Digest` is in scope, `h.finalize()` is that trait's (Rust looks at
/// trait methods that take the hasher by value before this one, which borrows it): it
/// consumes the hasher and returns the trait's byte array, as `md5::Md5` does. This
/// method is then called as `md5x::Md5::finalize(&h)`.
///
/// ```
/// let mut h = md5x::Md5::new();
/// h.update(b"a");
/// h.update("bc");
/// assert_eq!(h.finalize(), md5x::md5(b"abc"));
/// h.update(b"d");
/// assert_eq!(h.finalize(), md5x::md5(b"abcd"));
/// ```
#[derive(Clone)]
pub struct Md5 {
    pub(crate) state: [u32; 4],
    /// Bytes fed so far, mod 2^64 (the bit length is this times 8, mod 2^64).
    pub(crate) len: u64,
    buf: [u8; 64],
    buf_len: u8,
    pub(crate) backend: Backend,
}

impl Md5 {
    /// A new hasher on the process's [`Backend::active`] backend.
    pub fn new() -> Self {
        Self::with_backend(Backend::active())
    }

    /// A new hasher on a chosen backend.
    ///
    /// # Panics
    ///
    /// If this CPU cannot run `backend` (see [`Backend::is_supported`]).
    pub fn with_backend(backend: Backend) -> Self {
        backend.assert_supported();
        Md5 {
            state: INIT,
            len: 0,
            buf: [0; 64],
            buf_len: 0,
            backend,
        }
    }

    /// The backend this hasher runs.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Feed more bytes.
    #[inline]
    pub fn update(&mut self, data: impl AsRef<[u8]>) {
        self.update_bytes(data.as_ref());
    }

    #[inline]
    fn update_bytes(&mut self, data: &[u8]) {
        self.len = self.len.wrapping_add(data.len() as u64);
        let blocks = self.feed(data);
        if !blocks.is_empty() {
            self.backend.compress(&mut self.state, blocks);
        }
    }

    /// `update_many`'s first step: count `data` and top up the short block from its
    /// start, without compressing it. Returns `None` when all of `data` was kept.
    /// Otherwise the short block may be whole ([`Md5::whole_block`]), and the whole
    /// blocks and the tail of `data` that follow it are returned: the caller compresses
    /// that block, then the blocks, into `state`, and keeps the tail
    /// ([`Buffered::keep`]) once the whole short block is compressed (at once if there
    /// is none), all before anything else is fed.
    #[cfg(feature = "alloc")]
    pub(crate) fn fill_ends<'a>(&mut self, data: &'a [u8]) -> Option<(&'a [[u8; 64]], &'a [u8])> {
        self.len = self.len.wrapping_add(data.len() as u64);
        self.top_up(data).map(|(rest, _)| blocks_of(rest))
    }

    /// After [`Md5::fill_ends`]: the short block, if it is whole, and the state to
    /// compress it into.
    #[cfg(feature = "alloc")]
    pub(crate) fn whole_block(&mut self) -> Option<(&[u8], &mut [u32; 4])> {
        (self.buf_len == 64).then_some((&self.buf[..], &mut self.state))
    }

    /// The digest of everything fed so far. The hasher is unchanged.
    #[inline]
    pub fn finalize(&self) -> Digest {
        let mut state = self.state;
        finish(self.backend, &mut state, self.pending(), self.len);
        state_to_digest(&state)
    }

    /// Start over, as if new (the backend is kept).
    pub fn reset(&mut self) {
        *self = Self::with_backend(self.backend);
    }

    /// Bytes fed so far (mod 2^64).
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether nothing has been fed yet (or exactly 2^64 bytes).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(crate) fn pending(&self) -> &[u8] {
        &self.buf[..usize::from(self.buf_len)]
    }
}

impl Buffered for Md5 {
    #[inline(always)]
    fn partial(&mut self) -> (&mut [u8; 64], &mut u8) {
        (&mut self.buf, &mut self.buf_len)
    }

    #[inline(always)]
    fn complete(&mut self) {
        self.backend
            .compress(&mut self.state, core::slice::from_ref(&self.buf));
    }
}

impl Default for Md5 {
    fn default() -> Self {
        Self::new()
    }
}

impl core::fmt::Debug for Md5 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Md5")
            .field("len", &self.len)
            .field("backend", &self.backend)
            .finish_non_exhaustive()
    }
}

#[cfg(feature = "std")]
write_by_update!(Md5, update_bytes);

#[cfg(test)]
mod tests {
    use super::*;

    /// The length field is the bit length mod 2^64: a hasher that has seen 2^61 more
    /// bytes (2^64 more bits) must pad exactly as one that has not.
    #[test]
    fn bit_length_wraps_mod_2_pow_64() {
        let mut a = Md5::with_backend(Backend::Portable);
        a.update(b"some bytes in the buffer");
        let mut b = a.clone();
        b.len = b.len.wrapping_add(1 << 61);
        assert_eq!(a.finalize(), b.finalize());
        // ... while any other extra length changes the digest.
        b.len = a.len.wrapping_add(1 << 60);
        assert_ne!(a.finalize(), b.finalize());
        // and a length near the top wraps instead of overflowing.
        b.len = u64::MAX - 3;
        b.update(b"0123456789");
        assert_eq!(b.len(), 6);
    }
}
