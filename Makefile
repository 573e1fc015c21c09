# gpuedge — GNU Make build.
#   make            build ./gpuedge (kernels for every SM in SMS, plus PTX);
#                   in parallel: -j$(nproc) unless you give -j yourself
#   make SMS=90     quick build for one architecture while iterating
#   make CUDA=0     the CPU-only variant, build/nocuda/gpuedge: no nvcc, no
#                   CUDA headers, no libcudart (the CPU backend, every codec,
#                   the CLI; GPU options fail with "built without CUDA").
#                   Automatic when $(NVCC) is not an executable.
#   make test       install missing Debian packages, build, run the tests
#   make test SANITIZE=1   the same under AddressSanitizer + UBSan
#   make demo       install, build, and run gpuedge on a sample; it builds
#                   the kernels only for the GPU present (nvidia-smi: one SM
#                   + its PTX), the CPU-only variant when there is none
#   make bench      benchmarks (meant for the GPU machine; see BENCHMARKS.md)
#   make bench-cpu  the CPU backend against OpenCV and FFmpeg on these cores
#   make bench-plot the charts in docs/img from tests/bench/results.csv
#   make bench-data the real photos and footage for make bench (fetched, not
#                   committed); make bench-real runs only those steps
#   make fuzz       libFuzzer harnesses (clang; make fuzz-deps), each run for
#                   FUZZ_SECONDS (default 60); see docs/RELIABILITY.md
#   make install / uninstall  (PREFIX, DESTDIR, MANPREFIX)
#   make valgrind   gpuedge under memcheck (slow; docs/RELIABILITY.md)
#   make soak       1,000-file batch with RSS sampling (BACKEND=gpu on a GPU machine)
#   make fuzz       libFuzzer harnesses (make fuzz-deps first; tests/fuzz/README.md)

PREFIX    ?= /usr/local
BINDIR    ?= $(PREFIX)/bin
MANPREFIX ?= $(PREFIX)/share/man
INCLUDEDIR ?= $(PREFIX)/include
LIBDIR    ?= $(PREFIX)/lib
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
# The Python module: PYTHONDIR/gpuedge (Debian's python3 searches
# /usr/lib/python3/dist-packages; elsewhere add PYTHONDIR to PYTHONPATH).
# In a virtualenv: pip install . (pyproject.toml; setup.py runs make lib).
PYTHONDIR ?= $(PREFIX)/lib/python3/dist-packages
CUDA_HOME ?= /usr/local/cuda
NVCC      ?= $(CUDA_HOME)/bin/nvcc
SMS       ?= 75 80 86 89 90 100 120
CC        ?= cc
PKG_CONFIG ?= pkg-config

# Parallel by default: -j$(nproc), unless the user chose (-j on the command
# line, or in MAKEFLAGS from the environment) or a parent make did (its
# jobserver; MAKELEVEL > 0).  GNU Make 4.3 does not show a command-line -j
# in MAKEFLAGS while it reads the makefile, but a -j there still wins over
# one added here; Make 4.4 shows it, hence the filter.
ifeq ($(MAKELEVEL),0)
ifeq ($(filter -j% --jobs%,$(MAKEFLAGS) $(shell printenv MAKEFLAGS)),)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 1)
endif
endif

# CUDA=1: the GPU backend (nvcc, kernels/*.cu, CUDA_C_SRCS, libcudart);
# CUDA=0: the CPU-only variant.  Unset (or not 0/1 from the environment):
# 1 when $(NVCC) is an executable, else 0.
ifeq ($(filter 0 1,$(CUDA)),)
ifeq ($(origin CUDA),command line)
$(error CUDA=$(CUDA): expected 0 (the CPU-only variant) or 1)
endif
override CUDA := $(shell command -v '$(NVCC)' >/dev/null 2>&1 && echo 1 || echo 0)
endif
ifeq ($(CUDA),1)
ifneq ($(shell command -v '$(NVCC)' >/dev/null 2>&1 && echo 1),1)
$(error CUDA=1 but $(NVCC) is not an executable (set NVCC or CUDA_HOME, or CUDA=0))
endif
endif

# Debian packages the build needs (make deps installs the missing ones);
# ffmpeg (the program) only makes and inspects test clips; python3-matplotlib
# draws the benchmark charts (make bench-plot, tests/cli/bench_plot.sh); parallel,
# slurm-wlm and munge run docs/scale-out.md's GNU parallel and Slurm recipes in
# tests/cli/parallel.sh and slurm.sh (about 27 s to install on Debian 12);
# python3-venv the pip and Ray tests' virtualenvs (tests/cli/python_*.sh).
DEB_PACKAGES = pkg-config libstb-dev libavformat-dev libavcodec-dev \
               libavutil-dev libswscale-dev ffmpeg \
               libdeflate-dev libspng-dev libturbojpeg0-dev libjpeg62-turbo-dev \
               libjpeg-turbo-progs python3-pil python3-numpy python3-opencv pngcheck \
               python3-pytest python3-venv parallel slurm-wlm munge python3-matplotlib
PKGS = libavformat libavcodec libavutil libswscale libdeflate spng libturbojpeg libjpeg

# Recursive (=) so a make that has just installed them still finds them.
PKG_CFLAGS = $(shell $(PKG_CONFIG) --cflags $(PKGS) stb 2>/dev/null || echo -I/usr/include/stb)
PKG_LIBS   = $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)

# The sanitizer build lives apart (build/asan/gpuedge, build/asan/tests/bin)
# so it never stands in for the normal one; so does the CPU-only variant
# (build/nocuda/gpuedge, build/nocuda-asan/gpuedge with SANITIZE=1).
ifeq ($(SANITIZE),1)
SANFLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else
SANFLAGS =
endif
ifeq ($(CUDA)$(SANITIZE),11)
BUILD   ?= build/asan
else ifeq ($(CUDA),1)
BUILD   ?= build/rel
else ifeq ($(SANITIZE),1)
BUILD   ?= build/nocuda-asan
else
BUILD   ?= build/nocuda
endif
ifeq ($(CUDA)$(SANITIZE),1)
PROG     = gpuedge
TBIN     = tests/bin
else
PROG     = $(BUILD)/gpuedge
TBIN     = $(BUILD)/tests/bin
endif
SMS_TAG = $(shell echo $(SMS) | tr ' ' '-')
KBUILD = build/cuda-$(SMS_TAG)

OPT     ?= -O2
CFLAGS  ?= -g
# -ffp-contract=off: DESIGN.md §1, no contraction in host arithmetic.
ifeq ($(CUDA),1)
CUDA_CFLAGS  = -DGE_CUDA=1 -I$(CUDA_HOME)/include
CUDA_LDFLAGS = -L$(CUDA_HOME)/lib64
# CUDA runtime linked statically; never the driver library (-lcuda).
CUDA_LIBS    = -lcudart_static -lstdc++
else
CUDA_CFLAGS  = -DGE_CUDA=0
endif
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE -DGE_SMS=\"$(SMS_TAG)\" $(OPT) $(CFLAGS) -Wall -Wextra \
             -ffp-contract=off -pthread $(SANFLAGS) $(PIC_CFLAGS) \
             $(SRC_INC) $(CUDA_CFLAGS) $(PKG_CFLAGS) -MMD -MP
ALL_LDFLAGS = $(LDFLAGS) $(SANFLAGS) -pthread $(CUDA_LDFLAGS)
LIBS = $(PKG_LIBS) $(CUDA_LIBS) -lrt -ldl -lm

HIGHEST_SM = $(shell echo $(SMS) | tr ' ' '\n' | sort -n | tail -n 1)
GENCODE = $(foreach sm,$(SMS),-gencode arch=compute_$(sm),code=sm_$(sm)) \
          -gencode arch=compute_$(HIGHEST_SM),code=compute_$(HIGHEST_SM)
# -fmad=false: DESIGN.md §1, fma only where written (__fmaf_rn).
NVFLAGS ?= -O3
# NVCC_THREADS=N: nvcc compiles the architectures of one .cu in N threads
# (0: one a CPU) instead of one after another.  Off by default: on the
# 2-core build machine fused.cu for the default SMS took 155 s serially and
# 410 s with --threads 0 (45 % more CPU time; docs/bench-log.md "Build"); try it
# where idle cores outnumber make's jobs.
NVCC_THREADS ?=
# -fno-gnu-unique: the function-local statics of CUB's inline functions
# (kernels/png_gpu.cu's scans) weak and hidden, not GNU-unique globals, so
# that libgpuedge.a's objcopy --localize-hidden takes them too.
ALL_NVFLAGS = $(NVFLAGS) $(if $(NVCC_THREADS),--threads $(NVCC_THREADS)) -lineinfo -fmad=false -std=c++17 $(GENCODE) \
              $(SRC_INC) -Xcompiler -Wall,-Wextra,-fno-gnu-unique -MMD -MP $(PIC_NVFLAGS)

# CUDA-only C sources: in the CUDA build only; the CPU-only variant compiles
# NOCUDA_SRCS (stubs of their entry points, failing "built without CUDA")
# instead.  A new C file that needs the CUDA runtime throughout is named
# *_cuda.c (picked up here) or listed below, and adds its stubs to
# src/lib/gpu_none.c; a file with a CPU part and a GPU part keeps the GPU
# part in #if GE_CUDA (pipeline.c's GPU engine).  kernels/*.cu, tests/gpu/*.c
# and tests/bench/*.cu are CUDA-only by their folder or suffix.
CUDA_C_SRCS = src/lib/gpu.c src/io/hwdec.c src/io/nvjpeg.c $(wildcard src/*/*_cuda.c)
NOCUDA_SRCS = src/lib/gpu_none.c src/io/hw_none.c
ALL_SRCS = $(filter-out src/cli/main.c,$(wildcard src/*/*.c)) $(wildcard third_party/*.c)
ifeq ($(CUDA),1)
SRCS   = $(filter-out $(NOCUDA_SRCS),$(ALL_SRCS))
else
SRCS   = $(filter-out $(CUDA_C_SRCS),$(ALL_SRCS))
endif
OBJS   = $(SRCS:%.c=$(BUILD)/%.o)
# Layers (DESIGN.md §8), each compiled with only the include paths of the
# layers below it, so an upward #include fails to build:
#   src/base   shared types and helpers (edge.h, frames.h, util, workpool,
#              signals)
#   kernels    the CUDA stages                          base
#   src/lib    libgpuedge: API, CPU backend, reference  base kernels include
#   src/engine the CLI's streaming engine and reports    base kernels include lib
#   src/io     codecs, safe output                       base
#   src/cli    the command line                          everything
# Tests and benchmarks see every layer (ALL_INC).
INC_base    = -Isrc/base
INC_kernels = $(INC_base) -Ikernels
INC_lib     = -Iinclude $(INC_kernels) -Isrc/lib
INC_engine  = $(INC_lib) -Isrc/engine
INC_io      = $(INC_kernels) -Isrc/io
INC_cli     = $(INC_engine) -Isrc/io -Isrc/cli
ALL_INC     = $(INC_cli)
SRC_INC     = $(ALL_INC)
$(BUILD)/src/base/%.o:    SRC_INC = $(INC_base)
$(BUILD)/src/lib/%.o:     SRC_INC = $(INC_lib)
$(BUILD)/src/engine/%.o:  SRC_INC = $(INC_engine)
$(BUILD)/src/io/%.o:      SRC_INC = $(INC_io)
$(BUILD)/third_party/%.o: SRC_INC = $(INC_base)
$(KBUILD)/kernels/%.o:    SRC_INC = $(INC_kernels)
# For tests/cli/layers.sh: the flags a layer's sources are compiled with.
print-inc-%:
	@echo '$(INC_$*) $(CUDA_CFLAGS) $(PKG_CFLAGS)'
CUSRCS = $(if $(filter 1,$(CUDA)),$(wildcard kernels/*.cu))
CUOBJS = $(CUSRCS:%.cu=$(KBUILD)/%.o)
LIB    = $(BUILD)/libgpuedge.a

UNIT_SRCS = $(wildcard tests/unit/*.c)
UNIT_BINS = $(UNIT_SRCS:tests/unit/%.c=$(TBIN)/%)
GPU_SRCS  = $(if $(filter 1,$(CUDA)),$(wildcard tests/gpu/*.c))
GPU_BINS  = $(GPU_SRCS:tests/gpu/%.c=$(TBIN)/%)
# The benchmarks that drive CUDA themselves, CUDA builds only
BENCH_CUDA_C = tests/bench/bench_nvdec.c tests/bench/bench_pipeline.c
BENCH_CU  = $(if $(filter 1,$(CUDA)),$(wildcard tests/bench/*.cu))
BENCH_C   = $(filter-out $(if $(filter 1,$(CUDA)),,$(BENCH_CUDA_C)),$(wildcard tests/bench/*.c))
BENCH_BINS = $(BENCH_CU:tests/bench/%.cu=tests/bin/%) $(BENCH_C:tests/bench/%.c=tests/bin/%)

.PHONY: all lib test check bench bench-plot bench-deps bench-cpu bench-data bench-real demo deps install uninstall clean samples gpu-tests valgrind soak \
        fuzz fuzz-deps fuzz-build fuzz-corpus
all: $(PROG) lib

$(PROG): $(BUILD)/src/cli/main.o $(LIB)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)
ifneq ($(CUDA),1)
	@echo "$@: the CPU-only variant (CUDA=0$(if $(filter command line,$(origin CUDA)),,: no $(NVCC)))"
endif

# The test build of gpuedge: the same program with its test hooks read
# (src/cli/hooks.c compiled with GE_TEST_HOOKS); the release one has none.
HOOKS_PROG = $(TBIN)/gpuedge_hooks
$(BUILD)/hooks/src/cli/hooks.o: src/cli/hooks.c $(CFLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DGE_TEST_HOOKS -c -o $@ $<

$(HOOKS_PROG): $(BUILD)/src/cli/main.o $(BUILD)/hooks/src/cli/hooks.o $(LIB)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(LIB): $(OBJS) $(CUOBJS)
	@rm -f $@
	ar rcs $@ $^

# ---------------------------------------------------------------------------
# libgpuedge, the installed library (DESIGN.md §7): src/base, src/lib and the
# kernels (no engine, codecs or CLI).  Every object is built -fPIC with hidden
# visibility (PIC_CFLAGS, PIC_NVFLAGS), so the same objects make the CLI,
# the shared and the static library; only include/gpuedge.h's GE_API
# functions are default-visible.  The .so carries the CUDA runtime
# (static) and its version script keeps cudart's own symbols in.  The
# static one is one relocatable object with everything but ge_* localised.
GE_SOVERSION = 0
GE_VERSION   = $(shell sed -n 's/^\#define GE_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)/\2/p' include/gpuedge.h | paste -sd.)
PUB_DIR    = $(BUILD)/lib
PUB_SO     = $(PUB_DIR)/libgpuedge.so.$(GE_SOVERSION)
PUB_A      = $(PUB_DIR)/libgpuedge.a
# (base's signals are the CLI's: the library never takes over a process's
# signals, DESIGN.md §7)
PUB_OBJS   = $(filter-out $(BUILD)/src/base/signals.o,\
             $(filter $(BUILD)/src/base/% $(BUILD)/src/lib/%,$(OBJS))) $(CUOBJS)
PUB_LIBS   = $(CUDA_LDFLAGS) $(CUDA_LIBS) -lrt -ldl -lm -pthread
PIC_CFLAGS  = -fPIC -fvisibility=hidden
PIC_NVFLAGS = -Xcompiler -fPIC,-fvisibility=hidden

lib: $(PUB_SO) $(PUB_A)

$(PUB_SO): $(PUB_OBJS) src/lib/libgpuedge.map
	@mkdir -p $(@D)
	$(CC) -shared $(ALL_LDFLAGS) -Wl,-soname,libgpuedge.so.$(GE_SOVERSION) -Wl,-z,defs \
	    -Wl,--version-script=src/lib/libgpuedge.map -o $@ $(PUB_OBJS) $(PUB_LIBS)
	ln -sf libgpuedge.so.$(GE_SOVERSION) $(PUB_DIR)/libgpuedge.so

$(PUB_A): $(PUB_OBJS)
	@mkdir -p $(@D)
	@rm -f $@ $(PUB_DIR)/gpuedge_all.o
	ld -r -o $(PUB_DIR)/gpuedge_all.o $(PUB_OBJS)
	objcopy --localize-hidden $(PUB_DIR)/gpuedge_all.o
	ar rcs $@ $(PUB_DIR)/gpuedge_all.o


# Objects depend on the flags they were built with (a stamp rewritten only
# when the flags change), so a flags change (-fPIC for libgpuedge.so, say)
# rebuilds an existing build tree instead of linking stale objects.
CFLAGS_STAMP  = $(BUILD)/cflags.stamp
NVFLAGS_STAMP = $(KBUILD)/nvflags.stamp
$(CFLAGS_STAMP): FORCE
	@mkdir -p $(@D)
	@echo '$(ALL_CFLAGS)' | cmp -s - $@ || echo '$(ALL_CFLAGS)' >$@
$(NVFLAGS_STAMP): FORCE
	@mkdir -p $(@D)
	@echo '$(ALL_NVFLAGS)' | cmp -s - $@ || echo '$(ALL_NVFLAGS)' >$@
FORCE:
.PHONY: FORCE

$(BUILD)/%.o: %.c $(CFLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

# stb's implementation: Debian's header, our settings; warnings are theirs.
$(BUILD)/third_party/%.o: third_party/%.c $(CFLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -w -c -o $@ $<

$(KBUILD)/%.o: %.cu $(NVFLAGS_STAMP)
	@mkdir -p $(@D)
	$(NVCC) $(ALL_NVFLAGS) -c -o $@ $<

$(TBIN)/%: tests/unit/%.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(LIB) $(LIBS)
# zlib's inflate (libpng's, most PNG readers') checks the run-length coder
$(TBIN)/test_deflate_rle: LIBS += -lz

$(TBIN)/%: tests/gpu/%.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(LIB) $(LIBS)

tests/bin/%: tests/bench/%.c $(LIB)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(LIB) $(LIBS)

tests/bin/%: tests/bench/%.cu $(LIB)
	@mkdir -p $(@D)
	$(NVCC) $(ALL_NVFLAGS) -Xcompiler -pthread -o $@ $< $(LIB) $(PKG_LIBS) -lrt -ldl -lm

# ---------------------------------------------------------------------------
deps:
	@sh tests/deps.sh $(DEB_PACKAGES)

test: deps
	@$(MAKE) --no-print-directory check

check: $(PROG) $(HOOKS_PROG) $(UNIT_BINS) $(GPU_BINS) lib
	@GPUEDGE=./$(PROG) TESTBIN=$(TBIN) SANITIZE=$(SANITIZE) SMS="$(SMS)" GPUEDGE_LIB=$(PUB_SO) \
	    sh tests/run

gpu-tests: gpuedge $(GPU_BINS) $(BENCH_BINS)

bench: gpuedge $(GPU_BINS) $(BENCH_BINS)
	@sh tests/bench/run

# The real-data media (photos, footage, a static ffmpeg) into build/realdata
# (REALDATA=DIR to move it), then its two steps alone (tests/bench/REALDATA.md)
# FFmpeg's libraries only (not libgpuedge.a): no CUDA build for the media
tests/bin/bench_mkclip: tests/bench/bench_mkclip.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(PKG_LIBS)

bench-data: tests/bin/bench_mkclip
	@BENCH_MKCLIP=tests/bin/bench_mkclip sh tests/bench/fetch_realdata.sh $(REALDATA)

bench-real: gpuedge
	@sh tests/bench/run photos videoreal

# The benchmark charts in docs/img (SVG and PNG) from the results file and
# one --report=json run (tests/bench/plot.py describes both); Debian's
# python3, which has python3-matplotlib, over another python3 on PATH.
PLOT_PY       ?= $(shell [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3)
BENCH_RESULTS ?= tests/bench/results.csv
STAGES_REPORT ?= tests/bench/stages.json
STAGES_LABEL  ?= $(shell cat tests/bench/stages.label 2>/dev/null)
bench-plot:
	@$(PLOT_PY) tests/bench/plot.py --results $(BENCH_RESULTS) --report $(STAGES_REPORT) \
	    --stages-label "$(STAGES_LABEL)" --out docs/img

# CPU backend against OpenCV and FFmpeg on this machine's cores (ratios)
bench-cpu: gpuedge
	@sh tests/bench/cpu_peers.sh

# The demo's wait is one build: with a GPU (nvidia-smi), the kernels for its
# architecture only (DEMO_SMS: its SM + PTX, not all of SMS); without one
# (or without nvcc), the CPU-only variant, no nvcc at all.  `make` builds
# the full ./gpuedge afterwards.  DEMO_SMS=90 forces an SM list; DEMO_SMS=
# with nothing forces the CPU-only variant.
DEMO_SMS ?= $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | \
              tr -d ' .' | grep -x '[0-9][0-9]*' | sort -un | tr '\n' ' ')
demo: deps
	@if [ "$(CUDA)" = 1 ] && [ -n "$(strip $(DEMO_SMS))" ]; then \
	    echo "demo: building for this GPU only (SMS=$(strip $(DEMO_SMS)))"; \
	    $(MAKE) --no-print-directory SMS="$(strip $(DEMO_SMS))" SANITIZE= gpuedge && prog=./gpuedge; \
	else \
	    echo "demo: no GPU here: building the CPU-only variant (make CUDA=0)"; \
	    $(MAKE) --no-print-directory CUDA=0 SANITIZE= build/nocuda/gpuedge && prog=build/nocuda/gpuedge; \
	fi && mkdir -p build && \
	echo "$$prog -y --report samples/photo.png build/photo_edges.png" && \
	$$prog -y --report samples/photo.png build/photo_edges.png && \
	echo "edge map of samples/photo.png written to build/photo_edges.png"

samples:
	sh samples/make_samples.sh

# Bench-only peers (tests/bench/canny_peers.py): scikit-image pulls ~130
# packages, too many for CI's DEB_PACKAGES.
BENCH_DEB_PACKAGES = python3-opencv python3-numpy python3-skimage

bench-deps:
	@sh tests/deps.sh $(BENCH_DEB_PACKAGES)

# Slow reliability checks, not part of `make test` (docs/RELIABILITY.md).
RELIABILITY_DEB_PACKAGES = valgrind python3 $(DEB_PACKAGES)

valgrind: $(PROG)
	@sh tests/deps.sh $(RELIABILITY_DEB_PACKAGES)
	@GPUEDGE=./$(PROG) sh tests/valgrind.sh

soak: $(PROG)
	@GPUEDGE=./$(PROG) sh tests/soak/soak.sh

install: $(PROG) lib
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANPREFIX)/man1
	install -m 755 $(PROG) $(DESTDIR)$(BINDIR)/gpuedge
	install -m 644 man/gpuedge.1 $(DESTDIR)$(MANPREFIX)/man1/gpuedge.1
	install -d $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR) \
	    $(DESTDIR)$(PYTHONDIR)/gpuedge
	# the one definition of enum ge_border/ge_canny (src/base/ge_modes.h) goes
	# into the installed header in place of its #include: that header stands alone
	sed -e '/^#include "ge_modes.h"/{' -e 'r src/base/ge_modes.h' -e 'd' -e '}' \
	    include/gpuedge.h >$(DESTDIR)$(INCLUDEDIR)/gpuedge.h
	chmod 644 $(DESTDIR)$(INCLUDEDIR)/gpuedge.h
	install -m 755 $(PUB_SO) $(DESTDIR)$(LIBDIR)/libgpuedge.so.$(GE_SOVERSION)
	ln -sf libgpuedge.so.$(GE_SOVERSION) $(DESTDIR)$(LIBDIR)/libgpuedge.so
	install -m 644 $(PUB_A) $(DESTDIR)$(LIBDIR)/libgpuedge.a
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	    -e 's|@VERSION@|$(GE_VERSION)|' -e 's|@LIBS_PRIVATE@|$(PUB_LIBS)|' \
	    src/lib/gpuedge.pc.in >$(DESTDIR)$(PKGCONFIGDIR)/gpuedge.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/gpuedge.pc
	install -m 644 python/gpuedge/*.py python/gpuedge/py.typed $(DESTDIR)$(PYTHONDIR)/gpuedge/
	echo 'LIB = "$(LIBDIR)/libgpuedge.so.$(GE_SOVERSION)"' >$(DESTDIR)$(PYTHONDIR)/gpuedge/_libpath.py

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/gpuedge $(DESTDIR)$(MANPREFIX)/man1/gpuedge.1
	rm -f $(DESTDIR)$(INCLUDEDIR)/gpuedge.h $(DESTDIR)$(LIBDIR)/libgpuedge.so.$(GE_SOVERSION) \
	    $(DESTDIR)$(LIBDIR)/libgpuedge.so $(DESTDIR)$(LIBDIR)/libgpuedge.a \
	    $(DESTDIR)$(PKGCONFIGDIR)/gpuedge.pc
	rm -rf $(DESTDIR)$(PYTHONDIR)/gpuedge

clean:
	rm -rf build tests/bin gpuedge

# ---------------------------------------------------------------------------
# Fuzzing (docs/RELIABILITY.md).  libFuzzer + ASan + UBSan with Debian's
# clang; no CUDA.  Apart from `deps` so that `make test` needs no clang.
#   make fuzz-deps                 install clang and its sanitizer runtimes
#   make fuzz [FUZZ_SECONDS=60]    build, seed the corpora, run each harness
#   make fuzz FUZZ_TARGETS=image FUZZ_ARGS=-runs=1000000
FUZZ_DEB_PACKAGES = clang libclang-rt-14-dev $(DEB_PACKAGES) python3-pil
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= image cli video
FUZZ_ARGS    ?=
FUZZ_DIR      = build/fuzz
FUZZ_SAN      = -fsanitize=address,undefined -fno-sanitize-recover=undefined \
                -fno-omit-frame-pointer
# -fwrapv: stb assumes wrap-around (stb_impl.c; its pragma is GCC's only).
FUZZ_CFLAGS   = -std=c11 -D_GNU_SOURCE -g -O1 -fwrapv -pthread $(FUZZ_SAN) \
                $(ALL_INC) -Itests/fuzz $(CUDA_CFLAGS) $(PKG_CFLAGS)
FUZZ_MAXLEN_image = 262144
FUZZ_MAXLEN_cli   = 1024
FUZZ_MAXLEN_video = 262144
FUZZ_OBJS_image = src/io/image_io src/io/image_av src/io/imgav_probe src/io/imgav_pixels \
                  src/io/image_in_png src/io/image_in_jpeg src/io/image_in_stb src/io/png_out src/io/deflate_rle \
                  src/io/safeout src/base/bigbuf src/base/signals src/base/util src/lib/reference \
                  src/lib/taps third_party/stb_impl
FUZZ_LIBS_image = $(PKG_LIBS) $(shell $(PKG_CONFIG) --libs spng libjpeg libdeflate 2>/dev/null)
# the parser checks --codec and sequence names (venc_codecs, vid_seq)
FUZZ_OBJS_cli   = src/cli/cli src/cli/options src/base/util src/io/venc_codecs src/io/vid_seq
FUZZ_LIBS_cli   = $(PKG_LIBS)
# vid_read reaches NVDEC through hwdec (never taken here: no hwdec asked
# for), which needs the CUDA runtime to link; the CPU-only variant's stubs
# (hw_none) instead with CUDA=0.
FUZZ_OBJS_video = src/io/vid_read src/io/vid_pixels $(if $(filter 1,$(CUDA)),src/io/hwdec,src/io/hw_none) \
                  src/io/imgav_probe src/io/safeout src/base/signals src/base/util src/lib/reference \
                  src/lib/taps
FUZZ_LIBS_video = $(PKG_LIBS) $(if $(filter 1,$(CUDA)),$(CUDA_LDFLAGS) $(CUDA_LIBS)) -lrt -ldl
FUZZ_BINS = $(FUZZ_TARGETS:%=$(FUZZ_DIR)/fuzz_%)

# stb's warnings are theirs (-w), as in the main build.  clang's UBSan also
# checks float-to-integer overflow (GCC's, in make test SANITIZE=1, does
# not): stb v2.27's PSD reader un-mattes 4-channel images with
# (unsigned char)(p*ra + inv_a), out of range for pixels darker than the
# matte allows (a fuzz finding, docs/RELIABILITY.md); x86 gives the
# truncated integer, stb's own garbage for a file that was never matted.
# Not checked in stb only, like -fwrapv.
$(FUZZ_DIR)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP \
	    $(if $(filter third_party/%,$<),-w -fno-sanitize=float-cast-overflow,-Wall -Wextra) -c -o $@ $<
.PRECIOUS: $(FUZZ_DIR)/obj/%.o

.SECONDEXPANSION:
$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_common.h \
                    $$(addprefix $(FUZZ_DIR)/obj/,$$(addsuffix .o,$$(FUZZ_OBJS_$$*)))
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Wall -Wextra -fsanitize=fuzzer -o $@ $< \
	    $(addprefix $(FUZZ_DIR)/obj/,$(addsuffix .o,$(FUZZ_OBJS_$*))) $(FUZZ_LIBS_$*) -lm

fuzz-deps:
	@sh tests/deps.sh $(FUZZ_DEB_PACKAGES)

fuzz-build: $(FUZZ_BINS)

fuzz-corpus:
	@sh tests/fuzz/make_corpus.sh $(FUZZ_DIR)/seed

# Each run: the seed corpus read, new inputs kept in corpus/NAME, crashes in
# crashes/NAME; a finding stops that harness and make fails.
fuzz: fuzz-build fuzz-corpus
	@for t in $(FUZZ_TARGETS); do \
	    mkdir -p $(FUZZ_DIR)/corpus/$$t $(FUZZ_DIR)/crashes/$$t || exit 1; \
	    echo "== fuzz_$$t for $(FUZZ_SECONDS) s"; \
	    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	    $(FUZZ_DIR)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) \
	        -max_len=$$(case $$t in image) echo $(FUZZ_MAXLEN_image);; \
	                   cli) echo $(FUZZ_MAXLEN_cli);; *) echo $(FUZZ_MAXLEN_video);; esac) \
	        -timeout=10 -rss_limit_mb=2048 -close_fd_mask=2 -print_final_stats=1 \
	        -artifact_prefix=$(FUZZ_DIR)/crashes/$$t/ $(FUZZ_ARGS) \
	        $(FUZZ_DIR)/corpus/$$t $(FUZZ_DIR)/seed/$$t || exit 1; \
	done

-include $(OBJS:.o=.d) $(BUILD)/src/cli/main.d $(BUILD)/hooks/src/cli/hooks.d $(CUOBJS:.o=.d) \
         $(wildcard $(FUZZ_DIR)/obj/*/*.d $(FUZZ_DIR)/obj/*/*/*.d)
