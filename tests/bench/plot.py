#!/usr/bin/env python3
"""Charts of the benchmark results (make bench-plot), with Debian's python3-matplotlib.

    python3 tests/bench/plot.py [--results CSV] [--report JSON] [--stages-label TEXT] [--out DIR]

The results file is CSV with this header (one row per measured run; a
figure measured several times is several rows, drawn as their median with
the range as a whisker):

    date,machine,job,case,tool,value,unit,command

  date     YYYY-MM-DD of the measurement
  machine  where it ran ("H200 16 cores")
  job      photos, video, kernel, canny, python, ... : one chart panel per
           (job, case), in the order they first appear
  case     what was measured ("1080p to .mkv (530 frames)")
  tool     gpuedge, or the peer ("OpenCV script", "ffmpeg filter chain")
  value    a number
  unit     fps (higher is better) or s, ms, us (lower is better)
  command  how it was run

Bench steps append rows when BENCH_RESULTS=FILE is set: photos.py (through
append_result below) and video_real.sh.

Writes DIR/throughput.svg and .png (every panel), and with --report,
DIR/stages.svg and .png: the median time of each stage of one frame (p10
to p90 as whiskers) from a `gpuedge --report=json` file.
"""
import argparse
import csv
import json
import os
import statistics
import sys
import textwrap

HEADER = ["date", "machine", "job", "case", "tool", "value", "unit", "command"]
HIGHER_BETTER = {"fps", "Mpx/s", "frames/s"}
LOWER_BETTER = {"s", "ms", "us"}


def append_result(path, date, machine, job, case, tool, value, unit, command):
    """Append one row to the results file at path (its header first if new)."""
    new = not os.path.exists(path) or os.path.getsize(path) == 0
    with open(path, "a", newline="") as f:
        w = csv.writer(f)
        if new:
            w.writerow(HEADER)
        w.writerow([date, machine, job, case, tool, value, unit, command])


def read_results(path):
    """Rows as dicts; a missing column, a bad number or an unknown unit is an error."""
    with open(path, newline="") as f:
        r = csv.DictReader(f)
        if r.fieldnames != HEADER:
            raise ValueError("%s: header is %s, expected %s" % (path, r.fieldnames, ",".join(HEADER)))
        rows = []
        for n, row in enumerate(r, start=2):
            try:
                row["value"] = float(row["value"])
            except (TypeError, ValueError):
                raise ValueError("%s:%d: value %r is not a number" % (path, n, row["value"]))
            if row["unit"] not in HIGHER_BETTER | LOWER_BETTER:
                raise ValueError("%s:%d: unknown unit %r" % (path, n, row["unit"]))
            rows.append(row)
    if not rows:
        raise ValueError("%s: no results" % path)
    return rows


def panels(rows):
    """[(job, case, unit, dates, machines, [(tool, median, lo, hi)])], gpuedge first."""
    order, groups = [], {}
    for row in rows:
        key = (row["job"], row["case"])
        if key not in groups:
            order.append(key)
            groups[key] = []
        groups[key].append(row)
    out = []
    for key in order:
        g = groups[key]
        units = {r["unit"] for r in g}
        if len(units) != 1:
            raise ValueError("%s / %s: mixed units %s" % (key[0], key[1], sorted(units)))
        tools, vals = [], {}
        for r in g:
            if r["tool"] not in vals:
                tools.append(r["tool"])
                vals[r["tool"]] = []
            vals[r["tool"]].append(r["value"])
        bars = [(t, statistics.median(vals[t]), min(vals[t]), max(vals[t])) for t in tools]
        bars.sort(key=lambda b: (not b[0].startswith("gpuedge"), tools.index(b[0])))
        out.append((key[0], key[1], units.pop(), sorted({r["date"] for r in g}),
                    sorted({r["machine"] for r in g}), bars))
    return out


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "gpuedge"  # the same SVG bytes every run
    import matplotlib.pyplot as plt
    return plt


def _save(fig, out, name):
    paths = []
    for ext, meta in (("svg", {"Date": None}), ("png", {})):
        p = os.path.join(out, name + "." + ext)
        fig.savefig(p, metadata=meta, dpi=110, bbox_inches="tight")
        paths.append(p)
    return paths


def _fmt(v):
    return "%.3g" % v if v < 100 else "{:,.0f}".format(v)


def _hbars(ax, bars, colour):
    """Horizontal bars, first on top: bars = [(name, median, lo, hi)], each
    with its lo-hi whisker and its median written after it."""
    bars = bars[::-1]
    names = [b[0] for b in bars]
    med = [b[1] for b in bars]
    err = [[max(0.0, b[1] - b[2]) for b in bars], [max(0.0, b[3] - b[1]) for b in bars]]
    ax.barh(names, med, xerr=err, color=[colour(n) for n in names],
            error_kw={"elinewidth": 1, "capsize": 2})
    for y, b in enumerate(bars):
        ax.text(max(b[1], b[3]), y, " " + _fmt(b[1]), va="center", fontsize=8)
    ax.tick_params(labelsize=8)
    ax.margins(x=0.25)
    return med


def plot_throughput(plt, rows, out):
    ps = panels(rows)
    cols = 2 if len(ps) > 1 else 1
    nrows = (len(ps) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(6.2 * cols, 0.5 + 1.9 * nrows), squeeze=False)
    for ax in axes.flat[len(ps):]:
        ax.set_visible(False)
    for ax, (job, case, unit, dates, machines, bars) in zip(axes.flat, ps):
        med = _hbars(ax, bars, lambda n: "#2a7ab9" if n.startswith("gpuedge") else "#b0b0b0")
        spread = max(med) / max(min(med), 1e-12)
        if spread > 20:
            ax.set_xscale("log")
        better = "higher" if unit in HIGHER_BETTER else "lower"
        ax.set_title("%s: %s" % (job, case), fontsize=10)
        ax.set_xlabel("%s (%s is better)%s\n%s, %s" % (
            unit, better, ", log scale" if spread > 20 else "", ", ".join(machines), ", ".join(dates)),
            fontsize=8)
    fig.tight_layout()
    paths = _save(fig, out, "throughput")
    plt.close(fig)
    return paths


def read_report(path):
    with open(path) as f:
        rep = json.load(f)
    stages = rep.get("stages")
    if not isinstance(stages, dict) or not stages:
        raise ValueError("%s: no \"stages\" object (a gpuedge --report=json file?)" % path)
    out = []
    for name, s in stages.items():
        try:
            out.append((name, float(s["median_ms"]), float(s["p10_ms"]), float(s["p90_ms"])))
        except (KeyError, TypeError, ValueError):
            raise ValueError("%s: stage %r lacks median_ms/p10_ms/p90_ms" % (path, name))
    return rep, out


def plot_stages(plt, path, label, out):
    rep, st = read_report(path)
    fig, ax = plt.subplots(figsize=(6.2, 0.6 + 0.38 * len(st)))
    bound = rep.get("bound_by")
    _hbars(ax, st, lambda n: "#c0392b" if n == bound else "#2a7ab9")
    title = "one frame, stage by stage: median ms (p10-p90)"
    ax.set_title(title, fontsize=10)
    sub = "%s; backend %s, path %s, %s frames, %.1f fps, bound by %s" % (
        label, rep.get("backend", "?"), rep.get("path", "?"), rep.get("frames", "?"),
        float(rep.get("fps", 0) or 0), bound or "?")
    ax.set_xlabel(textwrap.fill(sub, 90), fontsize=7)
    fig.tight_layout()
    paths = _save(fig, out, "stages")
    plt.close(fig)
    return paths


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--results", default=os.path.join(here, "results.csv"))
    ap.add_argument("--report", help="a gpuedge --report=json file: the per-stage chart")
    ap.add_argument("--stages-label", default="", help="where the report was measured")
    ap.add_argument("--out", default="docs/img")
    a = ap.parse_args(argv)
    try:
        rows = read_results(a.results)
        plt = _pyplot()
        os.makedirs(a.out, exist_ok=True)
        written = plot_throughput(plt, rows, a.out)
        if a.report:
            written += plot_stages(plt, a.report, a.stages_label or a.report, a.out)
    except (OSError, ValueError) as e:
        print("plot.py: %s" % e, file=sys.stderr)
        return 1
    except ImportError as e:
        print("plot.py: %s (Debian package python3-matplotlib)" % e, file=sys.stderr)
        return 1
    for p in written:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
