# lmopt.Session on the BERT fixture: numpy and PyTorch inputs agree with
# onnxruntime's outputs (bert.ref.npz) and are bit-equal to lmopt-run's on
# the same bundle; metadata, bench, profile, and errors as lmopt.Error.
# REQUIRES: lmopt-python
# RUN: %pytest %s

import numpy as np
import pytest

import lmopt
from conftest import load_npz, run_tool

RTOL, ATOL = 1e-4, 1e-5  # the e2e suite's tolerance against onnxruntime


@pytest.fixture(scope="module")
def session(bert_bundle):
    return lmopt.Session(bert_bundle, threads=1, profile=True)


def test_numpy_matches_onnxruntime(session):
    outputs = session.run(load_npz("bert.inputs.npz"))
    ref = load_npz("bert.ref.npz")
    assert sorted(outputs) == sorted(ref)
    for name, expected in ref.items():
        assert outputs[name].dtype == expected.dtype
        np.testing.assert_allclose(outputs[name], expected, rtol=RTOL,
                                   atol=ATOL)


def test_smaller_shape_within_bounds(session):
    outputs = session.run(load_npz("bert.dyn_1x7.inputs.npz"))
    for name, expected in load_npz("bert.dyn_1x7.ref.npz").items():
        np.testing.assert_allclose(outputs[name], expected, rtol=RTOL,
                                   atol=ATOL)


def test_equal_to_lmopt_run(bert_bundle, session, tmp_path):
    out = tmp_path / "out.npz"
    from conftest import fixture
    done = run_tool("lmopt-run", bert_bundle.path, "--threads", "1",
                    "--inputs", fixture("bert.inputs.npz"),
                    "--output", str(out))
    assert done.returncode == 0, done.stderr
    ours = session.run(load_npz("bert.inputs.npz"))
    with np.load(out) as theirs:
        for name in theirs.files:
            np.testing.assert_array_equal(ours[name], theirs[name])


def test_torch_tensors(session):
    torch = pytest.importorskip("torch")
    inputs = load_npz("bert.inputs.npz")
    tensors = {k: torch.from_numpy(v) for k, v in inputs.items()}
    outputs = session.run(tensors)
    expected = session.run(inputs)
    for name in expected:
        np.testing.assert_array_equal(outputs[name], expected[name])
    # A non-contiguous tensor is copied to a contiguous one, not refused.
    wide = {k: torch.from_numpy(np.repeat(v, 2, axis=1))[:, ::2]
            for k, v in inputs.items()}
    outputs = session.run(wide)
    np.testing.assert_array_equal(outputs["pooler_output"],
                                  expected["pooler_output"])


def test_metadata(session):
    names = [v["name"] for v in session.inputs]
    assert names == ["input_ids", "attention_mask", "token_type_ids"]
    ids = session.inputs[0]
    assert ids["dtype"] == "int64"
    assert ids["shape"] == (None, None) and ids["max_shape"] == (2, 12)
    assert [v["name"] for v in session.outputs] == ["last_hidden_state",
                                                    "pooler_output"]
    assert [e["name"] for e in session.entries] == ["main"]
    assert session.states == []
    assert isinstance(session.meta, str)


def test_bench_and_profile(session):
    session.reset_profile()
    figures = session.bench(load_npz("bert.inputs.npz"), runs=3, warmup=1)
    assert figures["runs"] == 3
    assert 0 < figures["min_ms"] <= figures["median_ms"] <= figures["max_ms"]
    steps = session.profile()
    assert steps and all(s["calls"] == 4 for s in steps)
    assert {"entry", "name", "kind", "index", "calls", "seconds"} <= set(steps[0])
    # One entry: the indices number its steps in plan order.
    assert [s["index"] for s in steps] == list(range(len(steps)))


def test_run_errors(session):
    inputs = load_npz("bert.inputs.npz")
    with pytest.raises(lmopt.Error, match="input_ids"):
        session.run({k: v for k, v in inputs.items() if k != "input_ids"})
    bad = dict(inputs, input_ids=inputs["input_ids"].astype(np.float32))
    with pytest.raises(lmopt.Error, match="input_ids"):
        session.run(bad)
    big = {k: np.zeros((3, 12), np.int64) for k in inputs}
    with pytest.raises(lmopt.Error):
        session.run(big)
    with pytest.raises(lmopt.Error, match="no entry 'decode'"):
        session.run(inputs, entry="decode")
    with pytest.raises(TypeError, match="input 'input_ids'"):
        session.run(dict(inputs, input_ids="text"))
    with pytest.raises(TypeError):
        session.run([1, 2])
    with pytest.raises(lmopt.Error, match="state"):
        session.read_state("past")
    # The session still runs after the errors.
    assert "pooler_output" in session.run(inputs)


def test_open_errors(tmp_path):
    with pytest.raises(lmopt.Error, match="absent.lmopt"):
        lmopt.Session(tmp_path / "absent.lmopt")
    junk = tmp_path / "junk.lmopt"
    junk.write_bytes(b"\0" * 64)
    with pytest.raises(lmopt.Error):
        lmopt.Session(junk)
    with pytest.raises(ValueError):
        lmopt.Session(junk, threads=0)
    with pytest.raises(lmopt.Error, match="device"):
        lmopt.Session(junk, device="cuda")
