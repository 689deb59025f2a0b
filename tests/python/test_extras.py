"""What hashlib lacks: hash_many, hash_files, s3_etag, S3Etag, s3_etags, md5_par, backend.

References: hashlib for plain MD5, and the Python definitions in docs/modes.md for
MD5-P(K) and S3 ETags.
"""

import array
import ctypes
import errno
import hashlib
import json
import mmap
import os
import pathlib
import random
import subprocess
import sys

import pytest

import md5x

RNG = random.Random(1321)
MiB = 1 << 20


def ref(data):
    return hashlib.md5(data).digest()


def doc_vectors():
    """docs/modes.md's vector table, read from the document: (mode, len, result) rows."""
    text = (pathlib.Path(__file__).parents[2] / "docs" / "modes.md").read_text()
    table = text.split("| mode | len | result |", 1)[1].splitlines()[2:]
    rows = []
    for line in table:
        if not line.startswith("|"):
            break
        _, mode, n, result, _ = (cell.strip() for cell in line.split("|"))
        rows.append((mode, int(n), result))
    return rows


def pattern(n):
    """docs/modes.md's test message: byte[i] = (i * 31) mod 251."""
    return bytes((i * 31) % 251 for i in range(251)) * (n // 251) + bytes(
        (i * 31) % 251 for i in range(n % 251)
    )


# ------------------------------------------------------------------------------------
# hash_many


def test_hash_many_matches_hashlib_over_many_lengths():
    bufs = [RNG.randbytes(n) for n in range(0, 1100)]
    assert md5x.hash_many(bufs) == [ref(b) for b in bufs]


def test_hash_many_large_and_uneven_inputs():
    # Enough bytes that the work is spread over threads, with very uneven lengths.
    bufs = [RNG.randbytes(RNG.choice([0, 1, 55, 64, 4096, 100_000, 3 * MiB])) for _ in range(300)]
    assert md5x.hash_many(bufs) == [ref(b) for b in bufs]
    bufs = [RNG.randbytes(4096) for _ in range(10_000)]
    assert md5x.hash_many(bufs) == [ref(b) for b in bufs]


def test_hash_many_mixed_buffer_types_and_iterables():
    data = RNG.randbytes(300_000)
    bufs = [
        data,
        bytearray(data[:1000]),
        memoryview(data)[3:70_000],
        array.array("I", range(5000)),
        b"",
        memoryview(bytearray(data)).cast("Q"),
    ]
    want = [ref(b) for b in bufs]
    assert md5x.hash_many(bufs) == want
    assert md5x.hash_many(iter(bufs)) == want
    assert md5x.hash_many(tuple(bufs)) == want
    assert md5x.hash_many(b for b in bufs) == want
    assert md5x.hash_many([]) == []


CHUNK = 256 << 10  # what md5x copies out of a mutable buffer at a time


def test_hash_many_mutable_buffers_over_a_chunk_and_many_small_ones():
    # Buffers other than bytes over a chunk are hashed a chunk at a time, more of them
    # than one thread's lanes hold; the smaller ones are copied whole, in batches
    # (here over 40 MiB of them, more than one batch), all among bytes, in order.
    sizes = [CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 5, MiB + 63, 0, 1, 4097]
    bufs = []
    for i in range(150):
        n = sizes[i % len(sizes)] if i % 5 else RNG.randrange(4 * MiB)
        data = RNG.randbytes(n)
        kind = i % 4
        bufs.append(
            data
            if kind == 0
            else bytearray(data)
            if kind == 1
            else memoryview(bytearray(b"..." + data))[3:]
            if kind == 2
            else array.array("B", data)
        )
    bufs += [bytearray(RNG.randbytes(CHUNK)) for _ in range(160)]
    assert md5x.hash_many(bufs) == [ref(b) for b in bufs]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in KiB: Linux")
def test_hash_many_does_not_copy_large_mutable_buffers_whole():
    # A 256 MiB buffer sliced into 8 MiB parts (as for S3 parts' Content-MD5): hashed
    # a chunk of each part at a time, never copied whole (that was 256 MiB more).
    import resource

    n = 256 * MiB
    whole = bytearray(n)
    piece = RNG.randbytes(MiB)
    for i in range(0, n, MiB):
        whole[i : i + MiB] = piece[i // MiB :] + piece[: i // MiB]
    view = memoryview(whole)
    parts = [view[i : i + 8 * MiB] for i in range(0, n, 8 * MiB)]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    got = md5x.hash_many(parts)
    grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert got == [ref(p) for p in parts]
    assert grew < 64 * 1024, f"peak memory grew by {grew} KiB"


def test_hash_many_takes_each_item_of_a_generator_as_it_comes():
    # A generator may hand out one buffer again and again, overwritten in place (a
    # readinto loop): each item is hashed as it was when handed out, as a loop over
    # hashlib.md5 takes it; small and large, bytearray, memoryview slices, numpy.
    def refill(n, count):
        buf = bytearray(n)
        for i in range(count):
            buf[:] = bytes([i + 1]) * n
            yield buf
            yield memoryview(buf)[: n // 2 + i]

    for n in (8, 4096, 300 * 1024, 2 * MiB):
        assert md5x.hash_many(refill(n, 5)) == [ref(b) for b in refill(n, 5)], n

    # The same buffer released as soon as the next item is asked for.
    def released():
        buf = bytearray(b"x" * 100_000)
        for i in range(3):
            view = memoryview(buf)[i:]
            yield view
            view.release()
            buf[i] = 0

    assert md5x.hash_many(released()) == [ref(b) for b in released()]

    # Many items, more than are held at a time, in order.
    items = [RNG.randbytes(RNG.randrange(0, 3000)) for _ in range(20_000)]
    assert md5x.hash_many(bytearray(b) for b in items) == [ref(b) for b in items]
    assert md5x.hash_many(iter(items)) == [ref(b) for b in items]

    try:
        import numpy as np
    except ImportError:
        return
    arr = np.zeros(50_000, dtype=np.uint32)

    def arrays():
        for i in range(4):
            arr[:] = i
            yield arr

    assert md5x.hash_many(arrays()) == [ref(a.tobytes()) for a in arrays()]


def test_hash_many_bad_arguments():
    try:
        import numpy as np
    except ImportError:
        np = None
    with pytest.raises(TypeError, match="^Strings must be encoded before hashing$"):
        md5x.hash_many([b"a", "b"])
    with pytest.raises(TypeError, match="^object supporting the buffer API required$"):
        md5x.hash_many([b"a", None])
    with pytest.raises(TypeError):
        md5x.hash_many(5)  # not iterable
    # One buffer, not a list of them: said, not hashed as its items (ints) or as [].
    for one in [b"", b"abc", bytearray(b"abc"), memoryview(b"abc"), "abc", ""]:
        with pytest.raises(TypeError, match=r"not a single \w+; pass \[data\]$"):
            md5x.hash_many(one)
    # Nor one flat buffer of numbers, whose items are numbers (each an int, or a
    # numpy scalar that would be hashed alone): an mmap, an array.array, a 1-D array.
    m = mmap.mmap(-1, 5)
    flat = [m, array.array("B", b"abc"), array.array("d", [1.0, 2.0])]
    # ctypes' arrays too, whose buffers come without strides: of c_char, whose items
    # are one-byte bytes, and of numbers.
    flat += [(ctypes.c_char * 3)(b"a", b"b"), (ctypes.c_uint8 * 3)(), (ctypes.c_double * 2)()]
    if np is not None:
        flat += [np.zeros(1000, dtype=np.uint8), np.arange(3.0), np.zeros(3, dtype="M8[s]")]
        flat += [np.zeros(6, dtype="m8[s]")[::2]]
    for one in flat:
        with pytest.raises(TypeError, match=r"not a single \w+; pass \[data\]$"):
            md5x.hash_many(one)
    m.close()
    if np is not None:
        # A 2-D array is its rows, and an array of byte strings its bytes.
        rows = np.arange(12, dtype=np.uint8).reshape(3, 4)
        assert md5x.hash_many(rows) == [ref(r.tobytes()) for r in rows]
        names = np.array([b"abc", b"de"])
        assert md5x.hash_many(names) == [ref(b"abc"), ref(b"de")]
        times = np.arange(12, dtype="m8[s]").reshape(3, 4)
        assert md5x.hash_many(times) == [ref(r) for r in times]
    grid = (ctypes.c_uint8 * 4 * 3).from_buffer_copy(bytes(range(12)))
    assert md5x.hash_many(grid) == [ref(bytes(r)) for r in grid]
    # Other iterables of buffers still work.
    a = array.array("B", range(60))
    want = [hashlib.md5(a).digest(), hashlib.md5(b"x").digest()]
    assert md5x.hash_many(iter([a, b"x"])) == want
    assert md5x.hash_many(x for x in (a, b"x")) == want


# ------------------------------------------------------------------------------------
# hash_files


def open_error(path):
    """The OSError that open() raises for `path`."""
    try:
        with open(path, "rb") as f:
            f.read()
    except OSError as e:
        return e
    raise AssertionError(f"{path!r} is readable")


def same_oserror(got, want):
    assert type(got) is type(want)
    assert (got.errno, got.strerror, got.filename) == (want.errno, want.strerror, want.filename)


@pytest.fixture
def tree(tmp_path):
    """Files of many sizes (both the lanes path and the streamed path), and entries
    that cannot be read: a directory, a missing path, a dangling symlink."""
    sizes = [0, 1, 63, 64, 65, 4096, 64 << 10, MiB, MiB + 1, 3 * MiB + 17]
    sizes += [RNG.randrange(0, 200_000) for _ in range(150)]
    good = []
    for i, size in enumerate(sizes):
        p = tmp_path / f"f{i:04}"
        p.write_bytes(RNG.randbytes(size))
        good.append(str(p))
    (tmp_path / "subdir").mkdir()
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    bad = [str(tmp_path / "subdir"), str(tmp_path / "missing"), str(tmp_path / "dangling")]
    return good, bad


def hex_of_file(path):
    with open(path, "rb") as f:
        return hashlib.md5(f.read()).hexdigest()


# (2**62: more than the threads md5x starts, which are capped; the results are the same.)
@pytest.mark.parametrize("jobs", [None, 1, 2, 5, 2**62])
def test_hash_files_matches_hashlib(tree, jobs):
    good, _ = tree
    assert md5x.hash_files(good, jobs=jobs) == [hex_of_file(p) for p in good]


@pytest.fixture(scope="module")
def large_files(tmp_path_factory):
    """More files over 1 MiB than a lane set holds (hashed a chunk of each at a time),
    among small ones: sizes just past the line, at and past multiples of the 64 KiB
    chunk, and random."""
    d = tmp_path_factory.mktemp("large")
    paths = []
    for i in range(60):
        size = [MiB + 1, 2 * MiB, 2 * MiB + 65537, RNG.randrange(MiB, 3 * MiB), RNG.randrange(5000)]
        p = d / f"L{i:02}"
        p.write_bytes(RNG.randbytes(size[i % 5]))
        paths.append(str(p))
    return paths


@pytest.mark.parametrize("jobs", [None, 1, 3, 2**62])
def test_hash_files_many_large_files(large_files, jobs):
    assert md5x.hash_files(large_files, jobs=jobs) == [hex_of_file(p) for p in large_files]


def test_hash_files_path_types(tree):
    good, _ = tree
    want = [hex_of_file(p) for p in good[:20]]
    assert md5x.hash_files([pathlib.Path(p) for p in good[:20]]) == want
    assert md5x.hash_files([os.fsencode(p) for p in good[:20]]) == want
    assert md5x.hash_files(iter(good[:20])) == want
    assert md5x.hash_files([]) == []
    with pytest.raises(TypeError):
        md5x.hash_files([42])


def test_hash_files_raises_the_first_error_like_open(tree):
    good, bad = tree
    assert [type(open_error(p)) for p in bad] == [
        IsADirectoryError,
        FileNotFoundError,
        FileNotFoundError,
    ]
    for b in bad:
        for jobs in (1, 3):
            paths = good[:40] + [b] + good[40:] + bad
            with pytest.raises(OSError) as info:
                md5x.hash_files(paths, jobs=jobs)
            same_oserror(info.value, open_error(b))
    # The filename is the object that was passed, as with open().
    p = pathlib.Path(bad[1])
    with pytest.raises(FileNotFoundError) as info:
        md5x.hash_files([p])
    assert info.value.filename == open_error(p).filename
    assert info.value.errno == errno.ENOENT


def test_hash_files_errors_return(tree):
    good, bad = tree
    paths = []
    for i, p in enumerate(good):
        paths.append(p)
        if i % 50 == 0:
            paths.append(bad[(i // 50) % len(bad)])
    got = md5x.hash_files(paths, jobs=2, errors="return")
    assert len(got) == len(paths)
    for p, g in zip(paths, got):
        if p in bad:
            assert isinstance(g, OSError)
            same_oserror(g, open_error(p))
        else:
            assert g == hex_of_file(p)


NO_THREADS = """
import array, hashlib, os, sys, tempfile, threading
import md5x
ref = lambda b: hashlib.md5(b).digest()
try:
    threading.Thread(target=lambda: None).start()
except RuntimeError:
    pass
else:
    raise SystemExit("a thread could be started: the limit is not in force")
# Enough work that each call would use every core: many buffers, large mutable ones
# (a chunk at a time), and many files, small and large.
bufs = [os.urandom(100_000) for _ in range(64)]
assert md5x.hash_many(bufs) == [ref(b) for b in bufs]
big = [bytearray(os.urandom(3 << 20)) for _ in range(6)]
assert md5x.hash_many(big) == [ref(b) for b in big]
with tempfile.TemporaryDirectory() as d:
    paths = []
    for i in range(80):
        p = os.path.join(d, str(i))
        with open(p, "wb") as f:
            f.write(os.urandom((2 << 20) if i % 8 == 0 else 5000))
        paths.append(p)
    want = [hashlib.md5(open(p, "rb").read()).hexdigest() for p in paths]
    assert md5x.hash_files(paths, jobs=4) == want
    # ETags: many files, and one large file (its parts would go to every core).
    part = 5 << 20
    def etag(data):
        if len(data) < part:
            return hashlib.md5(data).hexdigest()
        ds = [hashlib.md5(data[i : i + part]).digest() for i in range(0, len(data), part)]
        return hashlib.md5(b"".join(ds)).hexdigest() + f"-{len(ds)}"
    large = os.path.join(d, "large")
    with open(large, "wb") as f:
        f.write(os.urandom(12 << 20))
    paths.append(large)
    want = [etag(open(p, "rb").read()) for p in paths]
    assert md5x.s3_etags(paths, part, part, jobs=4) == want
    assert md5x.s3_etag(large, part, part) == want[-1]
print("no threads ok")
"""


def world_can_run(path):
    """Whether anyone may run `path`: it and every directory above it world-executable."""
    p = os.path.realpath(path)
    while True:
        if not os.stat(p).st_mode & 0o001:
            return False
        if p == "/":
            return True
        p = os.path.dirname(p)


def test_no_thread_to_spare_is_not_a_failure(tmp_path):
    # Under a process limit that refuses every new thread (RLIMIT_NPROC, which binds
    # only unprivileged users), the calls that spread work over threads do it all on
    # the calling thread instead of failing.
    import resource
    import shutil
    import tempfile

    if os.geteuid() != 0 or (os.cpu_count() or 1) < 2:
        pytest.skip("needs root (to become an unprivileged user) and 2 cores")
    interpreters = [sys.executable, shutil.which("python3") or "", "/usr/bin/python3"]
    runnable = [
        p
        for p in interpreters
        if p
        and os.path.exists(p)
        and world_can_run(p)
        and subprocess.run([p, "-c", "import sys; sys.exit(sys.version_info < (3, 11))"]).returncode == 0
    ]
    if not runnable:
        pytest.skip("no Python 3.11+ that an unprivileged user may run")
    # The module, where the unprivileged user can read it.
    lib = tempfile.mkdtemp(dir="/tmp")
    try:
        shutil.copytree(os.path.dirname(md5x.__file__), os.path.join(lib, "md5x"))
        for root, dirs, files in os.walk(lib):
            for n in [root] + [os.path.join(root, f) for f in files]:
                os.chmod(n, 0o755)

        def limited():
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            resource.setrlimit(resource.RLIMIT_NPROC, (1, 1))

        out = subprocess.run(
            [runnable[0], "-c", NO_THREADS],
            preexec_fn=limited,
            capture_output=True,
            text=True,
            cwd="/",
            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": lib, "TMPDIR": "/tmp"},
        )
    finally:
        shutil.rmtree(lib)
    assert out.returncode == 0 and out.stdout == "no threads ok\n", out.stderr[-3000:]


PERMISSION_CHECK = """
import md5x, sys
path = sys.argv[1]
try:
    open(path, "rb")
except OSError as e:
    want = (type(e).__name__, e.errno, e.strerror, e.filename)
else:
    raise SystemExit("readable: " + path)
try:
    md5x.hash_files([path])
except OSError as e:
    got = (type(e).__name__, e.errno, e.strerror, e.filename)
else:
    raise SystemExit("md5x.hash_files read an unreadable file")
ret = md5x.hash_files([path, path], errors="return")
assert all(type(r).__name__ == want[0] for r in ret), ret
assert got == want, (got, want)
print("PermissionError ok")
"""


def drop_file_capabilities():
    """In the child before exec: drop root's right to ignore file modes
    (CAP_DAC_OVERRIDE = 1, CAP_DAC_READ_SEARCH = 2) from the capability bounding set,
    so the program it runs is refused a mode-0 file like anyone else."""
    libc = ctypes.CDLL(None, use_errno=True)
    PR_CAPBSET_DROP = 24
    for cap in (1, 2):
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def test_hash_files_permission_denied(tmp_path):
    """A file its reader may not open. Root opens any file, so as root the same
    checks run in a child process without root's file-permission capabilities."""
    p = tmp_path / "secret"
    p.write_bytes(b"x")
    p.chmod(0)
    if os.geteuid() != 0:
        with pytest.raises(PermissionError) as info:
            md5x.hash_files([str(p)])
        same_oserror(info.value, open_error(str(p)))
        return
    r = subprocess.run(
        [sys.executable, "-c", PERMISSION_CHECK, str(p)],
        preexec_fn=drop_file_capabilities,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "PermissionError ok"


READ_ERRORS = """
import errno, hashlib, md5x, os, sys
# The directory, then its files in order (bad[0] fails first; paths[3:] starts at "b").
d, *names = sys.argv[1:]
paths = [os.path.join(d, n) for n in names]
bad = [p for p, n in zip(paths, names) if n.startswith("eio-")]
# What Python's own reads say: the shim is loaded.
try:
    open(bad[1], "rb").read()
except OSError as e:
    assert e.errno == errno.EIO, e
else:
    raise SystemExit("the shim failed no read")
ref = {p: hashlib.md5(open(p, "rb").read()).hexdigest() for p in paths if p not in bad}


def is_eio(e, path):
    return (type(e), e.errno, e.strerror, e.filename) == (
        OSError, errno.EIO, os.strerror(errno.EIO), path)


def expect_raises(call, path):
    try:
        got = call()
    except OSError as e:
        assert is_eio(e, path), (repr(e), e.filename, path)
    else:
        raise AssertionError(f"no error for {path}: {got}")


for jobs in (1, 2):
    expect_raises(lambda: md5x.hash_files(paths, jobs=jobs), bad[0])
    expect_raises(lambda: md5x.s3_etags(paths, jobs=jobs), bad[0])
    expect_raises(lambda: md5x.s3_etags(paths[3:], 5 << 20, 0, jobs=jobs), bad[2])
    for got in (
        md5x.hash_files(paths, jobs=jobs, errors="return"),
        # (Below the threshold, an ETag is the MD5; the large file is in parts.)
        md5x.s3_etags(paths, jobs=jobs, errors="return"),
    ):
        for p, g in zip(paths, got):
            assert is_eio(g, p) if p in bad else g == ref[p], (p, g)
for p in bad:
    expect_raises(lambda: md5x.s3_etag(p), p)
    expect_raises(lambda: md5x.s3_etag(p, 5 << 20, 0), p)
    # As hashlib's file_digest: the error of the file object's read, which names no file.
    with open(p, "rb") as f:
        try:
            md5x.file_digest(f, "md5")
        except OSError as e:
            assert e.errno == errno.EIO, e
        else:
            raise AssertionError("file_digest read through " + p)
print("read errors ok")
"""


@pytest.mark.skipif(sys.platform != "linux", reason="LD_PRELOAD shim: Linux only")
def test_read_errors_partway_through_files(tmp_path):
    """A disk that fails partway through a file (tests/shims/read_error.c, preloaded:
    reads of a file named eio-N fail at byte N): OSError(EIO) naming the file, raised
    or in its place, and the other files' results as ever."""
    shim = pathlib.Path(__file__).parents[1] / "shims" / "read_error.c"
    lib = tmp_path / "read_error.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", str(lib), str(shim), "-ldl"], check=True)
    sizes = {"a": 100, "eio-0": 5000, "eio-1000": 5000, "b": 300_000, "eio-270000": 300_000,
             "z": 1, "eio-9000000": 20 * MiB}
    for name, n in sizes.items():
        (tmp_path / name).write_bytes(RNG.randbytes(n))
    env = dict(os.environ, LD_PRELOAD=str(lib))
    r = subprocess.run([sys.executable, "-c", READ_ERRORS, str(tmp_path), *sizes], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout == "read errors ok\n", r.stderr[-3000:]


def test_hash_files_bad_arguments(tree):
    good, _ = tree
    with pytest.raises(ValueError):
        md5x.hash_files(good, jobs=0)
    with pytest.raises(ValueError):
        md5x.hash_files(good, jobs=-2)
    for bad in (-(10**30), -(2**200)):
        with pytest.raises(ValueError, match=f"jobs must be at least 1, not {bad}"):
            md5x.hash_files(good, jobs=bad)
    # Past 64 bits, and past 128: capped as every large count is.
    for many in (10**30, 2**200):
        assert md5x.hash_files(good, jobs=many) == [hex_of_file(p) for p in good]
    with pytest.raises(ValueError):
        md5x.hash_files(good, errors="ignore")
    with pytest.raises(TypeError):
        md5x.hash_files(good, 2)  # jobs is keyword-only
    # One path where a list is asked for (it would be taken as its characters).
    for one in (str(good[0]), os.fsencode(good[0]), pathlib.Path(good[0])):
        for call in (md5x.hash_files, md5x.s3_etags):
            with pytest.raises(TypeError, match=r"^paths must be an iterable of paths, not a single"):
                call(one)


# ------------------------------------------------------------------------------------
# s3_etag, against the definition in docs/modes.md


def etag_reference(data, part_size, threshold):
    if len(data) < threshold:
        return hashlib.md5(data).hexdigest()
    parts = [data[i : i + part_size] for i in range(0, len(data), part_size)] or [b""]
    outer = hashlib.md5(b"".join(hashlib.md5(p).digest() for p in parts))
    return f"{outer.hexdigest()}-{len(parts)}"


def test_s3_etag_vectors_from_docs(tmp_path):
    prefix, suffix = "ETag, part = threshold = ", " MiB"
    vectors = [
        (n, int(mode[len(prefix) : -len(suffix)]) * MiB, want)
        for mode, n, want in doc_vectors()
        if mode.startswith(prefix)
    ]
    assert len(vectors) >= 4
    for size, part, want in vectors:
        p = tmp_path / f"v{size}"
        p.write_bytes(pattern(size))
        assert md5x.s3_etag(str(p), part, part) == want
        assert etag_reference(pattern(size), part, part) == want


def test_s3_etag_against_the_python_definition(tmp_path):
    part = 5 * MiB
    sizes = [0, 1, 1000, part - 1, part, part + 1, 2 * part, 2 * part + 12_345]
    for size in sizes:
        data = RNG.randbytes(size)
        p = tmp_path / f"s{size}"
        p.write_bytes(data)
        for threshold in (0, 1, part, 3 * part):
            want = etag_reference(data, part, threshold)
            assert md5x.s3_etag(p, part, threshold) == want, (size, threshold)
        # The defaults: 8 MiB parts and threshold.
        assert md5x.s3_etag(str(p)) == etag_reference(data, 8 * MiB, 8 * MiB)


def feed_in_pieces(h, data):
    # Random pieces, as an upload arrives: bytes, bytearray and memoryview slices.
    pos = 0
    kinds = (bytes, bytearray, memoryview)
    while pos < len(data):
        n = RNG.choice((1, 63, 64, 65, 4096, 300_000, 2 * MiB + 7))
        h.update(RNG.choice(kinds)(data[pos : pos + n]))
        pos += n


def test_streaming_s3_etag_against_the_python_definition():
    part = 5 * MiB
    sizes = [0, 1, 1000, part - 1, part, part + 1, 2 * part, 2 * part + 12_345]
    for size in sizes:
        data = RNG.randbytes(size)
        for threshold in (0, 1, part - 1, part, part + 1, 3 * part):
            want = etag_reference(data, part, threshold)
            h = md5x.S3Etag(part_size=part, threshold=threshold)
            assert (h.part_size, h.threshold) == (part, threshold)
            feed_in_pieces(h, data)
            assert h.hexdigest() == want, (size, threshold)
            assert h.hexdigest() == want  # hexdigest leaves the state as it was
            assert md5x.S3Etag(data, part_size=part, threshold=threshold).hexdigest() == want
        # The defaults: 8 MiB parts and threshold, as s3_etag's.
        assert md5x.S3Etag(data).hexdigest() == etag_reference(data, 8 * MiB, 8 * MiB)


def test_streaming_s3_etag_copy_settings_and_errors():
    part = 5 * MiB
    data = RNG.randbytes(part + 100)
    h = md5x.S3Etag(data[:part], part_size=part, threshold=part)
    c = h.copy()
    h.update(data[part:])
    assert c.hexdigest() == etag_reference(data[:part], part, part)
    assert h.hexdigest() == etag_reference(data, part, part)
    assert (c.part_size, c.threshold) == (part, part)
    # Settings S3 refuses are refused here, as by s3_etag.
    # (Past 128 bits too: a ValueError that gives the number, not an OverflowError.)
    for bad in (part - 1, 0, -1, 5 * 1024 * MiB + 1, 1 << 70, 1 << 200, -(1 << 200)):
        with pytest.raises(ValueError, match=f"part size {bad} bytes is outside S3's limits"):
            md5x.S3Etag(part_size=bad)
    for bad in (-1, 1 << 64, 1 << 200, -(1 << 200)):
        with pytest.raises(ValueError, match=f"threshold must be .*, not {bad}$"):
            md5x.S3Etag(threshold=bad)
    md5x.S3Etag(part_size=5 * 1024 * MiB, threshold=(1 << 64) - 1)
    # Like md5: text is refused, and so is a non-contiguous buffer.
    with pytest.raises(TypeError, match="Strings must be encoded before hashing"):
        md5x.S3Etag().update("abc")
    with pytest.raises(TypeError):
        md5x.S3Etag("abc")
    with pytest.raises(BufferError):
        md5x.S3Etag().update(memoryview(b"abcdef")[::2])
    # The settings are keyword-only: a second positional argument is a mistake.
    with pytest.raises(TypeError):
        md5x.S3Etag(b"", part)


def test_streaming_s3_etag_shared_between_threads():
    # Each update is atomic: pieces fed from several threads at once all count.
    import threading

    part = 5 * MiB
    piece = bytes(range(256)) * 4096  # 1 MiB
    h = md5x.S3Etag(part_size=part, threshold=0)
    threads = [
        threading.Thread(target=lambda: [h.update(piece) for _ in range(4)]) for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert h.hexdigest() == etag_reference(piece * 16, part, 0)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and /sys: Linux")
def test_s3_etag_of_proc_and_sys_files_is_of_what_they_hold():
    # A /proc file says it is empty, a /sys file says 4096 bytes: both are read
    # through to their end, as hash_files reads them.
    paths = [p for p in ("/proc/version", "/sys/devices/system/cpu/online") if os.path.isfile(p)]
    if not paths:
        pytest.skip("no /proc/version or /sys/devices/system/cpu/online here")
    datas = []
    for p in paths:
        with open(p, "rb") as f:
            datas.append(f.read())
    want = [hashlib.md5(d).hexdigest() for d in datas]
    assert [md5x.s3_etag(p) for p in paths] == want
    assert md5x.s3_etags(paths) == want
    assert md5x.hash_files(paths) == want
    # And in one part (threshold 0): the /sys file was "shrank while it was read".
    want = [etag_reference(d, 5 * MiB, 0) for d in datas]
    assert [md5x.s3_etag(p, 5 * MiB, 0) for p in paths] == want
    assert md5x.s3_etags(paths, 5 * MiB, 0) == want


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/fd: Linux")
def test_file_functions_under_a_low_open_file_limit(tmp_path):
    # Where a loop over open() works, so do hash_files and s3_etags: they hold fewer
    # files open for the lanes under a low limit (they held up to 128 and failed
    # with EMFILE).
    import resource

    datas = [bytes([i]) * (MiB + 1000 + i) for i in range(50)]
    paths = []
    for i, d in enumerate(datas):
        p = tmp_path / f"f{i}"
        p.write_bytes(d)
        paths.append(p)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    low = max(40, len(os.listdir("/proc/self/fd")) + 24)
    resource.setrlimit(resource.RLIMIT_NOFILE, (low, hard))
    try:
        got = md5x.hash_files(paths, jobs=2)
        tags = md5x.s3_etags(paths, 5 * MiB, 1, jobs=2)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert got == [hashlib.md5(d).hexdigest() for d in datas]
    assert tags == [etag_reference(d, 5 * MiB, 1) for d in datas]


INTERRUPT_CHECK = r"""
import json, os, signal, sys, threading, time
import md5x

big, fifo = sys.argv[1], sys.argv[2]
part = 128 << 20
out = {}


def tasks():
    return len(os.listdir("/proc/self/task"))


def interrupted(call):
    # Ctrl-C 0.3 s into a call that would run for minutes or for ever.
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        call()
        return "returned"
    except KeyboardInterrupt:
        return "KeyboardInterrupt"
    finally:
        timer.join()


def threads_end(base):
    # Its threads stop reading and end, rather than hash on in the background.
    deadline = time.monotonic() + 60
    while tasks() > base and time.monotonic() < deadline:
        time.sleep(0.01)
    return tasks() - base


base = tasks()
calls = {
    "hash_files zero": lambda: md5x.hash_files(["/dev/zero"]),
    "hash_files big": lambda: md5x.hash_files([big] * 3, jobs=2),
    "s3_etag zero": lambda: md5x.s3_etag("/dev/zero"),
    "s3_etag big": lambda: md5x.s3_etag(big, part),
    "s3_etags zero": lambda: md5x.s3_etags(["/dev/zero"]),
    "s3_etags big": lambda: md5x.s3_etags([big] * 3, part, jobs=2),
    "file_digest zero": lambda: md5x.file_digest(open("/dev/zero", "rb", buffering=0)),
}
for name, call in calls.items():
    out[name] = [interrupted(call), threads_end(base)]
# A FIFO with no writer: the open blocks, and only a writer ends it; the call is
# interrupted all the same, and its thread ends once a writer comes.
got = interrupted(lambda: md5x.hash_files([fifo]))
waiting = tasks() - base
with open(fifo, "wb"):
    pass
out["hash_files fifo"] = [got, threads_end(base), waiting]
print(json.dumps(out))
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="counts threads in /proc")
def test_ctrl_c_stops_file_calls(tmp_path):
    """Ctrl-C raises KeyboardInterrupt in hash_files, s3_etag, s3_etags and file_digest
    as it does in a loop over hashlib, on /dev/zero (no end) and on a sparse file of
    1 TiB (minutes of reading), and their threads stop rather than hash on; a FIFO with
    no writer is interrupted too, and its thread ends when a writer comes. In a child
    process, whose SIGINT stays its own."""
    big = tmp_path / "big"
    with open(big, "wb") as f:
        f.truncate(1 << 40)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    r = subprocess.run(
        [sys.executable, "-c", INTERRUPT_CHECK, str(big), str(fifo)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    for name, outcome in got.items():
        assert outcome[:2] == ["KeyboardInterrupt", 0], (name, outcome)
    # (The FIFO's thread was still waiting for its open until the writer came.)
    assert got["hash_files fifo"][2] >= 1, got


def test_s3_etag_errors(tmp_path):
    p = tmp_path / "f"
    p.write_bytes(b"abc")
    for bad in (0, 5 * MiB - 1, (5 << 30) + 1):
        with pytest.raises(ValueError) as info:
            md5x.s3_etag(p, bad)
        assert str(info.value) == (
            f"part size {bad} bytes is outside S3's limits (5242880 to 5368709120 bytes)"
        )
    with pytest.raises(ValueError, match="outside S3's limits"):
        md5x.s3_etag(p, -1)
    with pytest.raises(ValueError):
        md5x.s3_etag(p, 5 * MiB, -1)
    # More than 10,000 parts: refused before reading (a sparse file).
    big = tmp_path / "sparse"
    with open(big, "wb") as f:
        f.truncate(10_000 * 5 * MiB + 1)
    with pytest.raises(ValueError, match="at most 10000 parts"):
        md5x.s3_etag(big, 5 * MiB)
    # Over 5 GiB below the threshold: more than one PUT takes, refused unread; alone
    # and among others.
    put = tmp_path / "put"
    with open(put, "wb") as f:
        f.truncate((5 << 30) + 1)
    msg = "^5368709121 bytes in a single PUT: S3 takes at most 5368709120 bytes in one"
    with pytest.raises(ValueError, match=msg):
        md5x.s3_etag(put, 8 * MiB, 6 << 30)
    got = md5x.s3_etags([p, put, p], 8 * MiB, 2**64 - 1, errors="return")
    assert got[0] == got[2] == hashlib.md5(b"abc").hexdigest()
    assert isinstance(got[1], ValueError) and "single PUT" in str(got[1]), got
    missing = tmp_path / "missing"
    with pytest.raises(FileNotFoundError) as info:
        md5x.s3_etag(missing)
    same_oserror(info.value, open_error(missing))


@pytest.fixture(scope="module")
def etag_files(tmp_path_factory):
    """Files on both sides of the threshold and the part size (5 MiB + 13: parts that
    end mid-block), more parts in all than a lane set, and small ones between."""
    d = tmp_path_factory.mktemp("etags")
    part = 5 * MiB + 13
    sizes = [0, 1, 1000, part - 1, part, part + 1, 3 * part + 4097, 12 * part, 2 * part]
    sizes += [RNG.randrange(0, 3 * part) for _ in range(12)] + [RNG.randrange(5000)] * 20
    paths = []
    for i, size in enumerate(sizes):
        p = d / f"e{i:02}"
        p.write_bytes(RNG.randbytes(size))
        paths.append(str(p))
    return paths, part


@pytest.mark.parametrize("jobs", [None, 1, 3])
def test_s3_etags_against_the_python_definition(etag_files, jobs):
    paths, part = etag_files
    datas = [pathlib.Path(p).read_bytes() for p in paths]
    for threshold in (0, part, 2 * part, 2**64 - 1):
        want = [etag_reference(d, part, threshold) for d in datas]
        assert md5x.s3_etags(paths, part, threshold, jobs=jobs) == want, threshold
    # The defaults, and any path type.
    want = [etag_reference(d, 8 * MiB, 8 * MiB) for d in datas]
    assert md5x.s3_etags([pathlib.Path(p) for p in paths], jobs=jobs) == want
    assert md5x.s3_etags(iter(paths)) == [md5x.s3_etag(p) for p in paths]
    assert md5x.s3_etags([]) == []


def test_s3_etags_errors(etag_files, tmp_path):
    paths, _ = etag_files
    part = 5 * MiB  # (The sparse file needs 10,001 parts of it: refused unread.)
    missing = str(tmp_path / "missing")
    sparse = tmp_path / "sparse"
    with open(sparse, "wb") as f:
        f.truncate(10_000 * 5 * MiB + 1)
    mixed = paths[:5] + [missing] + paths[5:8] + [str(sparse), str(tmp_path)] + paths[8:]
    # In place: open()'s OSError, a ValueError for more than 10,000 parts, and an
    # IsADirectoryError for a directory (read, as s3_etag reads it).
    got = md5x.s3_etags(mixed, part, part, jobs=2, errors="return")
    assert len(got) == len(mixed)
    for p, g in zip(mixed, got):
        if p == missing:
            same_oserror(g, open_error(p))
        elif p == str(sparse):
            assert isinstance(g, ValueError) and "at most 10000 parts" in str(g)
        elif p == str(tmp_path):
            assert isinstance(g, IsADirectoryError), g
        else:
            assert g == md5x.s3_etag(p, part, part)
    # Raised: the first in order.
    with pytest.raises(FileNotFoundError) as info:
        md5x.s3_etags(mixed, part, part)
    same_oserror(info.value, open_error(missing))
    with pytest.raises(ValueError, match="at most 10000 parts"):
        md5x.s3_etags([paths[0], str(sparse)], 5 * MiB)
    # Settings outside S3's limits: ValueError, whatever the files.
    for bad in (0, 5 * MiB - 1, -1, 1 << 200):
        with pytest.raises(ValueError, match="outside S3's limits"):
            md5x.s3_etags(paths[:2], bad)
        with pytest.raises(ValueError, match="outside S3's limits"):
            md5x.s3_etag(paths[0], bad)
    for bad in (-1, 1 << 200):
        with pytest.raises(ValueError, match="threshold"):
            md5x.s3_etags(paths[:2], 5 * MiB, bad)
        with pytest.raises(ValueError, match="threshold"):
            md5x.s3_etag(paths[0], 5 * MiB, bad)
    with pytest.raises(ValueError, match="jobs must be at least 1"):
        md5x.s3_etags(paths[:2], jobs=0)
    with pytest.raises(ValueError, match="errors must be"):
        md5x.s3_etags(paths[:2], errors="ignore")


# ------------------------------------------------------------------------------------
# md5_par, against the definition in docs/modes.md


def md5_par_reference(data: bytes, k: int) -> bytes:
    chains = [hashlib.md5() for _ in range(k)]
    for start in range(0, len(data), 64):
        chains[(start // 64) % k].update(data[start : start + 64])
    return hashlib.md5(b"".join(c.digest() for c in chains)).digest()


def test_md5_par_vectors_from_docs():
    vectors = [
        (int(mode.removeprefix("MD5-P")), n, want)
        for mode, n, want in doc_vectors()
        if mode.startswith("MD5-P")
    ]
    assert len(vectors) >= 12
    for k, n, want in vectors:
        assert md5x.md5_par(pattern(n), k).hex() == want
        assert md5_par_reference(pattern(n), k).hex() == want


@pytest.mark.parametrize("k", [4, 8, 16])
def test_md5_par_against_the_python_definition(k):
    data = RNG.randbytes(3000)
    for n in list(range(0, 1100, 7)) + [2048, 2049, 3000]:
        assert md5x.md5_par(data[:n], k) == md5_par_reference(data[:n], k), n
    big = RNG.randbytes(3 * MiB + 5)
    want = md5_par_reference(big, k)
    assert md5x.md5_par(big, k) == want
    assert md5x.md5_par(bytearray(big), k) == want
    assert md5x.md5_par(memoryview(big)[0:], k) == want


def test_md5_par_bad_k():
    # (Past 64 bits, and past 128, too: a ValueError, not an OverflowError.)
    for k in (0, 1, 5, 32, -4, 2**64 + 4, -(10**30), 2**200, -(2**200)):
        with pytest.raises(ValueError) as info:
            md5x.md5_par(b"abc", k)
        assert str(info.value) == f"MD5-P(K) needs K = 4, 8 or 16, not {k}"
    with pytest.raises(TypeError):
        md5x.md5_par(b"abc", "4")
    with pytest.raises(TypeError):
        md5x.md5_par(b"abc", 4.0)


class Index:
    # An integer to Python through __index__ alone (no arithmetic of its own).
    def __init__(self, value):
        self.value = value

    def __index__(self):
        return self.value


def test_integer_arguments_through_index(tmp_path):
    # Every integer argument takes what Python's own functions take as one.
    p = tmp_path / "f"
    data = RNG.randbytes(6 * MiB + 5)
    p.write_bytes(data)
    assert md5x.md5_par(data, Index(4)) == md5_par_reference(data, 4)
    assert md5x.s3_etag(p, Index(5 * MiB), Index(5 * MiB)) == etag_reference(data, 5 * MiB, 5 * MiB)
    assert md5x.s3_etags([p], Index(5 * MiB), Index(0), jobs=Index(2)) == [
        etag_reference(data, 5 * MiB, 0)
    ]
    e = md5x.S3Etag(data, part_size=Index(5 * MiB), threshold=Index(1))
    assert (e.part_size, e.threshold) == (5 * MiB, 1)
    assert md5x.hash_files([p], jobs=Index(1)) == [hashlib.md5(data).hexdigest()]
    for bad in (Index(2**200), Index(-(2**200))):
        with pytest.raises(ValueError, match=f"not {bad.value}$"):
            md5x.md5_par(data, bad)


# ------------------------------------------------------------------------------------
# backend


KNOWN = {"portable", "x86_64", "sse2", "avx2", "avx512", "neon", "simd128"}


def run_python(code, **env):
    return subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=False,
    )


def test_backend():
    assert md5x.backend() in KNOWN
    code = "import md5x; print(md5x.backend(), md5x.md5(b'abc').hexdigest())"
    r = run_python(code, MD5X_BACKEND="portable")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["portable", "900150983cd24fb0d6963f7d28e17f72"]
    # An unknown backend is an error at import, never a silent fallback.
    r = run_python("import md5x", MD5X_BACKEND="sse9")
    assert r.returncode != 0
    assert "MD5X_BACKEND" in r.stderr and "unknown backend 'sse9'" in r.stderr


def test_stubs_ship_with_the_module():
    pkg = pathlib.Path(md5x.__file__).parent
    assert (pkg / "py.typed").is_file()
    stub = (pkg / "__init__.pyi").read_text()
    for name in ("class md5", "def new", "def file_digest", "def hash_many", "def hash_files"):
        assert name in stub
    for name in ("def s3_etag", "class S3Etag", "def s3_etags", "def md5_par", "def backend"):
        assert name in stub


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
@pytest.mark.parametrize("size", [0, 1000, 3 * MiB + 17, 11 * MiB + 5])
def test_files_without_a_size_are_read_to_their_end(tmp_path, size):
    # A FIFO's size is 0 whatever flows through it: hash_files must not trust it
    # (and must stream what passes 1 MiB rather than buffer it whole), and s3_etag
    # must not answer with the empty object's ETag.
    import threading

    data = RNG.randbytes(size)
    fifo = tmp_path / "fifo"

    def through_fifo(call):
        os.mkfifo(fifo)
        writer = threading.Thread(target=fifo.write_bytes, args=(data,))
        writer.start()
        try:
            return call()
        finally:
            writer.join()
            fifo.unlink()

    assert through_fifo(lambda: md5x.hash_files([fifo])) == [hashlib.md5(data).hexdigest()]
    part = 5 * MiB
    got = through_fifo(lambda: md5x.s3_etag(fifo, part, part))
    assert got == etag_reference(data, part, part)


@pytest.fixture
def block_device(tmp_path):
    """A read-only loop device over a 3 MiB file (and the file's bytes), where
    losetup can make one."""
    data = RNG.randbytes(3 * MiB + 4096)
    img = tmp_path / "img"
    img.write_bytes(data)
    try:
        made = subprocess.run(
            ["losetup", "--find", "--show", "--read-only", str(img)],
            capture_output=True, text=True,
        )
    except OSError as e:
        pytest.skip(f"no losetup here ({e})")
    if made.returncode != 0 or not made.stdout.startswith("/dev/"):
        pytest.skip(f"no loop device here ({made.stderr.strip()})")
    dev = made.stdout.strip()
    try:
        yield dev, data
    finally:
        subprocess.run(["losetup", "-d", dev])


def test_file_calls_read_a_block_device_to_its_end(block_device):
    # Its metadata says 0 bytes; it reads at positions like a regular file.
    dev, data = block_device
    want = hashlib.md5(data).hexdigest()
    assert md5x.hash_files([dev, dev]) == [want, want]
    with open(dev, "rb") as f:
        assert md5x.file_digest(f).hexdigest() == want
    part = 5 * MiB
    etag = etag_reference(data, part, MiB)
    assert etag.endswith("-1")
    assert md5x.s3_etag(dev, part, MiB) == etag
    assert md5x.s3_etags([dev, dev], part, MiB) == [etag, etag]
    assert md5x.s3_etag(dev) == want


@pytest.mark.skipif(sys.platform != "linux", reason="reads /dev/stdin, ru_maxrss in KiB")
def test_hash_files_streams_a_pipe_in_bounded_memory():
    # 256 MiB through a pipe: read in chunks, not gathered whole (it used to keep
    # doubling its buffer to the end of the input).
    size = 256 * MiB
    code = (
        "import md5x, resource\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "digest = md5x.hash_files(['/dev/stdin'])[0]\n"
        "grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before\n"
        "print(digest, grew // 1024)\n"
    )
    data = bytes(size)
    out = subprocess.run(
        [sys.executable, "-c", code], input=data, capture_output=True, check=True
    ).stdout.split()
    assert out[0].decode() == hashlib.md5(data).hexdigest()
    assert int(out[1]) < 64, f"peak memory grew by {int(out[1])} MiB"


def test_signatures_are_readable():
    # help() and inspect show every default (PyO3 cannot print `8 << 20` by itself).
    import inspect

    for f in (md5x.md5, md5x.file_digest, md5x.hash_many, md5x.hash_files, md5x.s3_etag,
              md5x.S3Etag, md5x.s3_etags, md5x.md5_par):
        sig = inspect.signature(f)
        for p in sig.parameters.values():
            assert p.default is not Ellipsis, (f.__name__, str(sig))
    assert str(inspect.signature(md5x.s3_etag)) == "(path, part_size=8388608, threshold=8388608)"
    assert str(inspect.signature(md5x.S3Etag)) == (
        "(data=b'', *, part_size=8388608, threshold=8388608)"
    )
    assert str(inspect.signature(md5x.s3_etags)) == (
        "(paths, /, part_size=8388608, threshold=8388608, *, jobs=None, errors='raise')"
    )


def test_paths_with_a_nul_byte_are_rejected_as_open_rejects_them(tmp_path):
    # (The str with a lone surrogate has no UTF-8 form; open() still says NUL.)
    for bad in ("a\0b", b"a\0b", tmp_path / "a\0b", "a\0\udcff"):
        with pytest.raises(ValueError, match="^embedded null byte$"):
            open(bad, "rb")
        for call in (
            lambda: md5x.hash_files([bad]),
            lambda: md5x.hash_files([bad], errors="return"),
            lambda: md5x.s3_etag(bad),
            lambda: md5x.s3_etags([bad]),
        ):
            with pytest.raises(ValueError, match="^embedded null byte$"):
                call()
