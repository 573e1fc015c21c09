/*
 * bigbuf.h — the large short-lived buffers of an image batch (a file's
 * bytes, an image's decoded pixels, an edge map on its way to the PNG
 * writer), kept for the next image once freed, so that their pages are
 * faulted in and zeroed once a batch, not once an image (DESIGN.md §4).
 *
 * bb_alloc, bb_realloc and bb_free are malloc, realloc and free for such
 * buffers (and any other: a buffer under BB_MIN is malloc's, with a small
 * header before it); what bb_alloc gives is freed by bb_free, never by
 * free, and the reverse.
 * Nothing is kept until the process asks for it with bb_keep (the CLI
 * does; the library leaves it off, so its callers' memory is theirs).
 * Thread-safe.
 */
#ifndef GPUEDGE_BIGBUF_H
#define GPUEDGE_BIGBUF_H

#include <stddef.h>

/* Smaller buffers are never kept: malloc reuses them already. */
#define BB_MIN ((size_t)1 << 20)

void *bb_alloc(size_t n);
/* As realloc, but a smaller size keeps the buffer as it is; NULL p: bb_alloc. */
void *bb_realloc(void *p, size_t n);
/* NULL-safe. */
void bb_free(void *p);
/* Keeps freed buffers of BB_MIN bytes or more, up to `bytes` in all (those
 * kept longest given back first); 0 gives back all and keeps none. */
void bb_keep(size_t bytes);
/* The bytes kept now, waiting for a buffer to be asked for (the tests). */
size_t bb_kept(void);

#endif
