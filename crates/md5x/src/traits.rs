//! RustCrypto's `digest` 0.11 traits (feature `digest`): [`block_api::Md5Core`], a
//! block-level core, and the same trait surface on [`Md5`] as `md-5`'s `md5::Md5`, so
//! that `Hmac<md5x::Md5>` works and generic code written for `md5::Md5` takes
//! `md5x::Md5` unchanged. With feature `digest010`, the same for `digest` 0.10 and
//! `md-5` 0.10, on the same core (`hmac` 0.12 through `CoreWrapper<Md5Core>` or
//! `SimpleHmac<md5x::Md5>`).

use core::fmt;

use ::digest::{
    array::Array,
    block_api::{Buffer, CoreProxy, Eager},
    common::hazmat::{DeserializeStateError, SerializableState, SerializedState},
    typenum::{Sum, U24, U64},
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
///
/// With feature `digest010` it is `digest` 0.10's core as well:
/// `digest::core_api::CoreWrapper<Md5Core>` (0.10) is what `md-5` 0.10's `Md5` is, and
/// what `hmac` 0.12's `Hmac` takes.
#[derive(Clone)]
pub struct Md5Core {
    state: [u32; 4],
    block_len: u64,
    backend: Backend,
}

impl Default for Md5Core {
    fn default() -> Self {
        Md5Core::with_backend(Backend::active())
    }
}

/// The traits that `digest` 0.10 and 0.11 share, for [`Md5Core`] and [`Md5`], written
/// once for both: `$d` is the crate, `$api` its module of block-level traits
/// (`block_api`; 0.10's `core_api`). Each version's `UpdateCore` is written beside its
/// invocation: their blocks reach the kernel differently.
macro_rules! shared_digest_traits {
    ($d:ident :: $api:ident) => {
        const _: () = {
            use ::$d::{
                block_buffer::Eager,
                const_oid::{AssociatedOid, ObjectIdentifier},
                typenum::{U16, U64},
                $api::{
                    AlgorithmName, BlockSizeUser, Buffer, BufferKindUser, FixedOutputCore,
                    OutputSizeUser,
                },
                FixedOutput, FixedOutputReset, HashMarker, Output, Reset, Update,
            };
            use core::fmt;
            use $crate::traits::Md5Core;
            use $crate::Md5;

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

            impl FixedOutputCore for Md5Core {
                #[inline]
                fn finalize_fixed_core(
                    &mut self,
                    buffer: &mut Buffer<Self>,
                    out: &mut Output<Self>,
                ) {
                    out.copy_from_slice(self.finish(buffer.get_data()).as_bytes());
                }
            }

            impl Reset for Md5Core {
                fn reset(&mut self) {
                    *self = Md5Core::with_backend(self.backend);
                }
            }

            impl AlgorithmName for Md5Core {
                fn write_alg_name(f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("Md5")
                }
            }

            impl AssociatedOid for Md5Core {
                const OID: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.2.5");
            }

            // `md5x::Md5` itself carries the traits of `md-5`'s `md5::Md5`.

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
                    <Md5Core as AlgorithmName>::write_alg_name(f)
                }
            }

            impl AssociatedOid for Md5 {
                const OID: ObjectIdentifier = <Md5Core as AssociatedOid>::OID;
            }
        };
    };
}

shared_digest_traits!(digest::block_api);

impl ::digest::block_api::UpdateCore for Md5Core {
    #[inline]
    fn update_blocks(&mut self, blocks: &[::digest::block_api::Block<Self>]) {
        self.absorb(Array::cast_slice_to_core(blocks));
    }
}

// `digest` 0.10 (feature `digest010`): code still written against `md-5` 0.10's
// `Digest` and `DynDigest` takes `md5x::Md5` unchanged. 0.10 seals `CoreProxy` (only its
// own `CoreWrapper` has it), so `hmac` 0.12 runs on `CoreWrapper<Md5Core>`, which is
// what `md-5` 0.10's `Md5` is, or on `md5x::Md5` through `SimpleHmac`. 0.10's blocks
// are `GenericArray`s, which no safe cast turns into `[u8; 64]` slices: one at a time.
#[cfg(feature = "digest010")]
shared_digest_traits!(digest010::core_api);

#[cfg(feature = "digest010")]
impl ::digest010::core_api::UpdateCore for Md5Core {
    #[inline]
    fn update_blocks(&mut self, blocks: &[::digest010::core_api::Block<Self>]) {
        for b in blocks {
            let block: &[u8; 64] = b.as_slice().try_into().expect("a block is 64 bytes");
            self.absorb(core::slice::from_ref(block));
        }
    }
}

impl Md5Core {
    /// A fresh core hashing on `backend`.
    fn with_backend(backend: Backend) -> Md5Core {
        Md5Core {
            state: INIT,
            block_len: 0,
            backend,
        }
    }

    /// Hash whole blocks, and count them.
    #[inline]
    fn absorb(&mut self, blocks: &[[u8; 64]]) {
        self.block_len = self.block_len.wrapping_add(blocks.len() as u64);
        self.backend.compress(&mut self.state, blocks);
    }

    /// The digest of the blocks hashed and then `pending` (less than a block).
    fn finish(&self, pending: &[u8]) -> crate::Digest {
        let len = self
            .block_len
            .wrapping_mul(64)
            .wrapping_add(pending.len() as u64);
        let mut s = self.state;
        finish(self.backend, &mut s, pending, len);
        crate::hasher::state_to_digest(&s)
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

// ---- The buffered hasher's own 0.11 traits. ----

impl CoreProxy for Md5 {
    type Core = Md5Core;

    fn compose(core: Md5Core, buffer: Buffer<Md5Core>) -> Self {
        let pending = buffer.get_data();
        let mut h = Md5::with_backend(core.backend);
        h.state = core.state;
        h.len = core.block_len.wrapping_mul(64);
        h.update(pending);
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
