/*
 * cpu_backend.h — the CPU backend: same results as the reference, bit for
 * bit, but multi-threaded over row bands and written for speed.
 */
#ifndef GPUEDGE_CPU_BACKEND_H
#define GPUEDGE_CPU_BACKEND_H

#include <stddef.h>
#include "edge.h"

/* Runs DESIGN.md §1 on f with `threads` worker threads (0 = one per online CPU).
 * planes->edge (W*H) must be allocated; planes->grey/blur_h/blur may be
 * NULL, or W*H buffers the backend fills too (for --cpu-ref).
 * planes->hist is filled.  `stop` (may be NULL) is polled between bands:
 * when *stop becomes non-zero the call returns GE_STOPPED early.
 * Returns 0, -1 on allocation/thread failure, GE_STOPPED when stopped. */
int cpu_process(const ge_frame *f, const ge_params *p, int threads,
                ge_planes *planes, volatile const int *stop);

/* The same with the workers' scratch held within mem_limit bytes in all
 * (0 = no limit; --mem-limit): shorter row bands and fewer threads, the
 * same bits.  Returns GE_OVER_BUDGET when even one thread with one-row bands needs
 * more (cpu_scratch_bytes(w, h, sigma, 1) says how much). */
int cpu_process_limited(const ge_frame *f, const ge_params *p, int threads,
                        size_t mem_limit, ge_planes *planes,
                        volatile const int *stop);

/* The passes of the last Canny frame the calling thread ran, for
 * benchmarks: wall ms in [0] --canny auto's first pass (grey .. t and the
 * histogram; 0 for explicit thresholds), [1] grey (or the t plane) to NMS, [2] hysteresis (the fills and any pending passes), [3]
 * the final 0/255 pass; [4..7] the same passes' CPU ms on the calling
 * thread (all of the CPU time with threads = 1; steady under a loaded
 * machine, where wall time is not). */
void cpu_canny_times(double ms[8]);

/* Bytes of scratch one worker needs for bands of band_rows rows
 * (SIZE_MAX when the sizes are invalid or overflow). */
size_t cpu_scratch_bytes(int width, int height, double sigma, int band_rows);

/* Test hooks, set by the unit tests only (no option or variable reaches
 * them): non-zero cpu_hook_no_simd runs the portable kernels where AVX2+FMA
 * would run, to prove both give the same bits; cpu_hook_canny_stack > 0
 * holds Canny's hysteresis stacks to that many entries, so that small
 * frames reach the pending passes. */
extern int cpu_hook_no_simd;
extern size_t cpu_hook_canny_stack;

#endif
