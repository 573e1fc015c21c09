/*
 * ptrq.c — a small blocking queue of pointers; see ptrq.h.
 */
#include "ptrq.h"

#include <string.h>

void q_init(queue *q)
{
    memset(q, 0, sizeof *q);
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->cv, NULL);
}

void q_destroy(queue *q)
{
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->cv);
}

/* Never full: every queue holds at most the slots plus one NULL marker. */
void q_push(queue *q, void *p)
{
    pthread_mutex_lock(&q->mu);
    q->item[(q->head + q->count) % QCAP] = p;
    q->count++;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

void *q_pop(queue *q)
{
    void *p;
    pthread_mutex_lock(&q->mu);
    while (q->count == 0)
        pthread_cond_wait(&q->cv, &q->mu);
    p = q->item[q->head];
    q->head = (q->head + 1) % QCAP;
    q->count--;
    pthread_mutex_unlock(&q->mu);
    return p;
}
