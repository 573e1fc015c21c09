#!/usr/bin/env python3
"""Shrinks a device payload's libs.tar.xz (../shared/device/pack's, 42 MB
for gpuedge: too much beside the static ffmpeg and the clips in one call): the libraries a gpuedge run never
calls (encoders, exotic demuxers and what only they need) become stubs that
define the same symbols (functions that return, zeroed objects) under the
same versions, so that the loader, binding everything at start (-z now),
is satisfied; the libraries nothing needs any more are left out.

  python3 tests/bench/stub_libs.py LIBS.tar.xz PROGRAM... -o OUT.tar.xz

PROGRAM: the unstripped programs the payload carries (their NEEDED lists
decide what stays).  Stubbed: the codec libraries' encoders gpuedge never
opens and a demuxer library's (STUB); 42 -> 14 MB on 2026-12-04.  A call
that decodes AV1 with libaom, reads SVG or JPEG XL, or opens a module
file would reach a stub: those stay on the full libraries.
"""
import os, re, subprocess, sys, tarfile, tempfile, shutil

STUB = ["libicudata", "libcodec2", "libx265", "librsvg-2", "libSvtAv1Enc", "libaom",
        "libjxl", "libjxl_threads", "librav1e", "libopenmpt"]

def needed(path):
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True).stdout
    return re.findall(r"\(NEEDED\).*\[(.*)\]", out)

def stub(src, dst, soname, tmp):
    out = subprocess.run(["objdump", "-T", src], capture_output=True, text=True).stdout
    funcs, objs, vers = {}, {}, {}
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ (.{7}) (\S+)\s+([0-9a-f]+)\s+(?:(\(?[\w.@]+\)?)\s+)?(\S+)$", line)
        if not m or m.group(2) == "*UND*":
            continue
        flags, sect, size, ver, name = m.groups()
        if "g" not in flags and "w" not in flags and "u" not in flags:
            continue
        ver = (ver or "").strip("()")
        if ver in ("", "Base") or sect == "*ABS*":
            if sect == "*ABS*":
                continue
            ver = ""
        (funcs if "F" in flags else objs)[name] = int(size, 16)
        vers.setdefault(ver, []).append(name)
    c = ["/* stub */"]
    for n in funcs:
        c.append("void %s(void) {}" % n)
    for n, sz in objs.items():
        c.append("char %s[%d] = {0};" % (n, max(sz, 1)))
    cf = os.path.join(tmp, soname + ".c")
    open(cf, "w").write("\n".join(c) + "\n")
    args = ["gcc", "-shared", "-fPIC", "-w", "-fno-builtin", "-Wl,-soname," + soname, "-o", dst, cf]
    named = [v for v in vers if v]
    if named:
        vs = os.path.join(tmp, soname + ".ver")
        body = ""
        if "" in vers:
            body += "{ global: %s; };\n" % "; ".join(vers[""])
        for v in named:
            body += "%s { global: %s; };\n" % (v, "; ".join(vers[v]))
        open(vs, "w").write(body)
        args.insert(3, "-Wl,--version-script=" + vs)
    subprocess.run(args, check=True)

def main():
    a = sys.argv[1:]
    out = a[a.index("-o") + 1]; a = a[:a.index("-o")]
    tarf, progs = a[0], a[1:]
    tmp = tempfile.mkdtemp()
    with tarfile.open(tarf) as t:
        t.extractall(tmp)
    lib = os.path.join(tmp, "lib")
    for f in sorted(os.listdir(lib)):
        base = f.split(".so")[0]
        if base in STUB and not os.path.islink(os.path.join(lib, f)):
            stub(os.path.join(lib, f), os.path.join(tmp, f + ".stub"), f, tmp)
            os.replace(os.path.join(tmp, f + ".stub"), os.path.join(lib, f))
    have = set(os.listdir(lib))
    keep, todo = set(), [n for p in progs for n in needed(p)]
    while todo:
        n = todo.pop()
        if n in have and n not in keep:
            keep.add(n)
            todo += needed(os.path.join(lib, n))
    for f in have - keep:
        os.remove(os.path.join(lib, f))
    with tarfile.open(out, "w:xz", preset=9) as t:
        t.add(lib, arcname="lib")
    print("stub_libs: %d libraries kept of %d, %s: %.1f MB" % (len(keep), len(have), out,
          os.path.getsize(out) / 1e6))
    shutil.rmtree(tmp)

main()
