/*
 * mkvw.c — an FFVHuff .mkv written here (see mkvw.h).  The element IDs,
 * sizes and rules are FFmpeg 5.1's libavformat/matroskaenc.c and mux.c.
 */
#include "mkvw.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    ID_EBML = 0x1A45DFA3,
    ID_SEGMENT = 0x18538067,
    ID_SEEKHEAD = 0x114D9B74,
    ID_SEEK = 0x4DBB,
    ID_SEEKID = 0x53AB,
    ID_SEEKPOS = 0x53AC,
    ID_VOID = 0xEC,
    ID_INFO = 0x1549A966,
    ID_TRACKS = 0x1654AE6B,
    ID_TAGS = 0x1254C367,
    ID_TAG = 0x7373,
    ID_SIMPLETAG = 0x67C8,
    ID_TAGNAME = 0x45A3,
    ID_TAGSTRING = 0x4487,
    ID_DURATION = 0x4489,
    ID_CLUSTER = 0x1F43B675,
    ID_TIMESTAMP = 0xE7,
    ID_SIMPLEBLOCK = 0xA3,
    ID_CUES = 0x1C53BB6B,
    ID_CUEPOINT = 0xBB,
    ID_CUETIME = 0xB3,
    ID_CUETRACKPOS = 0xB7,
    ID_CUETRACK = 0xF7,
    ID_CUECLUSTER = 0xF1,
    ID_CUEREL = 0xF0,
};

/* matroskaenc.c's constants */
#define KEY_CLUSTER_BYTES (4 * 1024)  /* a keyframe starts a cluster past this */
#define CLUSTER_MS 5000
#define SEEKHEAD_BYTES (7 * 21 + 14)  /* MAX_SEEKHEAD_ENTRIES * MAX_SEEKENTRY_SIZE + 14 */
#define DURATION_BYTES 11             /* a Duration float: its placeholder Void */
#define DURATION_TAG_BYTES 37         /* DURATION_SIMPLETAG_SIZE */

typedef struct cue {
    int64_t ts, cluster, rel; /* CueTime, CueClusterPosition, CueRelativePosition */
} cue;

/* a growing byte string; oom is sticky */
typedef struct bytes {
    uint8_t *p;
    size_t n, cap;
    int oom;
} bytes;

struct mkvw {
    so_file *f;
    int64_t pos;                /* the file's end */
    int64_t seg;                /* the segment's data (positions count from it) */
    int64_t info, tracks, tags; /* top-level elements */
    int64_t dur_at, tag_at;     /* the placeholders the trailer fills */
    double tb;                  /* seconds a tick (av_q2d) */
    int64_t def_dur;
    bytes cl;                   /* the held cluster's content (<= 4 KiB) */
    int open;                   /* a cluster is held */
    int64_t cl_ts, cl_pos;
    int started;
    int64_t shift, last_dts, duration;
    cue *cues;
    size_t ncue, cap_cue;
};

// ---------------------------------------------------------------------------
// EBML, written as matroskaenc.c writes it

static void b_put(bytes *b, const void *p, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        uint8_t *q;
        while (cap < b->n + n)
            cap *= 2;
        if (!(q = realloc(b->p, cap))) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

static void b_byte(bytes *b, unsigned v)
{
    uint8_t c = (uint8_t)v;
    b_put(b, &c, 1);
}

static int id_size(uint32_t id)
{
    return id > 0xFFFFFF ? 4 : id > 0xFFFF ? 3 : id > 0xFF ? 2 : 1;
}

static void b_id(bytes *b, uint32_t id)
{
    for (int i = id_size(id); i--;)
        b_byte(b, id >> i * 8);
}

/* bytes of the shortest length field for a payload of len bytes */
static int len_size(uint64_t len)
{
    int n = 0;
    len++;
    do
        n++;
    while (len >>= 7);
    return n;
}

/* a length on `n` bytes (0: the fewest) */
static void b_len(bytes *b, uint64_t len, int n)
{
    if (!n)
        n = len_size(len);
    len |= 1ULL << n * 7;
    for (int i = n; i--;)
        b_byte(b, (unsigned)(len >> i * 8));
}

static void b_uint(bytes *b, uint32_t id, uint64_t v)
{
    int n = 1;
    for (uint64_t t = v; t >>= 8;)
        n++;
    b_id(b, id);
    b_len(b, (uint64_t)n, 0);
    for (int i = n; i--;)
        b_byte(b, (unsigned)(v >> i * 8));
}

/* an element holding b's bytes: its ID and shortest length, then them */
static void b_elem(bytes *out, uint32_t id, const bytes *in, int len_n)
{
    b_id(out, id);
    b_len(out, in->n, len_n);
    b_put(out, in->p, in->n);
}

static void b_void(bytes *b, int size)
{
    static const uint8_t zero[SEEKHEAD_BYTES];
    b_id(b, ID_VOID);
    if (size < 10) {
        b_len(b, (uint64_t)(size - 2), 0);
        b_put(b, zero, (size_t)(size - 2));
    } else {
        b_len(b, (uint64_t)(size - 9), 8);
        b_put(b, zero, (size_t)(size - 9));
    }
}

// ---------------------------------------------------------------------------
// The header libavformat wrote: where its placeholders are

typedef struct elem {
    uint32_t id;
    size_t at, head, size; /* start, ID + length bytes, payload bytes */
    int unknown;           /* the length says "unknown" */
} elem;

static int read_elem(const uint8_t *h, size_t n, size_t at, elem *e)
{
    size_t p = at;
    int k = 1;
    uint64_t v;
    if (p >= n || !h[p])
        return -1;
    while (!(h[p] & (0x80 >> (k - 1))))
        k++;
    if (k > 4 || p + (size_t)k > n)
        return -1;
    e->id = 0;
    for (int i = 0; i < k; i++)
        e->id = e->id << 8 | h[p++];
    if (p >= n || !h[p])
        return -1;
    for (k = 1; !(h[p] & (0x80 >> (k - 1))); k++)
        ;
    if (p + (size_t)k > n)
        return -1;
    v = h[p] & (0xFFu >> k);
    e->unknown = v == (0xFFu >> k);
    for (int i = 1; i < k; i++) {
        e->unknown &= h[p + i] == 0xFF;
        v = v << 8 | h[p + i];
    }
    p += (size_t)k;
    e->at = at;
    e->head = p - at;
    e->size = (size_t)v;
    if (!e->unknown && e->size > n - p)
        return -1;
    return 0;
}

/* The position of a Void of `total` bytes among the children of the
 * element at `e` (or of its children's children when `depth` is 2), or
 * -1. */
static int64_t find_void(const uint8_t *h, const elem *e, int total, int depth)
{
    size_t p = e->at + e->head, end = p + e->size;
    while (p < end) {
        elem c;
        if (read_elem(h, end, p, &c) || c.unknown)
            return -1;
        if (c.id == ID_VOID && c.head + c.size == (size_t)total)
            return (int64_t)p;
        if (depth > 1) {
            int64_t v = find_void(h, &c, total, depth - 1);
            if (v >= 0)
                return v;
        }
        p += c.head + c.size;
    }
    return -1;
}

static int parse_header(mkvw *m, const uint8_t *h, size_t n)
{
    elem e;
    size_t p;
    if (read_elem(h, n, 0, &e) || e.id != ID_EBML || e.unknown)
        return -1;
    p = e.head + e.size;
    if (read_elem(h, n, p, &e) || e.id != ID_SEGMENT || !e.unknown || e.head != 12)
        return -1;
    p += e.head;
    m->seg = (int64_t)p;
    if (read_elem(h, n, p, &e) || e.id != ID_VOID || e.head + e.size != SEEKHEAD_BYTES)
        return -1;
    p += SEEKHEAD_BYTES;
    m->info = m->tracks = m->tags = m->dur_at = m->tag_at = -1;
    while (p < n) {
        if (read_elem(h, n, p, &e) || e.unknown)
            return -1;
        if (e.id == ID_INFO && m->info < 0) {
            m->info = (int64_t)p;
            m->dur_at = find_void(h, &e, DURATION_BYTES, 1);
        } else if (e.id == ID_TRACKS && m->tracks < 0) {
            m->tracks = (int64_t)p;
        } else if (e.id == ID_TAGS && m->tags < 0) {
            m->tags = (int64_t)p;
            m->tag_at = find_void(h, &e, DURATION_TAG_BYTES, 2);
        } else {
            return -1;
        }
        p += e.head + e.size;
    }
    return m->info < 0 || m->tracks < 0 || m->tags < 0 || m->dur_at < 0 || m->tag_at < 0 ? -1
                                                                                          : 0;
}

// ---------------------------------------------------------------------------

static int wrote(mkvw *m, const void *p, size_t n)
{
    if (so_write(m->f, p, n))
        return -EIO;
    m->pos += (int64_t)n;
    return 0;
}

int mkvw_open(mkvw **out, so_file *f, const uint8_t *header, size_t hdr_n, int tb_num,
              int tb_den, int64_t def_dur)
{
    mkvw *m = calloc(1, sizeof *m);
    int rc;
    *out = NULL;
    if (!m)
        return -ENOMEM;
    if (tb_num <= 0 || tb_den <= 0 || parse_header(m, header, hdr_n)) {
        free(m);
        return -EINVAL;
    }
    m->f = f;
    m->tb = tb_num / (double)tb_den;
    m->def_dur = def_dur > 0 ? def_dur : 0;
    if ((rc = wrote(m, header, hdr_n))) {
        free(m);
        return rc;
    }
    *out = m;
    return 0;
}

/* The held cluster's content and, after it, `tail` (n bytes) as one
 * Cluster element. */
static int put_cluster(mkvw *m, const uint8_t *tail, size_t n)
{
    bytes h = {0};
    int rc;
    b_id(&h, ID_CLUSTER);
    b_len(&h, m->cl.n + n, 0);
    b_put(&h, m->cl.p, m->cl.n);
    rc = h.oom ? -ENOMEM : wrote(m, h.p, h.n);
    if (!rc && n)
        rc = wrote(m, tail, n);
    free(h.p);
    m->cl.n = 0;
    m->open = 0;
    return rc;
}

static int add_cue(mkvw *m, int64_t ts, int64_t rel)
{
    if (m->ncue == m->cap_cue) {
        size_t cap = m->cap_cue ? 2 * m->cap_cue : 1024;
        cue *c = realloc(m->cues, cap * sizeof *c);
        if (!c)
            return -ENOMEM;
        m->cues = c;
        m->cap_cue = cap;
    }
    m->cues[m->ncue++] = (cue){ts, m->cl_pos - m->seg, rel};
    return 0;
}

int mkvw_put(mkvw *m, const uint8_t *data, size_t n, int64_t dts, int64_t dur)
{
    int64_t ts, rel;
    int rc;
    if (!m->started) {
        m->started = 1;
        m->shift = dts < 0 ? -dts : 0; /* mux.c: make non-negative */
    } else if (dts < m->last_dts) {
        return -EINVAL;
    }
    m->last_dts = dts;
    ts = dts + m->shift;
    if (dur <= 0)
        dur = m->def_dur;
    /* every packet a keyframe, so a held cluster (<= 4 KiB) ends for its
     * time only (which also keeps the block's 16-bit relative time in
     * range: dts never decreases) */
    if (m->open && ts - m->cl_ts > CLUSTER_MS && (rc = put_cluster(m, NULL, 0)))
        return rc;
    if (!m->open) {
        m->open = 1;
        m->cl_pos = m->pos;
        m->cl_ts = ts; /* >= 0: the shift */
        b_uint(&m->cl, ID_TIMESTAMP, (uint64_t)m->cl_ts);
    }
    rel = (int64_t)m->cl.n;
    if ((rc = add_cue(m, ts, rel)))
        return rc;
    if (ts + dur > m->duration)
        m->duration = ts + dur;

    b_id(&m->cl, ID_SIMPLEBLOCK);
    b_len(&m->cl, 4 + (uint64_t)n, 0);
    b_byte(&m->cl, 0x81); /* track 1 */
    b_byte(&m->cl, (unsigned)(ts - m->cl_ts) >> 8);
    b_byte(&m->cl, (unsigned)(ts - m->cl_ts));
    b_byte(&m->cl, 0x80); /* keyframe */
    if (m->cl.oom)
        rc = -ENOMEM;
    else if (m->cl.n + n > KEY_CLUSTER_BYTES)
        rc = put_cluster(m, data, n); /* the next packet ends it: out now, the
                                         packet from its own buffer */
    else
        b_put(&m->cl, data, n);
    if (!rc && m->cl.oom)
        rc = -ENOMEM;
    return rc;
}

/* Cues: a CuePoint a timestamp (cues come in dts order) */
static void cues_of(const mkvw *m, bytes *out)
{
    bytes all = {0}, pt = {0}, pos = {0};
    for (size_t i = 0; i < m->ncue; i++) {
        const cue *c = &m->cues[i];
        if (i && c->ts == m->cues[i - 1].ts)
            continue;
        pt.n = pos.n = 0;
        b_uint(&pt, ID_CUETIME, (uint64_t)c->ts);
        b_uint(&pos, ID_CUETRACK, 1);
        b_uint(&pos, ID_CUECLUSTER, (uint64_t)c->cluster);
        b_uint(&pos, ID_CUEREL, (uint64_t)c->rel);
        b_elem(&pt, ID_CUETRACKPOS, &pos, 1);
        b_elem(&all, ID_CUEPOINT, &pt, 0);
        all.oom |= pt.oom | pos.oom;
    }
    b_elem(out, ID_CUES, &all, 0);
    out->oom |= all.oom;
    free(all.p);
    free(pt.p);
    free(pos.p);
}

static void seekhead_of(const mkvw *m, int64_t cues, bytes *out)
{
    const uint32_t ids[4] = {ID_INFO, ID_TRACKS, ID_TAGS, ID_CUES};
    const int64_t at[4] = {m->info, m->tracks, m->tags, cues};
    bytes sh = {0}, e = {0};
    for (int i = 0; i < 4 && at[i] >= 0; i++) {
        e.n = 0;
        b_id(&e, ID_SEEKID);
        b_len(&e, (uint64_t)id_size(ids[i]), 0);
        b_id(&e, ids[i]);
        b_uint(&e, ID_SEEKPOS, (uint64_t)(at[i] - m->seg));
        b_elem(&sh, ID_SEEK, &e, 1);
        sh.oom |= e.oom;
    }
    b_elem(out, ID_SEEKHEAD, &sh, 0);
    out->oom |= sh.oom;
    if (!out->oom)
        b_void(out, SEEKHEAD_BYTES - (int)out->n);
    free(sh.p);
    free(e.p);
}

int mkvw_finish(mkvw *m)
{
    bytes b = {0};
    int64_t cues = -1, bits;
    double dur = (double)m->duration, sec = (double)m->duration * m->tb;
    char str[20] = "", full[400];
    int rc = m->open ? put_cluster(m, NULL, 0) : 0;

    if (!rc && m->ncue) {
        cues = m->pos;
        cues_of(m, &b);
        rc = b.oom ? -ENOMEM : wrote(m, b.p, b.n);
    }
    /* the segment's size, on the 8 bytes libavformat left for it */
    b.n = 0;
    b_len(&b, (uint64_t)(m->pos - m->seg), 8);
    if (!rc && so_pwrite(m->f, b.p, b.n, m->seg - 8))
        rc = -EIO;
    b.n = 0;
    seekhead_of(m, cues, &b);
    if (!rc)
        rc = b.oom || b.n != SEEKHEAD_BYTES ? -ENOMEM : so_pwrite(m->f, b.p, b.n, m->seg) ? -EIO : 0;
    /* Duration (milliseconds, as a double) */
    b.n = 0;
    b_id(&b, ID_DURATION);
    b_len(&b, 8, 0);
    memcpy(&bits, &dur, sizeof bits);
    for (int i = 8; i--;)
        b_byte(&b, (unsigned)((uint64_t)bits >> i * 8));
    if (!rc)
        rc = b.oom ? -ENOMEM : so_pwrite(m->f, b.p, b.n, m->dur_at) ? -EIO : 0;
    /* the track's DURATION tag: HH:MM:SS.nnnnnnnnn in 20 bytes */
    snprintf(full, sizeof full, "%02d:%02d:%012.9f", (int)sec / 3600, ((int)sec / 60) % 60,
             fmod(sec, 60));
    memcpy(str, full, strnlen(full, sizeof str - 1)); /* cut as snprintf(str, 20) cuts */
    b.n = 0;
    b_id(&b, ID_SIMPLETAG);
    b_len(&b, DURATION_TAG_BYTES - 3, 1);
    b_id(&b, ID_TAGNAME);
    b_len(&b, 8, 0);
    b_put(&b, "DURATION", 8);
    b_id(&b, ID_TAGSTRING);
    b_len(&b, sizeof str, 0);
    b_put(&b, str, sizeof str);
    if (!rc)
        rc = b.oom ? -ENOMEM : so_pwrite(m->f, b.p, b.n, m->tag_at) ? -EIO : 0;
    free(b.p);
    return rc;
}

void mkvw_free(mkvw **pm)
{
    mkvw *m = *pm;
    if (!m)
        return;
    *pm = NULL;
    free(m->cl.p);
    free(m->cues);
    free(m);
}
