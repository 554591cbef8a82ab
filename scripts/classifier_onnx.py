"""Exports a Hugging Face sequence classifier as the ONNX model the training
scripts and benches compile: inputs input_ids, attention_mask and
token_type_ids, output logits, with the TorchScript exporter at opset 17.
"""

import warnings

import torch

INPUT_NAMES = ["input_ids", "attention_mask", "token_type_ids"]


class Logits(torch.nn.Module):
    """The classifier's logits as the only output."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, input_ids, attention_mask, token_type_ids):
        return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                          token_type_ids=token_type_ids).logits


def export_classifier(model, data: dict, out, training: bool = False) -> None:
    """Traces `model` on the arrays of `data` into `out` (a path or a file).
    With `training`, the export keeps Dropout nodes in training mode and
    folds no constant. `model` keeps its mode: the exporter would leave the
    wrapper, and so the model, in training mode."""
    mode = model.training
    inputs = tuple(torch.from_numpy(data[k]) for k in INPUT_NAMES)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            Logits(model), inputs, out, dynamo=False, opset_version=17,
            training=(torch.onnx.TrainingMode.TRAINING if training
                      else torch.onnx.TrainingMode.EVAL),
            do_constant_folding=not training, input_names=INPUT_NAMES,
            output_names=["logits"])
    model.train(mode)
