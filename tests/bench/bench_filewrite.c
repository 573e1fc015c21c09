/*
 * bench_filewrite.c — how fast threads can put packets into one file, the
 * ways src/io/mkvw.c can (DESIGN.md §4 "The .mkv file"): N packets of B
 * bytes, packet i at offset i x B, taken round-robin by T threads.
 *
 *   bench_filewrite [-n PACKETS] [-b BYTES] [-t THREADS] [-w WAY] FILE
 *
 * Ways (default: all, one line each):
 *   pwrite    pwrite at its place
 *   falloc    fallocate its bytes, then memcpy into a shared mapping
 *             (mkvw's copy_job); pages fault in one by one
 *   populate  fallocate its bytes, MADV_POPULATE_WRITE them, then memcpy
 *   sparse    no reserve (the file made its full size first), memcpy into
 *             the mapping: what the faults alone cost
 *   popsparse no fallocate: MADV_POPULATE_WRITE its pages of the sized file
 *             (which allocates them, and fails instead of a SIGBUS when
 *             the file system is full), then memcpy
 * Defaults: -n 5300 -b 1100000 (the long 1080p clip's packets) -t 4.  The
 * file is removed after each way; its mapping is unmapped inside the timing.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

enum { W_PWRITE, W_FALLOC, W_POPULATE, W_SPARSE, W_POPSPARSE, W_N };
static const char *const way_name[W_N] = {"pwrite", "falloc", "populate", "sparse",
                                          "popsparse"};

typedef struct run {
    int way, fd, nth;
    long n;
    size_t b;
    uint8_t *map;
    const uint8_t *src;
    int err;
} run;

typedef struct arg {
    run *r;
    long id;
} arg;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double cpu_s(int who)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    const struct timeval *t = who ? &u.ru_stime : &u.ru_utime;
    return (double)t->tv_sec + (double)t->tv_usec * 1e-6;
}

static int one(run *r, long i)
{
    const off_t at = (off_t)i * (off_t)r->b;
    const long pg = sysconf(_SC_PAGESIZE);
    uint8_t *lo = r->map + (at & ~(off_t)(pg - 1));
    size_t span = (size_t)(r->map + at + r->b - lo);
    switch (r->way) {
    case W_PWRITE:
        return pwrite(r->fd, r->src, r->b, at) == (ssize_t)r->b ? 0 : errno ? errno : EIO;
    case W_POPULATE:
        if (fallocate(r->fd, 0, at, (off_t)r->b))
            return errno;
        if (madvise(lo, span, MADV_POPULATE_WRITE))
            return errno;
        break;
    case W_FALLOC:
        if (fallocate(r->fd, 0, at, (off_t)r->b))
            return errno;
        break;
    case W_POPSPARSE:
        if (madvise(lo, span, MADV_POPULATE_WRITE))
            return errno;
        break;
    }
    memcpy(r->map + at, r->src, r->b);
    return 0;
}

static void *worker(void *p)
{
    arg *a = p;
    for (long i = a->id; i < a->r->n; i += a->r->nth) {
        int e = one(a->r, i);
        if (e) {
            __atomic_store_n(&a->r->err, e, __ATOMIC_RELAXED);
            break;
        }
    }
    return NULL;
}

static int way(run *r, const char *path)
{
    const size_t total = r->b * (size_t)r->n;
    pthread_t th[64];
    arg a[64];
    double t0, u0, s0, t;
    r->fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (r->fd < 0 || ftruncate(r->fd, (off_t)total)) {
        fprintf(stderr, "bench_filewrite: %s: %s\n", path, strerror(errno));
        return 1;
    }
    if (r->way == W_PWRITE && ftruncate(r->fd, 0)) /* a growing file */
        return 1;
    t0 = now();
    u0 = cpu_s(0);
    s0 = cpu_s(1);
    r->map = NULL;
    if (r->way != W_PWRITE) {
        void *m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
        if (m == MAP_FAILED) {
            fprintf(stderr, "bench_filewrite: mmap: %s\n", strerror(errno));
            return 1;
        }
        r->map = m;
    }
    r->err = 0;
    for (long i = 0; i < r->nth; i++) {
        a[i] = (arg){r, i};
        if (pthread_create(&th[i], NULL, worker, &a[i]))
            return 1;
    }
    for (long i = 0; i < r->nth; i++)
        pthread_join(th[i], NULL);
    if (r->map)
        munmap(r->map, total);
    t = now() - t0;
    close(r->fd);
    unlink(path);
    if (r->err) {
        fprintf(stderr, "bench_filewrite: %s: %s\n", way_name[r->way], strerror(r->err));
        return 1;
    }
    printf("%-8s %2d threads: %7.3f s, %6.2f GB/s, user %.2f s, sys %.2f s\n", way_name[r->way],
           r->nth, t, (double)total / t / 1e9, cpu_s(0) - u0, cpu_s(1) - s0);
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    run r = {.nth = 4, .n = 5300, .b = 1100000};
    int only = -1, c, rc = 0;
    uint8_t *src;
    while ((c = getopt(argc, argv, "n:b:t:w:")) != -1) {
        switch (c) {
        case 'n': r.n = atol(optarg); break;
        case 'b': r.b = (size_t)atol(optarg); break;
        case 't': r.nth = atoi(optarg); break;
        case 'w':
            for (int i = 0; i < W_N; i++)
                if (!strcmp(optarg, way_name[i]))
                    only = i;
            if (only < 0)
                goto usage;
            break;
        default: goto usage;
        }
    }
    if (optind != argc - 1 || r.n < 1 || r.b < 1 || r.nth < 1 || r.nth > 64)
        goto usage;
    if (!(src = malloc(r.b)))
        return 1;
    for (size_t i = 0; i < r.b; i++)
        src[i] = (uint8_t)(i * 131 + 7);
    r.src = src;
    for (int w = 0; w < W_N && !rc; w++)
        if (only < 0 || only == w) {
            r.way = w;
            rc = way(&r, argv[optind]);
        }
    free(src);
    return rc;
usage:
    fprintf(stderr, "usage: bench_filewrite [-n PACKETS] [-b BYTES] [-t THREADS] "
                    "[-w pwrite|falloc|populate|sparse|popsparse] FILE\n");
    return 2;
}
