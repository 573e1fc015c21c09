#!/bin/sh
# Layers the compiler enforces (DESIGN.md §8): every source and header of a
# layer preprocesses with only the include paths the Makefile gives that
# layer (make print-inc-LAYER), and a header of a higher layer is not found
# from a lower one.  An upward #include added to any file fails here, and
# in the build.
. "$(dirname "$0")/lib.sh"

cd "$ROOT" || exit 1
cuda=1
no_cuda && cuda=0
flags() { make -s --no-print-directory print-inc-"$1" CUDA=$cuda; }

# layer folder: each file's own includes resolve within the layer's paths
for spec in base:src/base kernels:kernels lib:src/lib engine:src/engine io:src/io cli:src/cli; do
    layer=${spec%%:*} dir=${spec#*:}
    f=$(flags "$layer") || { not_ok "$layer: make print-inc-$layer failed"; continue; }
    bad=
    for src in "$dir"/*.c "$dir"/*.h "$dir"/*.cu; do
        [ -f "$src" ] || continue
        case $src in
        *.cu | kernels/*.h) set -- c++ -x c++ ;;
        *) set -- cc -x c -std=gnu11 ;;
        esac
        # shellcheck disable=SC2086
        "$@" -E -MM -D_GNU_SOURCE $f "$src" >/dev/null 2>"$T/err" ||
            bad="$bad $src ($(grep -m1 -o 'fatal error: .*' "$T/err"))"
    done
    if [ -z "$bad" ]; then ok "$layer: every file's includes resolve below it"; else not_ok "$layer:$bad"; fi
done

# the negative: a header of each higher layer is not reachable from below
probe() { # LAYER HEADER: 0 when LAYER's flags find HEADER
    printf '#include "%s"\n' "$2" >"$T/probe.c"
    # shellcheck disable=SC2046
    cc -E -MM $(flags "$1") "$T/probe.c" >/dev/null 2>&1
}
for case in kernels:edge.h:gpuedge.h lib:gpuedge.h:pipeline.h \
    lib:cpu_backend.h:video_io.h engine:pipeline.h:safeout.h io:safeout.h:pipeline.h \
    io:frames.h:reference.h io:util.h:run.h io:signals.h:run.h base:util.h:reference.h \
    base:signals.h:safeout.h; do
    layer=${case%%:*} rest=${case#*:} below=${rest%%:*} above=${rest#*:}
    if ! probe "$layer" "$below"; then
        not_ok "$layer: its own or a lower header $below is not found"
    elif probe "$layer" "$above"; then
        not_ok "$layer: the higher layer's $above is reachable (an upward include would build)"
    else
        ok "$layer: finds $below, refuses $above"
    fi
done

# One route for errors (DESIGN.md §9): below the CLI an error is recorded
# (ge_fail), never printed.  What may print there: notices (ge_note), the
# GPUEDGE_TRACE traces and --cpu-ref's findings (a result, like --report).
allowed='src/io/venc_thread.c:.*"gpuedge: venc trace: '
allowed="$allowed|src/engine/refcheck.c:.*\"frame %ld: cpu-ref: %s: "
grep -nE '\bge_err(_why|_pending)?\(|(fprintf|fputs|vfprintf)\([^;]*stderr|perror\(|write\((2|STDERR_FILENO)' \
    src/io/*.[ch] src/lib/*.[ch] src/engine/*.[ch] | grep -vE "$allowed" >"$T/prints"
if [ -s "$T/prints" ]; then
    not_ok "io, lib, engine: an error printed, not recorded: $(head -3 "$T/prints" | tr '\n' ' ')"
else
    ok "io, lib, engine: no error printed below the CLI (recorded for it: ge_fail)"
fi
why='char \*why, size_t|why, sizeof why|const char \*\*why'
if grep -nE "$why" src/io/*.[ch] src/lib/*.[ch] src/engine/*.[ch] src/cli/*.[ch] >"$T/why"; then
    not_ok "why buffers passed down: $(head -3 "$T/why" | tr '\n' ' ')"
else
    ok "no why buffers passed down (the error record replaces them)"
fi
finish
