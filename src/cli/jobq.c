/*
 * jobq.c — see jobq.h.
 */
#include "jobq.h"

#include <stdlib.h>

static const long long *sort_size; /* qsort has no context argument */

static int by_size(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    if (sort_size[x] != sort_size[y])
        return sort_size[x] < sort_size[y] ? 1 : -1; /* larger first */
    return (x > y) - (x < y);                       /* then input order */
}

int jq_init(jobq *q, int n, const long long *size)
{
    q->order = malloc((size_t)(n > 0 ? n : 1) * sizeof *q->order);
    /* each job is handed back at most once (run.c); twice the room all the same */
    q->retry = malloc((size_t)(n > 0 ? 2 * n : 1) * sizeof *q->retry);
    q->n = n;
    q->head = q->rhead = q->nretry = q->taken = 0;
    pthread_mutex_init(&q->mu, NULL);
    if (!q->order || !q->retry) {
        jq_free(q);
        return -1;
    }
    for (int i = 0; i < n; i++)
        q->order[i] = i;
    if (size) {
        /* before any engine thread starts: the static is safe */
        sort_size = size;
        qsort(q->order, (size_t)n, sizeof *q->order, by_size);
        sort_size = NULL;
    }
    return 0;
}

void jq_free(jobq *q)
{
    if (!q->order && !q->retry)
        return;
    free(q->order);
    free(q->retry);
    q->order = q->retry = NULL;
    pthread_mutex_destroy(&q->mu);
}

int jq_pop(jobq *q, int *seq)
{
    return jq_pop_if(q, NULL, NULL, seq);
}

int jq_pop_if(jobq *q, int (*ok)(void *ctx, int job), void *ctx, int *seq)
{
    int j = -1;
    pthread_mutex_lock(&q->mu);
    if (q->rhead < q->nretry) {
        if (!ok || ok(ctx, q->retry[q->rhead]))
            j = q->retry[q->rhead++];
    } else if (q->head < q->n && (!ok || ok(ctx, q->order[q->head]))) {
        j = q->order[q->head++];
    }
    if (seq)
        *seq = q->taken;
    if (j >= 0)
        q->taken++;
    pthread_mutex_unlock(&q->mu);
    return j;
}

void jq_retry(jobq *q, int job)
{
    pthread_mutex_lock(&q->mu);
    if (q->nretry < 2 * q->n)
        q->retry[q->nretry++] = job;
    pthread_mutex_unlock(&q->mu);
}

int jq_head(jobq *q)
{
    int h;
    pthread_mutex_lock(&q->mu);
    h = q->head;
    pthread_mutex_unlock(&q->mu);
    return h;
}

void jq_take_through(jobq *q, int pos)
{
    pthread_mutex_lock(&q->mu);
    if (q->head <= pos)
        q->head = pos + 1;
    pthread_mutex_unlock(&q->mu);
}

int jq_left(jobq *q)
{
    int left;
    pthread_mutex_lock(&q->mu);
    left = (q->n - q->head) + (q->nretry - q->rhead);
    pthread_mutex_unlock(&q->mu);
    return left;
}
