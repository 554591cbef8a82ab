# lmopt.compile(train=...): lmopt-compile --train's options as a dict give a
# training bundle whose entries the session lists; bad options raise.
# REQUIRES: lmopt-python
# RUN: %pytest %s

import os

import pytest

import lmopt

BERT_CLS = os.path.join(os.path.dirname(__file__), "..", "models", "train",
                        "bert_cls.onnx")
SHAPES = {"input_ids": (4, 16), "attention_mask": (4, 16),
          "token_type_ids": (4, 16)}


def test_training_bundle_entries():
    bundle = lmopt.compile(BERT_CLS, input_shapes=SHAPES,
                           train={"lr": 1e-3, "betas": (0.9, 0.98),
                                  "no_decay": ["*bias"], "grad_accum": 2})
    session = lmopt.Session(bundle)
    assert [e["name"] for e in session.entries] == ["train_step",
                                                    "optimizer_step", "eval"]
    inputs = [v["name"] for v in session.entries[0]["inputs"]]
    assert "labels" in inputs
    assert session.states  # parameters and optimizer moments


def test_training_option_errors():
    with pytest.raises(lmopt.Error, match="--loss: unknown loss 'hinge'"):
        lmopt.compile(BERT_CLS, input_shapes=SHAPES, train={"loss": "hinge"})
    with pytest.raises(lmopt.Error, match="--betas"):
        lmopt.compile(BERT_CLS, input_shapes=SHAPES, train={"betas": (0.9,)})
    with pytest.raises(lmopt.Error, match="--train and --quantize"):
        lmopt.compile(BERT_CLS, input_shapes=SHAPES, train=True,
                      quantize="int8-dynamic")
    with pytest.raises(TypeError, match="unknown training option"):
        lmopt.compile(BERT_CLS, input_shapes=SHAPES, train={"epochs": 3})


DISTILL = os.path.join(os.path.dirname(__file__), "..", "models", "distill")


def test_distillation_options():
    bundle = lmopt.compile(os.path.join(DISTILL, "student.onnx"),
                           input_shapes=SHAPES,
                           train={"distill_from": os.path.join(DISTILL, "teacher.onnx"),
                                  "loss_weights": (0, 1, 1), "temperature": 2,
                                  "distill_output": "hidden"})
    session = lmopt.Session(bundle)
    inputs = [v["name"] for v in session.entries[0]["inputs"]]
    assert "labels" not in inputs  # alpha 0: pure distillation
    with pytest.raises(lmopt.Error, match="--temperature -1: the temperature must be positive"):
        lmopt.compile(os.path.join(DISTILL, "student.onnx"), input_shapes=SHAPES,
                      train={"distill_from": os.path.join(DISTILL, "teacher.onnx"),
                             "temperature": -1})
