"""Shared fixtures of the Python package's tests: the BERT fixture compiled
once per test file, and the paths lit passes in the environment."""

import os
import subprocess

import numpy as np
import pytest

import lmopt

FIXTURES = os.environ.get("LMOPT_FIXTURES", os.path.join(
    os.path.dirname(__file__), "..", "models", "onnx"))
TOOLS = os.environ.get("LMOPT_TOOLS_DIR", "")
BERT = os.path.join(FIXTURES, "bert.onnx")


def fixture(name):
    return os.path.join(FIXTURES, name)


def load_npz(name):
    with np.load(fixture(name)) as archive:
        return {key: archive[key] for key in archive.files}


def tool(name):
    path = os.path.join(TOOLS, name)
    if not os.access(path, os.X_OK):
        pytest.skip(f"{name} is not built in '{TOOLS}'")
    return path


def run_tool(name, *args):
    return subprocess.run([tool(name), *args], capture_output=True, text=True)


@pytest.fixture(scope="module")
def bert_bundle():
    """bert.onnx with batch and sequence bounded by 2x12."""
    return lmopt.compile(BERT, max_shapes={"input_ids": (2, 12),
                                           "attention_mask": (2, 12),
                                           "token_type_ids": (2, 12)})
