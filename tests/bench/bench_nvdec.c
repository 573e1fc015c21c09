/*
 * bench_nvdec.c — several NVDEC sessions at once in one process (issue 11:
 * "many decoders at once"): K threads each open the same clip with the
 * project's reader (vid_open with vid_opts.hwdec, so each has its own CUDA
 * device context, copy stream and NVDEC decoder) and decode it to the end,
 * every device frame released once its `ready` event completed (no kernel
 * reads it: this is the decode floor of the GPU engine's source).  Also
 * the software decoders for comparison (-s: K readers, THREADS/K libav
 * threads each).
 *
 *   bench_nvdec [-s] [-t THREADS] [-d DEVICE] INPUT K...
 *
 * One line a K: "bench_nvdec: nvdec K=4: 1200 frames (1200 on the GPU) in
 * 0.812 s = 1478 fps, 369 fps a session", then one line a session in
 * the order their first frames came: when vid_open returned, the first
 * and the last frame came (ms since the K threads started), and the rate
 * after the first frame.  Exit 1 if any reader failed,
 * or (NVDEC) if a frame did not come from NVDEC.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "frames.h"
#include "gpu.h"
#include "hwdec.h"
#include "util.h"
#include "video_io.h"

typedef struct job {
    const char *path;
    vid_opts o;
    long frames, on_gpu;
    int failed;
    /* seconds since the K sessions' common start: vid_open returned, the
     * first frame came, the last one did (the sessions' start-up order and
     * their steady rate: BENCHMARKS "fixed costs") */
    double t0, t_open, t_first, t_end;
} job;

static void *worker(void *arg)
{
    job *j = arg;
    vid_reader *r = NULL;
    host_buf buf = {0};
    src_frame fr;
    int k;
    if (vid_open(j->path, &j->o, &r)) {
        j->failed = 1;
        return NULL;
    }
    j->t_open = ge_now() - j->t0;
    while ((k = vid_next(r, &fr, &buf)) == 1) {
        if (!j->frames)
            j->t_first = ge_now() - j->t0;
        if (fr.on_device) {
            j->on_gpu++;
            if (fr.ready && cudaEventSynchronize((cudaEvent_t)fr.ready) != cudaSuccess)
                j->failed = 1;
            src_frame_release(&fr);
        }
        j->frames++;
    }
    if (k < 0)
        j->failed = 1;
    j->t_end = ge_now() - j->t0;
    vid_close(&r);
    host_buf_free(&buf);
    return NULL;
}

int main(int argc, char **argv)
{
    int c, soft = 0, threads = 0, device = 0, bad = 0;
    gpu_info gi;
    while ((c = getopt(argc, argv, "st:d:")) != -1) {
        switch (c) {
        case 's': soft = 1; break;
        case 't': threads = atoi(optarg); break;
        case 'd': device = atoi(optarg); break;
        default:
            fprintf(stderr, "usage: bench_nvdec [-s] [-t THREADS] [-d DEVICE] INPUT K...\n");
            return 2;
        }
    }
    if (argc - optind < 2) {
        fprintf(stderr, "usage: bench_nvdec [-s] [-t THREADS] [-d DEVICE] INPUT K...\n");
        return 2;
    }
    double tp = ge_now();
    if (!soft && gpu_probe(device, &gi)) {
        printf("skip bench_nvdec: %s\n", ge_why());
        return 0;
    }
    if (!soft)
        printf("bench_nvdec: CUDA's start (gpu_probe) %.1f ms\n", 1e3 * (ge_now() - tp));
    if (threads <= 0)
        threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    for (int a = optind + 1; a < argc; a++) {
        int K = atoi(argv[a]);
        job *jobs;
        pthread_t *th;
        long frames = 0, on_gpu = 0;
        int failed = 0;
        double t0, dt;
        if (K < 1 || K > 64)
            continue;
        jobs = calloc((size_t)K, sizeof *jobs);
        th = calloc((size_t)K, sizeof *th);
        if (!jobs || !th)
            return 1;
        for (int i = 0; i < K; i++) {
            jobs[i].path = argv[optind];
            jobs[i].o.max_frames = -1;
            jobs[i].o.hwdec = soft ? VID_HWDEC_NONE : VID_HWDEC_NVDEC;
            jobs[i].o.device = device;
            /* NVDEC: the engine bounds it, 1 thread is as fast (BENCHMARKS) */
            jobs[i].o.threads = soft ? (threads / K > 0 ? threads / K : 1) : 1;
        }
        t0 = ge_now();
        for (int i = 0; i < K; i++) {
            jobs[i].t0 = t0;
            jobs[i].t_first = -1;
        }
        for (int i = 0; i < K; i++)
            if (pthread_create(&th[i], NULL, worker, &jobs[i]))
                return 1;
        for (int i = 0; i < K; i++) {
            pthread_join(th[i], NULL);
            frames += jobs[i].frames;
            on_gpu += jobs[i].on_gpu;
            failed |= jobs[i].failed;
        }
        dt = ge_now() - t0;
        printf("bench_nvdec: %s K=%d: %ld frames (%ld on the GPU) in %.3f s = %.0f fps, %.0f fps a "
               "session%s\n", soft ? "software" : "nvdec", K, frames, on_gpu, dt, frames / dt,
               frames / dt / K, failed ? " (FAILED)" : "");
        /* each session, in the order its first frame came */
        for (int n = 0; n < K; n++) {
            int b = -1;
            for (int i = 0; i < K; i++)
                if (jobs[i].t_first >= 0 && (b < 0 || jobs[i].t_first < jobs[b].t_first))
                    b = i;
            if (b < 0)
                break;
            job *j = &jobs[b];
            printf("  session %d: open %.1f ms, first frame %.1f ms, last %.1f ms: %ld frames, "
                   "%.0f fps after the first\n", b, 1e3 * j->t_open, 1e3 * j->t_first,
                   1e3 * j->t_end, j->frames,
                   j->frames > 1 && j->t_end > j->t_first
                       ? (double)(j->frames - 1) / (j->t_end - j->t_first) : 0.0);
            j->t_first = -1;
        }
        fflush(stdout);
        bad |= failed || (!soft && on_gpu != frames);
        free(jobs);
        free(th);
    }
    return bad ? 1 : 0;
}
