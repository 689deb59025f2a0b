"""md5x.md5, md5x.new and md5x.file_digest against hashlib, which is the oracle."""

import array
import ctypes
import hashlib
import hmac
import io
import mmap
import os
import pickle
import random
import sys
import threading
import time
import warnings

import pytest

import md5x

try:
    import numpy as np
except ImportError:  # numpy is optional; the tests that need it say so when skipped
    np = None

needs_numpy = pytest.mark.skipif(np is None, reason="numpy is not installed")

RNG = random.Random(20240607)


def rand_bytes(n):
    return RNG.randbytes(n)


def ref(data):
    return hashlib.md5(data).digest()


# ------------------------------------------------------------------------------------
# Digests


def test_rfc1321_vectors():
    vectors = {
        b"": "d41d8cd98f00b204e9800998ecf8427e",
        b"a": "0cc175b9c0f1b6a831c399e269772661",
        b"abc": "900150983cd24fb0d6963f7d28e17f72",
        b"message digest": "f96b697d7cb7938d525a2f31aaf161d0",
        b"abcdefghijklmnopqrstuvwxyz": "c3fcd3d76192e4007dfb496cca67e13b",
        b"12345678901234567890123456789012345678901234567890123456789012345678901234567890": (
            "57edf4a22be3c955ac49da2e2107b67a"
        ),
    }
    for msg, hexd in vectors.items():
        assert md5x.md5(msg).hexdigest() == hexd
        assert md5x.md5(msg).digest() == bytes.fromhex(hexd)


def test_every_length_0_to_1100():
    data = rand_bytes(1100)
    for n in range(1101):
        want = ref(data[:n])
        assert md5x.md5(data[:n]).digest() == want, n
        assert md5x.md5(bytearray(data[:n])).digest() == want, n
        h = md5x.md5()
        h.update(data[: n // 3])
        h.update(memoryview(data)[n // 3 : n])
        assert h.digest() == want, n


@pytest.mark.parametrize(
    "size",
    [4095, 4096, 4097, (256 << 10) - 1, 256 << 10, (256 << 10) + 1, (1 << 20) + 13, 5_000_003],
)
def test_large_inputs_every_container(size):
    data = rand_bytes(size)
    want = ref(data)
    assert md5x.md5(data).digest() == want
    assert md5x.md5(bytearray(data)).digest() == want
    assert md5x.md5(memoryview(data)).digest() == want
    assert md5x.md5(memoryview(bytearray(data))).digest() == want
    assert md5x.md5(memoryview(b"xy" + data)[2:]).digest() == want


def test_random_splits_of_random_large_inputs():
    for _ in range(6):
        data = rand_bytes(RNG.randrange(1, 3 << 20))
        h = md5x.md5()
        pos = 0
        while pos < len(data):
            step = RNG.choice([1, 63, 64, 65, 4096, 100_000, 700_000])
            piece = data[pos : pos + step]
            h.update(RNG.choice([bytes, bytearray, memoryview])(piece))
            pos += step
        assert h.digest() == ref(data)


def test_digest_does_not_finish_the_object():
    h = md5x.md5(b"ab")
    assert h.digest() == ref(b"ab")
    assert h.digest() == ref(b"ab")
    h.update(b"c")
    assert h.hexdigest() == hashlib.md5(b"abc").hexdigest()


# ------------------------------------------------------------------------------------
# Buffer types: every C-contiguous buffer is hashed as its raw bytes, as hashlib does.


def grid(data):
    """A ctypes array of 3 arrays of 4 bytes: a buffer of two dimensions."""
    return (ctypes.c_uint8 * 4 * 3).from_buffer_copy(data[:12])


class Cell(ctypes.Structure):
    _fields_ = [("grid", ctypes.c_uint8 * 4 * 3)]


def buffer_objects():
    data = rand_bytes(3 << 18)  # 768 KiB: larger than md5x's copy chunk
    objs = [
        b"",
        bytearray(),
        data,
        bytearray(data),
        memoryview(data),
        memoryview(data)[5:-7],
        memoryview(bytearray(data))[5:-7],
        memoryview(bytearray(data)).cast("I"),
        memoryview(bytearray(24)).cast("B", (2, 3, 4)),
        array.array("B", data[:1000]),
        array.array("i", range(-500, 500)),
        array.array("d", [x / 7 for x in range(200_000)]),
        array.array("q"),
        (ctypes.c_uint16 * 999)(*range(999)),
        # ctypes' arrays of arrays keep their two dimensions when hashlib asks for a
        # simple buffer (so it refuses them: bad_arguments), but not through a
        # memoryview, nor inside a structure.
        memoryview(grid(data)),
        pickle.PickleBuffer(memoryview(grid(data))),
        Cell.from_buffer_copy(data[:12]),
        type("BytesSub", (bytes,), {})(data[:777]),
    ]
    m = mmap.mmap(-1, 100_000)
    m.write(data[:100_000])
    objs.append(m)
    return objs


def test_every_buffer_type():
    for obj in buffer_objects():
        assert md5x.md5(obj).digest() == ref(obj), type(obj)
        h = md5x.md5()
        h.update(obj)
        assert h.hexdigest() == hashlib.md5(obj).hexdigest(), type(obj)


@needs_numpy
def test_numpy_arrays():
    objs = [
        np.arange(1000, dtype=np.uint8),
        np.arange(1000, dtype=np.int64),
        np.linspace(0, 1, 300_000),  # 2.4 MB of float64: the chunked path
        np.arange(600_000, dtype=np.float32).reshape(600, 1000),
        np.zeros((0, 5)),
        np.array(3.25),  # zero-dimensional
        np.array([True, False, True]),
        np.zeros(10, dtype=[("a", "<i4"), ("b", "<f8")]),
        np.arange(1_000_000, dtype=">u4"),
        np.asfortranarray(np.arange(12.0).reshape(1, 12)),  # both C and F contiguous
        # Times: numpy has no buffer format for them, which hashlib never asks for.
        np.arange("2020-01-01", "2020-03-01", dtype="M8[D]"),
        np.arange(400_000, dtype="m8[ns]").reshape(2, 200_000),  # 3.2 MB: chunked
        np.array(np.datetime64("2026-11-28T10:00")),  # zero-dimensional
        np.zeros(0, dtype="M8[s]"),
        np.ma.masked_array(np.arange(6, dtype="m8[s]"), mask=[0, 1] * 3),
        np.ones(5, dtype=[("when", "M8[s]"), ("n", "u1"), ("spans", "m8[ms]", (2,))]),
    ]
    for a in objs:
        assert md5x.md5(a).digest() == ref(a), (a.dtype, a.shape)
        assert md5x.hash_many([a]) == [ref(a)]


# ------------------------------------------------------------------------------------
# Bad arguments: the same exception types and messages as hashlib.


def error_of(fn, *args):
    try:
        fn(*args)
    except Exception as e:  # noqa: BLE001 - the exception itself is what is compared
        return type(e), str(e)
    return None


def bad_arguments():
    bad = [
        "abc",
        "",
        1,
        None,
        1.5,
        [1, 2],
        object(),
        memoryview(b"abcdef")[::2],
        memoryview(array.array("i", range(20)))[::-1],
        grid(bytes(range(12))),
        (ctypes.c_uint8 * 0 * 3)(),
        pickle.PickleBuffer(grid(bytes(range(12)))),
        # Empty, but with a step: hashlib's simple-buffer request goes by the view's
        # own contiguity flag, which the step clears whatever the length.
        memoryview(b"")[::2],
        memoryview(b"abc")[3::2],
        memoryview(array.array("i"))[::3],
    ]
    if np is not None:
        bad += [np.zeros((4, 4))[:, 1], np.zeros((3, 4)).T, np.zeros((3, 4), dtype="M8[s]").T]
    return bad


@pytest.mark.parametrize("obj", bad_arguments(), ids=lambda o: type(o).__name__)
def test_bad_arguments_match_hashlib(obj):
    want = error_of(hashlib.md5, obj)
    assert want is not None
    assert error_of(md5x.md5, obj) == want
    assert error_of(md5x.md5().update, obj) == error_of(hashlib.md5().update, obj)
    assert error_of(md5x.hash_many, [b"ok", obj]) == want
    assert error_of(md5x.md5_par, obj, 4) == want


def test_messages_named_by_the_issue():
    with pytest.raises(TypeError, match="^Strings must be encoded before hashing$"):
        md5x.md5("abc")
    with pytest.raises(TypeError, match="^object supporting the buffer API required$"):
        md5x.md5().update(42)


def test_failed_update_leaves_state_unchanged():
    h = md5x.md5(b"ab")
    with pytest.raises(TypeError):
        h.update("c")
    with pytest.raises(BufferError):
        h.update(memoryview(b"abcd")[::2])
    assert h.digest() == ref(b"ab")


def test_argument_counts_and_keywords():
    with pytest.raises(TypeError):
        md5x.md5(b"a", b"b")
    with pytest.raises(TypeError):
        md5x.md5().update()
    with pytest.raises(TypeError):
        md5x.md5().update(b"a", b"b")
    with pytest.raises(TypeError):
        md5x.md5(nonsense=1)
    with pytest.raises(TypeError):
        md5x.md5(data=b"a", string=b"a")
    assert md5x.md5(data=b"abc").digest() == ref(b"abc")
    assert md5x.md5(string=b"abc").digest() == ref(b"abc")
    assert md5x.md5(b"abc", usedforsecurity=False).digest() == ref(b"abc")
    assert md5x.md5(usedforsecurity=True).digest() == ref(b"")
    with pytest.raises(TypeError):
        md5x.md5(b"abc", False)  # usedforsecurity is keyword-only, as in hashlib

    # Ignored, but its truth is asked for, as hashlib asks: an error there is raised.
    class NoTruth:
        def __bool__(self):
            raise RuntimeError("no truth")

    for make in (hashlib.md5, md5x.md5, lambda **kw: md5x.new("md5", **kw)):
        with pytest.raises(RuntimeError, match="^no truth$"):
            make(usedforsecurity=NoTruth())
    assert md5x.md5(usedforsecurity=None).digest() == ref(b"")


def test_attributes():
    h = md5x.md5()
    r = hashlib.md5()
    assert (h.name, h.digest_size, h.block_size) == (r.name, r.digest_size, r.block_size)
    assert (h.name, h.digest_size, h.block_size) == ("md5", 16, 64)
    assert isinstance(h, md5x.md5)
    with pytest.raises(AttributeError):
        h.name = "sha1"


# ------------------------------------------------------------------------------------
# copy


def test_copy_is_independent():
    a = md5x.md5(b"common prefix ")
    b = a.copy()
    assert b.digest() == a.digest()
    a.update(b"left")
    b.update(b"right" * 5000)
    assert a.digest() == ref(b"common prefix left")
    assert b.digest() == ref(b"common prefix " + b"right" * 5000)
    c = b.copy()
    b.update(b"x")
    assert c.digest() == ref(b"common prefix " + b"right" * 5000)
    assert type(c) is md5x.md5


# ------------------------------------------------------------------------------------
# hmac (HMAC-MD5 in legacy protocols: CRAM-MD5, RADIUS, NTLMv2)


@pytest.mark.parametrize("key_len", [0, 1, 63, 64, 65, 200])
def test_hmac_takes_md5x_as_its_digestmod(key_len):
    # hmac uses md5x's block_size for the key's padding (and warns, made an error here,
    # when it is missing), copy() for the outer hash, update and digest for the rest.
    key = rand_bytes(key_len)
    for msg in [b"", b"abc", rand_bytes(1000)]:
        want = hmac.new(key, msg, hashlib.md5)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = hmac.new(key, msg, digestmod=md5x.md5)
        assert (got.digest(), got.hexdigest()) == (want.digest(), want.hexdigest())
        assert (got.digest_size, got.block_size) == (16, 64)
        assert hmac.digest(key, msg, md5x.md5) == want.digest()
        # Fed in two pieces, one through a copy taken midway.
        h = hmac.new(key, msg[:7], md5x.md5)
        c = h.copy()
        c.update(msg[7:])
        h.update(b"other")
        assert c.digest() == want.digest()
        assert h.digest() == hmac.new(key, msg[:7] + b"other", hashlib.md5).digest()


# ------------------------------------------------------------------------------------
# Threads


def test_threads_share_one_object():
    # Every update is atomic, so N threads feeding identical pieces give the digest of
    # the concatenation whatever the interleaving. The bytearray pieces are larger
    # than md5x's copy chunk, so a non-atomic update would interleave chunks.
    piece_b = rand_bytes(600_000)
    piece_ba = bytearray(piece_b)
    h = md5x.md5()
    rounds, nthreads = 4, 8
    barrier = threading.Barrier(nthreads)

    def work(i):
        barrier.wait()
        for _ in range(rounds):
            h.update(piece_b if i % 2 else piece_ba)
            h.digest()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(nthreads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert h.digest() == ref(piece_b * (rounds * nthreads))


def test_threads_with_separate_objects():
    inputs = [rand_bytes(RNG.randrange(0, 2 << 20)) for _ in range(8)]
    results = [None] * len(inputs)

    def work(i):
        h = md5x.md5()
        data = inputs[i]
        for start in range(0, len(data), 100_000):
            h.update(bytearray(data[start : start + 100_000]) if i % 2 else data[start:])
            if i % 2 == 0:
                break
        results[i] = h.digest()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [ref(d) for d in inputs]


@pytest.mark.parametrize("kind", [bytes, bytearray])
def test_gil_is_released_while_hashing(kind):
    # The hash runs in a thread; this thread counts how often it gets to run meanwhile.
    # If the GIL were held for the whole hash it could not run at all until the end.
    data = kind(rand_bytes(64 << 20))
    out = []
    t = threading.Thread(target=lambda: out.append(md5x.md5(data).digest()))
    count = 0
    t.start()
    while t.is_alive():
        count += 1
        time.sleep(0.0002)
    t.join()
    assert out == [ref(data)]
    assert count >= 10, count


def run_guarded(code):
    """Run `code` in a fresh interpreter; a hang fails the test instead of stalling it."""
    import subprocess

    try:
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
        )
    except subprocess.TimeoutExpired:
        pytest.fail("hung (killed after 120 s)")
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_finalizer_that_updates_the_object_during_a_large_update():
    # A large update of a buffer that is not bytes allocates while it works; that can
    # start the garbage collector, whose finalizers may use the very object being
    # updated. hashlib finishes; md5x used to wait for its own lock forever.
    out = run_guarded(
        """
import gc, hashlib, md5x
for make in (md5x.md5, hashlib.md5):
    h = make()
    class C:
        def __del__(self):
            h.update(b"late")
    gc.collect()
    a = C(); a.self = a; del a
    keep = []
    while gc.get_count()[0] < gc.get_threshold()[0] - 2:
        keep.append([])
    h.update(bytearray(4 << 20))
    print(h.hexdigest())
"""
    )
    mine, theirs = out.split()
    # Whether the finalizer ran before, during or after the update depends on the
    # collector's timing; the digest is that of one of those orders.
    late, big = b"late", bytes(4 << 20)
    assert mine in {hashlib.md5(x).hexdigest() for x in (big, late + big, big + late)}
    assert theirs in {hashlib.md5(x).hexdigest() for x in (big, late + big, big + late)}


@pytest.mark.skipif(sys.version_info < (3, 12), reason="__buffer__ in Python code: 3.12+")
def test_python_exporters_run_once_and_may_use_the_object():
    # A buffer exporter written in Python (PEP 688) is asked once, as hashlib asks it,
    # and may itself use the object being updated without a hang.
    out = run_guarded(
        """
import md5x
h = md5x.md5()
class Reentrant:
    def __buffer__(self, flags):
        h.update(b"x")
        return memoryview(bytearray(300_000))
    def __release_buffer__(self, view):
        h.digest()
h.update(Reentrant())
print(h.hexdigest())
class OneShot:
    used = False
    def __buffer__(self, flags):
        if self.used:
            raise BufferError("already exported")
        self.used = True
        return memoryview(bytearray(range(256)) * 1200)
print(md5x.md5(OneShot()).hexdigest())
"""
    )
    reentrant, oneshot = out.split()
    assert reentrant == hashlib.md5(b"x" + bytes(300_000)).hexdigest()
    assert oneshot == hashlib.md5(bytes(range(256)) * 1200).hexdigest()


@pytest.mark.skipif(sys.version_info < (3, 12), reason="__buffer__ in Python code: 3.12+")
def test_python_exporters_errors_are_their_own():
    # What an exporter written in Python raises reaches the caller as hashlib lets it,
    # message and all, and so does the interpreter's word for a __buffer__ that returns
    # no memoryview.
    class Raises:
        def __buffer__(self, flags):
            raise TypeError("custom type error")

    class RaisesBytes(bytes):
        def __buffer__(self, flags):
            raise ValueError("custom value error")

    class NotAView:
        def __buffer__(self, flags):
            return b"abc"

    class EmptyStrided:
        def __buffer__(self, flags):
            return memoryview(b"")[::2]

    for obj in [Raises(), RaisesBytes(b"abc"), NotAView(), EmptyStrided()]:
        want = error_of(hashlib.md5, obj)
        assert want is not None, type(obj)
        assert error_of(md5x.md5, obj) == want, type(obj)
        assert error_of(md5x.md5().update, obj) == want, type(obj)
        assert error_of(md5x.hash_many, [b"ok", obj]) == want, type(obj)
        assert error_of(md5x.hash_many, iter([b"ok", obj])) == want, type(obj)
        assert error_of(md5x.md5_par, obj, 4) == want, type(obj)
        assert error_of(md5x.S3Etag().update, obj) == want, type(obj)

    # A buffer that is not C-contiguous is refused with the exporter's own words, and
    # the exporter is still asked only once (this one fails when asked twice).
    class StridedOnce:
        def __init__(self):
            self.asked = 0

        def __buffer__(self, flags):
            self.asked += 1
            if self.asked > 1:
                raise RuntimeError("asked twice")
            return memoryview(b"abcdefgh")[::2]

    want = error_of(hashlib.md5, StridedOnce())
    assert want is not None and want[0] is BufferError
    for call in [
        md5x.md5,
        md5x.md5().update,
        lambda x: md5x.hash_many([b"ok", x]),
        lambda x: md5x.md5_par(x, 4),
        md5x.S3Etag().update,
    ]:
        assert error_of(call, StridedOnce()) == want


@pytest.mark.skipif(sys.version_info < (3, 12), reason="__buffer__ in Python code: 3.12+")
def test_a_bytes_subclass_is_hashed_as_the_buffer_it_exports():
    # hashlib hashes what a bytes subclass's own __buffer__ returns, not its bytes; a
    # subclass without one is hashed as its bytes. Small (hashed with the GIL held),
    # middling and chunked sizes, through every function that takes buffers.
    for size in [0, 5, 4000, 300_000, 3_000_000]:
        other = rand_bytes(size)

        class Exporting(bytes):
            def __buffer__(self, flags):
                return memoryview(other)

        class Plain(bytes):
            pass

        mine = b"mine" * (size // 4 + 1)
        x, plain = Exporting(mine), Plain(mine)
        want = hashlib.md5(x).digest()
        assert want == ref(other) and hashlib.md5(plain).digest() == ref(mine)
        assert md5x.md5(x).digest() == want, size
        h = md5x.md5(b"")
        h.update(x)
        assert h.digest() == want, size
        assert md5x.md5(plain).digest() == ref(mine), size
        assert md5x.hash_many([x, plain, x]) == [want, ref(mine), want], size
        assert md5x.md5_par(x, 4) == md5x.md5_par(other, 4), size
        assert md5x.md5_par(plain, 8) == md5x.md5_par(mine, 8), size


# ------------------------------------------------------------------------------------
# file_digest


def test_file_digest_of_files(tmp_path):
    for size in [0, 1, 1 << 18, (1 << 18) + 1, 3_000_001]:
        p = tmp_path / f"f{size}"
        data = rand_bytes(size)
        p.write_bytes(data)
        with open(p, "rb") as f:
            got = md5x.file_digest(f)
        assert isinstance(got, md5x.md5)
        assert got.digest() == ref(data)
        with open(p, "rb", buffering=0) as f:
            f.read(7)  # from the current position, as hashlib
            assert md5x.file_digest(f).digest() == ref(data[7:])


def test_file_digest_of_bytesio_and_custom_readers():
    data = rand_bytes(1_000_003)
    assert md5x.file_digest(io.BytesIO(data)).digest() == ref(data)
    # A BytesIO is hashed whole, wherever its position, which stays (hashlib takes
    # its getbuffer(), where a file is read from its position).
    for pos in (0, 2, len(data)):
        ours, theirs = io.BytesIO(data), io.BytesIO(data)
        ours.seek(pos)
        theirs.seek(pos)
        want = hashlib.file_digest(theirs, "md5").digest()
        assert md5x.file_digest(ours).digest() == want == ref(data), pos
        assert ours.tell() == theirs.tell() == pos

    class Dribble:
        """A binary reader that returns short reads."""

        def __init__(self, data):
            self.data, self.pos = data, 0

        def readable(self):
            return True

        def readinto(self, buf):
            n = min(len(buf), RNG.randrange(1, 5000), len(self.data) - self.pos)
            buf[:n] = self.data[self.pos : self.pos + n]
            self.pos += n
            return n

    assert md5x.file_digest(Dribble(data)).digest() == ref(data)
    assert hashlib.file_digest(Dribble(data), "md5").digest() == ref(data)


def test_new_is_hashlib_new_for_md5():
    for size in [0, 1, 63, 64, 65, 1000, 100_003]:
        data = rand_bytes(size)
        want = hashlib.new("md5", data).digest()
        assert md5x.new("md5", data).digest() == want
        assert md5x.new("MD5", data=data, usedforsecurity=False).digest() == want
        assert md5x.new(name="Md5", string=data).digest() == want
        h = md5x.new("md5")
        h.update(data)
        assert isinstance(h, md5x.md5) and h.digest() == want
    for name in ["sha1", "sha256", "md5x", ""]:
        got = error_of(md5x.new, name, b"abc")
        assert got == (ValueError, f"md5x computes MD5 only: unsupported hash type {name}")
    for args in [("md5", None), ("md5", "text"), (5,)]:
        want = error_of(hashlib.new, *args)
        assert want is not None and want[0] is TypeError
        assert error_of(md5x.new, *args)[0] is TypeError, args
    # A name that is no plain string: the running hashlib's error. Up to 3.13 every one
    # is a TypeError, "name must be a string"; from 3.14 another type is a TypeError in
    # other words, and a str with a NUL or a lone surrogate an unsupported hash.
    for name in [5, None, b"md5", "md5\0", "md5\udc80"]:
        want = error_of(hashlib.new, name)
        if sys.version_info < (3, 14):
            assert want == (TypeError, "name must be a string"), name
        elif isinstance(name, str):
            assert want[0] is ValueError, (name, want)
            want = (ValueError, f"md5x computes MD5 only: unsupported hash type {name}")
        else:
            assert want[0] is TypeError, (name, want)
        assert error_of(md5x.new, name) == want, name


def test_file_digest_takes_hashlibs_digest_argument(tmp_path):
    """hashlib.file_digest(f, "md5") carries over as md5x.file_digest(f, "md5"): the
    name in any case or a callable that makes an MD5 object; another hash is refused
    with hashlib.new's words, a non-callable with a TypeError, as hashlib does."""
    data = rand_bytes(300_001)
    p = tmp_path / "f"
    p.write_bytes(data)
    for digest in ["md5", "MD5", hashlib.md5, md5x.md5, lambda: hashlib.md5()]:
        with open(p, "rb") as f:
            assert md5x.file_digest(f, digest).digest() == ref(data), digest
        assert md5x.file_digest(io.BytesIO(data), digest).digest() == ref(data)
    with open(p, "rb") as f:
        assert md5x.file_digest(f).digest() == ref(data)
    for digest in ["sha256", hashlib.sha1, "md5x", ""]:
        with open(p, "rb") as f:
            got = error_of(md5x.file_digest, f, digest)
            assert got is not None and got[0] is ValueError, (digest, got)
            assert "unsupported hash type" in got[1]
            assert f.tell() == 0  # refused before reading
    # A digest that is neither a name nor callable: 5, and None given explicitly (no
    # digest at all means MD5 here; hashlib requires one).
    for bad in [5, None]:
        want = error_of(hashlib.file_digest, io.BytesIO(data), bad)
        assert want is not None and want[0] is TypeError
        assert error_of(md5x.file_digest, io.BytesIO(data), bad)[0] is TypeError, bad
    assert error_of(md5x.file_digest, io.BytesIO(data), "md5", "md5")[0] is TypeError


def test_file_digest_feeds_the_object_the_callable_makes(tmp_path):
    """As hashlib's file_digest, the file goes into the object that `digest()` made,
    after whatever that object was made with, and that object is returned: an
    md5x.md5 always, another module's MD5 object whenever it already holds bytes."""
    data = rand_bytes(600_001)
    p = tmp_path / "f"
    p.write_bytes(data)
    salt = b"salt:"
    made = []

    def ours():
        made.append(md5x.md5(salt))
        return made[-1]

    def theirs():
        made.append(hashlib.md5(salt))
        return made[-1]

    for maker in [ours, theirs]:
        for f in [open(p, "rb"), open(p, "rb", buffering=0), io.BytesIO(data)]:
            with f:
                want = hashlib.file_digest(f, maker)
                f.seek(0)
                got = md5x.file_digest(f, maker)
            assert got.digest() == want.digest() == ref(salt + data), (maker, f)
            assert got is made[-1], (maker, f)
    # A fresh object of another module gives way to an md5x.md5 with the same digest;
    # a fresh md5x.md5 is itself fed and returned.
    with open(p, "rb") as f:
        got = md5x.file_digest(f, hashlib.md5)
    assert type(got) is md5x.md5 and got.digest() == ref(data)
    with open(p, "rb") as f:
        got = md5x.file_digest(f, ours)
    assert got is made[-1] and got.digest() == ref(salt + data)

    # An object that names itself md5 but is no hashlib object: fed through its own
    # update when its digest is not the empty message's, its errors raised as they come.
    class Odd:
        name = "md5"

        def __init__(self):
            self.fed = []

        def update(self, b):
            self.fed.append(bytes(b))

        def digest(self):
            raise RuntimeError("no digest here")

    odd = Odd()
    assert md5x.file_digest(io.BytesIO(b"abc"), lambda: odd) is odd
    assert odd.fed == [b"abc"]

    class Refuses(Odd):
        def update(self, b):
            raise OSError("update refused")

    with open(p, "rb") as f:
        assert error_of(md5x.file_digest, f, Refuses) == (OSError, "update refused")


def test_file_digest_rejects_what_hashlib_rejects(tmp_path):
    p = tmp_path / "t.txt"
    p.write_text("text")
    with open(p) as f:  # text mode: no readinto
        want = error_of(hashlib.file_digest, f, "md5")
        assert want is not None and want[0] is ValueError
        assert error_of(md5x.file_digest, f) == want
    with open(p, "wb") as f:  # not readable
        want = error_of(hashlib.file_digest, f, "md5")
        assert want is not None and want[0] is ValueError
        assert error_of(md5x.file_digest, f) == want
    assert error_of(md5x.file_digest, 42)[0] is ValueError
