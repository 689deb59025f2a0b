"""MD5 at md5x's speed, with hashlib's interface.

MD5 is broken for security: use it only where a protocol or an archive requires it.
"""

import os
from collections.abc import Callable, Iterable
from typing import Literal, Protocol, SupportsIndex, TypeVar, final, overload

from typing_extensions import Buffer

__all__ = [
    "__version__",
    "md5",
    "S3Etag",
    "new",
    "file_digest",
    "hash_many",
    "hash_files",
    "s3_etag",
    "s3_etags",
    "md5_par",
    "backend",
]

__version__: str

_Path = str | bytes | os.PathLike[str] | os.PathLike[bytes]
_H = TypeVar("_H")

class _BinaryReadable(Protocol):
    def readinto(self, buffer: bytearray, /) -> int | None: ...
    def readable(self) -> bool: ...

class _BufferedBytes(Protocol):
    def getbuffer(self) -> Buffer: ...

@final
class md5:
    """A streaming MD5 object, like hashlib.md5's; safe to share between threads."""

    def __new__(
        cls, data: Buffer = b"", *, usedforsecurity: bool = True, string: Buffer = ...
    ) -> md5: ...
    @property
    def name(self) -> Literal["md5"]: ...
    @property
    def digest_size(self) -> Literal[16]: ...
    @property
    def block_size(self) -> Literal[64]: ...
    def update(self, data: Buffer, /) -> None: ...
    def digest(self) -> bytes: ...
    def hexdigest(self) -> str: ...
    def copy(self) -> md5: ...

def new(
    name: str,
    data: Buffer = b"",
    *,
    usedforsecurity: bool = True,
    string: Buffer = ...,
) -> md5:
    """hashlib.new for MD5: name is "md5" in any case; another hash raises ValueError."""

@overload
def file_digest(
    fileobj: _BinaryReadable | _BufferedBytes,
    digest: str = "md5",
    /,
) -> md5: ...
@overload
def file_digest(
    fileobj: _BinaryReadable | _BufferedBytes,
    digest: Callable[[], _H],
    /,
) -> md5 | _H:
    """The MD5 object of a binary file's remaining contents (hashlib.file_digest).

    As with hashlib, an io.BytesIO is hashed whole, whatever its position.
    `digest` lets hashlib's calls carry over unchanged: "md5" in any case, or a
    callable that makes an MD5 object (hashlib.md5, md5x.md5); another hash raises
    ValueError. As with hashlib, the file is fed to the object the callable made,
    after any bytes it was made with, and that object is returned; only a fresh
    object of another module (hashlib.md5()) gives way to an md5x.md5, which
    hashes the file faster to the same digest.
    """

def hash_many(buffers: Iterable[Buffer], /) -> list[bytes]:
    """The 16-byte MD5 digest of every buffer, in order (SIMD lanes, threads).

    bytes are hashed in place; other buffers are copied out, those over 256 KiB a
    piece at a time, so memory stays bounded whatever their size. From an iterable
    other than a list or tuple, such as a generator, each item is taken as it comes
    (a buffer refilled after it was handed out is hashed as it was handed out).
    One buffer given alone (bytes, an mmap, an array.array, a 1-D numpy array) is a
    TypeError ("pass [data]"), not a digest of each of its items; a 2-D array is
    its rows.
    """

@overload
def hash_files(
    paths: Iterable[_Path],
    /,
    *,
    jobs: SupportsIndex | None = None,
    errors: Literal["raise"] = "raise",
) -> list[str]:
    """The hex MD5 of each file, in order, read on `jobs` threads (None: all cores).

    A file that cannot be read raises OSError naming it (the first in order).
    """

@overload
def hash_files(
    paths: Iterable[_Path],
    /,
    *,
    jobs: SupportsIndex | None = None,
    errors: Literal["return"],
) -> list[str | OSError]:
    """The hex MD5 of each file, in order; a file that cannot be read gets its OSError."""
def s3_etag(
    path: _Path, part_size: SupportsIndex = 8388608, threshold: SupportsIndex = 8388608
) -> str:
    """The S3 ETag of a file: "hex" (single PUT) or "hex-N" (N parts).

    ValueError where S3 would refuse the upload: a part size outside 5 MiB to 5 GiB,
    more than 10,000 parts, or a single PUT (below the threshold) over 5 GiB.
    """

@final
class S3Etag:
    """A streaming S3 ETag, for an object not in a file (an upload as it is sent).

    hexdigest() gives what s3_etag gives for a file of the bytes fed. ValueError
    here for a part size outside 5 MiB to 5 GiB or a threshold outside 0 to
    2**64 - 1; from hexdigest() for more than 10,000 parts, or a single PUT over
    5 GiB. Safe to share between threads.
    """

    def __new__(
        cls,
        data: Buffer = b"",
        *,
        part_size: SupportsIndex = 8388608,
        threshold: SupportsIndex = 8388608,
    ) -> S3Etag: ...
    @property
    def part_size(self) -> int: ...
    @property
    def threshold(self) -> int: ...
    def update(self, data: Buffer, /) -> None: ...
    def hexdigest(self) -> str:
        """ "hex" below the threshold, else "hex-N" for N parts."""
    def copy(self) -> S3Etag: ...

@overload
def s3_etags(
    paths: Iterable[_Path],
    /,
    part_size: SupportsIndex = 8388608,
    threshold: SupportsIndex = 8388608,
    *,
    jobs: SupportsIndex | None = None,
    errors: Literal["raise"] = "raise",
) -> list[str]:
    """The S3 ETag of each file, in order, their parts side by side in the lanes.

    OSError for a file that cannot be read, ValueError for one S3 would refuse (more
    than 10,000 parts, a single PUT over 5 GiB): the first in order is raised.
    Settings outside S3's limits raise ValueError.
    """

@overload
def s3_etags(
    paths: Iterable[_Path],
    /,
    part_size: SupportsIndex = 8388608,
    threshold: SupportsIndex = 8388608,
    *,
    jobs: SupportsIndex | None = None,
    errors: Literal["return"],
) -> list[str | OSError | ValueError]:
    """The S3 ETag of each file, in order; a file's OSError or ValueError in its place.

    Settings outside S3's limits still raise ValueError.
    """

def md5_par(data: Buffer, k: Literal[4, 8, 16]) -> bytes:
    """The MD5-P(K) digest of a buffer (docs/modes.md); not an MD5 digest."""

def backend() -> str:
    """The kernel set this process hashes with: "portable", "x86_64", "avx2", ..."""
