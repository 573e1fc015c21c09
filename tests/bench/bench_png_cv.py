#!/usr/bin/env python3
"""bench_png_cv.py [-r REPS] MAP... -- cv2.imencode('.png') on edge maps.

OpenCV's PNG at its defaults (IMWRITE_PNG_COMPRESSION 1, zlib, its own
strategy), one thread, in memory: the peer of tests/bin/bench_png.  Prints
one line per map (median wall ms of REPS, bytes, median CPU ms) in
bench_png's columns, then a
total line.
"""
import os
import sys
import time

import cv2

reps = 5
args = sys.argv[1:]
if len(args) >= 2 and args[0] == "-r":
    reps = int(args[1])
    args = args[2:]
cv2.setNumThreads(1)
tot_ms = tot_cpu = tot_b = tot_px = 0
print("# cv2 %s imencode('.png'): median of %d" % (cv2.__version__, reps))
for f in args:
    im = cv2.imread(f, cv2.IMREAD_UNCHANGED)
    if im is None or im.ndim != 2:
        sys.exit("bench_png_cv: %s: not a grey image" % f)
    ms, cms = [], []
    for _ in range(reps):
        t, c = time.perf_counter(), time.process_time()
        ok, b = cv2.imencode(".png", im)
        ms.append((time.perf_counter() - t) * 1e3)
        cms.append((time.process_time() - c) * 1e3)
    ms.sort()
    cms.sort()
    m, cm = ms[len(ms) // 2], cms[len(cms) // 2]
    tot_ms += m
    tot_cpu += cm
    tot_b += len(b)
    tot_px += im.size
    print("%-36s %9.2f %6s %5s %3d %9.2f %10d %9.2f" % (os.path.basename(f), im.size / 1e6,
                                                        "cv2", "1", 1, m, len(b), cm))
print("total %-30s %9.2f %6s %5s %3d %9.2f %10d %9.2f" % ("", tot_px / 1e6, "cv2", "1", 1,
                                                          tot_ms, tot_b, tot_cpu))
