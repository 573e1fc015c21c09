/*
 * stb_impl.c — the one place stb_image and stb_image_write are compiled,
 * from Debian's headers (libstb-dev, /usr/include/stb), with our settings.
 * We build the implementation ourselves rather than link libstb.so so that
 * sanitizers and fuzzers see inside the decoders, and so the limits below
 * are ours.  Nothing is vendored: see VERSIONS.md.
 *
 * Settings, and why:
 *  - STBI_MAX_DIMENSIONS: stb's default is 1 << 24 per side; no real image
 *    is a million pixels on a side, while a corrupt header claiming one is
 *    common.  image_io.c separately refuses a decoded size above INT_MAX
 *    bytes (stb's own ceiling) before asking stb to allocate it.
 *  - Failure strings stay on (the short ones: image_io.c maps them to
 *    friendlier text); STBI_FAILURE_USERMSG stays off so the mapping sees
 *    stable keys.  stb keeps the reason in a thread-local under C11.
 *  - STBI_WRITE_NO_STDIO: stb's file writers ignore fwrite/fclose errors
 *    (DESIGN.md §6).  Only the *_to_func writers exist, and image_io.c feeds
 *    them to safeout's checked writer; a call to stbi_write_png(FILE) is a
 *    link error on purpose.
 *  - -fwrapv (by pragma, so the Makefile needs no special rule): stb
 *    assumes two's-complement wrap-around, e.g. the JPEG writer's bit
 *    buffer shifts a positive int past bit 31, which UBSan (make test
 *    SANITIZE=1, -fno-sanitize-recover) would abort on.  Defining the
 *    behaviour keeps the sanitizers on for everything else in stb.
 *  - imgstb_clear_reason: stb sets its failure reason only where it fails
 *    with one, and some failures (a malloc in its zlib) have none: cleared
 *    before a decode, a reason left from stbi_info's format tests (every
 *    PNG leaves JPEG's "no SOI") cannot be taken for the decode's.
 *  - stb_image keeps stdio: img_probe uses stbi_info(path), which reads
 *    only the header.  img_load reads the file itself (precise errno) and
 *    decodes from memory.
 *  - STBI_MALLOC/REALLOC/FREE are src/base/bigbuf's, as every decoder's
 *    pixels are: img_free frees them all one way, and a batch's buffers
 *    are reused (DESIGN.md §4).
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("wrapv")
#endif

#include <stdlib.h>

#include "bigbuf.h"

#define STBI_MAX_DIMENSIONS (1 << 20)
#define STBI_MALLOC(n) bb_alloc(n)
#define STBI_REALLOC(p, n) bb_realloc(p, n)
#define STBI_FREE(p) bb_free(p)
#define STB_IMAGE_IMPLEMENTATION
#include <stb_image.h>

#define STBI_WRITE_NO_STDIO
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>

void imgstb_clear_reason(void);
void imgstb_clear_reason(void)
{
    stbi__g_failure_reason = NULL;
}
