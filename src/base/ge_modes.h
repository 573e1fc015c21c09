/*
 * ge_modes.h — enum ge_border and enum ge_canny, defined here and nowhere
 * else (DESIGN.md §8).  The engine and the kernels see them through edge.h;
 * the public include/gpuedge.h includes this file in the source tree, and
 * `make install` writes it into the installed gpuedge.h, which so stands
 * alone.  Plain C, no includes.
 */
#ifndef GPUEDGE_GE_MODES_H
#define GPUEDGE_GE_MODES_H

/* ge_options.border, --border (DESIGN.md §1.5) */
enum ge_border {
    GE_BORDER_REPLICATE = 0,  /* aaa|abcd|ddd: clamp to [0, n-1] (the default) */
    GE_BORDER_REFLECT101 = 1, /* cb|abcd|cb (OpenCV's default) */
    GE_BORDER_ZERO = 2        /* 0 outside the image */
};

/* ge_options.canny, --canny (DESIGN.md §1.8) */
enum ge_canny {
    GE_CANNY_OFF = 0,
    GE_CANNY_ON = 1,  /* canny_low, canny_high given */
    GE_CANNY_AUTO = 2 /* thresholds from each frame's own histogram */
};

#endif
