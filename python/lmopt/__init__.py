"""lmopt: compile transformer models to fast CPU/CUDA bundles and run them.

    import lmopt
    bundle = lmopt.compile("bert.onnx", max_shapes={"input_ids": (8, 128)})
    session = lmopt.Session(bundle)
    outputs = session.run({"input_ids": ids, "attention_mask": mask})

See docs/python.md for the whole API.
"""

from ._api import Bundle, Error, Session, Trainer, compile, targets

__all__ = ["Bundle", "Error", "Session", "Trainer", "compile", "targets"]
__version__ = "0.1.0"
