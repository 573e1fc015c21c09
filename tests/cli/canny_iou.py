"""canny_iou.py — OpenCV agreement for tests/cli/canny.sh.

    python3 canny_iou.py PREFIX W H LOW HIGH

PREFIX.gx / PREFIX.gy are the CPU reference's Sobel gradients (float32,
W*H, from tests/bin/canny_dump), PREFIX.edge its Canny map.  cv2.Canny gets
those gradients times 8 rounded to int16 (three fraction bits, so rounding
moves few non-maximum-suppression ties) with thresholds 8*LOW, 8*HIGH and
L2gradient=True.  Prints "IOU N_OURS N_CV" (edge-set intersection over
union), or "skip: WHY" when OpenCV is missing.
"""
import sys

try:
    import numpy as np
    import cv2
except ImportError as e:  # the caller turns this into a skip line
    print("skip: %s" % e)
    sys.exit(0)

prefix, w, h, low, high = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
    float(sys.argv[4]), float(sys.argv[5])
gx = np.fromfile(prefix + ".gx", dtype=np.float32).reshape(h, w)
gy = np.fromfile(prefix + ".gy", dtype=np.float32).reshape(h, w)
ours = np.fromfile(prefix + ".edge", dtype=np.uint8).reshape(h, w)
if set(np.unique(ours)) - {0, 255}:
    print("error: our map has values other than 0 and 255")
    sys.exit(1)
dx = np.clip(np.rint(gx * 8.0), -32768, 32767).astype(np.int16)
dy = np.clip(np.rint(gy * 8.0), -32768, 32767).astype(np.int16)
cv = cv2.Canny(dx, dy, 8.0 * low, 8.0 * high, L2gradient=True)
a, b = ours > 0, cv > 0
union = int(np.count_nonzero(a | b))
inter = int(np.count_nonzero(a & b))
iou = inter / union if union else 1.0
print("%.4f %d %d" % (iou, int(a.sum()), int(b.sum())))
