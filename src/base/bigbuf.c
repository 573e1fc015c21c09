/*
 * bigbuf.c — large buffers kept for reuse across a batch (bigbuf.h).
 *
 * Why (DESIGN.md §4): an image's pixels (44 MB for 5120x2880 RGB) are
 * beyond malloc's mmap threshold (32 MiB at most), so without this each
 * image's buffer is a fresh mapping, its pages faulted in and zeroed by
 * the kernel, then unmapped; the same for a file's bytes and the edge
 * map's copy.
 *
 * Each buffer carries its capacity in a header before it.  Freed ones of
 * BB_MIN bytes or more wait in a short list, oldest first; an allocation
 * takes the smallest that holds it, if that is not over a quarter larger
 * (a batch's images come in a few sizes, and a buffer much larger than
 * asked for would hold memory a later, larger image could use).
 */
#include "bigbuf.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* 64 bytes: the buffer keeps malloc's alignment and a cache line of its own. */
typedef union bb_head {
    size_t cap;
    max_align_t align;
    unsigned char pad[64];
} bb_head;

#define BB_SLOTS 64

static pthread_mutex_t bb_mu = PTHREAD_MUTEX_INITIALIZER;
static bb_head *bb_list[BB_SLOTS]; /* oldest first */
static int bb_count;
static size_t bb_held, bb_limit;

static void *bb_body(bb_head *h)
{
    return h + 1;
}

static bb_head *bb_header(void *p)
{
    return (bb_head *)p - 1;
}

/* The kept buffer that best holds n, taken off the list; NULL if none. */
static bb_head *bb_take(size_t n)
{
    bb_head *h = NULL;
    int best = -1;
    pthread_mutex_lock(&bb_mu);
    for (int i = 0; i < bb_count; i++) {
        size_t cap = bb_list[i]->cap;
        if (cap >= n && cap - n <= n / 4 && (best < 0 || cap < bb_list[best]->cap))
            best = i;
    }
    if (best >= 0) {
        h = bb_list[best];
        bb_held -= h->cap;
        memmove(bb_list + best, bb_list + best + 1, sizeof *bb_list * (size_t)(bb_count - best - 1));
        bb_count--;
    }
    pthread_mutex_unlock(&bb_mu);
    return h;
}

void *bb_alloc(size_t n)
{
    bb_head *h = n >= BB_MIN ? bb_take(n) : NULL;
    if (!h) {
        /* (no object is larger than PTRDIFF_MAX: refused here, not asked of
         * malloc, which ASan's aborts on) */
        if (n > (size_t)PTRDIFF_MAX - sizeof *h || !(h = malloc(sizeof *h + n)))
            return NULL;
        h->cap = n;
    }
    return bb_body(h);
}

void *bb_realloc(void *p, size_t n)
{
    void *q;
    if (!p)
        return bb_alloc(n);
    if (n <= bb_header(p)->cap)
        return p;
    if (!(q = bb_alloc(n)))
        return NULL;
    memcpy(q, p, bb_header(p)->cap);
    bb_free(p);
    return q;
}

/* Takes the oldest kept buffers off the list (into out, to be freed)
 * until `room` more bytes fit, and a slot if `slot`. */
static void bb_trim_locked(size_t room, int slot, bb_head **out, int *nout)
{
    while (bb_count && (bb_held + room > bb_limit || (slot && bb_count == BB_SLOTS))) {
        bb_head *h = bb_list[0];
        bb_held -= h->cap;
        memmove(bb_list, bb_list + 1, sizeof *bb_list * (size_t)(bb_count - 1));
        bb_count--;
        out[(*nout)++] = h;
    }
}

void bb_free(void *p)
{
    bb_head *h, *drop[BB_SLOTS];
    int ndrop = 0, kept = 0;
    if (!p)
        return;
    h = bb_header(p);
    if (h->cap >= BB_MIN) {
        pthread_mutex_lock(&bb_mu);
        if (h->cap <= bb_limit) {
            bb_trim_locked(h->cap, 1, drop, &ndrop);
            bb_list[bb_count++] = h;
            bb_held += h->cap;
            kept = 1;
        }
        pthread_mutex_unlock(&bb_mu);
    }
    for (int i = 0; i < ndrop; i++) /* (outside the lock: munmap is slow) */
        free(drop[i]);
    if (!kept)
        free(h);
}

void bb_keep(size_t bytes)
{
    bb_head *drop[BB_SLOTS];
    int ndrop = 0;
    pthread_mutex_lock(&bb_mu);
    bb_limit = bytes;
    bb_trim_locked(0, 0, drop, &ndrop);
    pthread_mutex_unlock(&bb_mu);
    for (int i = 0; i < ndrop; i++)
        free(drop[i]);
}

size_t bb_kept(void)
{
    size_t n;
    pthread_mutex_lock(&bb_mu);
    n = bb_held;
    pthread_mutex_unlock(&bb_mu);
    return n;
}
