#!/usr/bin/env python3
# make bench, the real-photo batch step (issue #10 part 7): one folder of
# real photos (tests/bench/fetch_realdata.sh: mate-backgrounds, JPEG and
# PNG up to 5640x3172) through
#   - gpuedge -q -y --backend=gpu|cpu -o DIR PHOTOS...   (PNG out)
#   - the OpenCV script tests/bench/cv_photos.py (one process per core:
#     cv2.imread -> gpuedge's default math in float32 -> cv2.imwrite PNG)
#   - ffmpeg -i IMG -vf format=gray,gblur=sigma=1,sobel OUT.png, one job
#     per core (its own blur and Sobel scaling: a speed peer, not compared)
# Each run is a whole process (start-up, CUDA init included), timed from
# outside; the best of --runs.  Reported: wall, Mpx/s, output bytes, and
# gpuedge's max |delta| and share of differing pixels against the OpenCV
# script's maps, photo by photo.  A short table comes last.
#
#   photos.py [--gpuedge BIN] [--ffmpeg BIN|none] [--jobs N] [--runs N]
#             [--backends gpu,cpu] [--no-opencv] [--work DIR] [--log DIR]
#             PHOTO_DIR|PHOTO...
# Exit 0 when every run that could run succeeded (a GPU run without a GPU
# is "skip", not a failure); 1 otherwise.
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
EXTS = (".jpg", ".jpeg", ".png", ".webp", ".tif", ".tiff", ".bmp", ".pgm", ".ppm")


def photos_of(args):
    out = []
    for a in args:
        if os.path.isdir(a):
            out += [os.path.join(a, f) for f in sorted(os.listdir(a))
                    if f.lower().endswith(EXTS)]
        else:
            out.append(a)
    return out


def dir_bytes(d):
    return sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d)) if os.path.isdir(d) else 0


def timed(cmd, log, env=None):
    """Runs cmd (a list); returns (rc, seconds). Output goes to log."""
    t0 = time.perf_counter()
    with open(log, "ab") as f:
        f.write(("$ " + " ".join(cmd) + "\n").encode())
        f.flush()
        rc = subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT, env=env)
    return rc, time.perf_counter() - t0


def ffmpeg_batch(ffmpeg, photos, outdir, jobs, log):
    """ffmpeg -i IMG -vf format=gray,gblur=sigma=1,sobel OUT.png, jobs at a time."""
    os.makedirs(outdir, exist_ok=True)
    order = sorted(photos, key=lambda p: -os.path.getsize(p))
    t0 = time.perf_counter()
    running, rc = [], 0
    with open(log, "ab") as f:
        for p in order:
            while len(running) >= jobs:
                done = [r for r in running if r.poll() is not None]
                if not done:
                    time.sleep(0.002)
                    continue
                for r in done:
                    rc |= r.returncode
                    running.remove(r)
            out = os.path.join(outdir, os.path.splitext(os.path.basename(p))[0] + ".png")
            running.append(subprocess.Popen(
                [ffmpeg, "-nostdin", "-v", "error", "-y", "-i", p, "-vf",
                 "format=gray,gblur=sigma=1,sobel", out], stdout=f, stderr=subprocess.STDOUT))
        for r in running:
            rc |= r.wait()
    return rc, time.perf_counter() - t0


def compare_dirs(cv2, np, ref_dir, got_dir, names):
    """Per photo (max |d|, differing px, px); None where a map is missing."""
    res = {}
    for n in names:
        a = cv2.imread(os.path.join(ref_dir, n), cv2.IMREAD_UNCHANGED)
        b = cv2.imread(os.path.join(got_dir, n), cv2.IMREAD_UNCHANGED)
        if a is None or b is None or a.shape != b.shape:
            res[n] = None
            continue
        d = np.abs(a.astype(np.int16) - b.astype(np.int16))
        res[n] = (int(d.max()), int(np.count_nonzero(d)), d.size)
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--gpuedge", default=os.environ.get("GPUEDGE", "./gpuedge"))
    ap.add_argument("--ffmpeg", default=os.environ.get("FFMPEG", "ffmpeg"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--backends", default="gpu,cpu")
    ap.add_argument("--no-opencv", action="store_true")
    ap.add_argument("--gpuedge-args", default="", help="extra gpuedge options")
    ap.add_argument("--work", help="scratch folder (kept); default a temporary one")
    ap.add_argument("--log", help="folder for the logs (default: the scratch folder)")
    ap.add_argument("photos", nargs="+")
    a = ap.parse_args()

    photos = photos_of(a.photos)
    if not photos:
        print("skip photos: no photos in %s (run tests/bench/fetch_realdata.sh)"
              % " ".join(a.photos))
        return 0
    stems = [os.path.splitext(os.path.basename(p))[0] for p in photos]
    if len(set(stems)) != len(stems):
        print("photos.py: two photos share a name stem", file=sys.stderr)
        return 1
    names = [s + ".png" for s in stems]
    try:
        import cv2
        import numpy as np
    except ImportError as e:
        cv2 = np = None
        print("note: no cv2/numpy (%s): no OpenCV run, no |delta|" % e)
    mpx = 0.0
    fmt = {}
    for p in photos:
        ext = os.path.splitext(p)[1].lower().lstrip(".")
        fmt[ext] = fmt.get(ext, 0) + 1
    try:
        from PIL import Image  # the header only
        for p in photos:
            with Image.open(p) as im:
                mpx += im.size[0] * im.size[1] / 1e6
    except (ImportError, OSError):
        mpx = 0.0
        for p in photos:
            im = cv2.imread(p, cv2.IMREAD_UNCHANGED) if cv2 is not None else None
            if im is not None:
                mpx += im.shape[0] * im.shape[1] / 1e6
    in_bytes = sum(os.path.getsize(p) for p in photos)
    work = a.work or tempfile.mkdtemp(prefix="gpuedge-photos.")
    os.makedirs(work, exist_ok=True)
    logd = a.log or work
    os.makedirs(logd, exist_ok=True)
    log = os.path.join(logd, "photos.log")
    print("# photos: %d files (%s), %.1f Mpx, %.1f MB in; %d jobs; best of %d run(s); "
          "logs in %s" % (len(photos), ", ".join("%d %s" % (v, k) for k, v in sorted(fmt.items())),
                          mpx, in_bytes / 1e6, a.jobs, a.runs, log))
    sys.stdout.flush()
    rows, bad = [], 0

    again = []  # (row index, runner): the later rounds, interleaved

    def best_of(run_once):
        """The first run now; the other --runs - 1 come in rounds over all
        the runs after the first pass (a busy machine's load then falls on
        every tool alike)."""
        rc, s = run_once()
        if rc == 0:
            again.append((len(rows), run_once))
        return rc, s

    # --- the OpenCV script first: its maps are the reference for |delta| ---
    cvdir = os.path.join(work, "opencv")
    cv_s = None
    if cv2 is not None and not a.no_opencv:
        def run_cv():
            shutil.rmtree(cvdir, ignore_errors=True)
            return timed([sys.executable, os.path.join(HERE, "cv_photos.py"), "--jobs",
                          str(a.jobs), cvdir] + photos, log)
        rc, s = best_of(run_cv)
        if rc == 0:
            cv_s = s
            rows.append(("OpenCV script (%d processes)" % a.jobs, s, dir_bytes(cvdir), None))
        else:
            print("not ok photos: cv_photos.py rc=%d (see %s)" % (rc, log))
            bad += 1

    # --- gpuedge ---------------------------------------------------------------
    extra = a.gpuedge_args.split()
    # an entry is a backend, optionally with options: gpu:--jpeg-decoder=nvjpeg
    for entry in [b for b in a.backends.split(",") if b]:
        be, _, more = entry.partition(":")
        opts = ["--backend=" + be] + more.split() + extra
        tag = "".join(c if c.isalnum() else "-" for c in entry)
        gdir = os.path.join(work, "gpuedge-" + tag)

        # defaults bind this entry's values: the later rounds call it again
        def run_ge(gdir=gdir, opts=opts):
            shutil.rmtree(gdir, ignore_errors=True)
            return timed([a.gpuedge, "-q", "-y"] + opts + ["-o", gdir] + photos, log)
        rc, s = best_of(run_ge)
        if rc != 0:
            if be == "gpu":
                # no GPU here: the CPU machine's run is not a failure
                p = subprocess.run([a.gpuedge, "-q", "-y", "--backend=gpu", photos[0],
                                    os.path.join(work, "probe.pgm")],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   universal_newlines=True)
                msg = (p.stdout.strip().splitlines() or [""])[-1]
                if p.returncode != 0:
                    print("skip photos gpuedge --backend=gpu: %s" % msg)
                    continue
            print("not ok photos: gpuedge %s rc=%d (see %s)" % (" ".join(opts), rc, log))
            bad += 1
            continue
        # a second run with --report for the stage split (not timed)
        rep = os.path.join(logd, "photos-report-%s.txt" % tag)
        subprocess.call([a.gpuedge, "-q", "-y", "--report", "--report-file", rep] + opts +
                        ["-o", gdir + ".rep"] + photos,
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(gdir + ".rep", ignore_errors=True)
        delta = None
        if cv2 is not None and cv_s is not None:
            delta = compare_dirs(cv2, np, cvdir, gdir, names)
            with open(log, "a") as f:
                f.write("# gpuedge %s vs OpenCV, photo by photo (max |d|, "
                        "differing px, px):\n" % " ".join(opts))
                for n in names:
                    f.write("  %s %s\n" % (n, delta[n]))
        rows.append(("gpuedge " + " ".join(opts[:len(opts) - len(extra)]), s, dir_bytes(gdir),
                     delta))

    # --- ffmpeg, one job per core ----------------------------------------------
    if a.ffmpeg != "none" and shutil.which(a.ffmpeg):
        fdir = os.path.join(work, "ffmpeg")

        def run_ff():
            shutil.rmtree(fdir, ignore_errors=True)
            return ffmpeg_batch(a.ffmpeg, photos, fdir, a.jobs, log)
        rc, s = best_of(run_ff)
        if rc == 0:
            rows.append(("ffmpeg gblur+sobel (%d jobs)" % a.jobs, s, dir_bytes(fdir), None))
        else:
            print("not ok photos: ffmpeg rc=%d (see %s)" % (rc, log))
            bad += 1
    else:
        print("skip photos ffmpeg: %s" % ("--ffmpeg none" if a.ffmpeg == "none"
                                           else a.ffmpeg + " not found"))

    for _ in range(a.runs - 1):
        for i, fn in again:
            rc, s = fn()
            if rc != 0:
                print("not ok photos: %s failed on a later run (rc=%d)" % (rows[i][0], rc))
                bad += 1
            elif s < rows[i][1]:
                rows[i] = (rows[i][0], s) + tuple(rows[i][2:])

    # --- the table ---------------------------------------------------------------
    print()
    print("| photos: %d, %.1f Mpx | wall s | Mpx/s | PNG MB | x OpenCV | bytes / OpenCV's "
          "| max abs delta vs OpenCV | px differing |" % (len(photos), mpx))
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    cv_s = next((r[1] for r in rows if r[0].startswith("OpenCV")), None)  # the best run
    cv_b = next((r[2] for r in rows if r[0].startswith("OpenCV")), None)
    for name, s, nb, delta in rows:
        x = "%.2f" % (cv_s / s) if cv_s else "-"
        xb = "%.3f" % (nb / cv_b) if cv_b else "-"
        if delta:
            ok = [v for v in delta.values() if v]
            miss = len(delta) - len(ok)
            dmax = max((v[0] for v in ok), default=0)
            nd = sum(v[1] for v in ok)
            npx = sum(v[2] for v in ok) or 1
            dtxt = "%d%s" % (dmax, " (%d maps missing)" % miss if miss else "")
            ptxt = "%.3f %%" % (100.0 * nd / npx)
            if miss:
                bad += 1
        else:
            dtxt = ptxt = "-"
        print("| %s | %.3f | %.1f | %.2f | %s | %s | %s | %s |"
              % (name, s, mpx / s if s else 0, nb / 1e6, x, xb, dtxt, ptxt))
    # JPEG pixels depend on the decoder (DESIGN.md §1.9), PNG's do not: by format
    for name, s, nb, delta in rows:
        if not delta:
            continue
        parts = []
        for ext in sorted(fmt):
            vs = [delta[n] for n, p in zip(names, photos)
                  if os.path.splitext(p)[1].lower().lstrip(".") == ext and delta[n]]
            if vs:
                parts.append("%s: max %d, %.3f %% of px" % (
                    ext, max(v[0] for v in vs),
                    100.0 * sum(v[1] for v in vs) / (sum(v[2] for v in vs) or 1)))
        print("# %s vs OpenCV by format: %s" % (name, "; ".join(parts)))
    if os.environ.get("BENCH_RESULTS"):  # the CSV tests/bench/plot.py reads
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from plot import append_result
        for name, s, nb, delta in rows:
            append_result(os.environ["BENCH_RESULTS"], time.strftime("%Y-%m-%d", time.gmtime()),
                          "%s, %d cores" % (os.uname().nodename, os.cpu_count()), "photos",
                          "%d photos to PNG (%.1f Mpx)" % (len(photos), mpx), name, "%.3f" % s,
                          "s", "tests/bench/photos.py")
    print("RESULT photos " + " ".join("%s=%.3f" % (r[0].split(" (")[0].replace(" ", "_"), r[1])
                                      for r in rows))
    if not a.work:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
