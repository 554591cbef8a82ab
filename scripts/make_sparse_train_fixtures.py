#!/usr/bin/env python3
"""The reference for training a 2:4-sparse model with its masks fixed
(lmopt-compile --train --prune=sparsity=2:4): test/models/train's BERT
classifier, rebuilt from its seed and checked against bert_cls.onnx, gets
every nn.Linear weight 2:4-sparse by magnitude (make_prune_fixtures.py's
rule: in each group of 4 inputs of an output the 2 largest |w| stay, ties
to the lower index); the float64 autograd gradients of the first 8 training
examples' cross-entropy are then multiplied by each sparse weight's mask,
as a training step that keeps the masks fixed computes them.

    python3 scripts/make_sparse_train_fixtures.py [--out test/models/train]

Writes bert_cls.sparse24.grads.npz: `loss` and each initializer's masked
gradient in the initializer's layout (keyed like bert_cls.grads.npz), and
`mask/NAME` (1 where the weight stays) for each sparse initializer.
"""

import argparse
import os
import sys

import numpy as np
import onnx
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixtures as mf  # noqa: E402
import make_train_fixtures as mt  # noqa: E402
from make_prune_fixtures import sparsify  # noqa: E402

DEFAULT_OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                           "test", "models", "train")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.normpath(DEFAULT_OUT))
    args = parser.parse_args()
    torch.set_num_threads(1)
    task = mt.BERT_CLS
    fx = task.fixture
    module = fx.build()
    data = dict(np.load(os.path.join(args.out, "bert_cls.data.npz")))
    batch = mt.batch_of(data, 0, mt.GRAD_BATCH)
    path = os.path.join(args.out, "bert_cls.onnx")
    mf.reference(fx, module, path, {k: batch[k] for k in fx.input_names})
    task.bindings, _ = mt.bind_initializers(onnx.load(path), module)

    masks = {}
    for name, sub in module.named_modules():
        if isinstance(sub, torch.nn.Linear):
            sparsify(sub, 2, 4)
            masks[name + ".weight"] = (sub.weight.data != 0).to(torch.float64)
    loss, grads = mt.gradients(task, module, batch, torch.float64)
    out = {"loss": np.float32(loss.item())}
    for init, binding in task.bindings.items():
        grad = grads[init]
        if binding.param in masks:
            mask = masks[binding.param]
            mask = (mask.T if binding.transposed else mask).numpy()
            grad = grad * mask
            out["mask/" + init] = mask.astype(np.uint8)
        out[init] = grad.astype(np.float32)
    target = os.path.join(args.out, "bert_cls.sparse24.grads.npz")
    mf.save_npz(target, out)
    print(f"wrote {target}: loss {loss.item():.6f}, {len(masks)} sparse "
          f"weights of {len(task.bindings)} initializers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
