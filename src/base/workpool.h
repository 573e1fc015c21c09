/*
 * workpool.h — a small fixed pool of threads running tasks in FIFO order,
 * with a bounded queue (submit blocks when it is full: back-pressure, so
 * memory stays bounded).  Used to decode and encode images in parallel
 * (stb is single-threaded per image).
 */
#ifndef GPUEDGE_WORKPOOL_H
#define GPUEDGE_WORKPOOL_H

typedef struct workpool workpool;

/* Starts `threads` workers (>= 1) with room for `depth` queued tasks.
 * Returns NULL when out of memory or threads (nothing started then). */
workpool *wp_create(int threads, int depth);
/* Queues fn(arg); blocks while the queue is full.  0, or -1 when the pool
 * is shutting down (fn not run). */
int wp_submit(workpool *p, void (*fn)(void *), void *arg);
/* Waits until every queued task has finished. */
void wp_wait(workpool *p);
/* Finishes the queued tasks, joins the threads, frees; NULL-safe, sets
 * *p to NULL. */
void wp_destroy(workpool **p);

#endif
