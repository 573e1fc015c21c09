"""examples/torch_dataloader.py: its maps equal the gpuedge command's on the
same images (where torch is installed).  The Ray recipe's test is
tests/cli/python_ray.sh (it makes its own venv)."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from test_batch import cli_file
from test_host import ROOT, read_pgm


def test_torch_dataloader_recipe_equals_cli(tmp_path):
    pytest.importorskip("torch", reason="torch is not installed here (the recipe needs it)")
    pytest.importorskip("PIL", reason="the recipe decodes with Pillow")
    src = tmp_path / "in"
    src.mkdir()
    for name in ("photo.png", "odd_321x241.png"):
        shutil.copy(os.path.join(ROOT, "samples", name), src / name)
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    subprocess.run([sys.executable, os.path.join(ROOT, "examples", "torch_dataloader.py"),
                    str(src), "--size", "0", "--batch-size", "1", "--workers", "1",
                    "--out", str(out)], check=True, env=env)
    for name in ("photo.png", "odd_321x241.png"):
        got = read_pgm(out / (name + ".pgm"))
        assert np.array_equal(got, cli_file(tmp_path, src / name)), name
