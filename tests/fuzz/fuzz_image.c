/*
 * fuzz_image.c — libFuzzer harness for the image loader: img_load_mem
 * (our PNM fix-ups, size checks, then stb_image compiled by us with the
 * same sanitizers), and on success the CPU reference pipeline on images up
 * to FUZZ_REF_MAX_PX pixels.  Links no CUDA.  See docs/RELIABILITY.md.
 */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_common.h"
#include "image_io.h"
#include "util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    ge_quiet = 1;
    /* Images up to 4 MiB of decoding: larger ones are refused up front
     * (their memory is the same code path at a larger size), which keeps
     * a run inside libFuzzer's 2 GiB RSS limit and 10 s timeout under
     * ASan.  The default limit (INT_MAX) is tested in tests/unit. */
    img_set_decode_limit((size_t)4 << 20);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    img_image img;
    if (img_load_mem(data, size, "fuzz", &img) != 0) {
        /* a failure leaves nothing behind */
        if (img.pixels || img.width || img.height)
            abort();
        return 0;
    }
    if (!img.pixels || img.width < 1 || img.height < 1 || img.channels < 1 ||
        img.channels > 4 ||
        (img.bytes_per_sample != 1 && img.bytes_per_sample != 2))
        abort();
    {
        ge_frame f = img_as_frame(&img);
        /* the last byte picks the parameters (often outside the image
         * data, so the decoded pixels stay the same) */
        fuzz_reference(&f, size ? data[size - 1] : 0);
    }
    img_free(&img);
    return 0;
}
