/*
 * hostbuf.c — frames.h's host buffers (pinned where asked and possible) and
 * the headroom the engine's buffers grow with; see hostbuf.h.
 */
#include "hostbuf.h"

#include <stdlib.h>

#include "gpu.h"

#define GROW_ALIGN (2u << 20)

size_t buf_headroom(size_t n)
{
    size_t g = n + n / 4;
    if (g < n) /* overflow */
        return n;
    return (g + GROW_ALIGN - 1) / GROW_ALIGN * GROW_ALIGN;
}

int host_buf_reserve(host_buf *b, size_t n)
{
    void *p = NULL;
    size_t cap;
    int pin;
    if (n <= b->cap)
        return 0;
    cap = buf_headroom(n);
    if (b->pin_max && cap > b->pin_max)
        cap = n > b->pin_max ? n : b->pin_max;
    pin = b->pinned && (!b->pin_max || cap <= b->pin_max);
    if (pin && !(p = gpu_host_alloc(cap)))
        pin = 0;
    if (!p)
        p = malloc(cap);
    if (!p)
        return -1;
    host_buf_free(b);
    b->p = p;
    b->cap = cap;
    b->on_pin = pin;
    return 0;
}

void host_buf_free(host_buf *b)
{
    if (b->p) {
        if (b->on_pin)
            gpu_host_free(b->p);
        else
            free(b->p);
    }
    b->p = NULL;
    b->cap = 0;
}
