"""The examples in gpuedge's docstrings run (doctest), and help(gpuedge) says
what each backend does and what is exact."""
import doctest
import os
import pydoc

import numpy as np

import gpuedge


def test_docstring_examples():
    res = doctest.testmod(gpuedge, extraglobs={"gpuedge": gpuedge, "np": np, "os": os},
                          optionflags=doctest.NORMALIZE_WHITESPACE)
    assert res.attempted >= 10 and res.failed == 0, res


def test_help_names_backends_and_exactness():
    text = pydoc.render_doc(gpuedge, renderer=pydoc.plaintext)
    for phrase in ('"gpu"', '"cpu"', '"auto"', "What is exact", "same bits",
                   "channels=", "layout=", "threads", "stream"):
        assert phrase in text, phrase


def test_annotations_and_py_typed():
    here = os.path.dirname(gpuedge.__file__)
    assert os.path.exists(os.path.join(here, "py.typed"))
    ann = gpuedge.edges.__annotations__
    for name in ("array", "sigma", "channels", "layout", "threads", "out", "hist_out",
                 "stream", "return"):
        assert name in ann, name
