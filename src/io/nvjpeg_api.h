/*
 * nvjpeg_api.h — the part of nvJPEG's C API that src/io/nvjpeg.c calls, declared
 * here so the project builds without NVIDIA's header (CUDA 13's toolkit on
 * Debian has no nvJPEG; the library comes from a wheel and is dlopen'ed at
 * run time).  Each declaration was checked against nvjpeg.h of nvJPEG
 * 13.2.3.58 (NVJPEG_VER_MAJOR 13): the enum values, the layout of
 * nvjpegImage_t, and every parameter list.  Only function pointer types
 * are declared (nvj_*_fn), never the symbols themselves: nothing here can
 * be linked by accident.
 */
#ifndef GPUEDGE_NVJPEG_API_H
#define GPUEDGE_NVJPEG_API_H

#include <stddef.h>
#include <cuda_runtime_api.h>

#define NVJ_MAX_COMPONENT 4 /* NVJPEG_MAX_COMPONENT */

typedef enum {
    NVJ_STATUS_SUCCESS = 0,
    NVJ_STATUS_NOT_INITIALIZED = 1,
    NVJ_STATUS_INVALID_PARAMETER = 2,
    NVJ_STATUS_BAD_JPEG = 3,
    NVJ_STATUS_JPEG_NOT_SUPPORTED = 4,
    NVJ_STATUS_ALLOCATOR_FAILURE = 5,
    NVJ_STATUS_EXECUTION_FAILED = 6,
    NVJ_STATUS_ARCH_MISMATCH = 7,
    NVJ_STATUS_INTERNAL_ERROR = 8,
    NVJ_STATUS_IMPLEMENTATION_NOT_SUPPORTED = 9,
    NVJ_STATUS_INCOMPLETE_BITSTREAM = 10
} nvj_status; /* nvjpegStatus_t */

typedef enum {
    NVJ_CSS_444 = 0, NVJ_CSS_422 = 1, NVJ_CSS_420 = 2, NVJ_CSS_440 = 3,
    NVJ_CSS_411 = 4, NVJ_CSS_410 = 5, NVJ_CSS_GRAY = 6, NVJ_CSS_410V = 7,
    NVJ_CSS_UNKNOWN = -1
} nvj_css; /* nvjpegChromaSubsampling_t */

typedef enum {
    NVJ_OUTPUT_YUV = 1,  /* NVJPEG_OUTPUT_YUV: Y, Cb, Cr planes, the file's sampling */
    NVJ_OUTPUT_Y = 2     /* NVJPEG_OUTPUT_Y: the luma plane only */
} nvj_output; /* nvjpegOutputFormat_t (the two values used) */

typedef enum {
    NVJ_BACKEND_DEFAULT = 0,
    NVJ_BACKEND_HYBRID = 1,
    NVJ_BACKEND_GPU_HYBRID = 2,
    NVJ_BACKEND_HARDWARE = 3
} nvj_backend_t; /* nvjpegBackend_t (the values used) */

typedef enum {
    NVJ_ORIENTATION_UNKNOWN = 0,
    NVJ_ORIENTATION_NORMAL = 1
} nvj_orientation; /* nvjpegExifOrientation_t: 2..8 rotate or flip */

typedef struct {
    unsigned char *channel[NVJ_MAX_COMPONENT];
    size_t pitch[NVJ_MAX_COMPONENT];
} nvj_image_t; /* nvjpegImage_t */

typedef struct nvjpegHandle *nvj_handle;
typedef struct nvjpegJpegState *nvj_state;
typedef struct nvjpegJpegStream *nvj_stream;

/* The allocator arguments are passed as NULL (nvJPEG's defaults). */
typedef nvj_status (*nvj_create_ex_fn)(nvj_backend_t backend, void *dev_allocator,
                                       void *pinned_allocator, unsigned int flags,
                                       nvj_handle *handle);
typedef nvj_status (*nvj_destroy_fn)(nvj_handle handle);
typedef nvj_status (*nvj_get_property_fn)(int type, int *value); /* libraryPropertyType */
typedef nvj_status (*nvj_hw_info_fn)(nvj_handle handle, unsigned int *num_engines,
                                     unsigned int *num_cores_per_engine);
typedef nvj_status (*nvj_state_create_fn)(nvj_handle handle, nvj_state *state);
typedef nvj_status (*nvj_state_destroy_fn)(nvj_state state);
typedef nvj_status (*nvj_batched_init_fn)(nvj_handle handle, nvj_state state, int batch_size,
                                          int max_cpu_threads, nvj_output output_format);
typedef nvj_status (*nvj_batched_fn)(nvj_handle handle, nvj_state state,
                                     const unsigned char *const *data, const size_t *lengths,
                                     nvj_image_t *destinations, cudaStream_t stream);
typedef nvj_status (*nvj_stream_create_fn)(nvj_handle handle, nvj_stream *stream);
typedef nvj_status (*nvj_stream_destroy_fn)(nvj_stream stream);
typedef nvj_status (*nvj_stream_parse_header_fn)(nvj_handle handle, const unsigned char *data,
                                                 size_t length, nvj_stream stream);
typedef nvj_status (*nvj_stream_dims_fn)(nvj_stream stream, unsigned int *width,
                                         unsigned int *height);
typedef nvj_status (*nvj_stream_ncomp_fn)(nvj_stream stream, unsigned int *components_num);
typedef nvj_status (*nvj_stream_css_fn)(nvj_stream stream, nvj_css *chroma_subsampling);
typedef nvj_status (*nvj_stream_comp_dims_fn)(nvj_stream stream, unsigned int component,
                                              unsigned int *width, unsigned int *height);
typedef nvj_status (*nvj_stream_precision_fn)(nvj_stream stream, unsigned int *precision);
typedef nvj_status (*nvj_stream_orientation_fn)(nvj_stream stream, nvj_orientation *orientation);
/* is_supported is set to 0 when the hardware backend can decode the stream */
typedef nvj_status (*nvj_batched_supported_fn)(nvj_handle handle, nvj_stream stream,
                                               int *is_supported);

#endif
