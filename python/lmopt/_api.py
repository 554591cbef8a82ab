"""The public API over the extension module (docs/python.md)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Union

from . import _lmopt

Error = _lmopt.Error

Shape = Sequence[int]
PathLike = Union[str, os.PathLike]


def targets() -> list:
    """The registered compile targets ("cpu", "cuda")."""
    return _lmopt.targets().split(", ")


def _shape_specs(shapes: Optional[Mapping[str, Shape]], what: str) -> list:
    """{"ids": (1, 128)} as the tool's "ids:1x128" strings."""
    if not shapes:
        return []
    specs = []
    for name, dims in shapes.items():
        try:
            text = "x".join("?" if d is None else str(int(d)) for d in dims)
        except TypeError:
            raise TypeError(f"{what}['{name}'] is not a sequence of ints: "
                            f"{dims!r}") from None
        specs.append(f"{name}:{text}")
    return specs


def _value_specs(values: Optional[Mapping[str, Any]]) -> list:
    if not values:
        return []
    return [f"{name}:" + ",".join(str(int(v)) for v in _flat(values[name]))
            for name in values]


def _flat(value):
    try:
        import numpy
        return numpy.asarray(value).reshape(-1).tolist()
    except ImportError:
        return list(value)


class Bundle:
    """A compiled model: the bundle file, the compile report, the log.

    The file lives in a temporary folder until save() copies it elsewhere;
    a Session opens it by path."""

    def __init__(self, path: str, result: dict, folder=None):
        self._path = path
        self._folder = folder  # removed with the bundle
        self.report: dict = json.loads(result["report"])
        self.near_misses: list = list(result["near_misses"])
        quantization = result.get("quantization")
        self.quantization: Optional[dict] = (
            json.loads(quantization) if quantization else None)
        self.log: str = result["log"]

    @property
    def path(self) -> str:
        """Where the bundle file is now."""
        return self._path

    @property
    def fusions(self) -> dict:
        """Fusions applied and missed, by kind (the report's "fusions")."""
        return self.report.get("fusions", {})

    def save(self, path: PathLike) -> str:
        """Copies the bundle to `path` (a .lmopt file) and returns it."""
        path = os.fspath(path)
        shutil.copyfile(self._path, path)
        return path

    def __repr__(self) -> str:
        plan = self.report.get("plan", {})
        return (f"<lmopt.Bundle {self._path} steps={plan.get('steps')} "
                f"near_misses={len(self.near_misses)}>")


def _model_path(model, folder: str) -> str:
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        if not os.path.exists(path):
            raise Error(f"cannot read the model '{path}': no such file")
        return path
    # An onnx.ModelProto (or anything with SerializeToString).
    if hasattr(model, "SerializeToString"):
        path = os.path.join(folder, "model.onnx")
        with open(path, "wb") as f:
            f.write(model.SerializeToString())
        return path
    raise TypeError("model is a path to a .onnx/.mlir file or an "
                    f"onnx.ModelProto, not {type(model).__name__}")


def _calibration_path(calibration, folder: str) -> str:
    if calibration is None:
        return ""
    if isinstance(calibration, (str, os.PathLike)):
        return os.fspath(calibration)
    if isinstance(calibration, Mapping):
        import numpy
        path = os.path.join(folder, "calibration.npz")
        numpy.savez(path, **{k: numpy.asarray(v)
                              for k, v in calibration.items()})
        return path
    raise TypeError("calibration is a .npz path, a token dataset PREFIX.idx "
                    "or a dict of arrays")


class _PhaseBar:
    """progress=True with tqdm installed: a bar over the compile's phases
    ("[2/5] optimize ..." lines), the other lines written above it."""

    def __init__(self, tqdm):
        self.bar = tqdm(total=5, desc="lmopt compile", unit="phase",
                        file=sys.stderr)
        self.write = tqdm.write

    def __call__(self, line: str):
        if line.startswith("[") and "/" in line[:6]:
            self.bar.set_postfix_str(line.split("]", 1)[1].split()[0])
            self.bar.update(1)
        else:
            self.write(line, file=sys.stderr)

    def close(self):
        self.bar.close()


def _progress_callback(progress):
    if progress is None or progress is False:
        return None
    if progress is True:
        try:
            from tqdm import tqdm
        except ImportError:
            return lambda line: print(line, file=sys.stderr, flush=True)
        return _PhaseBar(tqdm)
    if callable(progress):
        return progress
    raise TypeError("progress is a bool or a callable taking a line")


_TRAIN_KEYS = ("loss", "optimizer", "lr", "weight_decay", "no_decay", "betas",
               "adam_epsilon", "clip_norm", "lr_schedule", "warmup_steps",
               "grad_accum", "disable_dropout", "distill_from", "loss_weights",
               "temperature", "distill_output")


def _train_options(train):
    """train=True or a dict of lmopt-compile's training flags (snake_case;
    betas and no_decay as sequences or the flags' text)."""
    if train is None or train is False:
        return None
    if train is True:
        return {}
    if not isinstance(train, Mapping):
        raise TypeError("train is True or a dict of training options")
    unknown = sorted(set(train) - set(_TRAIN_KEYS))
    if unknown:
        raise TypeError(f"unknown training option(s) {unknown}; known: "
                        f"{list(_TRAIN_KEYS)}")
    options = dict(train)
    if "distill_from" in options:
        options["distill_from"] = os.fspath(options["distill_from"])
    for key in ("betas", "no_decay", "loss_weights", "distill_output"):
        if key in options and not isinstance(options[key], str):
            options[key] = ",".join(str(v) for v in options[key])
    for key in ("lr", "weight_decay", "adam_epsilon", "clip_norm",
                "temperature"):
        if key in options:
            options[key] = float(options[key])
    return options


def _prune_spec(prune) -> str:
    """`prune` as lmopt-compile's --prune value: a string as is, a mapping
    ({"ffn": 0.5, "heads": 0.5}) joined as key=value pairs."""
    if prune is None:
        return ""
    if isinstance(prune, str):
        return prune
    if isinstance(prune, Mapping):
        return ",".join(f"{key}={value}" for key, value in prune.items())
    raise TypeError("prune: expected a string like 'ffn=0.5,heads=0.5' or a "
                    f"dict, got {type(prune).__name__}")


def compile(model, target: str = "cpu", *, quantize: Optional[str] = None,
            max_shapes: Optional[Mapping[str, Shape]] = None,
            input_shapes: Optional[Mapping[str, Shape]] = None,
            input_values: Optional[Mapping[str, Any]] = None,
            calibration=None, calibration_method: str = "minmax",
            exclude: Sequence[str] = (), quantize_embeddings: bool = False,
            precision: str = "fp32", opt_level: int = 2, cpu: str = "host",
            cuda_arch: str = "sm_90", kv_cache: int = 0,
            omit_weights: bool = False,
            prune: Union[str, Mapping[str, Any], None] = None, train=None,
            output: Optional[PathLike] = None,
            progress: Union[bool, Callable[[str], None], None] = None
            ) -> Bundle:
    """Compiles `model` (a path or an onnx.ModelProto) into a Bundle.

    The keyword arguments are lmopt-compile's flags (docs/python.md);
    `train=True` or `train={"lr": 1e-4, ...}` compiles a training bundle
    (train_step, optimizer_step and eval entries). With
    `output` the bundle is written there; otherwise to a temporary file that
    Bundle.save() copies. `progress=True` prints the compile log's lines as
    they come (a phase bar with the other lines above it when tqdm is
    installed), a callable receives them. Failures raise lmopt.Error with
    the compiler's diagnostics."""
    callback = _progress_callback(progress)
    folder = tempfile.TemporaryDirectory(prefix="lmopt-")
    out = os.fspath(output) if output is not None else os.path.join(
        folder.name, "model.lmopt")
    existed = output is not None and os.path.exists(out)
    try:
        model_path = _model_path(model, folder.name)
        result = _lmopt.compile(
            model_path, out, target, int(opt_level), cpu, cuda_arch,
            precision, _shape_specs(input_shapes, "input_shapes"),
            _value_specs(input_values),
            _shape_specs(max_shapes, "max_shapes"), int(kv_cache),
            bool(omit_weights), _prune_spec(prune), quantize,
            os.fspath(_calibration_path(calibration, folder.name)),
            calibration_method, list(exclude), bool(quantize_embeddings),
            _train_options(train), callback)
    except BaseException:
        # A progress callback that raised stops the call, not the compile:
        # its bundle is not handed out.
        if output is not None and not existed and os.path.exists(out):
            os.remove(out)
        folder.cleanup()
        raise
    finally:
        if isinstance(callback, _PhaseBar):
            callback.close()
    if output is not None:
        folder.cleanup()
        folder = None
    return Bundle(out, result, folder)


class Session(_lmopt._Session):
    """A bundle loaded to run: `Session(bundle_or_path, threads=None)`.

    run(inputs) takes a dict of numpy arrays or PyTorch CPU tensors (read
    in place when C-contiguous) and returns a dict of numpy arrays."""

    def __init__(self, bundle: Union[Bundle, PathLike], threads:
                 Optional[int] = None, profile: bool = False,
                 device: str = "cpu"):
        if device != "cpu":
            raise Error(f"device '{device}': a session runs on the devices "
                        "its bundle was compiled for; pass device='cpu'")
        self._bundle = bundle if isinstance(bundle, Bundle) else None
        path = bundle.path if isinstance(bundle, Bundle) else os.fspath(bundle)
        if threads is not None and threads < 1:
            raise ValueError("threads is a positive count (or None)")
        super().__init__(path, threads or 0, profile)

    @property
    def entries(self) -> list:
        """Every entry point: name, inputs, outputs, states read/written."""
        return self._entries()

    @property
    def inputs(self) -> list:
        """The default entry's inputs: name, dtype, shape (None for a
        bounded dynamic dim) and max_shape."""
        return self._entries()[0]["inputs"]

    @property
    def outputs(self) -> list:
        """The default entry's outputs, as `inputs`."""
        return self._entries()[0]["outputs"]

    @property
    def states(self) -> list:
        """The session's state tensors (KV cache, parameters)."""
        return self._states()

    def profile(self) -> list:
        """Per-step time since the last reset_profile() (a session made
        with profile=True): entry, name, kind, calls, seconds."""
        return self._profile()

    def generate(self, prompt, max_new_tokens: int = 16,
                 return_logits: bool = False, prefill: str = "prefill",
                 decode: str = "decode"):
        """Greedy generation on a bundle compiled with kv_cache: `prompt`
        int64 [batch, length]; returns the new tokens int64 [batch, n]
        (and the logits [n, batch, vocab] with return_logits)."""
        result = self._generate(prompt, int(max_new_tokens),
                                bool(return_logits), prefill, decode)
        if return_logits:
            return result["tokens"], result["logits"]
        return result["tokens"]
