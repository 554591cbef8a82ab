"""Checks a model lmopt-train exported against PyTorch's trained weights.

usage: check_exported.py TRAINED.onnx FINAL_WEIGHTS.npz VAL.npz VAL_LOSS

Every initializer named in FINAL_WEIGHTS.npz must hold those weights (the
error measure of compare_states.py), and onnxruntime running the exported
model on the validation set must give PyTorch's validation loss within
1e-4 relative.
"""

import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper


def main() -> int:
    trained, final, val, val_loss = sys.argv[1:5]
    model = onnx.load(trained)
    weights = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    reference = np.load(final)
    scale = max(float(np.abs(reference[n]).max()) for n in reference.files)
    worst = 0.0
    for name in reference.files:
        want = reference[name]
        floor = max(float(np.abs(want).max()), 1e-6 * scale)
        worst = max(worst, float(np.abs(weights[name] - want).max()) / floor)
    data = np.load(val)
    session = ort.InferenceSession(trained, providers=["CPUExecutionProvider"])
    feeds = {i.name: data[i.name] for i in session.get_inputs()}
    logits = session.run(None, feeds)[0].astype(np.float64)
    logits -= logits.max(axis=1, keepdims=True)
    log_probs = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    loss = -log_probs[np.arange(len(data["labels"])), data["labels"]].mean()
    loss_error = abs(loss - float(val_loss)) / float(val_loss)
    ok = worst <= 1e-4 and loss_error <= 1e-4
    print(f"weights max error {worst:.2e}, onnxruntime validation loss "
          f"{loss:.6f} (PyTorch {float(val_loss):.6f}): "
          f"{'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
