"""The build hook behind pyproject.toml: `make lib`, then libgpuedge.so.0
into the package, and a wheel tagged for this platform (the library is
native code; the Python part is plain ctypes, hence py3-none-<platform>).

GPUEDGE_BUILD_CUDA=1 builds the CUDA library (needs nvcc; compiling the
kernels for every GPU architecture takes many minutes), 0 the CPU-only one;
unset: CUDA when $NVCC (default /usr/local/cuda/bin/nvcc) is executable,
as the Makefile decides.  MAKEFLAGS and SMS= pass through to make.
"""
import os
import re
import shutil
import subprocess

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py as _build_py

try:
    from setuptools.command.bdist_wheel import bdist_wheel as _bdist_wheel
except ImportError:  # setuptools < 70.1 (e.g. --no-build-isolation on Debian 12)
    from wheel.bdist_wheel import bdist_wheel as _bdist_wheel

ROOT = os.path.dirname(os.path.abspath(__file__))


def version():
    with open(os.path.join(ROOT, "include", "gpuedge.h")) as f:
        text = f.read()
    parts = [re.search(r"#define GE_VERSION_%s (\d+)" % k, text).group(1)
             for k in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


def want_cuda():
    env = os.environ.get("GPUEDGE_BUILD_CUDA", "")
    if env in ("0", "1"):
        return env == "1"
    if env:
        raise SystemExit("GPUEDGE_BUILD_CUDA=%s: expected 0, 1 or unset" % env)
    nvcc = os.environ.get("NVCC") or os.path.join(
        os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "nvcc")
    return os.access(nvcc, os.X_OK)


def make_lib():
    """Runs make lib; returns the path of the libgpuedge.so.0 it made."""
    cuda = want_cuda()
    cmd = ["make", "-C", ROOT, "CUDA=%d" % cuda, "lib"]
    print("gpuedge: " + " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)
    so = os.path.join(ROOT, "build", "rel" if cuda else "nocuda", "lib", "libgpuedge.so.0")
    if not os.path.isfile(so):
        raise SystemExit("gpuedge: make lib made no %s" % so)
    return so


class build_py(_build_py):
    def run(self):
        super().run()
        so = make_lib()
        if getattr(self, "editable_mode", False):
            return  # an editable install loads the build tree's library
        dst = os.path.join(self.build_lib, "gpuedge", "libgpuedge.so.0")
        self.mkpath(os.path.dirname(dst))
        shutil.copyfile(so, dst)
        os.chmod(dst, 0o755)


class BinaryDistribution(Distribution):
    """Native code inside: platlib, a platform wheel."""

    def has_ext_modules(self):
        return True


class bdist_wheel(_bdist_wheel):
    def get_tag(self):
        return ("py3", "none") + super().get_tag()[2:]


os.makedirs(os.path.join(ROOT, "build", "python"), exist_ok=True)
setup(version=version(), distclass=BinaryDistribution,
      cmdclass={"build_py": build_py, "bdist_wheel": bdist_wheel},
      options={"build": {"build_base": "build/python"},
               "egg_info": {"egg_base": "build/python"}})
