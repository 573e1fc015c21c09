/*
 * test_bigbuf.c — src/base/bigbuf: large buffers kept for reuse only while
 * bb_keep allows, within its bytes, the best fit not over a quarter
 * larger, the oldest given back first; bb_realloc keeps the bytes; many
 * threads at once (make test SANITIZE=1 runs this under ASan/UBSan).
 */
#include <pthread.h>
#include <stdint.h>

#include "bigbuf.h"
#include "check.h"

#define MB ((size_t)1 << 20)

static void test_off_by_default(void)
{
    void *a = bb_alloc(8 * MB);
    memset(a, 1, 8 * MB);
    bb_free(a);
    CHECK(bb_kept() == 0, "nothing kept without bb_keep", "%zu bytes", bb_kept());
    bb_free(NULL);
    CHECK(bb_kept() == 0, "bb_free(NULL)", "%zu bytes", bb_kept());
}

static void test_reuse(void)
{
    unsigned char *a, *b, *c, *d, *small;
    bb_keep(64 * MB);
    a = bb_alloc(10 * MB);
    memset(a, 7, 10 * MB);
    bb_free(a);
    CHECK(bb_kept() == 10 * MB, "a freed large buffer is kept", "%zu bytes", bb_kept());
    b = bb_alloc(10 * MB);
    CHECK(b == a && bb_kept() == 0, "a freed buffer of the same size is taken again",
          "%p then %p, %zu kept", (void *)a, (void *)b, bb_kept());
    CHECK(b[0] == 7 && b[10 * MB - 1] == 7, "a kept buffer's bytes are left as they were", "%d %d",
          b[0], b[10 * MB - 1]);
    bb_free(b);
    c = bb_alloc(9 * MB); /* 10 holds 9 with less than a quarter to spare */
    CHECK(c == a, "a buffer up to a quarter larger serves", "%p %p", (void *)c, (void *)a);
    bb_free(c);
    d = bb_alloc(7 * MB); /* 10 is more than a quarter over 7 */
    CHECK(d != a && bb_kept() == 10 * MB, "a buffer over a quarter larger does not", "%zu kept",
          bb_kept());
    memset(d, 0, 7 * MB);
    c = bb_alloc(11 * MB); /* larger than any kept */
    CHECK(c != a && c != d && bb_kept() == 10 * MB, "nothing kept holds a larger request",
          "%zu kept", bb_kept());
    memset(c, 0, 11 * MB);
    bb_free(c);
    bb_free(d);
    /* kept now: 10, 11, 7 MB; the smallest that fits 7 is the 7 */
    c = bb_alloc(7 * MB);
    CHECK(c == d && bb_kept() == 21 * MB, "the smallest buffer that fits is taken", "%zu kept",
          bb_kept());
    bb_free(c);
    small = bb_alloc(BB_MIN - 1);
    memset(small, 0, BB_MIN - 1);
    bb_free(small);
    CHECK(bb_kept() == 28 * MB, "a buffer under BB_MIN is not kept", "%zu kept", bb_kept());
    bb_keep(0);
    CHECK(bb_kept() == 0, "bb_keep(0) gives back everything kept", "%zu kept", bb_kept());
}

static void test_limit(void)
{
    unsigned char *a, *b, *c, *x;
    bb_keep(20 * MB);
    a = bb_alloc(6 * MB);
    b = bb_alloc(6 * MB);
    c = bb_alloc(30 * MB);
    memset(c, 3, 30 * MB);
    bb_free(a);
    bb_free(b);
    bb_free(c);
    CHECK(bb_kept() == 12 * MB, "a buffer larger than the limit is not kept", "%zu kept",
          bb_kept());
    x = bb_alloc(12 * MB);
    memset(x, 0, 12 * MB);
    bb_free(x); /* 24 MB > 20: a, the oldest, given back */
    CHECK(bb_kept() == 18 * MB, "past the limit the oldest is given back", "%zu kept",
          bb_kept());
    c = bb_alloc(6 * MB);
    CHECK(c == b, "the newer one stays", "%p %p", (void *)c, (void *)b);
    bb_free(c);
    bb_keep(10 * MB);
    CHECK(bb_kept() <= 10 * MB, "a lower limit gives back at once", "%zu kept", bb_kept());
    bb_keep(0);
    {
        enum { N = 70 }; /* more buffers than the list's 64 places */
        void *p[N];
        bb_keep((size_t)1 << 30);
        for (int i = 0; i < N; i++)
            p[i] = bb_alloc(BB_MIN);
        for (int i = 0; i < N; i++)
            bb_free(p[i]);
        CHECK(bb_kept() == 64 * BB_MIN, "at most 64 buffers are kept", "%zu kept", bb_kept());
        bb_keep(0);
    }
}

static void test_realloc(void)
{
    unsigned char *p = bb_realloc(NULL, 3 * MB), *q;
    size_t i;
    int same = 1;
    bb_keep(64 * MB);
    for (i = 0; i < 3 * MB; i++)
        p[i] = (unsigned char)(i * 31);
    q = bb_realloc(p, MB); /* smaller: the same buffer */
    CHECK(q == p, "bb_realloc to a smaller size keeps the buffer", "%p %p", (void *)q, (void *)p);
    q = bb_realloc(q, 5 * MB);
    for (i = 0; i < 3 * MB; i++)
        same &= q[i] == (unsigned char)(i * 31);
    CHECK(q && same, "bb_realloc to a larger size keeps the bytes", "%s", q ? "differ" : "NULL");
    memset(q + 3 * MB, 0, 2 * MB);
    bb_free(q);
    q = bb_alloc((size_t)-1 / 2 + 1);
    CHECK(q == NULL, "an impossible size is NULL", "%p", (void *)q);
    q = bb_alloc(SIZE_MAX);
    CHECK(q == NULL, "SIZE_MAX is NULL, not an overflow", "%p", (void *)q);
    bb_keep(0);
}

static void *churn(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    for (int i = 0; i < 200; i++) {
        size_t n = (1 + (seed = seed * 1103515245u + 12345u) % 3) * 2 * MB;
        unsigned char *p = bb_alloc(n);
        if (!p)
            return (void *)1;
        p[0] = p[n - 1] = (unsigned char)i;
        if (p[0] != (unsigned char)i)
            return (void *)1;
        bb_free(p);
    }
    return NULL;
}

static void test_threads(void)
{
    pthread_t t[8];
    int bad = 0;
    bb_keep(16 * MB);
    for (int i = 0; i < 8; i++)
        pthread_create(&t[i], NULL, churn, (void *)(uintptr_t)(i + 1));
    for (int i = 0; i < 8; i++) {
        void *r;
        pthread_join(t[i], &r);
        bad |= r != NULL;
    }
    bb_keep(0);
    CHECK(!bad, "8 threads allocating and freeing at once", "a thread failed");
}

int main(void)
{
    test_off_by_default();
    test_reuse();
    test_limit();
    test_realloc();
    test_threads();
    CHECK_EXIT();
}
