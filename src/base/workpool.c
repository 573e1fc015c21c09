/*
 * workpool.c — see workpool.h.  Threads inherit the signal mask of the
 * thread that creates them (SIGINT/SIGTERM blocked since sig_init), so
 * signals still go to the signal thread only.
 */
#include "workpool.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct task {
    void (*fn)(void *);
    void *arg;
} task;

struct workpool {
    pthread_mutex_t mu;
    pthread_cond_t not_empty, not_full, idle;
    task *q;
    int depth, head, count, running, stop;
    int nthreads;
    pthread_t *th;
};

static void *worker(void *arg)
{
    workpool *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->count && !p->stop)
            pthread_cond_wait(&p->not_empty, &p->mu);
        if (!p->count && p->stop)
            break;
        task t = p->q[p->head];
        p->head = (p->head + 1) % p->depth;
        p->count--;
        p->running++;
        pthread_cond_signal(&p->not_full);
        pthread_mutex_unlock(&p->mu);
        t.fn(t.arg);
        pthread_mutex_lock(&p->mu);
        p->running--;
        if (!p->count && !p->running)
            pthread_cond_broadcast(&p->idle);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

workpool *wp_create(int threads, int depth)
{
    workpool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    if (threads < 1)
        threads = 1;
    if (depth < 1)
        depth = 1;
    p->q = calloc((size_t)depth, sizeof *p->q);
    p->th = calloc((size_t)threads, sizeof *p->th);
    p->depth = depth;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->not_empty, NULL);
    pthread_cond_init(&p->not_full, NULL);
    pthread_cond_init(&p->idle, NULL);
    if (!p->q || !p->th) {
        wp_destroy(&p);
        return NULL;
    }
    for (int i = 0; i < threads; i++) {
        if (pthread_create(&p->th[i], NULL, worker, p)) {
            wp_destroy(&p);
            return NULL;
        }
        p->nthreads++;
    }
    return p;
}

int wp_submit(workpool *p, void (*fn)(void *), void *arg)
{
    pthread_mutex_lock(&p->mu);
    while (p->count == p->depth && !p->stop)
        pthread_cond_wait(&p->not_full, &p->mu);
    if (p->stop) {
        pthread_mutex_unlock(&p->mu);
        return -1;
    }
    p->q[(p->head + p->count) % p->depth] = (task){fn, arg};
    p->count++;
    pthread_cond_signal(&p->not_empty);
    pthread_mutex_unlock(&p->mu);
    return 0;
}

void wp_wait(workpool *p)
{
    pthread_mutex_lock(&p->mu);
    while (p->count || p->running)
        pthread_cond_wait(&p->idle, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

void wp_destroy(workpool **pp)
{
    workpool *p = *pp;
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1; /* the workers drain the queue, then leave */
    pthread_cond_broadcast(&p->not_empty);
    pthread_cond_broadcast(&p->not_full);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->nthreads; i++)
        pthread_join(p->th[i], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->not_empty);
    pthread_cond_destroy(&p->not_full);
    pthread_cond_destroy(&p->idle);
    free(p->q);
    free(p->th);
    free(p);
    *pp = NULL;
}
