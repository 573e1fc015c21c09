#!/usr/bin/env python3
"""Edge maps of a folder of images with Ray Data: the way past one machine.

    python3 examples/ray_edges.py IN_DIR OUT_DIR [--backend auto|gpu|cpu]
                                  [--batch-size 16] [--local]

ray.data.read_images decodes the images on the cluster's CPUs; a callable
class (one gpuedge context per actor, reused for every batch) computes the
maps with map_batches, on a GPU (num_gpus=1 per actor) where the cluster
has one, else on the CPU backend; each map is written as OUT_DIR/NAME.pgm,
the file the gpuedge command writes for `gpuedge IN_DIR/NAME OUT_DIR/NAME.pgm`.
Images of one size go to gpuedge as one N x H x W x C batch call; mixed
sizes one call each.  --local starts a one-process Ray (tests, laptops).
"""
import argparse
import os
import sys

import numpy as np


class EdgeMaps:
    """map_batches' callable class: {"image", "path"} -> {"path", "edges", "hist"}."""

    def __init__(self, backend="auto", sigma=1.0):
        import gpuedge  # imported in the actor's process
        self.gpuedge = gpuedge
        self.kw = dict(backend=backend, sigma=sigma)

    def __call__(self, batch):
        images = batch["image"]
        if isinstance(images, np.ndarray) and images.dtype != object:
            # one size: one batch call (N x H x W x C, or N x H x W for grey)
            maps, hists = self.gpuedge.edges(images, batch=True, **self.kw)
            maps, hists = list(maps), list(hists)
        else:
            pairs = [self.gpuedge.edges(np.asarray(im), **self.kw) for im in images]
            maps, hists = [p[0] for p in pairs], [p[1] for p in pairs]
        return {"path": batch["path"], "edges": np.array(maps + [None], dtype=object)[:-1],
                "hist": np.stack(hists)}


def write_pgm(path, e):
    with open(path + ".tmp", "wb") as f:
        f.write(b"P5\n%d %d\n255\n" % (e.shape[1], e.shape[0]))
        f.write(np.ascontiguousarray(e).tobytes())
    os.replace(path + ".tmp", path)


def gpu_available():
    import gpuedge
    import numpy
    try:
        gpuedge.edges(numpy.zeros((2, 2), numpy.uint8), backend="gpu")
        return True
    except gpuedge.NoGPUError:
        return False


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--backend", default="auto", choices=["auto", "gpu", "cpu"])
    ap.add_argument("--sigma", type=float, default=1.0)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--local", action="store_true", help="a one-process local Ray")
    args = ap.parse_args(argv)

    import ray
    if args.local:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    else:
        ray.init()
    use_gpu = args.backend == "gpu" or (args.backend == "auto" and
                                        ray.cluster_resources().get("GPU", 0) > 0)
    backend = "gpu" if use_gpu else "cpu"
    os.makedirs(args.output, exist_ok=True)
    ds = ray.data.read_images(args.input, include_paths=True, mode="RGB")
    # one actor a GPU (or one on the CPUs: the CPU backend is multi-threaded);
    # on a cluster, ActorPoolStrategy(min_size=1, max_size=GPUS) scales it out
    ds = ds.map_batches(EdgeMaps, fn_constructor_kwargs=dict(backend=backend, sigma=args.sigma),
                        batch_size=args.batch_size, batch_format="numpy",
                        compute=ray.data.ActorPoolStrategy(size=1),
                        num_gpus=1 if use_gpu else 0)
    n = 0
    for row in ds.iter_rows():
        name = os.path.basename(row["path"])
        write_pgm(os.path.join(args.output, name + ".pgm"), row["edges"])
        n += 1
    print("ray_edges: %d maps in %s (%s backend)" % (n, args.output, backend), file=sys.stderr)
    ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
