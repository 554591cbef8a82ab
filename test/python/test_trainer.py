# lmopt.Trainer runs lmopt-train's loop from Python: run C of the BERT
# classifier reference (constant lr 1e-3, no decay, 20 steps in file order)
# follows PyTorch's loss curve and validation loss, equals lmopt-train's
# run step for step, checkpoints and resumes, exports ONNX, and reports
# bad input and exceptions from callbacks as Python exceptions.
# REQUIRES: lmopt-python
# RUN: %pytest %s

import json
import os

import numpy as np
import pytest

import lmopt
from conftest import run_tool

TRAIN = os.path.join(os.path.dirname(__file__), "..", "models", "train")
BERT_CLS = os.path.join(TRAIN, "bert_cls.onnx")
DATA = os.path.join(TRAIN, "bert_cls.data.npz")
VAL = os.path.join(TRAIN, "bert_cls.val.npz")
SHAPES = {"input_ids": (8, 16), "attention_mask": (8, 16),
          "token_type_ids": (8, 16)}
RUN_C = json.load(open(os.path.join(TRAIN, "bert_cls.adamw.json")))[
    "runs"]["C"]


@pytest.fixture(scope="module")
def run_c_bundle(tmp_path_factory):
    path = tmp_path_factory.mktemp("trainer") / "c.lmopt"
    lmopt.compile(BERT_CLS, input_shapes=SHAPES, output=path,
                  train={"lr": 1e-3, "weight_decay": 0.0,
                         "lr_schedule": "constant"})
    return str(path)


def test_fit_follows_pytorch(run_c_bundle):
    trainer = lmopt.Trainer(run_c_bundle)
    lines = []
    history = trainer.fit(DATA, eval=VAL, steps=20, shuffle=False,
                          progress=lines.append)
    want = RUN_C["curve"]["loss"]
    assert len(history["losses"]) == len(want)
    errors = [abs(g - w) / abs(w) for g, w in zip(history["losses"], want)]
    assert max(errors) < 1e-3, errors
    assert [s["step"] for s in history["steps"]] == list(range(1, 21))
    assert history["steps"][0]["lr"] == pytest.approx(1e-3)
    # Evaluated after epochs 1 and 2 (8 steps each) and at the end.
    assert [e["epoch"] for e in history["eval"]] == [1, 2, 3]
    assert history["eval"][-1]["loss"] == pytest.approx(
        RUN_C["val_loss_after"], rel=1e-4)
    assert history["eval"][-1]["examples"] == 16
    assert any(line.startswith("done: 20 optimizer steps") for line in lines)
    # evaluate() reads the same eval entry.
    again = trainer.evaluate(VAL)
    assert again["loss"] == pytest.approx(history["eval"][-1]["loss"],
                                          rel=1e-6)
    assert "classifier.weight" in trainer.parameters()


def test_fit_equals_lmopt_train(run_c_bundle, tmp_path):
    losses = tmp_path / "cli.txt"
    result = run_tool("lmopt-train", run_c_bundle, "--data", DATA,
                      "--steps", "6", "--no-shuffle", "--log-losses",
                      str(losses))
    assert result.returncode == 0, result.stderr
    cli = [float(line) for line in open(losses)]
    history = lmopt.Trainer(run_c_bundle).fit(
        {k: v for k, v in np.load(DATA).items()}, steps=6, shuffle=False,
        progress=False)
    # --log-losses prints 8 significant digits.
    assert history["losses"] == pytest.approx(cli, rel=1e-7)


class Stop(Exception):
    pass


def test_checkpoint_resume_and_export(run_c_bundle, tmp_path):
    full = lmopt.Trainer(run_c_bundle).fit(DATA, steps=12, shuffle=False,
                                           progress=False)

    def stop_at_7(record):
        if record["step"] == 7:
            raise Stop()

    ckpt = tmp_path / "ckpt"
    with pytest.raises(Stop):
        lmopt.Trainer(run_c_bundle).fit(
            DATA, steps=12, shuffle=False, progress=False,
            checkpoint_dir=ckpt, checkpoint_every=5, on_step=stop_at_7)
    assert json.load(open(ckpt / "trainer.json"))["step"] == 5
    trainer = lmopt.Trainer(run_c_bundle)
    onnx_out, bundle_out = tmp_path / "trained.onnx", tmp_path / "t.lmopt"
    resumed = trainer.fit(DATA, steps=12, shuffle=False, progress=False,
                          checkpoint_dir=ckpt, resume=True,
                          export_onnx=onnx_out, export_bundle=bundle_out)
    # Resuming continues bit-identically.
    assert resumed["losses"] == full["losses"][5:]

    onnx = pytest.importorskip("onnx")
    from onnx import numpy_helper
    model = onnx.load(str(onnx_out))
    exported = {t.name: numpy_helper.to_array(t)
                for t in model.graph.initializer}
    assert np.array_equal(exported["classifier.bias"],
                          trainer.parameters()["classifier.bias"])
    # The inference bundle runs the trained model as onnxruntime does.
    ort = pytest.importorskip("onnxruntime")
    data = dict(np.load(DATA))
    inputs = {k: data[k][:8] for k in SHAPES}
    want = ort.InferenceSession(str(onnx_out)).run(None, inputs)[0]
    got = lmopt.Session(str(bundle_out)).run(inputs)
    np.testing.assert_allclose(next(iter(got.values())), want, rtol=1e-4,
                               atol=1e-5)


def test_errors(run_c_bundle, bert_bundle, tmp_path):
    with pytest.raises(lmopt.Error, match="is not a training bundle"):
        lmopt.Trainer(bert_bundle).fit(DATA, steps=1, progress=False)
    with pytest.raises(lmopt.Error, match="--resume needs --checkpoint-dir"):
        lmopt.Trainer(run_c_bundle).fit(DATA, resume=True, progress=False)
    data = dict(np.load(DATA))
    data["labels"] = data["labels"].copy()
    data["labels"][3] = 7
    with pytest.raises(lmopt.Error, match=r"label 7 \(element 3 of 'labels'"
                                          r"\) is outside \[0, 3\)"):
        lmopt.Trainer(run_c_bundle).fit(data, steps=1, progress=False)
    del data["labels"]
    with pytest.raises(lmopt.Error, match="has no member 'labels'"):
        lmopt.Trainer(run_c_bundle).fit(data, steps=1, progress=False)
    with pytest.raises(TypeError, match="data is a .npz path"):
        lmopt.Trainer(run_c_bundle).fit(42, progress=False)
    with pytest.raises(lmopt.Error, match="no such file|cannot"):
        lmopt.Trainer(run_c_bundle).evaluate(str(tmp_path / "missing.npz"))
