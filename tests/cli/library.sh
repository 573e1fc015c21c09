#!/bin/sh
# libgpuedge as a user gets it: make install into a temporary PREFIX gives
# the header, libgpuedge.so.0 (+ .so), libgpuedge.a, gpuedge.pc and the
# Python module; the .so exports exactly the header's ge_* functions;
# examples/edges.c builds with `cc edges.c $(pkg-config --cflags --libs
# gpuedge)` (and statically, through Libs.private) and its edge map equals
# `gpuedge IN.ppm OUT.pgm` byte for byte; the installed Python module
# imports from its install directory; make uninstall removes everything.
. "$(dirname "$0")/lib.sh"

if [ "${SANITIZE:-}" = 1 ]; then
    skip "library: the sanitizer build is not installed"
    finish
fi
for t in make cc pkg-config nm; do
    if ! command -v $t >/dev/null 2>&1; then
        skip "library: no $t"
        finish
    fi
done
P=$T/prefix
make -s -C "$ROOT" ${SMS:+SMS="$SMS"} install PREFIX="$P" >"$T/make.log" 2>&1
rc=$?
missing=
for f in include/gpuedge.h lib/libgpuedge.so.0 lib/libgpuedge.so lib/libgpuedge.a \
         lib/pkgconfig/gpuedge.pc lib/python3/dist-packages/gpuedge/__init__.py bin/gpuedge; do
    [ -e "$P/$f" ] || missing="$missing $f"
done
if [ $rc -eq 0 ] && [ -z "$missing" ]; then
    ok "make install PREFIX: header, .so.0, .so, .a, gpuedge.pc, Python module, binary"
else
    not_ok "make install PREFIX: exit $rc, missing:$missing"
    sed -n '1,8s/^/#   /p' "$T/make.log"
    finish
fi

# exports: exactly the functions gpuedge.h declares
sed -n 's/^GE_API [^(]*[ *]\(ge_[a-z_]*\)(.*/\1/p' "$P/include/gpuedge.h" | sort >"$T/api"
nm -D --defined-only "$P/lib/libgpuedge.so.0" | awk '{print $3}' | sort >"$T/dyn"
if [ -s "$T/api" ] && cmp -s "$T/api" "$T/dyn"; then
    ok "libgpuedge.so.0 exports exactly gpuedge.h's $(wc -l <"$T/api") ge_* functions"
else
    not_ok "libgpuedge.so.0 exports: $(comm -3 "$T/api" "$T/dyn" | tr -s ' \t\n' ' ' | cut -c1-300)"
fi
nm -g --defined-only "$P/lib/libgpuedge.a" 2>/dev/null | awk 'NF == 3 {print $3}' | sort >"$T/sta"
if cmp -s "$T/api" "$T/sta"; then
    ok "libgpuedge.a defines only gpuedge.h's functions as globals"
else
    not_ok "libgpuedge.a globals: $(comm -3 "$T/api" "$T/sta" | tr -s ' \t\n' ' ' | cut -c1-300)"
fi
if readelf -d "$P/lib/libgpuedge.so.0" | grep -q 'SONAME.*libgpuedge\.so\.0' &&
   ! readelf -d "$P/lib/libgpuedge.so.0" | grep -q 'NEEDED.*libcuda'; then
    ok "SONAME libgpuedge.so.0, CUDA runtime inside (no libcudart/libcuda NEEDED)"
else
    not_ok "SONAME or NEEDED: $(readelf -d "$P/lib/libgpuedge.so.0" | grep -E 'SONAME|NEEDED' | tr -s ' \n' ' ')"
fi

# a PPM made from a sample, and the CLI's edge map of it
if pil_python; then
    "$PY" -c "from PIL import Image; Image.open('$SAMPLES/photo.png').convert('RGB').save('$T/in.ppm')"
elif command -v ffmpeg >/dev/null 2>&1; then
    ffmpeg -v error -i "$SAMPLES/photo.png" -pix_fmt rgb24 "$T/in.ppm"
fi
if [ ! -s "$T/in.ppm" ] || [ "$(head -c 2 "$T/in.ppm")" != P6 ]; then
    not_ok "library: could not make a P6 PPM from samples/photo.png (python3-PIL or ffmpeg)"
    finish
fi
"$GPUEDGE" -q "$T/in.ppm" "$T/cli.pgm" 2>"$T/cli.err" || not_ok "gpuedge in.ppm: $(cat "$T/cli.err")"

export PKG_CONFIG_PATH="$P/lib/pkgconfig"
cp "$ROOT/examples/edges.c" "$T/edges.c"
(cd "$T" && cc edges.c $(pkg-config --cflags --libs gpuedge) -o edges) >"$T/cc.log" 2>&1
if [ $? -eq 0 ] && [ -x "$T/edges" ]; then
    ok "cc edges.c \$(pkg-config --cflags --libs gpuedge)"
    LD_LIBRARY_PATH="$P/lib" "$T/edges" "$T/in.ppm" "$T/lib.pgm" >"$T/run.log" 2>&1
    rc=$?
    if [ $rc -eq 0 ] && cmp -s "$T/lib.pgm" "$T/cli.pgm"; then
        ok "examples/edges (shared) == gpuedge IN.ppm OUT.pgm, byte for byte"
    else
        not_ok "examples/edges: exit $rc, $(head -c 200 "$T/run.log"); outputs $(cmp "$T/lib.pgm" "$T/cli.pgm" 2>&1)"
    fi
    if LD_LIBRARY_PATH="$P/lib" ldd "$T/edges" | grep -q "$P/lib/libgpuedge.so.0"; then
        ok "the example loads the installed libgpuedge.so.0"
    else
        not_ok "the example's libgpuedge: $(LD_LIBRARY_PATH="$P/lib" ldd "$T/edges" | grep gpuedge)"
    fi
    # bad input: a message, non-zero, no output
    printf 'P5\n2 2\n255\nabcd' >"$T/grey.pgm"
    LD_LIBRARY_PATH="$P/lib" "$T/edges" "$T/grey.pgm" "$T/bad.pgm" >"$T/run.log" 2>&1
    rc=$?
    if [ $rc -ne 0 ] && [ ! -e "$T/bad.pgm" ] && grep -q 'P6' "$T/run.log"; then
        ok "examples/edges on a PGM: refuses, says why"
    else
        not_ok "examples/edges on a PGM: exit $rc: $(cat "$T/run.log")"
    fi
    # a failed write (here OUT.tmp cannot be made: a directory of that name
    # is in the way) leaves the existing OUT as it was
    echo keep >"$T/old.pgm"
    mkdir "$T/old.pgm.tmp"
    LD_LIBRARY_PATH="$P/lib" "$T/edges" "$T/in.ppm" "$T/old.pgm" >"$T/run.log" 2>&1
    rc=$?
    if [ $rc -ne 0 ] && [ "$(cat "$T/old.pgm")" = keep ] && [ -d "$T/old.pgm.tmp" ] &&
       grep -q 'old.pgm' "$T/run.log"; then
        ok "examples/edges: a failed write keeps the existing output (and what was in the way), says why"
    else
        not_ok "examples/edges, failed write: exit $rc, old.pgm now $(head -c 20 "$T/old.pgm")"
    fi
    rmdir "$T/old.pgm.tmp" 2>/dev/null
else
    not_ok "cc edges.c \$(pkg-config --cflags --libs gpuedge): $(head -c 300 "$T/cc.log")"
fi
(cd "$T" && cc edges.c $(pkg-config --cflags gpuedge) "$P/lib/libgpuedge.a" \
    $(pkg-config --static --libs gpuedge | sed 's/-lgpuedge\( \|$\)//') -o edges_static) \
    >"$T/cc.log" 2>&1
if [ $? -eq 0 ] && "$T/edges_static" "$T/in.ppm" "$T/static.pgm" >/dev/null 2>&1 &&
   cmp -s "$T/static.pgm" "$T/cli.pgm"; then
    ok "examples/edges linked with libgpuedge.a + Libs.private == gpuedge"
else
    not_ok "static example: $(head -c 300 "$T/cc.log")"
fi

# the installed Python module, from its install directory
if pil_python numpy; then
    # its own library, whatever GPUEDGE_LIB the test run has
    out=$(cd "$T" && env -u GPUEDGE_LIB PYTHONPATH="$P/lib/python3/dist-packages" "$PY" -c "
import os
import numpy as np, gpuedge
from PIL import Image
a = np.asarray(Image.open('$T/in.ppm'))
e, h = gpuedge.edges(a)
want = np.asarray(Image.open('$T/cli.pgm'))
eb, _ = gpuedge.edges(np.stack([a[..., ::-1], a[..., ::-1]]), channels='bgr')
typed = os.path.exists(os.path.join(os.path.dirname(gpuedge.__file__), 'py.typed'))
print(gpuedge.library_path, int(np.array_equal(e, want) and np.array_equal(eb[1], want)),
      int(h.sum()) == e.size, gpuedge.__version__, typed)
" 2>&1)
    case $out in
    "$P/lib/libgpuedge.so.0 1 True $(sed -n 's/^Version: //p' "$P/lib/pkgconfig/gpuedge.pc") True")
        ok "installed Python module: its library, __version__, py.typed; the CLI's pixels (a BGR batch too)" ;;
    *) not_ok "installed Python module: $out" ;;
    esac
else
    skip "installed Python module: no python3 with numpy and PIL"
fi

make -s -C "$ROOT" ${SMS:+SMS="$SMS"} uninstall PREFIX="$P" >"$T/make.log" 2>&1
left=$(cd "$P" && find . ! -type d | sort | tr '\n' ' ')
if [ -z "$left" ]; then
    ok "make uninstall removes all of it"
else
    not_ok "make uninstall left: $left"
fi
finish
