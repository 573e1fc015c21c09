/*
 * ptrq.h — a small blocking queue of pointers (the GPU engine's slot
 * rings, pipeline.c): push never blocks (a queue holds at most the ring's
 * slots plus one NULL end marker), pop waits for an item.
 */
#ifndef GPUEDGE_PTRQ_H
#define GPUEDGE_PTRQ_H

#include <pthread.h>

#define QCAP 16 /* > PIPE_MAX_SLOTS + 1 */
typedef struct queue {
    void *item[QCAP];
    int head, count;
    pthread_mutex_t mu;
    pthread_cond_t cv;
} queue;

void q_init(queue *q);
void q_destroy(queue *q);
void q_push(queue *q, void *p);
void *q_pop(queue *q);

#endif
