/* A disk that fails partway through a file, for tests: preloaded (LD_PRELOAD), this
 * library makes every read of a file named "eio-<N>..." fail with EIO (Input/output
 * error) at byte N, as a bad sector does. A read that starts before byte N returns the
 * bytes before it (a short read); one that starts at or after it fails. Other files
 * read as usual.
 *
 * It covers read(2) and pread(2), what md5x and Python read files with. The tests
 * that use it expect the error to be reported, so a new kind of read that bypassed
 * it would fail them rather than pass unnoticed.
 *
 * Used by crates/md5x-cli/tests/read_errors.rs and tests/python/test_extras.py. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The byte where the file open at fd fails, or -1 if it does not. */
static long long fails_at(int fd) {
    char link[64], path[4096];
    int saved = errno;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    errno = saved;
    if (n <= 0) return -1;
    path[n] = 0;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (strncmp(base, "eio-", 4) != 0) return -1;
    return atoll(base + 4);
}

/* How many of n bytes at offset off can be read from fd; -1 with errno EIO for none. */
static ssize_t readable(int fd, size_t n, long long off) {
    long long at = fails_at(fd);
    if (at < 0 || off < 0) return (ssize_t)n;
    if (off >= at) {
        errno = EIO;
        return -1;
    }
    return off + (long long)n > at ? (ssize_t)(at - off) : (ssize_t)n;
}

ssize_t pread64(int fd, void *buf, size_t n, off_t off) {
    static ssize_t (*real)(int, void *, size_t, off_t);
    if (!real) real = (ssize_t (*)(int, void *, size_t, off_t))dlsym(RTLD_NEXT, "pread64");
    ssize_t k = readable(fd, n, off);
    return k < 0 ? -1 : real(fd, buf, (size_t)k, off);
}

ssize_t pread(int fd, void *buf, size_t n, off_t off) { return pread64(fd, buf, n, off); }

ssize_t read(int fd, void *buf, size_t n) {
    static ssize_t (*real)(int, void *, size_t);
    if (!real) real = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
    int saved = errno;
    off_t off = lseek(fd, 0, SEEK_CUR);
    errno = saved;
    ssize_t k = readable(fd, n, off);
    return k < 0 ? -1 : real(fd, buf, (size_t)k);
}
