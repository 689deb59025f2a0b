//! 64-byte aligned benchmark data, shared by the examples that hash many messages
//! (included with `#[path]`; not an example itself).

/// A buffer with room for `len` bytes starting on a 64-byte boundary; [`aligned`]
/// finds them and fills them (byte i = i mod 251). Page-aligned buffers (`mmap`, Go's
/// allocator) start there; a plain `Vec<u8>` this large starts 16 bytes past one
/// (glibc's header), which splits every 64-byte block across two cache lines: 5-15%
/// slower with 32 or more lanes here (see docs/performance.md).
pub fn padded(len: usize) -> Vec<u8> {
    vec![0u8; len + 64]
}

pub fn aligned(buf: &mut [u8], len: usize) -> &[u8] {
    let skip = buf.as_ptr().align_offset(64);
    let data = &mut buf[skip..skip + len];
    for (i, b) in data.iter_mut().enumerate() {
        *b = (i % 251) as u8;
    }
    data
}
