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


def _prune_loss(loss, train):
    """`loss` for the gradient criterion; a training compile names its loss
    in `train`."""
    if loss is None:
        return None
    if train not in (None, False):
        raise TypeError('give a training compile\'s loss as train={"loss": '
                        '...}, not loss=')
    return str(loss)


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
            prefill_all_logits: bool = False, omit_weights: bool = False,
            prune: Union[str, Mapping[str, Any], None] = None, train=None,
            loss: Optional[str] = None,
            output: Optional[PathLike] = None,
            progress: Union[bool, Callable[[str], None], None] = None
            ) -> Bundle:
    """Compiles `model` (a path or an onnx.ModelProto) into a Bundle.

    The keyword arguments are lmopt-compile's flags (docs/python.md);
    `train=True` or `train={"lr": 1e-4, ...}` compiles a training bundle
    (train_step, optimizer_step and eval entries); `loss` (lmopt-compile's
    --loss, "mse:pooler_output,target") is the loss that
    prune="...,criterion=gradient" differentiates (a training compile takes
    it as train={"loss": ...}). With
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
            bool(prefill_all_logits), bool(omit_weights), _prune_spec(prune), quantize,
            os.fspath(_calibration_path(calibration, folder.name)),
            calibration_method, list(exclude), bool(quantize_embeddings),
            _train_options(train), _prune_loss(loss, train), callback)
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


def _data_path(data, folder: str, what: str) -> str:
    """A training or evaluation set: a path (.npz or token dataset
    PREFIX.idx) or a dict of arrays with one row per example."""
    if isinstance(data, (str, os.PathLike)):
        return os.fspath(data)
    if isinstance(data, Mapping):
        import numpy
        path = os.path.join(folder, what + ".npz")
        numpy.savez(path, **{k: numpy.asarray(v) for k, v in data.items()})
        return path
    raise TypeError(f"{what} is a .npz path, a token dataset PREFIX.idx or a "
                    f"dict of arrays, not {type(data).__name__}")


class Trainer:
    """Trains with a training bundle (compile(..., train=...)): the loop
    lmopt-train runs, with its options as fit()'s keyword arguments.

        bundle = lmopt.compile("model.onnx", train={"lr": 1e-3},
                               input_shapes={...})
        trainer = lmopt.Trainer(bundle)
        history = trainer.fit(data, eval=val, epochs=3)
        trainer.session.read_state("classifier.weight")
    """

    def __init__(self, bundle: Union[Bundle, PathLike],
                 threads: Optional[int] = None):
        self.session = Session(bundle, threads=threads)
        self._name = "'" + (bundle.path if isinstance(bundle, Bundle)
                            else os.fspath(bundle)) + "'"

    def fit(self, data, *, eval=None, epochs: int = 1,
            steps: Optional[int] = None, batch: Optional[int] = None,
            shuffle: bool = True, seed: int = 0,
            group_by_length: bool = False, lr: Optional[float] = None,
            lr_schedule: Optional[str] = None,
            warmup_steps: Optional[int] = None,
            schedule_steps: Optional[int] = None,
            grad_accum: Optional[int] = None,
            checkpoint_dir: Optional[PathLike] = None,
            checkpoint_every: int = 0, resume: bool = False,
            log_losses: Optional[PathLike] = None,
            save_states: Optional[PathLike] = None,
            export_onnx: Optional[PathLike] = None,
            onnx_model: Optional[PathLike] = None,
            export_bundle: Optional[PathLike] = None,
            tokenizer: Optional[PathLike] = None, log_every: int = 10,
            progress: Union[bool, Callable[[str], None], None] = True,
            on_step: Optional[Callable[[dict], None]] = None) -> dict:
        """Trains on `data` (a path or a dict of arrays, one row per
        example). Returns the history: "steps" (one dict per optimizer
        step: step, epoch, loss, lr, grad_norm, samples_per_second,
        eta_seconds), "losses" (each step's loss) and "eval" (one dict per
        evaluation: epoch, loss, accuracy). `progress=True` prints the
        report's lines to stderr, a callable receives them; `on_step` is
        called after each optimizer step and may raise to stop the run
        (the exception propagates). Failures raise lmopt.Error."""
        if progress is True:
            log = lambda line: print(line, file=sys.stderr, flush=True)
        elif progress is None or progress is False:
            log = None
        elif callable(progress):
            log = progress
        else:
            raise TypeError("progress is a bool or a callable taking a line")
        history: Dict[str, list] = {"steps": [], "losses": [], "eval": []}

        def step(record):
            history["steps"].append(record)
            history["losses"].append(record["loss"])
            if on_step is not None:
                on_step(record)

        def compile_bundle(onnx_path, bundle_path, inputs):
            pinned = {n: d for n, d, _ in inputs if -1 not in d}
            bounded = {n: m for n, d, m in inputs if -1 in d}
            compile(onnx_path, input_shapes=pinned or None,
                    max_shapes=bounded or None, output=bundle_path)

        def text(path):
            return None if path is None else os.fspath(path)

        with tempfile.TemporaryDirectory(prefix="lmopt-train-") as folder:
            options = {
                "data": _data_path(data, folder, "data"),
                "eval": (None if eval is None
                         else _data_path(eval, folder, "eval")),
                "epochs": int(epochs), "steps": steps, "batch": batch,
                "shuffle": bool(shuffle), "seed": int(seed),
                "group_by_length": bool(group_by_length),
                "lr": None if lr is None else float(lr),
                "lr_schedule": lr_schedule, "warmup_steps": warmup_steps,
                "schedule_steps": schedule_steps, "grad_accum": grad_accum,
                "checkpoint_dir": text(checkpoint_dir),
                "checkpoint_every": int(checkpoint_every),
                "resume": bool(resume), "log_losses": text(log_losses),
                "save_states": text(save_states),
                "export_onnx": text(export_onnx),
                "onnx_model": text(onnx_model),
                "export_bundle": text(export_bundle),
                "tokenizer": text(tokenizer), "log_every": int(log_every),
                "bundle_name": self._name}
            self.session._train(options, log, step,
                                history["eval"].append, compile_bundle)
        return history

    def evaluate(self, data, batch: Optional[int] = None) -> dict:
        """The eval entry over `data` (a path or a dict of arrays): mean
        loss and, for cross-entropy, accuracy (None otherwise)."""
        with tempfile.TemporaryDirectory(prefix="lmopt-eval-") as folder:
            return self.session._evaluate(_data_path(data, folder, "eval"),
                                          int(batch or 0))

    def parameters(self) -> dict:
        """The trained parameters (the states without a '/' in their name)
        as numpy arrays, by name."""
        return {s["name"]: self.session.read_state(s["name"])
                for s in self.session.states if "/" not in s["name"]}
