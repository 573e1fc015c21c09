/*
 * vscan.c — a video's plan of segments (see vscan.h): the scan and the cut.
 */
#include "vscan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavformat/avformat.h>
#include <libavutil/mathematics.h>

#include "signals.h"
#include "vid_internal.h"

static int scan_interrupt(void *opaque)
{
    (void)opaque;
    return sig_stop != 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* First index i of sorted v[n] with v[i] >= x. */
static size_t lower(const int64_t *v, size_t n, int64_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (v[m] < x)
            lo = m + 1;
        else
            hi = m;
    }
    return lo;
}

static int push(int64_t **v, size_t *n, size_t *cap, int64_t x)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 1024;
        int64_t *p = realloc(*v, c * sizeof *p);
        if (!p)
            return -1;
        *v = p;
        *cap = c;
    }
    (*v)[(*n)++] = x;
    return 0;
}

void vs_scan_free(vs_scan *sc)
{
    free(sc->pts);
    free(sc->keys);
    memset(sc, 0, sizeof *sc);
}

/* Reads every packet of the best video stream (the one vid_open takes)
 * without decoding.  0 with *sc filled, or -1: not segmentable (nothing
 * recorded: the file is then decoded in one go, and vid_open records what
 * is wrong with it). */
int vs_scan_file(const char *path, double start, long max_frames, vs_scan *sc)
{
    AVFormatContext *fc = NULL;
    AVPacket *pkt = av_packet_alloc();
    int64_t *pts = NULL, *keys = NULL, ustart = INT64_MIN;
    size_t npts = 0, cpts = 0, nkeys = 0, ckeys = 0, first, limit;
    char *url = NULL;
    AVStream *st;
    int idx, rc = -1, h264 = 0, nal_len = 0;

    memset(sc, 0, sizeof *sc);

    if (!pkt || asprintf(&url, "file:%s", path) < 0 || !(fc = avformat_alloc_context()))
        goto end;
    fc->interrupt_callback.callback = scan_interrupt;
    if (avformat_open_input(&fc, url, NULL, NULL) < 0)
        goto end; /* freed fc */
    /* containers whose seeks land on the keyframe asked for (an index:
     * MP4's sample tables, Matroska's cues); elsewhere (MPEG-TS seeks by
     * bytes) a segment would often be decoded again from the start */
    if (strncmp(fc->iformat->name, "mov,", 4) && strncmp(fc->iformat->name, "matroska", 8))
        goto end;
    if (avformat_find_stream_info(fc, NULL) < 0 ||
        (idx = av_find_best_stream(fc, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0)) < 0)
        goto end;
    for (unsigned i = 0; i < fc->nb_streams; i++)
        if ((int)i != idx)
            fc->streams[i]->discard = AVDISCARD_ALL;
    st = fc->streams[idx];
    sc->s0 = st->start_time != AV_NOPTS_VALUE ? st->start_time : 0;
    h264 = st->codecpar->codec_id == AV_CODEC_ID_H264;
    if (h264 && st->codecpar->extradata_size >= 5 && st->codecpar->extradata[0] == 1)
        nal_len = (st->codecpar->extradata[4] & 3) + 1;
    for (;;) {
        int ret = av_read_frame(fc, pkt);
        if (ret == AVERROR_EOF)
            break;
        if (ret < 0)
            goto end; /* a read error: let the decoder meet it in order */
        if (pkt->stream_index == idx && !(pkt->flags & AV_PKT_FLAG_DISCARD)) {
            /* keys: the keyframes' positions in decode order; for H.264
             * IDRs only (vid_h264_idr): a keyframe that is only a recovery
             * point (x264's open GOP) carries reference-marking commands
             * about pictures before it, so decoded from there it logs
             * errors a decode from the start does not */
            if (pkt->pts == AV_NOPTS_VALUE || push(&pts, &npts, &cpts, pkt->pts) ||
                ((pkt->flags & AV_PKT_FLAG_KEY) &&
                 (!h264 || vid_h264_idr(pkt->data, pkt->size, nal_len)) &&
                 push(&keys, &nkeys, &ckeys, (int64_t)npts - 1))) {
                av_packet_unref(pkt);
                goto end;
            }
        }
        av_packet_unref(pkt);
    }
    if (npts < 2 * VS_MIN_SEG || nkeys < 2)
        goto end;
    /* A clean cut: every packet before the keyframe in decode order shows
     * before it, every one after it shows after it (no leading pictures of
     * an open GOP, nothing held back across it).  Only those keyframes
     * start segments: a segment is then exactly a run of packets, and its
     * decoder needs nothing before its keyframe.  keys[] becomes their
     * pts. */
    {
        int64_t *sufmin = malloc(npts * sizeof *sufmin), premax = INT64_MIN;
        size_t nk = 0, k = 0;
        if (!sufmin)
            goto end;
        sufmin[npts - 1] = INT64_MAX;
        for (size_t i = npts - 1; i > 0; i--)
            sufmin[i - 1] = pts[i] < sufmin[i] ? pts[i] : sufmin[i];
        for (size_t i = 0; i < npts; i++) {
            if (k < nkeys && (size_t)keys[k] == i) {
                if (premax < pts[i] && pts[i] < sufmin[i])
                    keys[nk++] = pts[i];
                k++;
            }
            if (pts[i] > premax)
                premax = pts[i];
        }
        free(sufmin);
        nkeys = nk;
    }
    if (nkeys < 2)
        goto end;
    qsort(pts, npts, sizeof *pts, cmp_i64);
    qsort(keys, nkeys, sizeof *keys, cmp_i64);
    for (size_t i = 1; i < npts; i++)
        if (pts[i] == pts[i - 1])
            goto end; /* two frames at one time: their order is the decoder's */

    /* the frames the run delivers: from --start (the reader's own rule),
     * at most --frames of them */
    if (start > 0)
        ustart = sc->s0 + av_rescale_q(llrint(start * AV_TIME_BASE), AV_TIME_BASE_Q,
                                      st->time_base);
    first = ustart == INT64_MIN ? 0 : lower(pts, npts, ustart);
    limit = npts - first;
    if (max_frames >= 0 && (size_t)max_frames < limit)
        limit = (size_t)max_frames;
    if (limit < 2 * VS_MIN_SEG)
        goto end;
    sc->pts = pts;
    sc->keys = keys;
    sc->npts = npts;
    sc->nkeys = nkeys;
    sc->first = first;
    sc->limit = limit;
    sc->ustart = ustart;
    pts = keys = NULL;
    rc = 0;
end:
    avformat_close_input(&fc);
    av_packet_free(&pkt);
    free(pts);
    free(keys);
    free(url);
    return rc;
}

int vs_cut(const vs_scan *sc, size_t want, vs_cut_seg **segsp, int *nsegp)
{
    const int64_t *pts = sc->pts, *keys = sc->keys;
    size_t npts = sc->npts, nkeys = sc->nkeys, first = sc->first, limit = sc->limit;
    size_t cur = first, k = 0;
    vs_cut_seg *segs;
    int nseg = 1;

    *segsp = NULL;
    *nsegp = 0;
    if (!pts)
        return -1;
    if (want > limit / VS_MIN_SEG)
        want = limit / VS_MIN_SEG;
    if (want < 2 || !(segs = calloc(want, sizeof *segs)))
        return -1;
    segs[0].start = sc->ustart; /* INT64_MIN: from the start */
    for (size_t j = 1; j < want; j++) {
        size_t ideal = first + (size_t)((double)limit * (double)j / (double)want);
        size_t best = SIZE_MAX;
        int64_t key = 0;
        /* the keyframe nearest `ideal` inside the delivered range, far
         * enough from the cut before and from the end of the range */
        for (; k < nkeys; k++) {
            size_t at = lower(pts, npts, keys[k]);
            if (at <= cur || at - cur < VS_MIN_SEG)
                continue;
            if (at >= first + limit || first + limit - at < VS_MIN_SEG)
                break;
            if (at <= ideal) {
                best = at;
                key = keys[k];
                continue;
            }
            if (best == SIZE_MAX || at - ideal < ideal - best) {
                best = at;
                key = keys[k++];
            }
            break;
        }
        if (best == SIZE_MAX)
            continue;
        segs[nseg - 1].end = key;
        segs[nseg].start = key;
        nseg++;
        cur = best;
    }
    segs[nseg - 1].end = INT64_MAX;
    if (nseg < 2) {
        free(segs);
        return -1;
    }
    *segsp = segs;
    *nsegp = nseg;
    return 0;
}
