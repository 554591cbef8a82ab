# lmopt.compile: paths and onnx.ModelProto, the report and near misses,
# saving, quantization with calibration, progress lines, and the compiler's
# diagnostics raised as lmopt.Error.
# REQUIRES: lmopt-python
# RUN: %pytest %s

import os

import numpy as np
import pytest

import lmopt
from conftest import BERT, fixture, load_npz


def test_targets():
    assert "cpu" in lmopt.targets()


def test_bundle_report_and_save(bert_bundle, tmp_path):
    assert os.path.exists(bert_bundle.path)
    plan = bert_bundle.report["plan"]
    assert sum(plan["steps"].values()) > 0
    assert "attention" in bert_bundle.fusions
    assert isinstance(bert_bundle.near_misses, list)
    assert "[5/5] write" in bert_bundle.log
    saved = bert_bundle.save(tmp_path / "bert.lmopt")
    assert os.path.getsize(saved) == os.path.getsize(bert_bundle.path)
    assert "lmopt.Bundle" in repr(bert_bundle)


def test_model_proto_and_output_path(tmp_path):
    onnx = pytest.importorskip("onnx")
    model = onnx.load(BERT)
    out = tmp_path / "proto.lmopt"
    lines = []
    bundle = lmopt.compile(model, input_shapes={"input_ids": (1, 7),
                                                "attention_mask": (1, 7),
                                                "token_type_ids": (1, 7)},
                           output=out, progress=lines.append)
    assert bundle.path == str(out) and out.exists()
    assert any(line.startswith("[1/5] import") for line in lines)
    session = lmopt.Session(bundle)
    assert session.inputs[0]["shape"] == (1, 7)


def test_quantize_with_calibration_dict():
    inputs = load_npz("bert.inputs.npz")
    bundle = lmopt.compile(BERT, quantize="int8-static",
                           input_shapes={k: v.shape for k, v in inputs.items()},
                           calibration=inputs)
    assert bundle.quantization is not None
    assert bundle.quantization["mode"] == "int8-static"
    outputs = lmopt.Session(bundle).run(inputs)
    ref = load_npz("bert.ref.npz")
    a = outputs["last_hidden_state"].ravel()
    b = ref["last_hidden_state"].ravel()
    # int8 against onnxruntime's f32: close in direction, not bit-equal.
    assert np.dot(a, b) / np.linalg.norm(a) / np.linalg.norm(b) > 0.99


def test_dynamic_input_without_bound_names_the_input():
    with pytest.raises(lmopt.Error, match="input 'input_ids' has dynamic dims"):
        lmopt.compile(BERT)


def test_bad_options_raise():
    with pytest.raises(lmopt.Error, match="unknown target 'tpu'"):
        lmopt.compile(BERT, target="tpu")
    with pytest.raises(lmopt.Error, match="unknown quantization mode|int3"):
        lmopt.compile(BERT, quantize="int3")
    with pytest.raises(lmopt.Error, match="--max-shape"):
        lmopt.compile(BERT, max_shapes={"input_ids": (2, None)})
    with pytest.raises(TypeError, match="max_shapes"):
        lmopt.compile(BERT, max_shapes={"input_ids": 5})
    with pytest.raises(TypeError, match="onnx.ModelProto"):
        lmopt.compile(42)


def test_missing_and_malformed_models(tmp_path):
    with pytest.raises(lmopt.Error, match="no such file"):
        lmopt.compile(tmp_path / "absent.onnx")
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a protobuf")
    out = tmp_path / "bad.lmopt"
    with pytest.raises(lmopt.Error):
        lmopt.compile(bad, output=out)
    assert not out.exists()


def test_progress_callback_that_raises(tmp_path):
    def fail(line):
        raise KeyError("stop")
    out = tmp_path / "raised.lmopt"
    with pytest.raises(KeyError, match="stop"):
        lmopt.compile(BERT, input_shapes={"input_ids": (1, 7),
                                          "attention_mask": (1, 7),
                                          "token_type_ids": (1, 7)},
                      output=out, progress=fail)
    assert not out.exists()
    with pytest.raises(TypeError, match="progress"):
        lmopt.compile(BERT, progress="yes")


def test_progress_true_prints_the_phases(capfd, tmp_path):
    lmopt.compile(BERT, input_shapes={"input_ids": (1, 7),
                                      "attention_mask": (1, 7),
                                      "token_type_ids": (1, 7)},
                  progress=True)
    err = capfd.readouterr().err
    # A tqdm bar over the five phases, or the log lines without tqdm.
    assert "lmopt compile" in err or "[5/5] write" in err
    assert "fusions:" in err
    with pytest.raises(lmopt.Error, match="no such file"):
        lmopt.compile(tmp_path / "absent.onnx", output=tmp_path / "x.lmopt")


def test_prune_matches_pytorch():
    # scripts/make_prune_fixtures.py: PyTorch with the same units sliced out.
    inputs = load_npz("bert.inputs.npz")
    shapes = {k: v.shape for k, v in inputs.items()}
    full = lmopt.compile(BERT, input_shapes=shapes)
    pruned = lmopt.compile(BERT, input_shapes=shapes,
                           prune={"ffn": 0.5, "heads": 0.5})
    assert pruned.fusions["pruned_ffn"]["fused"] == 2
    assert pruned.fusions["pruned_heads"]["fused"] == 2
    assert (pruned.report["plan"]["weights_bytes"] <
            0.75 * full.report["plan"]["weights_bytes"])
    outputs = lmopt.Session(pruned).run(inputs)
    ref = load_npz("bert.pruned.ref.npz")
    for name, expected in ref.items():
        np.testing.assert_allclose(outputs[name], expected, rtol=1e-4,
                                   atol=1e-5)
    with pytest.raises(lmopt.Error, match="no such option fnn"):
        lmopt.compile(BERT, input_shapes=shapes, prune="fnn=0.5")


def test_prune_gradient_criterion_with_a_loss():
    # The gradient criterion with --loss's spelling as loss=; the reference
    # is PyTorch's cut by float64 mask gradients of the same MSE
    # (scripts/make_prune_fixtures.py).
    inputs = load_npz("bert.inputs.npz")
    shapes = {k: v.shape for k, v in inputs.items()}
    pruned = lmopt.compile(
        BERT, input_shapes=shapes,
        prune="ffn=0.5,heads=0.5,criterion=gradient",
        calibration=fixture("bert.calib_target.npz"),
        loss="mse:pooler_output,target")
    assert pruned.fusions["pruned_heads"]["fused"] == 2
    outputs = lmopt.Session(pruned).run(inputs)
    for name, expected in load_npz("bert.pruned_gradient_mse.ref.npz").items():
        np.testing.assert_allclose(outputs[name], expected, rtol=1e-4,
                                   atol=1e-5)
    with pytest.raises(TypeError, match="train="):
        lmopt.compile(BERT, input_shapes=shapes, train=True, loss="mse")
