/*
 * refcheck.h — the differential check (DESIGN.md §2, --cpu-ref).
 */
#ifndef GPUEDGE_REFCHECK_H
#define GPUEDGE_REFCHECK_H

#include <stdio.h>
#include "edge.h"
#include "report.h"

/* Compares one frame's planes bit for bit with the CPU reference, each
 * stage recomputed from the checked implementation's previous plane, so a
 * failure names the stage that broke.  Planes that were not materialised
 * (NULL) are skipped, and the next stage is then recomputed from the
 * reference's own plane.  Prints one line per mismatching stage
 * ("gpuedge: NAME: frame N: cpu-ref: blur: 12 pixels differ, max |d| ...").
 * Returns 0 (all equal), 1 (mismatch), -1 (out of memory). */
int chk_frame(chk_stats *st, const ge_frame *in, const ge_params *p,
              const ge_taps *t, const float *grey, const float *blur_h,
              const float *blur, const uint8_t *edge, const uint64_t *hist,
              const char *name, long index);

/* Summary table, one line per stage. */
void chk_print(const chk_stats *st, FILE *fp);

#endif
