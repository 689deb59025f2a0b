//! md5x: the fastest correct MD5 on every CPU.
//!
//! MD5 is broken as a cryptographic hash: collisions are cheap to make, so never use it
//! to resist an adversary. md5x exists because protocols and archives still require
//! MD5 (Content-MD5, S3 ETags, checksum files, forensics), and people compute it at
//! volume.
//!
//! ```
//! // One shot.
//! assert_eq!(md5x::md5(b"abc").to_string(), "900150983cd24fb0d6963f7d28e17f72");
//!
//! // Streaming.
//! let mut h = md5x::Md5::new();
//! h.update(b"ab");
//! h.update(b"c");
//! assert_eq!(h.finalize(), md5x::md5(b"abc"));
//! ```
//!
//! Features: `std` (default; `io::Write`, `MD5X_BACKEND`, run-time CPU detection),
//! `alloc`, `digest` (default; RustCrypto's `digest` 0.11 traits, see [`block_api`]),
//! `digest010` (`digest` 0.10's too, for code still on `md-5` 0.10),
//! `rayon` (`par_hash_many`), `tokio` (`AsyncWrite` for [`StreamHasher`]).
//!
//! # Panics
//!
//! Everything that hashes on the process's backend ([`md5`], [`Md5::new`],
//! [`hash_many`], [`Lanes::new`], [`Server::new`], the [`chains`] functions, ...) asks
//! [`Backend::active`] for it, which panics when the environment variable
//! `MD5X_BACKEND` names an unknown backend or one this CPU cannot run: a forced
//! backend is never silently replaced. Check it at start-up with
//! [`Backend::from_env`] to report it your own way. The `*_with` forms, given a backend
//! this CPU cannot run, panic too (see [`Backend::is_supported`]).
#![cfg_attr(not(feature = "std"), no_std)]
#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
// The docs link to items of every feature (`hash_many`, `StreamHasher`, `block_api`,
// ...): built with fewer features, those links have nothing to point at, and stay text.
#![cfg_attr(
    not(all(feature = "std", feature = "digest")),
    allow(rustdoc::broken_intra_doc_links)
)]

#[cfg(feature = "alloc")]
extern crate alloc;

/// `std::io::Write` for a hasher type whose `$update(&mut self, &[u8])` feeds it: every
/// write takes all it is given, and a flush has nothing to do. Doc comments before the
/// type go on the impl.
#[cfg(feature = "std")]
macro_rules! write_by_update {
    ($(#[$attr:meta])* $ty:ty, $update:ident) => {
        $(#[$attr])*
        impl std::io::Write for $ty {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                self.$update(buf);
                Ok(buf.len())
            }
            fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
                self.$update(buf);
                Ok(())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
    };
}

mod backend;
pub mod chains;
#[cfg(feature = "std")]
pub mod clock;
mod digest;
mod hasher;
mod kernels;
#[cfg(feature = "alloc")]
mod lanes;
mod many;
#[cfg(feature = "std")]
mod streams;
#[cfg(test)]
mod test_rng;
#[cfg(feature = "digest")]
mod traits;

pub use backend::{Backend, BackendError};
pub use digest::{Base64Digest, Digest, HexDigest, ParseDigestError};
pub use hasher::{md5, Md5};
#[cfg(feature = "alloc")]
pub use lanes::{Lanes, Slot};
#[doc(hidden)]
pub use many::tuning;
#[cfg(feature = "std")]
pub use many::update_many_from;
#[cfg(feature = "alloc")]
pub use many::{hash_many, hash_many_with, update_many};
pub use many::{hash_many_into, hash_many_into_with};
#[cfg(feature = "rayon")]
pub use many::{par_hash_many, par_hash_many_into_with};
#[cfg(feature = "std")]
#[doc(hidden)]
pub use streams::ServerStats;
#[cfg(feature = "std")]
pub use streams::{Server, StreamHasher};
#[cfg(feature = "digest")]
pub use traits::block_api;
