/*
 * vplan.c — how a video is decoded: NVDEC, software or both, and how much
 * is decoded ahead (see vplan.h).
 */
#include "vplan.h"

#include <unistd.h>

#include <libavutil/rational.h>

#include "util.h"

int vsrc_auto_nvdec(int sessions, long threads, double gpx)
{
    if (threads <= VS_AUTO_FEW_THREADS)
        return 1;
    return sessions >= VS_AUTO_SESSIONS && gpx >= VS_AUTO_GPX;
}

int vsrc_auto_may_nvdec(long threads, double gpx)
{
    /* the rule with every session the file could keep busy */
    return vsrc_auto_nvdec(VS_HW_DECODERS, threads > 0 ? threads : ge_cpu_count(),
                           gpx);
}

double vsrc_info_gpx(const vid_info *vi)
{
    double n = vi->nb_frames > 0 ? (double)vi->nb_frames
               : vi->duration > 0 && vi->frame_rate.num > 0
                   ? vi->duration * av_q2d(vi->frame_rate) : 0;
    return n * vi->width * vi->height / 1e9;
}

size_t vsrc_dev_budget(size_t free_bytes)
{
    size_t b = free_bytes / 8;
    if (b < VS_DEV_BUDGET_MIN)
        b = free_bytes / 4 < VS_DEV_BUDGET_MIN ? free_bytes / 4 : VS_DEV_BUDGET_MIN;
    if (b > VS_DEV_BUDGET_MAX)
        b = VS_DEV_BUDGET_MAX;
    return b > ((size_t)64 << 20) ? b : (size_t)64 << 20;
}

size_t vsrc_host_budget(size_t phys_bytes, int engines)
{
    size_t b = phys_bytes / VS_HOST_RAM_SHARE, each;
    if (phys_bytes == 0)
        b = VS_HOST_BUDGET_MIN; /* unknown: the minimum */
    else if (b < VS_HOST_BUDGET_MIN)
        b = phys_bytes / 4 < VS_HOST_BUDGET_MIN ? phys_bytes / 4 : VS_HOST_BUDGET_MIN;
    if (b > VS_HOST_BUDGET_MAX)
        b = VS_HOST_BUDGET_MAX;
    if (engines <= 1)
        return b;
    each = b / (size_t)engines;
    if (each < VS_HOST_ENGINE_MIN)
        each = b < VS_HOST_ENGINE_MIN ? b : VS_HOST_ENGINE_MIN;
    return each;
}

size_t vsrc_phys_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || psz <= 0)
        return 0;
    return (size_t)pages * (size_t)psz;
}

int vsrc_mix_sw(long threads, int *sw_threads)
{
    long left = threads - VS_MIX_KEEP;
    *sw_threads = VS_MIX_SW_THREADS;
    if (threads <= VS_AUTO_FEW_THREADS || left < VS_MIX_SW_THREADS)
        return 0;
    return left / VS_MIX_SW_THREADS < VS_MIX_MAX ? (int)(left / VS_MIX_SW_THREADS) : VS_MIX_MAX;
}
