/* A disk that fails partway through a file, for tests: preloaded (LD_PRELOAD), this
 * library makes every read of a file named "eio-<N>..." fail with EIO (Input/output
 * error) at byte N, as a bad sector does. A read that starts before byte N returns the
 * bytes before it (a short read); one that starts at or after it fails. Other files
 * read as usual.
 *
 * Directories too: the listing (readdir) of a directory named "unlistable-<N>" fails
 * with EIO after N entries (not counting "." and ".."), and the entries of a
 * directory named "untyped..." come without their type (DT_UNKNOWN), as some file
 * systems give them, so that the reader must ask lstat. (A listing is counted on the
 * thread that reads it, one at a time, as md5x reads them.)
 *
 * It covers read(2), pread(2) and readdir(3), what md5x and Python read files and
 * directories with. The tests that use it expect what it does to show, so a new kind
 * of read that bypassed it would fail them rather than pass unnoticed.
 *
 * Used by crates/md5x-cli/tests/read_errors.rs and tests/python/test_extras.py. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Whether the last component of the path open at fd starts with prefix; then *rest
 * points at what follows the prefix (in a static buffer per thread). */
static int named(int fd, const char *prefix, const char **rest) {
    static __thread char path[4096];
    char link[64];
    int saved = errno;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    errno = saved;
    if (n <= 0) return 0;
    path[n] = 0;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (strncmp(base, prefix, strlen(prefix)) != 0) return 0;
    if (rest) *rest = base + strlen(prefix);
    return 1;
}

/* The byte where the file open at fd fails, or -1 if it does not. */
static long long fails_at(int fd) {
    const char *rest;
    return named(fd, "eio-", &rest) ? atoll(rest) : -1;
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

/* Offsets are off64_t (and the position is asked with lseek64): where off_t has 32
 * bits (i686), files past 2 GiB are read all the same. */
ssize_t pread64(int fd, void *buf, size_t n, off64_t off) {
    static ssize_t (*real)(int, void *, size_t, off64_t);
    if (!real) real = (ssize_t (*)(int, void *, size_t, off64_t))dlsym(RTLD_NEXT, "pread64");
    ssize_t k = readable(fd, n, off);
    return k < 0 ? -1 : real(fd, buf, (size_t)k, off);
}

ssize_t pread(int fd, void *buf, size_t n, off_t off) { return pread64(fd, buf, n, off); }

ssize_t read(int fd, void *buf, size_t n) {
    static ssize_t (*real)(int, void *, size_t);
    if (!real) real = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
    int saved = errno;
    off64_t off = lseek64(fd, 0, SEEK_CUR);
    errno = saved;
    ssize_t k = readable(fd, n, off);
    return k < 0 ? -1 : real(fd, buf, (size_t)k);
}

/* The listing being counted on this thread, and how many entries it gave. */
static __thread DIR *counting;
static __thread long given;

/* Whether the listing of dir fails now (its count of entries reached). */
static int refused(DIR *dir) {
    if (dir != counting) {
        counting = dir;
        given = 0;
    }
    const char *rest;
    if (named(dirfd(dir), "unlistable-", &rest) && given >= atol(rest)) {
        errno = EIO;
        return 1;
    }
    return 0;
}

/* Count the entry named name that dir gave, and take its type away where asked. */
static void seen(DIR *dir, const char *name, unsigned char *type) {
    if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0) given++;
    if (named(dirfd(dir), "untyped", NULL)) *type = DT_UNKNOWN;
}

/* Both forms, each on its own real function: where off_t has 32 bits, struct dirent
 * and struct dirent64 differ (elsewhere the two are the same function). */
struct dirent64 *readdir64(DIR *dir) {
    static struct dirent64 *(*real)(DIR *);
    if (!real) real = (struct dirent64 * (*)(DIR *)) dlsym(RTLD_NEXT, "readdir64");
    if (refused(dir)) return NULL;
    struct dirent64 *e = real(dir);
    if (e) seen(dir, e->d_name, &e->d_type);
    return e;
}

struct dirent *readdir(DIR *dir) {
    static struct dirent *(*real)(DIR *);
    if (!real) real = (struct dirent * (*)(DIR *)) dlsym(RTLD_NEXT, "readdir");
    if (refused(dir)) return NULL;
    struct dirent *e = real(dir);
    if (e) seen(dir, e->d_name, &e->d_type);
    return e;
}

int closedir(DIR *dir) {
    static int (*real)(DIR *);
    if (!real) real = (int (*)(DIR *))dlsym(RTLD_NEXT, "closedir");
    if (dir == counting) counting = NULL;
    return real(dir);
}
