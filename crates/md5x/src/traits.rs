//! RustCrypto's `digest` 0.11 traits (feature `digest`): [`block_api::Md5Core`], a
//! block-level core, and the same trait surface on [`Md5`] as `md-5`'s `md5::Md5`, so
//! that `Hmac<md5x::Md5>` works and generic code written for `md5::Md5` takes
//! `md5x::Md5` unchanged.

use core::fmt;

use ::digest::{
    array::Array,
    block_api::{
        AlgorithmName, Block, BlockSizeUser, Buffer, BufferKindUser, CoreProxy, Eager,
        FixedOutputCore, OutputSizeUser, UpdateCore,
    },
    common::hazmat::{DeserializeStateError, SerializableState, SerializedState},
    const_oid::{AssociatedOid, ObjectIdentifier},
    typenum::{Sum, U16, U24, U64},
    FixedOutput, FixedOutputReset, HashMarker, Output, Reset, Update,
};

use crate::hasher::{finish, INIT};
use crate::{Backend, Md5};

/// Block-level types, as in `md-5`'s `md5::block_api`.
pub mod block_api {
    pub use super::Md5Core;
}

/// MD5's block-level core: the state and the count of blocks, no buffer.
///
/// RustCrypto's buffering wrappers (and `hmac`) drive it through `UpdateCore` and
/// `FixedOutputCore`. Its serialized state is the same 24 bytes as `md-5`'s.
#[derive(Clone)]
pub struct Md5Core {
    state: [u32; 4],
    block_len: u64,
    backend: Backend,
}

impl Default for Md5Core {
    fn default() -> Self {
        Md5Core {
            state: INIT,
            block_len: 0,
            backend: Backend::active(),
        }
    }
}

impl HashMarker for Md5Core {}

impl BlockSizeUser for Md5Core {
    type BlockSize = U64;
}

impl BufferKindUser for Md5Core {
    type BufferKind = Eager;
}

impl OutputSizeUser for Md5Core {
    type OutputSize = U16;
}

impl UpdateCore for Md5Core {
    #[inline]
    fn update_blocks(&mut self, blocks: &[Block<Self>]) {
        self.block_len = self.block_len.wrapping_add(blocks.len() as u64);
        self.backend
            .compress(&mut self.state, Array::cast_slice_to_core(blocks));
    }
}

impl FixedOutputCore for Md5Core {
    #[inline]
    fn finalize_fixed_core(&mut self, buffer: &mut Buffer<Self>, out: &mut Output<Self>) {
        let len = self
            .block_len
            .wrapping_mul(64)
            .wrapping_add(buffer.get_pos() as u64);
        let mut s = self.state;
        finish(self.backend, &mut s, buffer.get_data(), len);
        out.copy_from_slice(crate::hasher::state_to_digest(&s).as_bytes());
    }
}

impl Reset for Md5Core {
    fn reset(&mut self) {
        self.state = INIT;
        self.block_len = 0;
    }
}

impl AlgorithmName for Md5Core {
    fn write_alg_name(f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Md5")
    }
}

impl fmt::Debug for Md5Core {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Md5Core { ... }")
    }
}

impl SerializableState for Md5Core {
    type SerializedStateSize = U24;

    fn serialize(&self) -> SerializedState<Self> {
        let mut out = SerializedState::<Self>::default();
        for (chunk, w) in out.chunks_exact_mut(4).zip(self.state) {
            chunk.copy_from_slice(&w.to_le_bytes());
        }
        out[16..].copy_from_slice(&self.block_len.to_le_bytes());
        out
    }

    fn deserialize(s: &SerializedState<Self>) -> Result<Self, DeserializeStateError> {
        let mut state = [0u32; 4];
        for (w, chunk) in state.iter_mut().zip(s[..16].chunks_exact(4)) {
            *w = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        }
        let mut len = [0u8; 8];
        len.copy_from_slice(&s[16..]);
        Ok(Md5Core {
            state,
            block_len: u64::from_le_bytes(len),
            backend: Backend::active(),
        })
    }
}

impl AssociatedOid for Md5Core {
    const OID: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.2.5");
}

// ---- The buffered hasher: `md5x::Md5` itself carries the traits of `md5::Md5`. ----

impl HashMarker for Md5 {}

impl BlockSizeUser for Md5 {
    type BlockSize = U64;
}

impl OutputSizeUser for Md5 {
    type OutputSize = U16;
}

impl Update for Md5 {
    #[inline]
    fn update(&mut self, data: &[u8]) {
        Md5::update(self, data);
    }
}

impl FixedOutput for Md5 {
    #[inline]
    fn finalize_into(self, out: &mut Output<Self>) {
        out.copy_from_slice(Md5::finalize(&self).as_bytes());
    }
}

impl FixedOutputReset for Md5 {
    #[inline]
    fn finalize_into_reset(&mut self, out: &mut Output<Self>) {
        out.copy_from_slice(Md5::finalize(self).as_bytes());
        Md5::reset(self);
    }
}

impl Reset for Md5 {
    fn reset(&mut self) {
        Md5::reset(self);
    }
}

impl AlgorithmName for Md5 {
    fn write_alg_name(f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Md5Core::write_alg_name(f)
    }
}

impl AssociatedOid for Md5 {
    const OID: ObjectIdentifier = Md5Core::OID;
}

impl CoreProxy for Md5 {
    type Core = Md5Core;

    fn compose(core: Md5Core, buffer: Buffer<Md5Core>) -> Self {
        let pending = buffer.get_data();
        let mut h = Md5::with_backend(core.backend);
        h.state = core.state;
        h.len = core
            .block_len
            .wrapping_mul(64)
            .wrapping_add(pending.len() as u64);
        h.buf[..pending.len()].copy_from_slice(pending);
        h.buf_len = pending.len() as u8;
        h
    }

    fn decompose(self) -> (Md5Core, Buffer<Md5Core>) {
        let core = Md5Core {
            state: self.state,
            block_len: self.len / 64,
            backend: self.backend,
        };
        (core, Buffer::<Md5Core>::new(self.pending()))
    }
}

type BufferStateSize = ::digest::block_buffer::SerializedBufferSize<U64, Eager>;

impl SerializableState for Md5 {
    /// The core's 24 bytes, then the buffer as `digest`'s block buffer writes it: the
    /// same bytes as `md-5` 0.11, so states move between the two crates.
    type SerializedStateSize = Sum<U24, BufferStateSize>;

    fn serialize(&self) -> SerializedState<Self> {
        let (core, buffer) = self.clone().decompose();
        core.serialize().concat(buffer.serialize())
    }

    fn deserialize(s: &SerializedState<Self>) -> Result<Self, DeserializeStateError> {
        let (core, buf) = s.split_ref::<U24>();
        let core = Md5Core::deserialize(core)?;
        let buffer = Buffer::<Md5Core>::deserialize(buf).map_err(|_| DeserializeStateError)?;
        Ok(Md5::compose(core, buffer))
    }
}
