/*
 * nvjpeg.c — batched JPEG decoding with nvJPEG, loaded at run time (see
 * nvjpeg.h for the contract, nvjpeg_api.h for the declarations used).
 *
 * Shape (nvJPEG's batched API, CUDALibrarySamples' hardware-decode sample):
 * one library handle made for the hardware backend (else GPU hybrid), one
 * JPEG state per output format (NVJPEG_OUTPUT_Y for grey files, YUV for
 * colour: nvjpegDecodeBatchedInitialize fixes one format for a whole batch),
 * and a header parser (nvjpegJpegStreamParseHeader) that screens each file
 * first: size, components, precision, and for the hardware backend
 * nvjpegDecodeBatchedSupported, so nothing the engines refuse enters a
 * batch.  A batch nvJPEG still rejects is retried one image at a time, so
 * one bad file costs only itself.
 *
 * Colour files come out as their Y, Cb and Cr planes, and jycc_rgb_gpu
 * (kernels/jpeg_ycc_gpu.h) upsamples and converts them as libjpeg-turbo
 * does: the engines' IDCT is libjpeg-turbo's (JDCT_ISLOW), their own
 * upsampling is not, so nvJPEG's RGB output would differ (DESIGN.md §1.9).
 *
 * Output buffers come from a pool of device blocks that only grows (no
 * cudaFree in the frame loop: it synchronises the device, DESIGN.md §4); a block
 * is reused after nvj_release, which the caller calls once the kernel that
 * reads it has finished.
 */
#include "nvjpeg.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jpeg_ycc_gpu.h"
#include "nvjpeg_api.h"
#include "util.h"

#define NVJ_SONAME "libnvjpeg.so.13"
#define NVJ_MAX_BUFS 256
#define NVJ_PITCH_ALIGN 64 /* rows start 64-byte aligned: the kernels' vector loads */

typedef struct nvj_buf {
    unsigned char *d;
    size_t cap;
    int busy;
} nvj_buf;

struct nvj_dec {
    void *lib;
    nvj_create_ex_fn create_ex;
    nvj_destroy_fn destroy;
    nvj_get_property_fn get_property;
    nvj_hw_info_fn hw_info;
    nvj_state_create_fn state_create;
    nvj_state_destroy_fn state_destroy;
    nvj_batched_init_fn batched_init;
    nvj_batched_fn batched;
    nvj_stream_create_fn stream_create;
    nvj_stream_destroy_fn stream_destroy;
    nvj_stream_parse_header_fn parse_header;
    nvj_stream_dims_fn dims;
    nvj_stream_ncomp_fn ncomp;
    nvj_stream_css_fn css;
    nvj_stream_comp_dims_fn comp_dims;
    nvj_stream_precision_fn precision;
    nvj_batched_supported_fn supported;

    /* tier 0: the hardware engines (when the GPU has them); tier 1:
     * nvJPEG's default backend (CUDA kernels, Huffman on the host or GPU)
     * for what the engines refuse (progressive, 4:1:0, ...), and for
     * everything on a GPU without engines */
    struct nvj_tier {
        nvj_handle h;
        nvj_state state[2];  /* [0] Y, [1] YUV */
        int state_n[2];      /* batch size each state was initialised for */
    } tier[2];
    int tier1_tried;
    nvj_handle h;            /* tier[0].h, else tier[1].h: parses headers */
    nvj_stream js;
    cudaStream_t stream;
    int hardware;
    int max_batch;
    char desc[512];

    /* per-call scratch, max_batch long */
    const unsigned char **data;
    size_t *lens;
    nvj_image_t *img;
    int *idx;

    pthread_mutex_t mu; /* the pool (nvj_release runs on other threads) */
    nvj_buf bufs[NVJ_MAX_BUFS];
    int nbufs;
};

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static const char *status_name(nvj_status s)
{
    switch (s) {
    case NVJ_STATUS_SUCCESS: return "success";
    case NVJ_STATUS_NOT_INITIALIZED: return "not initialised";
    case NVJ_STATUS_INVALID_PARAMETER: return "invalid parameter";
    case NVJ_STATUS_BAD_JPEG: return "bad JPEG data";
    case NVJ_STATUS_JPEG_NOT_SUPPORTED: return "JPEG type not supported";
    case NVJ_STATUS_ALLOCATOR_FAILURE: return "out of memory";
    case NVJ_STATUS_EXECUTION_FAILED: return "execution failed";
    case NVJ_STATUS_ARCH_MISMATCH: return "not available on this GPU";
    case NVJ_STATUS_INTERNAL_ERROR: return "internal error";
    case NVJ_STATUS_IMPLEMENTATION_NOT_SUPPORTED: return "not implemented by this backend";
    case NVJ_STATUS_INCOMPLETE_BITSTREAM: return "truncated JPEG data";
    }
    return "unknown status";
}

int nvj_is_jpeg(const unsigned char *data, size_t len)
{
    return len >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF;
}

/* ------------------------------------------------------------------------ */
/* loading                                                                   */

static int load_syms(nvj_dec *d)
{
    static const struct { const char *name; size_t off; } syms[] = {
#define S(f, name) {name, offsetof(nvj_dec, f)}
        S(create_ex, "nvjpegCreateEx"),
        S(destroy, "nvjpegDestroy"),
        S(get_property, "nvjpegGetProperty"),
        S(hw_info, "nvjpegGetHardwareDecoderInfo"),
        S(state_create, "nvjpegJpegStateCreate"),
        S(state_destroy, "nvjpegJpegStateDestroy"),
        S(batched_init, "nvjpegDecodeBatchedInitialize"),
        S(batched, "nvjpegDecodeBatched"),
        S(stream_create, "nvjpegJpegStreamCreate"),
        S(stream_destroy, "nvjpegJpegStreamDestroy"),
        S(parse_header, "nvjpegJpegStreamParseHeader"),
        S(dims, "nvjpegJpegStreamGetFrameDimensions"),
        S(ncomp, "nvjpegJpegStreamGetComponentsNum"),
        S(css, "nvjpegJpegStreamGetChromaSubsampling"),
        S(comp_dims, "nvjpegJpegStreamGetComponentDimensions"),
        S(precision, "nvjpegJpegStreamGetSamplePrecision"),
        S(supported, "nvjpegDecodeBatchedSupported"),
#undef S
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        void *f = dlsym(d->lib, syms[i].name);
        if (!f) {
            ge_fail("the nvJPEG library lacks %s (nvJPEG 13 needed)", syms[i].name);
            return -1;
        }
        /* POSIX: a data pointer from dlsym converts to a function pointer */
        memcpy((char *)d + syms[i].off, &f, sizeof f);
    }
    return 0;
}

static void scratch_free(nvj_dec *d)
{
    free(d->data);
    free(d->lens);
    free(d->img);
    free(d->idx);
}

/* The library, loaded once and never unloaded: nvJPEG's statically linked
 * CUDA runtime registers exit handlers, and unloading it first would leave
 * them dangling. */
static void *g_lib;
static pthread_mutex_t g_lib_mu = PTHREAD_MUTEX_INITIALIZER;

int nvj_load(void)
{
    const char *env = getenv("GPUEDGE_NVJPEG");
    const char *path = env && *env ? env : NVJ_SONAME;
    int ret = 0;
    pthread_mutex_lock(&g_lib_mu);
    if (!g_lib) {
        g_lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!g_lib) {
            const char *e = dlerror();
            if (env && *env)
                ge_fail("cannot load nvJPEG from GPUEDGE_NVJPEG=%s: %s", env,
                        e ? e : "dlopen failed");
            else
                ge_fail("cannot load %s (NVIDIA's nvJPEG 13 for CUDA 13; set "
                        "GPUEDGE_NVJPEG to the library file if it is not on the library path)",
                        NVJ_SONAME);
            ret = -1;
        } else if (!dlsym(g_lib, "nvjpegDecodeBatched")) {
            ge_fail("%s is not nvJPEG (no nvjpegDecodeBatched)", path);
            dlclose(g_lib);
            g_lib = NULL;
            ret = -1;
        }
    }
    pthread_mutex_unlock(&g_lib_mu);
    return ret;
}

int nvj_read_file(const char *path, unsigned char **data, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *b = NULL;
    size_t cap = 0, got = 0;
    *data = NULL;
    *len = 0;
    if (!f) {
        ge_fail("%s", strerror(errno));
        return -1;
    }
    for (;;) {
        size_t r;
        if (got == cap) {
            size_t nc = cap ? 2 * cap : 1 << 20;
            unsigned char *nb = realloc(b, nc);
            if (!nb) {
                ge_fail("out of memory");
                goto fail;
            }
            b = nb;
            cap = nc;
        }
        r = fread(b + got, 1, cap - got, f);
        got += r;
        if (r == 0) {
            if (ferror(f)) {
                ge_fail("read error");
                goto fail;
            }
            break;
        }
    }
    fclose(f);
    *data = b;
    *len = got;
    return 0;
fail:
    fclose(f);
    free(b);
    return -1;
}

/* Creates tier t's handle (0 the hardware backend, 1 nvJPEG's default:
 * the hybrid one).  Its states are made when a batch first needs one
 * (init_state): each costs a noticeable start and a run of colour photos
 * never needs the grey one. */
static nvj_status tier_open(nvj_dec *d, int t)
{
    struct nvj_tier *tr = &d->tier[t];
    nvj_status s = d->create_ex(t ? NVJ_BACKEND_DEFAULT : NVJ_BACKEND_HARDWARE, NULL, NULL, 0,
                                &tr->h);
    if (s != NVJ_STATUS_SUCCESS)
        tr->h = NULL;
    return s;
}

/* Tier 1 for a file the engines refuse: made on first use, tried once. */
static int tier_ready(nvj_dec *d)
{
    if (!d->tier[1].h && !d->tier1_tried) {
        d->tier1_tried = 1;
        tier_open(d, 1);
    }
    return d->tier[1].h != NULL;
}

int nvj_open(int max_batch, nvj_dec **out)
{
    nvj_dec *d;
    nvj_status s;
    int major = 0, minor = 0, patch = 0;
    unsigned engines = 0, cores = 0;
    char where[300] = "";
    double t_hw = 0, t_hy = 0;
    nvj_status s_hw;

    *out = NULL;
    if (max_batch < 1)
        max_batch = 1;
    d = calloc(1, sizeof *d);
    if (!d)
        return ge_fail("out of memory");
    pthread_mutex_init(&d->mu, NULL);
    d->max_batch = max_batch;
    if (nvj_load())
        goto fail;
    d->lib = g_lib;
    if (load_syms(d))
        goto fail;
    {
        /* which file the dynamic linker picked, for -v */
        Dl_info info;
        void *sym;
        memcpy(&sym, &d->create_ex, sizeof sym);
        if (dladdr(sym, &info) && info.dli_fname)
            snprintf(where, sizeof where, " from %s", info.dli_fname);
    }
    d->get_property(0, &major); /* MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL */
    d->get_property(1, &minor);
    d->get_property(2, &patch);

    /* The hardware engines when the GPU has them; nvJPEG says
     * ARCH_MISMATCH / not supported otherwise.  The hybrid backend is made
     * when a file first needs it (tier_ready): most batches never do. */
    t_hw = now_ms();
    s_hw = tier_open(d, 0);
    t_hw = now_ms() - t_hw;
    if (s_hw == NVJ_STATUS_SUCCESS) {
        d->hardware = 1;
        if (d->hw_info(d->tier[0].h, &engines, &cores) != NVJ_STATUS_SUCCESS)
            engines = cores = 0;
    } else {
        nvj_status s2;
        t_hy = now_ms();
        s2 = tier_open(d, 1);
        t_hy = now_ms() - t_hy;
        if (s2 != NVJ_STATUS_SUCCESS) {
            ge_fail("nvJPEG: no backend works on this GPU (hardware: %s; "
                    "GPU hybrid: %s)", status_name(s_hw), status_name(s2));
            goto fail;
        }
    }
    d->h = d->hardware ? d->tier[0].h : d->tier[1].h;
    s = d->stream_create(d->h, &d->js);
    if (s != NVJ_STATUS_SUCCESS) {
        d->js = NULL;
        ge_fail("nvJPEG: cannot create a stream parser: %s", status_name(s));
        goto fail;
    }
    if (cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking) != cudaSuccess) {
        d->stream = NULL;
        ge_fail("nvJPEG: cannot create a CUDA stream: %s",
                cudaGetErrorString(cudaGetLastError()));
        goto fail;
    }
    d->data = calloc((size_t)max_batch, sizeof *d->data);
    d->lens = calloc((size_t)max_batch, sizeof *d->lens);
    d->img = calloc((size_t)max_batch, sizeof *d->img);
    d->idx = calloc((size_t)max_batch, sizeof *d->idx);
    if (!d->data || !d->lens || !d->img || !d->idx) {
        ge_fail("out of memory");
        goto fail;
    }
    if (d->hardware)
        snprintf(d->desc, sizeof d->desc, "nvJPEG %d.%d.%d, hardware backend (%u engine%s x %u "
                 "cores; what the engines refuse goes to the GPU hybrid backend)%s", major,
                 minor, patch, engines, engines == 1 ? "" : "s", cores, where);
    else
        snprintf(d->desc, sizeof d->desc, "nvJPEG %d.%d.%d, GPU hybrid backend (no JPEG engines "
                 "on this GPU: %s)%s", major, minor, patch, status_name(s_hw), where);
    {
        size_t l = strlen(d->desc);
        snprintf(d->desc + l, sizeof d->desc - l, "; set-up %.0f ms", t_hw + t_hy);
    }
    *out = d;
    return 0;
fail:
    nvj_close(&d);
    return -1;
}

const char *nvj_backend(const nvj_dec *d)
{
    return d->hardware ? "hardware" : "GPU hybrid";
}

const char *nvj_describe(const nvj_dec *d)
{
    return d->desc;
}

void nvj_close(nvj_dec **dp)
{
    nvj_dec *d = *dp;
    if (!d)
        return;
    if (d->stream)
        cudaStreamSynchronize(d->stream);
    for (int i = 0; i < d->nbufs; i++)
        cudaFree(d->bufs[i].d);
    if (d->stream)
        cudaStreamDestroy(d->stream);
    if (d->js)
        d->stream_destroy(d->js);
    for (int t = 0; t < 2; t++) {
        for (int i = 0; i < 2; i++)
            if (d->tier[t].state[i])
                d->state_destroy(d->tier[t].state[i]);
        if (d->tier[t].h)
            d->destroy(d->tier[t].h);
    }
    scratch_free(d); /* (the library stays loaded: nvj_load) */
    pthread_mutex_destroy(&d->mu);
    free(d);
    *dp = NULL;
}

/* ------------------------------------------------------------------------ */
/* the buffer pool                                                           */

/* The smallest free block of at least `need` bytes, else a new one.  -1
 * when the pool is full or the device is out of memory. */
static int buf_get(nvj_dec *d, size_t need)
{
    int best = -1;
    pthread_mutex_lock(&d->mu);
    for (int i = 0; i < d->nbufs; i++)
        if (!d->bufs[i].busy && d->bufs[i].cap >= need &&
            (best < 0 || d->bufs[i].cap < d->bufs[best].cap))
            best = i;
    if (best < 0 && d->nbufs < NVJ_MAX_BUFS) {
        void *p = NULL;
        /* headroom: the next photo of a batch is often a little larger */
        size_t cap = need + need / 8;
        if (cudaMalloc(&p, cap) == cudaSuccess) {
            best = d->nbufs++;
            d->bufs[best].d = p;
            d->bufs[best].cap = cap;
        } else {
            cudaGetLastError(); /* out of memory is not sticky: clear it */
        }
    }
    if (best >= 0)
        d->bufs[best].busy = 1;
    pthread_mutex_unlock(&d->mu);
    return best;
}

void nvj_release(nvj_dec *d, nvj_pic *p)
{
    if (!d || !p || p->buf_ <= 0)
        return;
    pthread_mutex_lock(&d->mu);
    d->bufs[p->buf_ - 1].busy = 0;
    pthread_mutex_unlock(&d->mu);
    p->buf_ = 0;
    p->d_data = NULL;
    p->ok = 0;
}

/* ------------------------------------------------------------------------ */
/* decoding                                                                  */

/* The first frame marker (SOF0..SOF15 but DHT, JPG, DAC) of the main
 * image, walking the marker segments (an EXIF thumbnail inside APP1 has
 * its own); 0 when none is found. */
static int sof_marker(const unsigned char *p, size_t n)
{
    size_t i = 2;
    while (i + 4 <= n) {
        int m;
        if (p[i] != 0xFF)
            return 0;
        m = p[i + 1];
        if (m == 0xFF) {
            i++;
            continue;
        }
        if (m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC)
            return m;
        if (m == 0xD8 || (m >= 0xD0 && m <= 0xD7) || m == 0x01) {
            i += 2;
            continue;
        }
        if (m == 0xDA || m == 0xD9)
            return 0;
        i += 2 + ((size_t)p[i + 2] << 8 | p[i + 3]);
    }
    return 0;
}

/* Ends with the end-of-image marker FF D9, allowing for padding or other
 * bytes after it (within the last 64 KiB: some cameras append data). */
static int has_eoi(const unsigned char *p, size_t n)
{
    size_t stop = n > 65536 ? n - 65536 : 0;
    for (size_t i = n; i >= stop + 2; i--)
        if (p[i - 2] == 0xFF && p[i - 1] == 0xD9)
            return 1;
    return 0;
}

#define ALIGN_UP(n) (((size_t)(n) + NVJ_PITCH_ALIGN - 1) / NVJ_PITCH_ALIGN * NVJ_PITCH_ALIGN)

/* A colour file's chroma layout: expansion from its sampling, and the
 * planes' size, which must be libjpeg-turbo's (ceil(w / hx) x ceil(h /
 * vx)) for jycc_pixel's edges to be libjpeg-turbo's.  1, or 0 with why. */
static int ycc_layout(nvj_dec *d, nvj_pic *p, nvj_css css)
{
    static const int hx[] = {1, 2, 2, 1, 4, 4}, vx[] = {1, 1, 2, 2, 1, 2};
    jycc_planes *q = &p->ycc_;
    unsigned cw[3] = {0}, ch[3] = {0};
    int c;
    if ((int)css < 0 || (int)css > NVJ_CSS_410) {
        snprintf(p->why, sizeof p->why, "unusual chroma sampling factors");
        return 0;
    }
    memset(q, 0, sizeof *q); /* (the plane pointers: place_planes) */
    q->width = p->width;
    q->height = p->height;
    q->hx = hx[css];
    q->vx = vx[css];
    q->cw = (p->width + q->hx - 1) / q->hx;
    q->ch = (p->height + q->vx - 1) / q->vx;
    for (c = 0; c < 3; c++)
        if (d->comp_dims(d->js, (unsigned)c, &cw[c], &ch[c]) != NVJ_STATUS_SUCCESS)
            break;
    if (c < 3 || cw[0] != (unsigned)p->width || ch[0] != (unsigned)p->height ||
        cw[1] != (unsigned)q->cw || ch[1] != (unsigned)q->ch || cw[2] != cw[1] || ch[2] != ch[1]) {
        snprintf(p->why, sizeof p->why, "chroma planes of an unexpected size");
        return 0;
    }
    q->y_pitch = (int)ALIGN_UP(p->width);
    q->c_pitch = (int)ALIGN_UP(q->cw);
    q->up = jycc_method(q->hx, q->vx, q->cw);
    return 1;
}

/* Reads the header and decides whether nvJPEG takes the file; on yes sets
 * the size, channels, the output format (0 Y, 1 YUV) and the tier. */
static int screen(nvj_dec *d, nvj_pic *p, int *fmt, int *tier)
{
    unsigned w = 0, h = 0, nc = 0, prec = 0;
    nvj_css css = NVJ_CSS_UNKNOWN;
    nvj_status s;
    int sup = -1;

    if (!nvj_is_jpeg(p->data, p->len)) {
        snprintf(p->why, sizeof p->why, "not a JPEG file");
        return 0;
    }
    if (!has_eoi(p->data, p->len)) {
        /* the engines decode a truncated file without a word (the rest
         * of the picture grey); leave it to the CPU decoder's rules */
        snprintf(p->why, sizeof p->why, "no end-of-image marker: truncated?");
        return 0;
    }
    s = d->parse_header(d->h, p->data, p->len, d->js);
    if (s != NVJ_STATUS_SUCCESS) {
        snprintf(p->why, sizeof p->why, "%s in the header", status_name(s));
        return 0;
    }
    if (d->dims(d->js, &w, &h) != NVJ_STATUS_SUCCESS || d->ncomp(d->js, &nc) ||
        d->css(d->js, &css) || d->precision(d->js, &prec)) {
        snprintf(p->why, sizeof p->why, "unreadable header");
        return 0;
    }
    if (w == 0 || h == 0 || w > 65535 || h > 65535) {
        snprintf(p->why, sizeof p->why, "bad size %ux%u", w, h);
        return 0;
    }
    if (prec != 8) {
        snprintf(p->why, sizeof p->why, "%u-bit samples", prec);
        return 0;
    }
    if (nc != 1 && nc != 3) {
        snprintf(p->why, sizeof p->why, "%u components%s", nc, nc == 4 ? " (CMYK/YCCK)" : "");
        return 0;
    }
    if (css == NVJ_CSS_UNKNOWN) {
        snprintf(p->why, sizeof p->why, "unusual chroma sampling factors");
        return 0;
    }
    *tier = d->hardware ? 0 : 1;
    if (d->hardware) {
        static const char *const css_name[] = {"4:4:4", "4:2:2", "4:2:0", "4:4:0",
                                               "4:1:1", "4:1:0", "grey", "4:1:0V"};
        if ((d->supported(d->h, d->js, &sup) != NVJ_STATUS_SUCCESS || sup != 0) &&
            tier_ready(d)) {
            *tier = 1;
        } else if (sup != 0) {
            /* the engines take baseline Huffman JPEGs in the common
             * samplings; name the usual reason */
            int sof = sof_marker(p->data, p->len);
            snprintf(p->why, sizeof p->why, "the hardware decoder does not take this %s%s JPEG",
                     sof == 0xC2 ? "progressive " : sof == 0xC1 ? "extended " :
                     sof == 0xC3 ? "lossless " : sof >= 0xC9 ? "arithmetic-coded " : "",
                     (unsigned)css < 8 ? css_name[css] : "");
            return 0;
        }
    }
    p->width = (int)w;
    p->height = (int)h;
    p->channels = nc == 1 ? 1 : 3;
    *fmt = nc == 1 ? 0 : 1;
    return nc == 1 || ycc_layout(d, p, css);
}

static int init_state(struct nvj_tier *t, nvj_dec *d, int f, int k, nvj_status *s)
{
    if (t->state_n[f] == k)
        return 0;
    if (!t->state[f]) {
        *s = d->state_create(t->h, &t->state[f]);
        if (*s != NVJ_STATUS_SUCCESS) {
            t->state[f] = NULL;
            return -1;
        }
    }
    *s = d->batched_init(t->h, t->state[f], k, 1, f ? NVJ_OUTPUT_YUV : NVJ_OUTPUT_Y);
    if (*s != NVJ_STATUS_SUCCESS) {
        t->state_n[f] = 0;
        return -1;
    }
    t->state_n[f] = k;
    return 0;
}

/* The device bytes pic p needs: its output, and for a colour file the
 * Y, Cb and Cr planes nvJPEG writes after it (place_planes). */
static size_t pic_bytes(const nvj_pic *p)
{
    size_t n = p->pitch * (size_t)p->height;
    if (p->channels == 3)
        n += (size_t)p->ycc_.y_pitch * (size_t)p->height +
             2 * (size_t)p->ycc_.c_pitch * (size_t)p->ycc_.ch;
    return n;
}

/* A colour pic's planes into its buffer (d_data), after its RGB. */
static void place_planes(nvj_pic *p)
{
    jycc_planes *q = &p->ycc_;
    q->y = p->d_data + p->pitch * (size_t)p->height;
    q->cb = q->y + (size_t)q->y_pitch * (size_t)p->height;
    q->cr = q->cb + (size_t)q->c_pitch * (size_t)q->ch;
}

/* Decodes d->idx[0..k) (all of output format f, tier t) as one batch,
 * colour files finished to RGB (jycc_rgb_gpu).  0 ok; 1 nvJPEG refused
 * the batch (*s says why); -1 a CUDA failure. */
static int run_batch(nvj_dec *d, struct nvj_tier *t, nvj_pic *pics, int k, int f, nvj_status *s)
{
    cudaError_t e, launch = cudaSuccess;
    for (int j = 0; j < k; j++) {
        nvj_pic *p = &pics[d->idx[j]];
        d->data[j] = p->data;
        d->lens[j] = p->len;
        memset(&d->img[j], 0, sizeof d->img[j]);
        if (f == 0) {
            d->img[j].channel[0] = p->d_data;
            d->img[j].pitch[0] = p->pitch;
        } else {
            d->img[j].channel[0] = (unsigned char *)p->ycc_.y;
            d->img[j].channel[1] = (unsigned char *)p->ycc_.cb;
            d->img[j].channel[2] = (unsigned char *)p->ycc_.cr;
            d->img[j].pitch[0] = (size_t)p->ycc_.y_pitch;
            d->img[j].pitch[1] = d->img[j].pitch[2] = (size_t)p->ycc_.c_pitch;
        }
    }
    if (init_state(t, d, f, k, s))
        return 1;
    *s = d->batched(t->h, t->state[f], d->data, d->lens, d->img, d->stream);
    for (int j = 0; f == 1 && *s == NVJ_STATUS_SUCCESS && j < k && launch == cudaSuccess; j++) {
        nvj_pic *p = &pics[d->idx[j]];
        launch = jycc_rgb_gpu(&p->ycc_, p->d_data, p->pitch, d->stream);
    }
    /* wait for it either way: nvJPEG may have enqueued work before failing */
    e = cudaStreamSynchronize(d->stream);
    if (e != cudaSuccess || launch != cudaSuccess)
        return -1;
    return *s == NVJ_STATUS_SUCCESS ? 0 : 1;
}

int nvj_decode(nvj_dec *d, nvj_pic *pics, int n)
{
    int ret = 0;
    if (n > d->max_batch)
        n = d->max_batch;
    for (int i = 0; i < n; i++) {
        pics[i].ok = 0;
        pics[i].hardware = 0;
        pics[i].why[0] = 0;
        pics[i].d_data = NULL;
        pics[i].buf_ = 0;
    }
    /* four passes: (hardware, Y) (hardware, YUV) (hybrid, Y) (hybrid,
     * YUV); a file is screened again in each pass until one takes it
     * (a header parse: microseconds) */
    for (int pass = 0; pass < 4 && ret == 0; pass++) {
        const int t = pass / 2, f = pass % 2;
        struct nvj_tier *tier = &d->tier[t];
        int k = 0, r;
        nvj_status s = NVJ_STATUS_SUCCESS;
        if (!tier->h)
            continue;
        for (int i = 0; i < n; i++) {
            nvj_pic *p = &pics[i];
            int fmt = -1, pt = -1, b;
            if (p->why[0] || p->buf_)
                continue; /* refused already, or taken by an earlier pass */
            if (!screen(d, p, &fmt, &pt))
                continue;
            if (fmt != f || pt != t)
                continue;
            p->pitch = ALIGN_UP((size_t)p->width * p->channels);
            b = buf_get(d, pic_bytes(p));
            if (b < 0) {
                snprintf(p->why, sizeof p->why, "out of GPU memory for a %dx%d image",
                         p->width, p->height);
                continue;
            }
            p->buf_ = b + 1;
            p->d_data = d->bufs[b].d;
            if (p->channels == 3)
                place_planes(p);
            p->hardware = t == 0;
            d->idx[k++] = i;
        }
        if (!k)
            continue;
        r = run_batch(d, tier, pics, k, f, &s);
        if (r == 1 && k > 1) {
            /* one bad file fails the whole batch: find it, keep the rest */
            int *all = malloc((size_t)k * sizeof *all);
            if (all) {
                memcpy(all, d->idx, (size_t)k * sizeof *all);
                for (int j = 0; j < k && ret == 0; j++) {
                    nvj_pic *p = &pics[all[j]];
                    d->idx[0] = all[j];
                    r = run_batch(d, tier, pics, 1, f, &s);
                    if (r < 0)
                        ret = -1;
                    else if (r == 0)
                        p->ok = 1;
                    else
                        snprintf(p->why, sizeof p->why, "%s", status_name(s));
                }
                free(all);
                continue;
            }
        }
        if (r < 0) {
            ret = -1;
        } else {
            for (int j = 0; j < k; j++) {
                nvj_pic *p = &pics[d->idx[j]];
                if (r == 0)
                    p->ok = 1;
                else
                    snprintf(p->why, sizeof p->why, "%s", status_name(s));
            }
        }
    }
    for (int i = 0; i < n; i++) {
        if (ret < 0 && pics[i].ok) {
            pics[i].ok = 0;
            snprintf(pics[i].why, sizeof pics[i].why, "CUDA failure: %s",
                     cudaGetErrorString(cudaGetLastError()));
        }
        if (!pics[i].ok) {
            nvj_release(d, &pics[i]);
            if (!pics[i].why[0])
                snprintf(pics[i].why, sizeof pics[i].why, "not decoded");
        }
    }
    return ret;
}
