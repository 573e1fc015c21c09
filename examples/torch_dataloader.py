#!/usr/bin/env python3
"""Edge maps in a PyTorch input pipeline.

    python3 examples/torch_dataloader.py IN_DIR [--size 256] [--batch-size 32]
                                         [--workers 2] [--out OUT_DIR]

The DataLoader's workers decode the images (Pillow) and resize them to one
size, as a training pipeline does, giving uint8 H x W x 3 NumPy arrays;
the default collate stacks them into an N x H x W x 3 tensor (pinned when
a GPU is there).  The main process moves each batch to the GPU and makes
the N edge maps in one gpuedge call, zero-copy, on torch's current stream,
so the maps are ready for the model's next kernels without a host round
trip.  Without a GPU the same call runs on the CPU backend; workers
decode while it runs.  gpuedge's CPU threads default to the CPUs this
process may use (affinity, cgroup quota), so give the workers and the
main process their share with threads= if both are busy.
"""
import argparse
import os
import sys

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

import gpuedge

EXTS = (".png", ".jpg", ".jpeg", ".bmp", ".ppm", ".pgm", ".tif", ".tiff", ".webp")


class Images(Dataset):
    """The images of a folder, decoded to size x size RGB uint8 arrays."""

    def __init__(self, folder, size):
        self.paths = sorted(os.path.join(folder, f) for f in os.listdir(folder)
                            if f.lower().endswith(EXTS))
        self.size = size

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        from PIL import Image
        with Image.open(self.paths[i]) as im:
            im = im.convert("RGB")
            if self.size:
                im = im.resize((self.size, self.size), Image.BILINEAR)
            return np.asarray(im), i


def edge_batches(loader, device, **kw):
    """Yields (edge maps N x H x W uint8, histograms N x 256, indices)."""
    for images, idx in loader:
        images = images.to(device, non_blocking=True)
        maps, hists = gpuedge.edges(images, **kw)
        yield maps, hists, idx


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("input")
    ap.add_argument("--size", type=int, default=256, help="resize to SIZE x SIZE (0: keep; "
                    "then every image must have one size, or use --batch-size 1)")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--sigma", type=float, default=1.0)
    ap.add_argument("--out", help="write each map as OUT/NAME.pgm")
    args = ap.parse_args(argv)

    cuda = torch.cuda.is_available()
    device = torch.device("cuda" if cuda else "cpu")
    ds = Images(args.input, args.size)
    loader = DataLoader(ds, batch_size=args.batch_size, num_workers=args.workers,
                        pin_memory=cuda)
    n = 0
    for maps, hists, idx in edge_batches(loader, device, sigma=args.sigma):
        # ... the model would take `maps` here (on `device`) ...
        if args.out:
            os.makedirs(args.out, exist_ok=True)
            for m, i in zip(maps.cpu().numpy(), idx.tolist()):
                name = os.path.basename(ds.paths[i]) + ".pgm"
                with open(os.path.join(args.out, name), "wb") as f:
                    f.write(b"P5\n%d %d\n255\n" % (m.shape[1], m.shape[0]) + m.tobytes())
        n += len(idx)
    print("torch_dataloader: %d maps on %s" % (n, device), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
