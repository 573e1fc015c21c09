/*
 * mkvw.c — an FFVHuff .mkv written here (see mkvw.h).  The element IDs,
 * sizes and rules are FFmpeg 5.1's libavformat/matroskaenc.c and mux.c.
 */
#include "mkvw.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <sys/uio.h>
#include <sys/resource.h>
#include <unistd.h>

#include "util.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

enum {
    ID_EBML = 0x1A45DFA3,
    ID_SEGMENT = 0x18538067,
    ID_SEEKHEAD = 0x114D9B74,
    ID_SEEK = 0x4DBB,
    ID_SEEKID = 0x53AB,
    ID_SEEKPOS = 0x53AC,
    ID_VOID = 0xEC,
    ID_INFO = 0x1549A966,
    ID_TRACKS = 0x1654AE6B,
    ID_TAGS = 0x1254C367,
    ID_TAG = 0x7373,
    ID_SIMPLETAG = 0x67C8,
    ID_TAGNAME = 0x45A3,
    ID_TAGSTRING = 0x4487,
    ID_DURATION = 0x4489,
    ID_CLUSTER = 0x1F43B675,
    ID_TIMESTAMP = 0xE7,
    ID_SIMPLEBLOCK = 0xA3,
    ID_CUES = 0x1C53BB6B,
    ID_CUEPOINT = 0xBB,
    ID_CUETIME = 0xB3,
    ID_CUETRACKPOS = 0xB7,
    ID_CUETRACK = 0xF7,
    ID_CUECLUSTER = 0xF1,
    ID_CUEREL = 0xF0,
};

/* matroskaenc.c's constants */
#define KEY_CLUSTER_BYTES (4 * 1024)  /* a keyframe starts a cluster past this */
#define CLUSTER_MS 5000
#define SEEKHEAD_BYTES (7 * 21 + 14)  /* MAX_SEEKHEAD_ENTRIES * MAX_SEEKENTRY_SIZE + 14 */
#define DURATION_BYTES 11             /* a Duration float: its placeholder Void */
#define DURATION_TAG_BYTES 37         /* DURATION_SIMPLETAG_SIZE */

/* Threads writing packets at their places, and packets in flight at most
 * (each holds its buffer).  The kernel copies writes into one file one at
 * a time, whatever the threads; threads copying into a shared mapping of
 * it do not wait for each other (figures: BENCHMARKS.md "Constants chosen
 * by measurement").  So a file in RAM whose packets the GPU coded is
 * mapped CHUNK bytes at a time (the file sized to the mapping, sparse),
 * and each writer makes its packet's pages present (MADV_POPULATE_WRITE:
 * a full file system is then an error, not a SIGBUS) and copies the
 * packet there; otherwise the writers pwrite (mkvw.h).  Not fallocate
 * per packet: on tmpfs that takes the inode's lock exclusively, and the
 * writers would take turns on it. */
#define WRITERS 4
#define IN_FLIGHT 16
#define CHUNK ((int64_t)64 << 20)
#define MAX_CHUNKS (1 << 18)       /* 16 TiB */

typedef struct cue {
    int64_t ts, cluster, rel; /* CueTime, CueClusterPosition, CueRelativePosition */
} cue;

/* a growing byte string; oom is sticky */
typedef struct bytes {
    uint8_t *p;
    size_t n, cap;
    int oom;
} bytes;

/* a cluster on its way: its first bytes (held here) and the packet */
typedef struct wjob {
    struct wjob *next;
    bytes head;
    const uint8_t *data;
    size_t n;
    int64_t at;
    void (*release)(void *);
    void *arg;
    int done;
    double t_q, t_take, t_done; /* GPUEDGE_TRACE=venc: queued, taken, written */
} wjob;

/* GPUEDGE_TRACE=venc (mkvw_free prints them): a writer's seconds, each
 * writer its own (read once the writers are joined) */
typedef struct wstat {
    double idle, resv, pop, copy, pw, resv_max, pop_max;
    long jobs, waits; /* waits: for work, on the condition variable */
    int64_t bytes;
    struct rusage ru; /* the thread's, as it ended */
} wstat;

/* and the muxing thread's (mkvw_put's caller), the reaping under mu */
typedef struct mstat {
    double put, map, map_max, unmap, unmap_max, settle, settle_max, wb;
    long maps, unmaps, waits, queued, in_flight_sum, in_flight_max;
    /* a job waiting for a writer; written, waiting to be reaped (for the
     * next call here and for those before it), and of that for those
     * before it alone (the latest t_done so far, in file order) */
    double q_wait, q_wait_max, lag, lag_max, order, order_max, done_front;
} mstat;

struct mkvw {
    so_file *f;
    int fd;
    /* the writers: jobs in file order, `take` the first not taken */
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    pthread_t th[WRITERS];
    int nth, quit, err, in_flight;
    wjob *first, *last, *take;
    int64_t done_upto;          /* every byte before this is written */
    /* the mapping: chunk k (CHUNK bytes at k * CHUNK) at map[k] while it
     * may still be written; mapped: bytes mapped; unmapped: chunks below
     * this are unmapped */
    uint8_t **map;
    int64_t mapped;
    int unmapped;
    int64_t page;
    /* the size map_to gave the file (0: none since trim), and the ends
     * of what was written: by the muxing thread, by the writers (under
     * mu); trim cuts the file back to the larger */
    int64_t sized, wrote, copied;
    atomic_int no_populate; /* no MADV_POPULATE_WRITE (Linux < 5.14) */
    int decide;             /* MKVW_MAP_IN_RAM in RAM: map at the first job
                               if cores_free by then */
    atomic_int cores_free;  /* mkvw_cores_free was called */
    int64_t pos;                /* the file's end */
    int64_t seg;                /* the segment's data (positions count from it) */
    int64_t info, tracks, tags; /* top-level elements */
    int64_t dur_at, tag_at;     /* the placeholders the trailer fills */
    double tb;                  /* seconds a tick (av_q2d) */
    int64_t def_dur;
    bytes cl;                   /* the held cluster's content (<= 4 KiB) */
    int open;                   /* a cluster is held */
    int64_t cl_ts, cl_pos;
    int started;
    int64_t shift, last_dts, duration;
    cue *cues;
    size_t ncue, cap_cue;
    int trace, nid;             /* GPUEDGE_TRACE=venc; writers numbered */
    wstat ws[WRITERS];
    mstat ms;
};

/* the trace's clock: 0 when not tracing */
static double tnow(const mkvw *m)
{
    return m->trace ? ge_now() : 0;
}

// ---------------------------------------------------------------------------
// EBML, written as matroskaenc.c writes it

static void b_put(bytes *b, const void *p, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        uint8_t *q;
        while (cap < b->n + n)
            cap *= 2;
        if (!(q = realloc(b->p, cap))) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

static void b_byte(bytes *b, unsigned v)
{
    uint8_t c = (uint8_t)v;
    b_put(b, &c, 1);
}

static int id_size(uint32_t id)
{
    return id > 0xFFFFFF ? 4 : id > 0xFFFF ? 3 : id > 0xFF ? 2 : 1;
}

static void b_id(bytes *b, uint32_t id)
{
    for (int i = id_size(id); i--;)
        b_byte(b, id >> i * 8);
}

/* bytes of the shortest length field for a payload of len bytes */
static int len_size(uint64_t len)
{
    int n = 0;
    len++;
    do
        n++;
    while (len >>= 7);
    return n;
}

/* a length on `n` bytes (0: the fewest) */
static void b_len(bytes *b, uint64_t len, int n)
{
    if (!n)
        n = len_size(len);
    len |= 1ULL << n * 7;
    for (int i = n; i--;)
        b_byte(b, (unsigned)(len >> i * 8));
}

static void b_uint(bytes *b, uint32_t id, uint64_t v)
{
    int n = 1;
    for (uint64_t t = v; t >>= 8;)
        n++;
    b_id(b, id);
    b_len(b, (uint64_t)n, 0);
    for (int i = n; i--;)
        b_byte(b, (unsigned)(v >> i * 8));
}

/* an element holding b's bytes: its ID and shortest length, then them */
static void b_elem(bytes *out, uint32_t id, const bytes *in, int len_n)
{
    b_id(out, id);
    b_len(out, in->n, len_n);
    b_put(out, in->p, in->n);
}

static void b_void(bytes *b, int size)
{
    static const uint8_t zero[SEEKHEAD_BYTES];
    b_id(b, ID_VOID);
    if (size < 10) {
        b_len(b, (uint64_t)(size - 2), 0);
        b_put(b, zero, (size_t)(size - 2));
    } else {
        b_len(b, (uint64_t)(size - 9), 8);
        b_put(b, zero, (size_t)(size - 9));
    }
}

// ---------------------------------------------------------------------------
// The header libavformat wrote: where its placeholders are

typedef struct elem {
    uint32_t id;
    size_t at, head, size; /* start, ID + length bytes, payload bytes */
    int unknown;           /* the length says "unknown" */
} elem;

static int read_elem(const uint8_t *h, size_t n, size_t at, elem *e)
{
    size_t p = at;
    int k = 1;
    uint64_t v;
    if (p >= n || !h[p])
        return -1;
    while (!(h[p] & (0x80 >> (k - 1))))
        k++;
    if (k > 4 || p + (size_t)k > n)
        return -1;
    e->id = 0;
    for (int i = 0; i < k; i++)
        e->id = e->id << 8 | h[p++];
    if (p >= n || !h[p])
        return -1;
    for (k = 1; !(h[p] & (0x80 >> (k - 1))); k++)
        ;
    if (p + (size_t)k > n)
        return -1;
    v = h[p] & (0xFFu >> k);
    e->unknown = v == (0xFFu >> k);
    for (int i = 1; i < k; i++) {
        e->unknown &= h[p + i] == 0xFF;
        v = v << 8 | h[p + i];
    }
    p += (size_t)k;
    e->at = at;
    e->head = p - at;
    e->size = (size_t)v;
    if (!e->unknown && e->size > n - p)
        return -1;
    return 0;
}

/* The position of a Void of `total` bytes among the children of the
 * element at `e` (or of its children's children when `depth` is 2), or
 * -1. */
static int64_t find_void(const uint8_t *h, const elem *e, int total, int depth)
{
    size_t p = e->at + e->head, end = p + e->size;
    while (p < end) {
        elem c;
        if (read_elem(h, end, p, &c) || c.unknown)
            return -1;
        if (c.id == ID_VOID && c.head + c.size == (size_t)total)
            return (int64_t)p;
        if (depth > 1) {
            int64_t v = find_void(h, &c, total, depth - 1);
            if (v >= 0)
                return v;
        }
        p += c.head + c.size;
    }
    return -1;
}

static int parse_header(mkvw *m, const uint8_t *h, size_t n)
{
    elem e;
    size_t p;
    if (read_elem(h, n, 0, &e) || e.id != ID_EBML || e.unknown)
        return -1;
    p = e.head + e.size;
    if (read_elem(h, n, p, &e) || e.id != ID_SEGMENT || !e.unknown || e.head != 12)
        return -1;
    p += e.head;
    m->seg = (int64_t)p;
    if (read_elem(h, n, p, &e) || e.id != ID_VOID || e.head + e.size != SEEKHEAD_BYTES)
        return -1;
    p += SEEKHEAD_BYTES;
    m->info = m->tracks = m->tags = m->dur_at = m->tag_at = -1;
    while (p < n) {
        if (read_elem(h, n, p, &e) || e.unknown)
            return -1;
        if (e.id == ID_INFO && m->info < 0) {
            m->info = (int64_t)p;
            m->dur_at = find_void(h, &e, DURATION_BYTES, 1);
        } else if (e.id == ID_TRACKS && m->tracks < 0) {
            m->tracks = (int64_t)p;
        } else if (e.id == ID_TAGS && m->tags < 0) {
            m->tags = (int64_t)p;
            m->tag_at = find_void(h, &e, DURATION_TAG_BYTES, 2);
        } else {
            return -1;
        }
        p += e.head + e.size;
    }
    return m->info < 0 || m->tracks < 0 || m->tags < 0 || m->dur_at < 0 || m->tag_at < 0 ? -1
                                                                                          : 0;
}

// ---------------------------------------------------------------------------

/* Writes at `at` the bytes the layout puts there (the caller's thread). */
static int write_at(mkvw *m, const void *p, size_t n, int64_t at)
{
    if (so_pwrite(m->f, p, n, (off_t)at))
        return -EIO;
    if (at + (int64_t)n > m->wrote)
        m->wrote = at + (int64_t)n;
    return 0;
}

/* n bytes at file offset `at`, into the mapping (populated or reserved). */
static void copy_out(mkvw *m, int64_t at, const uint8_t *p, size_t n)
{
    while (n) {
        int64_t k = at / CHUNK, o = at % CHUNK;
        size_t t = (size_t)(CHUNK - o) < n ? (size_t)(CHUNK - o) : n;
        memcpy(m->map[k] + o, p, t);
        at += (int64_t)t;
        p += t;
        n -= t;
    }
}

/* The file mapped up to `end` at least (the muxing thread; the writers
 * populate what they write).  The file grows with the mapping, sparse:
 * a page past its end would be a SIGBUS.  It only grows: every byte
 * written so far lies before `end`. */
static int map_to(mkvw *m, int64_t end)
{
    while (m->mapped < end) {
        int64_t k = m->mapped / CHUNK;
        void *p;
        if (k >= MAX_CHUNKS)
            return -EFBIG;
        double t0 = tnow(m), t;
        if (ftruncate(m->fd, m->mapped + CHUNK))
            return -errno;
        m->sized = m->mapped + CHUNK;
        p = mmap(NULL, (size_t)CHUNK, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, m->mapped);
        if (p == MAP_FAILED)
            return -errno;
        t = tnow(m) - t0;
        m->ms.map += t;
        m->ms.map_max = t > m->ms.map_max ? t : m->ms.map_max;
        m->ms.maps++;
        m->map[k] = p;
        m->mapped += CHUNK;
    }
    return 0;
}

/* Is fd's file in RAM (tmpfs)? */
static int in_ram(int fd)
{
    struct statfs sf;
    return fstatfs(fd, &sf) == 0 && sf.f_type == TMPFS_MAGIC;
}

/* Reserves n bytes at `at` (0 or an errno; EOPNOTSUPP: not here). */
static int reserve(int fd, int64_t at, int64_t n)
{
    if (!fallocate(fd, 0, at, n))
        return 0;
    return errno == ENOSYS ? EOPNOTSUPP : errno;
}

/* Unmaps the chunks wholly before done_upto (no job writes there again). */
static void unmap_done(mkvw *m, int all)
{
    while (m->map && m->unmapped < MAX_CHUNKS && m->map[m->unmapped] &&
           (all || (m->unmapped + 1) * CHUNK <= m->done_upto)) {
        double t0 = tnow(m), t;
        munmap(m->map[m->unmapped], (size_t)CHUNK);
        m->map[m->unmapped++] = NULL;
        t = tnow(m) - t0;
        m->ms.unmap += t;
        m->ms.unmap_max = t > m->ms.unmap_max ? t : m->ms.unmap_max;
        m->ms.unmaps++;
    }
}

/* The mapping's pages over [at, at + n) made present and writable, one
 * call a chunk; in the sparse file this allocates them (faults, no inode
 * lock).  0 or an errno: where the file system is full the faults fail
 * (EFAULT, or ENOMEM where memory ran out), reported as ENOSPC, and the
 * packet is not copied; EINVAL: no MADV_POPULATE_WRITE. */
static int populate(mkvw *m, int64_t at, int64_t n)
{
    while (n > 0) {
        int64_t k = at / CHUNK, o = at % CHUNK, lo = o & ~(m->page - 1);
        int64_t t = CHUNK - o < n ? CHUNK - o : n;
        if (madvise(m->map[k] + lo, (size_t)(o + t - lo), MADV_POPULATE_WRITE)) {
            if (errno == EINTR)
                continue;
            return errno == EFAULT || errno == ENOMEM ? ENOSPC : errno;
        }
        at += t;
        n -= t;
    }
    return 0;
}

/* Job j's bytes at their place through the mapping; 0 or an errno.  Its
 * pages populated, or, on a kernel without MADV_POPULATE_WRITE (from its
 * first EINVAL on), its place reserved with fallocate; copied only then.
 * ws: the writer's trace (NULL: none). */
static int copy_job(mkvw *m, const wjob *j, wstat *ws)
{
    int64_t n = (int64_t)(j->head.n + j->n);
    double t0 = ws ? ge_now() : 0, t1 = t0, t2;
    int e = EINVAL;
    if (!atomic_load_explicit(&m->no_populate, memory_order_relaxed) &&
        (e = populate(m, j->at, n)) == EINVAL)
        atomic_store_explicit(&m->no_populate, 1, memory_order_relaxed);
    if (ws)
        t1 = ge_now();
    if (e == EINVAL)
        e = reserve(m->fd, j->at, n);
    t2 = ws ? ge_now() : 0;
    if (!e) {
        copy_out(m, j->at, j->head.p, j->head.n);
        copy_out(m, j->at + (int64_t)j->head.n, j->data, j->n);
    }
    if (ws) {
        ws->pop += t1 - t0;
        ws->pop_max = t1 - t0 > ws->pop_max ? t1 - t0 : ws->pop_max;
        ws->resv += t2 - t1;
        ws->resv_max = t2 - t1 > ws->resv_max ? t2 - t1 : ws->resv_max;
        ws->copy += ge_now() - t2;
    }
    return e;
}

/* Job j's bytes at their place with pwritev; 0 or an errno. */
static int pwrite_job(mkvw *m, const wjob *j)
{
    struct iovec iov[2] = {{j->head.p, j->head.n}, {(void *)j->data, j->n}};
    struct iovec *v = iov;
    for (int64_t at = j->at;;) {
        ssize_t w;
        while (v < iov + 2 && !v->iov_len)
            v++;
        if (v == iov + 2)
            return 0;
        w = pwritev(m->fd, v, (int)(iov + 2 - v), at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? errno : EIO;
        at += w;
        for (size_t left = (size_t)w; left;) {
            size_t t = left < v->iov_len ? left : v->iov_len;
            v->iov_base = (uint8_t *)v->iov_base + t;
            v->iov_len -= t;
            left -= t;
            if (!v->iov_len)
                v++;
        }
    }
}

static void *writer(void *arg)
{
    mkvw *m = arg;
    wstat *ws = NULL;
    pthread_mutex_lock(&m->mu);
    if (m->trace && m->nid < WRITERS)
        ws = &m->ws[m->nid++];
    for (;;) {
        wjob *j;
        int e;
        double t0 = ws ? ge_now() : 0, t1;
        while (!m->quit && !m->take) {
            if (ws)
                ws->waits++;
            pthread_cond_wait(&m->work, &m->mu);
        }
        if (!(j = m->take))
            break;
        m->take = j->next;
        pthread_mutex_unlock(&m->mu);
        if (ws) {
            t1 = ge_now();
            ws->idle += t1 - t0; /* (the wait at the end, for quit, not counted) */
            j->t_take = t1;
        }
        if (m->map) {
            e = copy_job(m, j, ws);
        } else {
            t1 = ws ? ge_now() : 0;
            e = pwrite_job(m, j);
            if (ws)
                ws->pw += ge_now() - t1;
        }
        if (ws) {
            ws->jobs++;
            ws->bytes += (int64_t)(j->head.n + j->n);
        }
        pthread_mutex_lock(&m->mu);
        if (e && !m->err)
            m->err = e;
        if (!e && j->at + (int64_t)(j->head.n + j->n) > m->copied)
            m->copied = j->at + (int64_t)(j->head.n + j->n);
        j->done = 1;
        if (ws)
            j->t_done = ge_now();
        pthread_cond_broadcast(&m->done);
    }
    pthread_mutex_unlock(&m->mu);
    if (ws)
        getrusage(RUSAGE_THREAD, &ws->ru);
    return NULL;
}

/* Frees the written jobs at the front (under mu). */
static void reap(mkvw *m)
{
    wjob *j;
    while ((j = m->first) && j->done) {
        if (m->trace && j->t_done > 0) { /* (0: dropped by mkvw_free) */
            double lag = ge_now() - j->t_done, qw = j->t_take - j->t_q, o;
            if (j->t_done > m->ms.done_front)
                m->ms.done_front = j->t_done;
            o = m->ms.done_front - j->t_done;
            m->ms.order += o;
            m->ms.order_max = o > m->ms.order_max ? o : m->ms.order_max;
            m->ms.lag += lag;
            m->ms.lag_max = lag > m->ms.lag_max ? lag : m->ms.lag_max;
            m->ms.q_wait += qw;
            m->ms.q_wait_max = qw > m->ms.q_wait_max ? qw : m->ms.q_wait_max;
        }
        m->first = j->next;
        if (!m->first)
            m->last = NULL;
        m->done_upto = j->at + (int64_t)(j->head.n + j->n);
        m->in_flight--;
        j->release(j->arg);
        free(j->head.p);
        free(j);
    }
}

/* Waits for the writers until at most `most` jobs are in flight.  0 or a
 * writer's -errno. */
static int settle(mkvw *m, int most)
{
    int e;
    double t0, t;
    pthread_mutex_lock(&m->mu);
    reap(m);
    t0 = tnow(m);
    if (m->in_flight > most && most > 0)
        m->ms.waits++;
    while (m->in_flight > most) {
        pthread_cond_wait(&m->done, &m->mu);
        reap(m);
    }
    t = tnow(m) - t0;
    if (most > 0) { /* (not mkvw_finish's drain) */
        m->ms.settle += t;
        m->ms.settle_max = t > m->ms.settle_max ? t : m->ms.settle_max;
    }
    e = m->err;
    pthread_mutex_unlock(&m->mu);
    unmap_done(m, 0);
    t0 = tnow(m);
    so_writeback(m->f, (off_t)m->done_upto);
    m->ms.wb += tnow(m) - t0;
    return e ? -e : 0;
}

/* The file cut back from the size map_to gave it to the bytes written
 * (the writers done): the size the writes alone would have left.  0 or
 * -errno. */
static int trim(mkvw *m)
{
    int64_t end = m->wrote > m->copied ? m->wrote : m->copied;
    if (!m->sized)
        return 0;
    m->sized = 0;
    return ftruncate(m->fd, end) ? -errno : 0;
}

/* The writers copy into a mapping from now on (the muxing thread, before
 * the first job); where the file system cannot reserve, they pwrite. */
static int start_map(mkvw *m)
{
    int e;
    if (!(m->map = calloc(MAX_CHUNKS, sizeof *m->map)))
        return -ENOMEM;
    if ((e = reserve(m->fd, 0, m->pos)) == EOPNOTSUPP) {
        free(m->map);
        m->map = NULL;
        e = 0;
    }
    return -e;
}

/* Hands j (head + packet, at its place) to the writers; the packet is
 * released once written. */
static int queue(mkvw *m, wjob *j)
{
    int rc = 0;
    if (m->decide) { /* MKVW_MAP_IN_RAM: by the first packet's origin */
        m->decide = 0;
        if (atomic_load_explicit(&m->cores_free, memory_order_relaxed))
            rc = start_map(m);
    }
    if (!rc && m->map)
        rc = map_to(m, j->at + (int64_t)(j->head.n + j->n));
    if (rc) {
        j->release(j->arg);
        free(j->head.p);
        free(j);
        return rc;
    }
    pthread_mutex_lock(&m->mu);
    while (m->nth < WRITERS && !m->err) {
        if (pthread_create(&m->th[m->nth], NULL, writer, m)) {
            if (!m->nth)
                m->err = EAGAIN;
            break;
        }
        m->nth++;
    }
    if (m->last)
        m->last->next = j;
    else
        m->first = j;
    m->last = j;
    if (!m->take)
        m->take = j;
    m->in_flight++;
    if (m->trace) {
        j->t_q = ge_now();
        m->ms.queued++;
        m->ms.in_flight_sum += m->in_flight;
        if (m->in_flight > m->ms.in_flight_max)
            m->ms.in_flight_max = m->in_flight;
    }
    pthread_cond_signal(&m->work);
    pthread_mutex_unlock(&m->mu);
    return settle(m, IN_FLIGHT);
}

int mkvw_open(mkvw **out, so_file *f, const uint8_t *header, size_t hdr_n, int tb_num,
              int tb_den, int64_t def_dur, int how)
{
    mkvw *m = calloc(1, sizeof *m);
    int rc;
    *out = NULL;
    if (!m)
        return -ENOMEM;
    if (tb_num <= 0 || tb_den <= 0 || parse_header(m, header, hdr_n)) {
        free(m);
        return -EINVAL;
    }
    m->f = f;
    m->fd = so_fd(f);
    m->page = sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096;
    m->trace = ge_trace("venc");
    m->tb = tb_num / (double)tb_den;
    m->def_dur = def_dur > 0 ? def_dur : 0;
    if (pthread_mutex_init(&m->mu, NULL)) {
        free(m);
        return -ENOMEM;
    }
    pthread_cond_init(&m->work, NULL);
    pthread_cond_init(&m->done, NULL);
    *out = m;
    if ((rc = write_at(m, header, hdr_n, 0)))
        return rc;
    m->pos = (int64_t)hdr_n;
    if (how == MKVW_MAP)
        return start_map(m);
    m->decide = how == MKVW_MAP_IN_RAM && in_ram(m->fd);
    return 0;
}

void mkvw_cores_free(mkvw *m)
{
    atomic_store_explicit(&m->cores_free, 1, memory_order_relaxed);
}

/* The held cluster's content as one Cluster element at the file's end,
 * then, when `data`, a packet after it (handed to the writers: released
 * once written).  Clears the held cluster. */
static int put_cluster(mkvw *m, const uint8_t *data, size_t n, void (*release)(void *),
                       void *arg)
{
    bytes h = {0};
    wjob *j;
    int rc = 0;
    b_id(&h, ID_CLUSTER);
    b_len(&h, m->cl.n + n, 0);
    b_put(&h, m->cl.p, m->cl.n);
    m->cl.n = 0;
    m->open = 0;
    if (h.oom || (data && !(j = calloc(1, sizeof *j)))) {
        free(h.p);
        if (data)
            release(arg);
        return -ENOMEM;
    }
    if (!data) {
        rc = write_at(m, h.p, h.n, m->pos);
        m->pos += (int64_t)h.n;
        free(h.p);
        return rc;
    }
    *j = (wjob){.head = h, .data = data, .n = n, .at = m->pos, .release = release, .arg = arg};
    m->pos += (int64_t)(h.n + n);
    return queue(m, j);
}

static int add_cue(mkvw *m, int64_t ts, int64_t rel)
{
    if (m->ncue == m->cap_cue) {
        size_t cap = m->cap_cue ? 2 * m->cap_cue : 1024;
        cue *c = realloc(m->cues, cap * sizeof *c);
        if (!c)
            return -ENOMEM;
        m->cues = c;
        m->cap_cue = cap;
    }
    m->cues[m->ncue++] = (cue){ts, m->cl_pos - m->seg, rel};
    return 0;
}

static int put(mkvw *m, const uint8_t *data, size_t n, int64_t dts, int64_t dur,
               void (*release)(void *), void *arg)
{
    int64_t ts, rel;
    int rc;
    if (!m->started) {
        m->started = 1;
        m->shift = dts < 0 ? -dts : 0; /* mux.c: make non-negative */
    } else if (dts < m->last_dts) {
        release(arg);
        return -EINVAL;
    }
    m->last_dts = dts;
    ts = dts + m->shift;
    if (dur <= 0)
        dur = m->def_dur;
    /* every packet a keyframe, so a held cluster (<= 4 KiB) ends for its
     * time only (which also keeps the block's 16-bit relative time in
     * range: dts never decreases) */
    if (m->open && ts - m->cl_ts > CLUSTER_MS && (rc = put_cluster(m, NULL, 0, NULL, NULL))) {
        release(arg);
        return rc;
    }
    if (!m->open) {
        m->open = 1;
        m->cl_pos = m->pos;
        m->cl_ts = ts; /* >= 0: the shift */
        b_uint(&m->cl, ID_TIMESTAMP, (uint64_t)m->cl_ts);
    }
    rel = (int64_t)m->cl.n;
    if ((rc = add_cue(m, ts, rel))) {
        release(arg);
        return rc;
    }
    if (ts + dur > m->duration)
        m->duration = ts + dur;

    b_id(&m->cl, ID_SIMPLEBLOCK);
    b_len(&m->cl, 4 + (uint64_t)n, 0);
    b_byte(&m->cl, 0x81); /* track 1 */
    b_byte(&m->cl, (unsigned)(ts - m->cl_ts) >> 8);
    b_byte(&m->cl, (unsigned)(ts - m->cl_ts));
    b_byte(&m->cl, 0x80); /* keyframe */
    if (m->cl.oom) {
        release(arg);
        return -ENOMEM;
    }
    if (m->cl.n + n > KEY_CLUSTER_BYTES) /* the next packet ends it: out now */
        return put_cluster(m, data, n, release, arg);
    b_put(&m->cl, data, n);
    release(arg);
    return m->cl.oom ? -ENOMEM : 0;
}

int mkvw_put(mkvw *m, const uint8_t *data, size_t n, int64_t dts, int64_t dur,
             void (*release)(void *), void *arg)
{
    double t0 = tnow(m);
    int rc = put(m, data, n, dts, dur, release, arg);
    m->ms.put += tnow(m) - t0;
    return rc;
}

/* Cues: a CuePoint a timestamp (cues come in dts order) */
static void cues_of(const mkvw *m, bytes *out)
{
    bytes all = {0}, pt = {0}, pos = {0};
    for (size_t i = 0; i < m->ncue; i++) {
        const cue *c = &m->cues[i];
        if (i && c->ts == m->cues[i - 1].ts)
            continue;
        pt.n = pos.n = 0;
        b_uint(&pt, ID_CUETIME, (uint64_t)c->ts);
        b_uint(&pos, ID_CUETRACK, 1);
        b_uint(&pos, ID_CUECLUSTER, (uint64_t)c->cluster);
        b_uint(&pos, ID_CUEREL, (uint64_t)c->rel);
        b_elem(&pt, ID_CUETRACKPOS, &pos, 1);
        b_elem(&all, ID_CUEPOINT, &pt, 0);
        all.oom |= pt.oom | pos.oom;
    }
    b_elem(out, ID_CUES, &all, 0);
    out->oom |= all.oom;
    free(all.p);
    free(pt.p);
    free(pos.p);
}

static void seekhead_of(const mkvw *m, int64_t cues, bytes *out)
{
    const uint32_t ids[4] = {ID_INFO, ID_TRACKS, ID_TAGS, ID_CUES};
    const int64_t at[4] = {m->info, m->tracks, m->tags, cues};
    bytes sh = {0}, e = {0};
    for (int i = 0; i < 4 && at[i] >= 0; i++) {
        e.n = 0;
        b_id(&e, ID_SEEKID);
        b_len(&e, (uint64_t)id_size(ids[i]), 0);
        b_id(&e, ids[i]);
        b_uint(&e, ID_SEEKPOS, (uint64_t)(at[i] - m->seg));
        b_elem(&sh, ID_SEEK, &e, 1);
        sh.oom |= e.oom;
    }
    b_elem(out, ID_SEEKHEAD, &sh, 0);
    out->oom |= sh.oom;
    if (!out->oom)
        b_void(out, SEEKHEAD_BYTES - (int)out->n);
    free(sh.p);
    free(e.p);
}

int mkvw_finish(mkvw *m)
{
    bytes b = {0};
    int64_t cues = -1, bits;
    double dur = (double)m->duration, sec = (double)m->duration * m->tb;
    char str[20] = "", full[400];
    int rc = m->open ? put_cluster(m, NULL, 0, NULL, NULL) : 0, e = settle(m, 0);

    if (!rc)
        rc = e;
    unmap_done(m, 1);
    if ((e = trim(m)) && !rc)
        rc = e;
    if (!rc && m->ncue) {
        cues = m->pos;
        cues_of(m, &b);
        rc = b.oom ? -ENOMEM : write_at(m, b.p, b.n, m->pos);
        m->pos += (int64_t)b.n;
    }
    /* the segment's size, on the 8 bytes libavformat left for it */
    b.n = 0;
    b_len(&b, (uint64_t)(m->pos - m->seg), 8);
    if (!rc && so_pwrite(m->f, b.p, b.n, m->seg - 8))
        rc = -EIO;
    b.n = 0;
    seekhead_of(m, cues, &b);
    if (!rc)
        rc = b.oom || b.n != SEEKHEAD_BYTES ? -ENOMEM : so_pwrite(m->f, b.p, b.n, m->seg) ? -EIO : 0;
    /* Duration (milliseconds, as a double) */
    b.n = 0;
    b_id(&b, ID_DURATION);
    b_len(&b, 8, 0);
    memcpy(&bits, &dur, sizeof bits);
    for (int i = 8; i--;)
        b_byte(&b, (unsigned)((uint64_t)bits >> i * 8));
    if (!rc)
        rc = b.oom ? -ENOMEM : so_pwrite(m->f, b.p, b.n, m->dur_at) ? -EIO : 0;
    /* the track's DURATION tag: HH:MM:SS.nnnnnnnnn in 20 bytes */
    snprintf(full, sizeof full, "%02d:%02d:%012.9f", (int)sec / 3600, ((int)sec / 60) % 60,
             fmod(sec, 60));
    memcpy(str, full, strnlen(full, sizeof str - 1)); /* cut as snprintf(str, 20) cuts */
    b.n = 0;
    b_id(&b, ID_SIMPLETAG);
    b_len(&b, DURATION_TAG_BYTES - 3, 1);
    b_id(&b, ID_TAGNAME);
    b_len(&b, 8, 0);
    b_put(&b, "DURATION", 8);
    b_id(&b, ID_TAGSTRING);
    b_len(&b, sizeof str, 0);
    b_put(&b, str, sizeof str);
    if (!rc)
        rc = b.oom ? -ENOMEM : so_pwrite(m->f, b.p, b.n, m->tag_at) ? -EIO : 0;
    free(b.p);
    return rc;
}

/* GPUEDGE_TRACE=venc: where the muxing thread and the writers spent their
 * time (the writers joined). */
static void trace_note(const mkvw *m)
{
    wstat s = {0};
    char per[160] = "";
    size_t k = 0;
    double ut = 0, st = 0;
    long minflt = 0, vcsw = 0, ivcsw = 0;
    for (int i = 0; i < m->nid; i++) {
        const wstat *w = &m->ws[i];
        s.idle += w->idle;
        s.resv += w->resv;
        s.pop += w->pop;
        s.copy += w->copy;
        s.pw += w->pw;
        s.resv_max = w->resv_max > s.resv_max ? w->resv_max : s.resv_max;
        s.pop_max = w->pop_max > s.pop_max ? w->pop_max : s.pop_max;
        s.jobs += w->jobs;
        s.waits += w->waits;
        s.bytes += w->bytes;
        ut += w->ru.ru_utime.tv_sec + w->ru.ru_utime.tv_usec * 1e-6;
        st += w->ru.ru_stime.tv_sec + w->ru.ru_stime.tv_usec * 1e-6;
        minflt += w->ru.ru_minflt;
        vcsw += w->ru.ru_nvcsw;
        ivcsw += w->ru.ru_nivcsw;
        if (k < sizeof per)
            k += (size_t)snprintf(per + k, sizeof per - k, "%s%.0f/%ld", i ? ", " : "",
                                  (w->resv + w->pop + w->copy + w->pw) * 1e3, w->jobs);
    }
    if (!m->ms.queued && !s.jobs)
        return;
    ge_note("mkvw trace: muxing thread: %ld packets queued (%.1f MB, %s), in mkvw_put %.1f ms: "
            "waiting for the writers (in flight > %d) %.1f ms in %ld waits (max %.2f ms), "
            "mmap %.1f ms (%ld, max %.2f ms), munmap %.1f ms (%ld, max %.2f ms), writeback "
            "hint %.1f ms; in flight at a queue: mean %.1f, max %ld; a queued job waited "
            "for a writer %.1f ms summed (max %.2f ms); a written one waited to be reaped "
            "%.1f ms summed (max %.2f ms), of which for those before it (file order) %.1f "
            "ms (max %.2f ms)",
            m->ms.queued, s.bytes / 1e6, m->map ? "mapped" : "pwritev", m->ms.put * 1e3,
            IN_FLIGHT, m->ms.settle * 1e3, m->ms.waits, m->ms.settle_max * 1e3,
            m->ms.map * 1e3, m->ms.maps, m->ms.map_max * 1e3, m->ms.unmap * 1e3, m->ms.unmaps,
            m->ms.unmap_max * 1e3, m->ms.wb * 1e3,
            m->ms.queued ? (double)m->ms.in_flight_sum / m->ms.queued : 0.0,
            m->ms.in_flight_max, m->ms.q_wait * 1e3, m->ms.q_wait_max * 1e3, m->ms.lag * 1e3,
            m->ms.lag_max * 1e3, m->ms.order * 1e3, m->ms.order_max * 1e3);
    ge_note("mkvw trace: %d writers, summed: waiting for work %.1f ms, fallocate %.1f ms (max "
            "%.2f ms), populate %.1f ms (max %.2f ms), memcpy %.1f ms, pwritev %.1f ms; "
            "busy ms/jobs a writer: %s; their rusage: user %.1f ms, sys %.1f ms, minor "
            "faults %ld, voluntary switches %ld (%ld waits for work among them), "
            "involuntary %ld",
            m->nid, s.idle * 1e3, s.resv * 1e3, s.resv_max * 1e3, s.pop * 1e3, s.pop_max * 1e3,
            s.copy * 1e3, s.pw * 1e3, per, ut * 1e3, st * 1e3, minflt, vcsw, s.waits, ivcsw);
}

void mkvw_free(mkvw **pm)
{
    mkvw *m = *pm;
    int e;
    if (!m)
        return;
    *pm = NULL;
    /* the writers finish what they took, skip the rest, and end */
    pthread_mutex_lock(&m->mu);
    m->quit = 1;
    for (wjob *j = m->take; j; j = j->next)
        j->done = 1;
    m->take = NULL;
    pthread_cond_broadcast(&m->work);
    pthread_mutex_unlock(&m->mu);
    for (int i = 0; i < m->nth; i++)
        pthread_join(m->th[i], NULL);
    reap(m);
    if (m->trace)
        trace_note(m);
    unmap_done(m, 1);
    if ((e = trim(m))) /* (mkvw_finish's not reached: a partial file) */
        so_fail(m->f, -e);
    free(m->map);
    pthread_mutex_destroy(&m->mu);
    pthread_cond_destroy(&m->work);
    pthread_cond_destroy(&m->done);
    free(m->cl.p);
    free(m->cues);
    free(m);
}
