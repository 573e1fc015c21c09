/*
 * bench_mkclip.c — makes the real-footage benchmark clips (issue #11) from
 * the 720p Big Buck Bunny clip: the input looped as often as needed, each
 * frame scaled to WxH by libswscale (bicubic, accurate rounding, bitexact),
 * encoded by libx264 at a fixed thread count and muxed into MP4 with the
 * bitexact flags.  FFmpeg's libraries only, the ones gpuedge itself links,
 * so the GPU machine (no ffmpeg program there, and no room in a device
 * call for both gpuedge's libraries and these clips) makes the same files
 * from the 1 MB source as tests/bench/fetch_realdata.sh makes here; the
 * bench prints each clip's sha256 so a run shows whether they matched.
 *
 *   bench_mkclip [-s WxH] [-n FRAMES] [-c CRF] [-p PRESET] [-g GOP]
 *                [-t THREADS] INPUT OUTPUT.mp4
 *   bench_mkclip -j N [-n FRAMES] INPUT OUTPUT.mp4
 *
 * -j N joins the input's video stream N times by stream copy (what
 * ffmpeg's concat demuxer with -c copy gives: the same packets, each copy's
 * timestamps after the last), or only its first FRAMES packets with -n: the
 * long and short clips of the batch benchmark (tests/bench/video_batch.sh)
 * made from bbb1080.mp4 without an ffmpeg program.
 *
 * Defaults: -s 1920x1080 -n 530 -c 28 -p medium -g 125 -t 4.  The frame
 * rate and time base are the input's.  Audio is dropped.  Writes
 * OUTPUT.tmp, then renames it; prints one line on success.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>

typedef struct clip_in {
    AVFormatContext *fmt;
    AVCodecContext *dec;
    int stream;
} clip_in;

static void in_close(clip_in *in)
{
    avcodec_free_context(&in->dec);
    avformat_close_input(&in->fmt);
}

static int in_open(clip_in *in, const char *name)
{
    const AVCodec *codec = NULL;
    int rc;

    memset(in, 0, sizeof *in);
    if ((rc = avformat_open_input(&in->fmt, name, NULL, NULL)) < 0 ||
        (rc = avformat_find_stream_info(in->fmt, NULL)) < 0 ||
        (rc = av_find_best_stream(in->fmt, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0)) < 0)
        goto end;
    in->stream = rc;
    if (!(in->dec = avcodec_alloc_context3(codec))) {
        rc = AVERROR(ENOMEM);
        goto end;
    }
    if ((rc = avcodec_parameters_to_context(in->dec, in->fmt->streams[rc]->codecpar)) < 0)
        goto end;
    in->dec->thread_count = 1; /* decoding order only; speed does not matter */
    rc = avcodec_open2(in->dec, codec, NULL);
end:
    if (rc < 0) {
        fprintf(stderr, "bench_mkclip: %s: cannot open: %s\n", name, av_err2str(rc));
        in_close(in);
    }
    return rc < 0 ? -1 : 0;
}

/* The next decoded frame of in into fr: 0, 1 at the end, -1 on error. */
static int in_next(clip_in *in, AVPacket *pkt, AVFrame *fr, int *draining)
{
    for (;;) {
        int rc = avcodec_receive_frame(in->dec, fr);
        if (rc == 0)
            return 0;
        if (rc == AVERROR_EOF)
            return 1;
        if (rc != AVERROR(EAGAIN))
            return -1;
        if (*draining)
            return 1;
        rc = av_read_frame(in->fmt, pkt);
        if (rc == AVERROR_EOF) {
            *draining = 1;
            if (avcodec_send_packet(in->dec, NULL) < 0)
                return -1;
            continue;
        }
        if (rc < 0)
            return -1;
        if (pkt->stream_index == in->stream)
            rc = avcodec_send_packet(in->dec, pkt);
        av_packet_unref(pkt);
        if (rc < 0 && rc != AVERROR(EAGAIN))
            return -1;
    }
}

static int write_packets(AVCodecContext *enc, AVFormatContext *ofmt, AVStream *st,
                         AVPacket *pkt, const AVFrame *frame)
{
    int rc = avcodec_send_frame(enc, frame);
    while (rc >= 0) {
        rc = avcodec_receive_packet(enc, pkt);
        if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF)
            return 0;
        if (rc < 0)
            break;
        if (pkt->duration <= 0)
            pkt->duration = 1; /* one frame: else MP4's edit list drops the last */
        av_packet_rescale_ts(pkt, enc->time_base, st->time_base);
        pkt->stream_index = st->index;
        rc = av_interleaved_write_frame(ofmt, pkt);
    }
    return rc;
}

/* -j: the first `frames` packets (all with frames < 1) of in's video
 * stream, `times` times, into out (MP4, bitexact), by stream copy. */
static int join(const char *in_name, const char *out_name, int times, int frames)
{
    AVFormatContext *in = NULL, *out = NULL;
    AVPacket *pkt = av_packet_alloc();
    AVStream *ist, *ost;
    char tmp[4096];
    int64_t span = 0;
    int vs, n = 0, rc;

    snprintf(tmp, sizeof tmp, "%s.tmp", out_name);
    if (!pkt)
        return AVERROR(ENOMEM);
    if ((rc = avformat_open_input(&in, in_name, NULL, NULL)) < 0 ||
        (rc = avformat_find_stream_info(in, NULL)) < 0 ||
        (rc = vs = av_find_best_stream(in, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0)) < 0 ||
        (rc = avformat_alloc_output_context2(&out, NULL, "mp4", tmp)) < 0)
        goto end;
    ist = in->streams[vs];
    if (!(ost = avformat_new_stream(out, NULL))) {
        rc = AVERROR(ENOMEM);
        goto end;
    }
    if ((rc = avcodec_parameters_copy(ost->codecpar, ist->codecpar)) < 0)
        goto end;
    ost->codecpar->codec_tag = 0;
    ost->time_base = ist->time_base;
    out->flags |= AVFMT_FLAG_BITEXACT;
    if ((rc = avio_open(&out->pb, tmp, AVIO_FLAG_WRITE)) < 0 ||
        (rc = avformat_write_header(out, NULL)) < 0)
        goto end;
    for (int t = 0; t < times; t++) {
        int k = 0;
        if (t) { /* each copy read from a fresh open: no seek to trust */
            avformat_close_input(&in);
            if ((rc = avformat_open_input(&in, in_name, NULL, NULL)) < 0 ||
                (rc = avformat_find_stream_info(in, NULL)) < 0)
                goto end;
        }
        while ((frames < 1 || k < frames) && (rc = av_read_frame(in, pkt)) >= 0) {
            if (pkt->stream_index != vs) {
                av_packet_unref(pkt);
                continue;
            }
            if (!t) { /* one copy's span: the last end of the first pass */
                int64_t e = pkt->pts + pkt->duration;
                span = e > span ? e : span;
            }
            pkt->pts += t * span;
            pkt->dts += t * span;
            pkt->stream_index = 0;
            pkt->pos = -1;
            av_packet_rescale_ts(pkt, ist->time_base, ost->time_base);
            if ((rc = av_interleaved_write_frame(out, pkt)) < 0)
                goto end;
            k++;
            n++;
        }
        if (rc < 0 && rc != AVERROR_EOF)
            goto end;
    }
    if ((rc = av_write_trailer(out)) < 0 || (rc = avio_closep(&out->pb)) < 0 ||
        (rc = rename(tmp, out_name) ? AVERROR(errno) : 0) < 0)
        goto end;
    printf("bench_mkclip: %s -> %s: %d packets (the input's %s joined %d times, stream "
           "copy)\n", in_name, out_name, n, frames > 0 ? "first packets" : "video", times);
end:
    if (rc < 0)
        fprintf(stderr, "bench_mkclip: %s: %s\n", in_name, av_err2str(rc));
    if (out && out->pb)
        avio_closep(&out->pb);
    if (rc < 0)
        remove(tmp);
    avformat_free_context(out);
    avformat_close_input(&in);
    av_packet_free(&pkt);
    return rc < 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
    int W = 1920, H = 1080, frames = 530, crf = 28, gop = 125, threads = 4, opt;
    const char *preset = "medium";
    char tmp[4096] = "", num[32];
    clip_in in = {0};
    AVFormatContext *ofmt = NULL;
    AVCodecContext *enc = NULL;
    const AVCodec *x264;
    AVStream *st;
    AVPacket *pkt = av_packet_alloc();
    AVFrame *fr = av_frame_alloc(), *sc = av_frame_alloc();
    struct SwsContext *sws = NULL;
    AVRational rate;
    int n = 0, loops = 0, rc = -1, draining = 0, joins = 0, nset = 0;

    av_log_set_level(AV_LOG_ERROR); /* x264's statistics are noise here */
    while ((opt = getopt(argc, argv, "s:n:c:p:g:t:j:")) != -1) {
        switch (opt) {
        case 's':
            if (sscanf(optarg, "%dx%d", &W, &H) != 2 || W < 16 || H < 16 || (W | H) & 1)
                goto usage;
            break;
        case 'n': frames = atoi(optarg); nset = 1; break;
        case 'j': joins = atoi(optarg); break;
        case 'c': crf = atoi(optarg); break;
        case 'p': preset = optarg; break;
        case 'g': gop = atoi(optarg); break;
        case 't': threads = atoi(optarg); break;
        default: goto usage;
        }
    }
    if (argc - optind != 2 || frames < 1 || gop < 1 || threads < 1 || joins < 0)
        goto usage;
    if (joins) {
        rc = join(argv[optind], argv[optind + 1], joins, nset ? frames : 0);
        goto end;
    }
    if (!pkt || !fr || !sc)
        goto oom;
    if (in_open(&in, argv[optind]))
        goto end;
    rate = av_guess_frame_rate(in.fmt, in.fmt->streams[in.stream], NULL);
    if (rate.num <= 0 || rate.den <= 0)
        rate = (AVRational){25, 1};

    snprintf(tmp, sizeof tmp, "%s.tmp", argv[optind + 1]);
    if ((rc = avformat_alloc_output_context2(&ofmt, NULL, "mp4", tmp)) < 0)
        goto averr;
    if (!(x264 = avcodec_find_encoder_by_name("libx264"))) {
        fprintf(stderr, "bench_mkclip: libavcodec has no libx264\n");
        goto end;
    }
    if (!(st = avformat_new_stream(ofmt, NULL)) || !(enc = avcodec_alloc_context3(x264)))
        goto oom;
    enc->width = W;
    enc->height = H;
    enc->pix_fmt = AV_PIX_FMT_YUV420P;
    enc->time_base = av_inv_q(rate);
    enc->framerate = rate;
    enc->gop_size = gop;
    enc->thread_count = threads; /* x264's output depends on it: fixed */
    enc->flags |= AV_CODEC_FLAG_BITEXACT;
    if (ofmt->oformat->flags & AVFMT_GLOBALHEADER)
        enc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    snprintf(num, sizeof num, "%d", crf);
    if (av_opt_set(enc->priv_data, "preset", preset, 0) < 0 ||
        av_opt_set(enc->priv_data, "crf", num, 0) < 0) {
        fprintf(stderr, "bench_mkclip: libx264: bad preset or crf\n");
        goto end;
    }
    if ((rc = avcodec_open2(enc, x264, NULL)) < 0 ||
        (rc = avcodec_parameters_from_context(st->codecpar, enc)) < 0)
        goto averr;
    st->time_base = enc->time_base;
    ofmt->flags |= AVFMT_FLAG_BITEXACT;
    if ((rc = avio_open(&ofmt->pb, tmp, AVIO_FLAG_WRITE)) < 0 ||
        (rc = avformat_write_header(ofmt, NULL)) < 0)
        goto averr;

    sc->format = AV_PIX_FMT_YUV420P;
    sc->width = W;
    sc->height = H;
    if (av_frame_get_buffer(sc, 0) < 0)
        goto oom;
    while (n < frames) {
        int got = in_next(&in, pkt, fr, &draining);
        if (got < 0) {
            fprintf(stderr, "bench_mkclip: %s: decode error\n", argv[optind]);
            goto end;
        }
        if (got == 1) { /* end of the input: start it again */
            if (n == 0) {
                fprintf(stderr, "bench_mkclip: %s: no frames\n", argv[optind]);
                goto end;
            }
            in_close(&in);
            draining = 0;
            loops++;
            if (in_open(&in, argv[optind]))
                goto end;
            continue;
        }
        sws = sws_getCachedContext(sws, fr->width, fr->height, fr->format, W, H,
                                   AV_PIX_FMT_YUV420P,
                                   SWS_BICUBIC | SWS_ACCURATE_RND | SWS_BITEXACT,
                                   NULL, NULL, NULL);
        if (!sws || av_frame_make_writable(sc) < 0)
            goto oom;
        sws_scale(sws, (const uint8_t *const *)fr->data, fr->linesize, 0, fr->height,
                  sc->data, sc->linesize);
        av_frame_unref(fr);
        sc->pts = n++;
        if ((rc = write_packets(enc, ofmt, st, pkt, sc)) < 0)
            goto averr;
    }
    if ((rc = write_packets(enc, ofmt, st, pkt, NULL)) < 0 ||
        (rc = av_write_trailer(ofmt)) < 0 || (rc = avio_closep(&ofmt->pb)) < 0)
        goto averr;
    if (rename(tmp, argv[optind + 1])) {
        perror("bench_mkclip: rename");
        goto end;
    }
    printf("bench_mkclip: %s -> %s %dx%d: %d frames (input played %d times), x264 %s "
           "crf %d gop %d threads %d\n", argv[optind], argv[optind + 1], W, H, n,
           loops + 1, preset, crf, gop, threads);
    rc = 0;
    goto end;
usage:
    fprintf(stderr, "usage: bench_mkclip [-s WxH] [-n FRAMES] [-c CRF] [-p PRESET] "
                    "[-g GOP] [-t THREADS] INPUT OUTPUT.mp4\n"
                    "       bench_mkclip -j N [-n FRAMES] INPUT OUTPUT.mp4\n");
    rc = 2;
    goto end;
oom:
    fprintf(stderr, "bench_mkclip: out of memory\n");
    rc = -1;
    goto end;
averr:
    fprintf(stderr, "bench_mkclip: %s: %s\n", tmp, av_err2str(rc));
    rc = -1;
end:
    if (ofmt && ofmt->pb)
        avio_closep(&ofmt->pb);
    if (rc && tmp[0])
        remove(tmp);
    avformat_free_context(ofmt);
    avcodec_free_context(&enc);
    in_close(&in);
    sws_freeContext(sws);
    av_frame_free(&fr);
    av_frame_free(&sc);
    av_packet_free(&pkt);
    return rc == 2 ? 2 : rc ? 1 : 0;
}
