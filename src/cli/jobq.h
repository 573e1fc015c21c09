/*
 * jobq.h — the one work queue a batch's engines take their files from
 * (--devices, --video-engines).
 *
 * Every engine takes the next file when it is free (its decode thread asks
 * for one), so a slow engine or a long video holds back no other.  With
 * several engines the files go largest first (by size on disk: known for
 * every file without opening it, and close to the work for photos and for
 * videos of one codec), so that the long jobs start early and the short
 * ones fill the ends; ties keep the input order.  With one engine the
 * order is the input order, as it always was.  A file handed back by an
 * engine that failed goes out again before any other.
 */
#ifndef GPUEDGE_JOBQ_H
#define GPUEDGE_JOBQ_H

#include <pthread.h>

typedef struct jobq {
    int *order;       /* job indexes in the order they are handed out */
    int n, head;      /* order[head] is the next, unless a retry waits */
    int *retry;       /* handed back (first in, first out) */
    int rhead, nretry;
    int taken;        /* jobs handed out */
    pthread_mutex_t mu;
} jobq;

/* n jobs; size[i] the weight of job i (bytes), or size NULL for the input
 * order.  0, or -1 out of memory. */
int jq_init(jobq *q, int n, const long long *size);
void jq_free(jobq *q);
/* The next job, or -1 when none is left; *seq (may be NULL) its number
 * among the jobs handed out so far (0, 1, ...).  Thread-safe. */
int jq_pop(jobq *q, int *seq);
/* The next job when ok(ctx, job) says so (nvJPEG's groups: the JPEGs at
 * the head of the queue; a video to chain onto; NULL: any), else -1 and
 * nothing taken; *seq (may be NULL) as jq_pop's. */
int jq_pop_if(jobq *q, int (*ok)(void *ctx, int job), void *ctx, int *seq);
/* Hands job back: it is the next one popped (after earlier ones handed
 * back).  Room for 2n hand-backs (each job once, in run.c). */
void jq_retry(jobq *q, int job);
/* The position of the next job in order (the prefetcher looks ahead from
 * it) and the job at a position (pos < n). */
int jq_head(jobq *q);
static inline int jq_at(const jobq *q, int pos) { return q->order[pos]; }
/* Jobs not handed out yet (handed back ones included). */
int jq_left(jobq *q);
/* Takes every job up to and including position pos (early_open's first). */
void jq_take_through(jobq *q, int pos);

#endif
