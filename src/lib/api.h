/*
 * api.h — the engine entries behind include/gpuedge.h that the command
 * line's engines (pipeline.c) call too, so a frame the CLI processes goes
 * through the same context code as a frame a library user passes in.
 */
#ifndef GPUEDGE_API_H
#define GPUEDGE_API_H

#include <stddef.h>
#include "edge.h"
#include "gpuedge.h"

struct CUstream_st;

/* A context for an engine that has already chosen its backend and probed
 * the device (run.c): backend GE_BACKEND_GPU or GE_BACKEND_CPU, no probe.
 * 0 or a negative ge_status (text in ge_last_error(NULL)). */
int api_ctx_for_engine(ge_ctx **out, const ge_params *p, int backend,
                       int device, int threads);

/* One frame on the CPU backend (ge_process's CPU path): planes->edge is
 * W*H packed, planes->grey/blur_h/blur optional (cpu_process).  mem_limit
 * as cpu_process_limited, stop polled between bands.  Returns
 * cpu_process_limited's 0 / -1 / GE_STOPPED / GE_OVER_BUDGET. */
int api_cpu_frame(ge_ctx *c, const ge_frame *f, size_t mem_limit,
                  ge_planes *planes, volatile const int *stop);

/* One whole frame with the fused kernel on `stream` (ge_process_device's
 * launch): f->data a device pointer, edge edge_pitch bytes a row, hist
 * 256 device counts or NULL.  Loads the context's taps into the device's
 * constant table first when another context changed them (the process-wide
 * taps lock, gpuedge.h "Thread safety").  Returns a cudaError_t (0 =
 * cudaSuccess). */
int api_gpu_frame(ge_ctx *c, const ge_frame *f, uint8_t *edge, int edge_pitch,
                  unsigned long long *hist, struct CUstream_st *stream);

#endif
