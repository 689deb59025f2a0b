"""Run a program whose standard input gives the bytes of a file and then fails with
EIO (Input/output error), as a disk with a bad sector does, with no preloaded library:
so GNU md5sum, whose reads go through glibc's own calls, meets the same failure as
md5x. Used by crates/md5x-cli/tests/compat.rs.

usage: failing_stdin.py DATA ARGV0 PROGRAM [ARG...]

The bytes are written to end a page of a temporary file, which is mapped with one
page more than it holds; the program's stdin is this process's own memory
(/proc/self/mem) at the bytes. Reading them works, and the next read, of the page
past the file's end, fails with EIO. (Linux only.) Exits with the program's status.
"""

import ctypes
import mmap
import os
import subprocess
import sys
import tempfile

data_path, argv0, program, *args = sys.argv[1:]
data = open(data_path, "rb").read()
page = mmap.PAGESIZE
size = max(page, -(-len(data) // page) * page)
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
with tempfile.TemporaryFile() as f:
    f.write(bytes(size - len(data)) + data)
    f.flush()
    addr = libc.mmap(None, size + page, mmap.PROT_READ, mmap.MAP_SHARED, f.fileno(), 0)
    if addr is None or addr == ctypes.c_void_p(-1).value:
        raise OSError(ctypes.get_errno(), "mmap")
    mem = os.open("/proc/self/mem", os.O_RDONLY)
    os.lseek(mem, addr + size - len(data), os.SEEK_SET)
    done = subprocess.run([argv0, *args], executable=program, stdin=mem)
sys.exit(done.returncode)
