/*
 * test_vscan — the cut of a video's frames into segments (vs_cut,
 * src/io/vscan.c): segments of about equal length cut at the keyframe
 * nearest each share, none shorter than VS_MIN_SEG;
 * where keyframes are sparse, fewer segments; --start and --frames ranges.
 * The scans are made up: frame i has pts 10 i, keyframes where listed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "vscan.h"

/* A scan of n frames (pts 10 i) with a clean cut at every k-th frame,
 * delivering [first, first + limit). */
static vs_scan make(size_t n, size_t every, size_t first, size_t limit)
{
    vs_scan sc;
    memset(&sc, 0, sizeof sc);
    sc.pts = malloc(n * sizeof *sc.pts);
    sc.keys = malloc(n * sizeof *sc.keys);
    for (size_t i = 0; i < n; i++) {
        sc.pts[i] = (int64_t)(10 * i);
        if (i % every == 0)
            sc.keys[sc.nkeys++] = (int64_t)(10 * i);
    }
    sc.npts = n;
    sc.first = first;
    sc.limit = limit;
    sc.ustart = first ? (int64_t)(10 * first) : INT64_MIN;
    return sc;
}

/* Segment i's frames: its pts range in frame numbers (pts 10 i), the
 * delivered range's ends where it is open. */
static size_t seg_frames(const vs_scan *sc, const vs_cut_seg *g, int i)
{
    size_t a = g[i].start == INT64_MIN ? 0 : (size_t)(g[i].start / 10);
    size_t b = g[i].end == INT64_MAX ? sc->first + sc->limit : (size_t)(g[i].end / 10);
    return b - a;
}

/* The segments tile the delivered range: they start where the one
 * before ends, at keyframes, with their frame counts adding up. */
static int tiles(const vs_scan *sc, const vs_cut_seg *g, int n, char *why, size_t wn)
{
    size_t sum = 0;
    for (int i = 0; i < n; i++) {
        size_t f = seg_frames(sc, g, i);
        sum += f;
        if (f < VS_MIN_SEG)
            return snprintf(why, wn, "segment %d: %zu frames", i, f), 0;
        if (i > 0 && (g[i].start != g[i - 1].end || g[i].start % 10))
            return snprintf(why, wn, "segment %d starts at %lld", i, (long long)g[i].start), 0;
    }
    if (g[0].start != sc->ustart || g[n - 1].end != INT64_MAX || sum != sc->limit)
        return snprintf(why, wn, "the range: %zu frames of %zu", sum, sc->limit), 0;
    return 1;
}

int main(void)
{
    char why[160] = "";
    vs_cut_seg *g = NULL;
    int n = 0;

    /* 5,300 frames, a keyframe every 25: 14 segments (7 sessions x 2
     * rounds) of 375-400 frames, not 9 of 650 and one of 100 */
    vs_scan sc = make(5300, 25, 0, 5300);
    int rc = vs_cut(&sc, 14, &g, &n);
    size_t lo = SIZE_MAX, hi = 0;
    for (int i = 0; rc == 0 && i < n; i++) {
        size_t f = seg_frames(&sc, g, i);
        lo = f < lo ? f : lo;
        hi = f > hi ? f : hi;
    }
    CHECK(rc == 0 && n == 14 && tiles(&sc, g, n, why, sizeof why) && lo >= 375 && hi <= 400,
          "vscan: 5300 frames, keyframes every 25, 14 wanted: 14 of 375-400 frames",
          "rc %d, %d segments of %zu-%zu frames %s", rc, n, lo, hi, why);
    free(g);

    /* keyframes every 125 (the bbb clips' GOP): the nearest one to each
     * share, so 1,060 frames in 14 wanted give about one GOP each */
    free(sc.pts);
    free(sc.keys);
    sc = make(1060, 125, 0, 1060);
    rc = vs_cut(&sc, 14, &g, &n);
    CHECK(rc == 0 && n >= 7 && n <= 9 && tiles(&sc, g, n, why, sizeof why),
          "vscan: 1060 frames, keyframes every 125: 7-9 segments, none shorter than the minimum",
          "rc %d, %d segments %s", rc, n, why);
    free(g);

    /* --start and --frames: the range delivered, from a keyframe or not */
    free(sc.pts);
    free(sc.keys);
    sc = make(1000, 20, 133, 600);
    rc = vs_cut(&sc, 4, &g, &n);
    CHECK(rc == 0 && n == 4 && tiles(&sc, g, n, why, sizeof why) && seg_frames(&sc, g, 0) >= 140 &&
              seg_frames(&sc, g, 0) <= 160,
          "vscan: frames 133-732 in 4: from the start frame, 140-160 frames each",
          "rc %d, %d segments, the first %zu frames %s", rc, n, n ? seg_frames(&sc, g, 0) : 0, why);
    free(g);

    /* too short to cut (fewer than 2 x VS_MIN_SEG frames) or no keyframe
     * inside: not segmented */
    free(sc.pts);
    free(sc.keys);
    sc = make(40, 10, 0, 40);
    CHECK(vs_cut(&sc, 4, &g, &n) == -1 && !g && n == 0, "vscan: 40 frames: not cut", "cut");
    free(sc.pts);
    free(sc.keys);
    sc = make(500, 1000, 0, 500);
    CHECK(vs_cut(&sc, 4, &g, &n) == -1 && !g, "vscan: one keyframe: not cut", "cut");
    free(sc.pts);
    free(sc.keys);
    CHECK_EXIT();
}
