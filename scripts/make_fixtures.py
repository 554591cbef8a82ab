#!/usr/bin/env python3
"""Regenerate the ONNX importer's fixture models in test/models/onnx.

Each fixture is a tiny transformer built from a Hugging Face config (or plain
torch.nn) with seeded random weights -- nothing is downloaded -- exported to
ONNX, plus fixed inputs (NAME.inputs.npz) and ONNX Runtime reference outputs
(NAME.ref.npz). The script also writes manifest.json and README.md.

Needs torch, transformers and onnxscript (regeneration only; the tests read the
committed files):

    pip install torch transformers onnxscript
    python3 scripts/make_fixtures.py [--out test/models/onnx] [--only NAME]
"""

import argparse
import collections
import dataclasses
import hashlib
import io
import json
import os
import random
import shutil
import sys
import tempfile
import warnings
import zlib
from typing import Callable

import numpy as np
import onnx
import onnxruntime as ort
import torch
from torch import nn

DEFAULT_OUT = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "test", "models", "onnx"
)
TORCHSCRIPT_OPSET = 17
DYNAMO_OPSET = 18
# ORT and PyTorch must agree this closely on every output.
TORCH_TOLERANCE = 1e-4


# --------------------------------------------------------------------------
# Model families. Each builder is seeded by the family name, so fixtures of the
# same family (bert, bert_dropout, bert_dynamo) share their weights.
# --------------------------------------------------------------------------


def seed_everything(key: str) -> None:
    seed = zlib.crc32(key.encode())
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


class BertLike(nn.Module):
    """(input_ids, attention_mask, token_type_ids) -> (last_hidden_state, pooler_output)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, token_type_ids):
        out = self.model(
            input_ids=input_ids,
            attention_mask=attention_mask,
            token_type_ids=token_type_ids,
        )
        return out.last_hidden_state, out.pooler_output


class PooledEncoder(nn.Module):
    """(input_ids, attention_mask) -> (last_hidden_state, pooler_output)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        out = self.model(input_ids=input_ids, attention_mask=attention_mask)
        return out.last_hidden_state, out.pooler_output


class HiddenOnly(nn.Module):
    """(input_ids, attention_mask) -> last_hidden_state, without a KV cache."""

    def __init__(self, model, **extra):
        super().__init__()
        self.model = model
        self.extra = extra

    def forward(self, input_ids, attention_mask):
        out = self.model(
            input_ids=input_ids, attention_mask=attention_mask, **self.extra
        )
        return out.last_hidden_state


class Gpt2WithPast(nn.Module):
    """(input_ids, attention_mask, past_key_0, past_value_0, ...) ->
    (last_hidden_state, present_key_0, present_value_0, ...)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, *past):
        from transformers import DynamicCache

        pairs = [(past[i], past[i + 1]) for i in range(0, len(past), 2)]
        cache = DynamicCache(pairs)
        out = self.model(
            input_ids=input_ids,
            attention_mask=attention_mask,
            cache=cache,
            use_cache=True,
        )
        present = []
        for layer in out.cache.layers:
            present += [layer.keys, layer.values]
        return (out.last_hidden_state, *present)


class Gpt2LmWithPast(Gpt2WithPast):
    """(input_ids, attention_mask, past_key_0, past_value_0, ...) ->
    (logits, present_key_0, present_value_0, ...): a language model's decoding
    step, as generation runs it."""

    def forward(self, input_ids, attention_mask, *past):
        from transformers import DynamicCache

        pairs = [(past[i], past[i + 1]) for i in range(0, len(past), 2)]
        out = self.model(
            input_ids=input_ids,
            attention_mask=attention_mask,
            cache=DynamicCache(pairs),
            use_cache=True,
        )
        present = []
        for layer in out.cache.layers:
            present += [layer.keys, layer.values]
        return (out.logits, *present)


class TorchEncoder(nn.Module):
    """(src, src_key_padding_mask) -> output, for a plain nn.TransformerEncoder."""

    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder

    def forward(self, src, src_key_padding_mask):
        return self.encoder(src, src_key_padding_mask=src_key_padding_mask)


BERT_CONFIG = dict(
    vocab_size=1000,
    hidden_size=64,
    num_hidden_layers=2,
    num_attention_heads=2,
    intermediate_size=256,
    max_position_embeddings=128,
    type_vocab_size=2,
    pad_token_id=0,
)
MINILM_CONFIG = dict(
    vocab_size=1000,
    hidden_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=512,
    max_position_embeddings=128,
    type_vocab_size=2,
    pad_token_id=0,
)
DISTILBERT_CONFIG = dict(
    vocab_size=1000,
    dim=64,
    n_layers=2,
    n_heads=4,
    hidden_dim=256,
    max_position_embeddings=128,
    pad_token_id=0,
)
ROBERTA_CONFIG = dict(
    vocab_size=1000,
    hidden_size=96,
    num_hidden_layers=2,
    num_attention_heads=3,
    intermediate_size=384,
    max_position_embeddings=130,
    type_vocab_size=1,
    pad_token_id=1,
    bos_token_id=0,
    eos_token_id=2,
)
GPT2_CONFIG = dict(
    vocab_size=1000,
    n_embd=64,
    n_layer=2,
    n_head=4,
    n_inner=256,
    n_positions=128,
    # The defaults (50256) lie outside the small vocabulary.
    bos_token_id=0,
    eos_token_id=0,
)
TORCH_ENCODER_CONFIG = dict(
    d_model=64,
    nhead=4,
    dim_feedforward=256,
    num_layers=2,
    dropout=0.1,
    activation="relu",
    batch_first=True,
)


@torch.no_grad()
def perturb_constant_parameters(module: nn.Module) -> None:
    """Initializers leave biases at 0 and norm scales at 1; make them random so
    that an importer which drops or swaps one gives a visibly wrong answer."""
    for param in module.parameters():
        flat = param.flatten()
        if flat.numel() and bool((flat == flat[0]).all()):
            param.add_(0.1 * torch.randn_like(param))


def hf_model(family: str, config_cls, model_cls, config: dict,
             attention: str = "eager"):
    seed_everything(family)
    cfg = config_cls(**config, attn_implementation=attention)
    model = model_cls(cfg)
    assert model.config._attn_implementation == attention
    perturb_constant_parameters(model)
    return model.eval()


def build_bert():
    from transformers import BertConfig, BertModel

    return BertLike(hf_model("bert", BertConfig, BertModel, BERT_CONFIG))


def build_minilm():
    from transformers import BertConfig, BertModel

    return BertLike(hf_model("minilm", BertConfig, BertModel, MINILM_CONFIG))


def build_distilbert():
    from transformers import DistilBertConfig, DistilBertModel

    return HiddenOnly(
        hf_model("distilbert", DistilBertConfig, DistilBertModel, DISTILBERT_CONFIG)
    )


def build_roberta():
    from transformers import RobertaConfig, RobertaModel

    return PooledEncoder(
        hf_model("roberta", RobertaConfig, RobertaModel, ROBERTA_CONFIG)
    )


def build_gpt2():
    from transformers import GPT2Config, GPT2Model

    return HiddenOnly(
        hf_model("gpt2", GPT2Config, GPT2Model, GPT2_CONFIG), use_cache=False
    )


def build_bert_sdpa():
    from transformers import BertConfig, BertModel

    return BertLike(
        hf_model("bert", BertConfig, BertModel, BERT_CONFIG, attention="sdpa"))


def build_gpt2_sdpa():
    from transformers import GPT2Config, GPT2Model

    return HiddenOnly(
        hf_model("gpt2", GPT2Config, GPT2Model, GPT2_CONFIG, attention="sdpa"),
        use_cache=False,
    )


def build_gpt2_past():
    from transformers import GPT2Config, GPT2Model

    return Gpt2WithPast(hf_model("gpt2", GPT2Config, GPT2Model, GPT2_CONFIG))


# Weights ten times the default scale: with GPT-2's 0.02, a small random
# model decodes one token over and over, which would not tell a wrong cache
# from a right one.
GPT2_LM_CONFIG = dict(GPT2_CONFIG, initializer_range=0.2)


def build_gpt2_lm_past():
    from transformers import GPT2Config, GPT2LMHeadModel

    return Gpt2LmWithPast(
        hf_model("gpt2_lm", GPT2Config, GPT2LMHeadModel, GPT2_LM_CONFIG)
    )


def build_torch_encoder():
    seed_everything("torch_encoder")
    cfg = dict(TORCH_ENCODER_CONFIG)
    num_layers = cfg.pop("num_layers")
    layer = nn.TransformerEncoderLayer(**cfg)
    # Nested tensors only change the fast path, which export never takes.
    encoder = nn.TransformerEncoder(
        layer, num_layers=num_layers, enable_nested_tensor=False
    )
    # The encoder deep-copies one layer; give every layer its own weights.
    for sub in encoder.modules():
        if isinstance(sub, nn.MultiheadAttention):
            sub._reset_parameters()
        elif isinstance(sub, nn.Linear):
            sub.reset_parameters()
    perturb_constant_parameters(encoder)
    return TorchEncoder(encoder).eval()


# --------------------------------------------------------------------------
# Inputs. Every row but the last is full; the last row ends in padding.
# --------------------------------------------------------------------------


def padding_mask(batch: int, seq: int, pad: int) -> np.ndarray:
    mask = np.ones((batch, seq), dtype=np.int64)
    mask[-1, seq - pad :] = 0
    return mask


def token_ids(rng, batch, seq, mask, pad_id, low=3, high=1000) -> np.ndarray:
    ids = rng.integers(low, high, size=(batch, seq), dtype=np.int64)
    ids[mask == 0] = pad_id
    return ids


def bert_inputs(rng, batch, seq):
    mask = padding_mask(batch, seq, pad=seq // 4)
    types = np.zeros((batch, seq), dtype=np.int64)
    types[:, seq // 2 :] = 1
    types[mask == 0] = 0
    return {
        "input_ids": token_ids(rng, batch, seq, mask, pad_id=0),
        "attention_mask": mask,
        "token_type_ids": types,
    }


def text_inputs(pad_id):
    def make(rng, batch, seq):
        mask = padding_mask(batch, seq, pad=seq // 4)
        return {
            "input_ids": token_ids(rng, batch, seq, mask, pad_id=pad_id),
            "attention_mask": mask,
        }

    return make


GPT2_PAST_LEN = 6


def gpt2_past_inputs(rng, batch, seq, past_len=GPT2_PAST_LEN,
                     build=build_gpt2_past):
    """New tokens after a cached prefix; the cache comes from running the same
    model on the prefix, so its values are in the range real decoding sees."""
    from transformers import DynamicCache

    model = build().model
    prefix = rng.integers(3, 1000, size=(batch, past_len), dtype=np.int64)
    with torch.no_grad():
        out = model(
            input_ids=torch.from_numpy(prefix),
            cache=DynamicCache(),
            use_cache=True,
        )
    mask = np.ones((batch, past_len + seq), dtype=np.int64)
    mask[-1, past_len + seq - seq // 4 :] = 0
    inputs = {
        "input_ids": token_ids(rng, batch, seq, mask[:, past_len:], pad_id=0),
        "attention_mask": mask,
    }
    for i, layer in enumerate(out.cache.layers):
        inputs[f"past_key_{i}"] = layer.keys.numpy().copy()
        inputs[f"past_value_{i}"] = layer.values.numpy().copy()
    return inputs


def gpt2_lm_past_inputs(rng, batch, seq, past_len=GPT2_PAST_LEN):
    return gpt2_past_inputs(rng, batch, seq, past_len, build=build_gpt2_lm_past)


def torch_encoder_inputs(rng, batch, seq):
    d_model = TORCH_ENCODER_CONFIG["d_model"]
    padded = padding_mask(batch, seq, pad=seq // 4) == 0
    return {
        "src": rng.standard_normal((batch, seq, d_model)).astype(np.float32),
        "src_key_padding_mask": padded,
    }


# --------------------------------------------------------------------------
# Fixture table.
# --------------------------------------------------------------------------

BATCH_SEQ = {0: "batch", 1: "sequence"}


@dataclasses.dataclass
class Fixture:
    name: str
    description: str
    build: Callable[[], nn.Module]
    config: dict
    config_class: str
    make_inputs: Callable
    seq: int
    # ONNX name -> {axis: symbolic name}, for inputs then outputs.
    input_axes: dict
    output_axes: dict
    exporter: str = "torchscript"
    opset: int = TORCHSCRIPT_OPSET
    # Export in training mode and keep the Dropout nodes.
    keep_dropout: bool = False
    # Other make_inputs arguments (batch, seq, ...) used only to check that the
    # axes really are dynamic.
    check_shape: tuple = (3, 7)

    @property
    def input_names(self):
        return list(self.input_axes)

    @property
    def output_names(self):
        return list(self.output_axes)


BERT_IO = dict(
    input_axes={
        "input_ids": BATCH_SEQ,
        "attention_mask": BATCH_SEQ,
        "token_type_ids": BATCH_SEQ,
    },
    output_axes={"last_hidden_state": BATCH_SEQ, "pooler_output": {0: "batch"}},
)
TEXT_AXES = {"input_ids": BATCH_SEQ, "attention_mask": BATCH_SEQ}


def gpt2_past_axes(num_layers):
    past = {0: "batch", 2: "past_sequence"}
    present = {0: "batch", 2: "total_sequence"}
    inputs = {
        "input_ids": BATCH_SEQ,
        "attention_mask": {0: "batch", 1: "total_sequence"},
    }
    outputs = {"last_hidden_state": BATCH_SEQ}
    for i in range(num_layers):
        inputs[f"past_key_{i}"] = past
        inputs[f"past_value_{i}"] = past
        outputs[f"present_key_{i}"] = present
        outputs[f"present_value_{i}"] = present
    return inputs, outputs


GPT2_PAST_INPUT_AXES, GPT2_PAST_OUTPUT_AXES = gpt2_past_axes(GPT2_CONFIG["n_layer"])

BERT = Fixture(
    name="bert",
    description="BertModel (post-LN encoder, GELU, pooler)",
    build=build_bert,
    config=BERT_CONFIG,
    config_class="BertConfig",
    make_inputs=bert_inputs,
    seq=12,
    **BERT_IO,
)
GPT2 = Fixture(
    name="gpt2",
    description="GPT2Model (pre-LN decoder, causal mask, Conv1D weights), use_cache=False",
    build=build_gpt2,
    config=GPT2_CONFIG,
    config_class="GPT2Config",
    make_inputs=text_inputs(pad_id=0),
    seq=12,
    input_axes=TEXT_AXES,
    output_axes={"last_hidden_state": BATCH_SEQ},
)
TORCH_ENCODER = Fixture(
    name="torch_encoder",
    description=(
        "torch.nn.TransformerEncoder of 2 TransformerEncoderLayer(batch_first=True), "
        "float input and boolean src_key_padding_mask (true = padding); the "
        "sequence length is fixed at 12 because the TorchScript exporter bakes "
        "it into nn.MultiheadAttention's key/value reshapes"
    ),
    build=build_torch_encoder,
    config=TORCH_ENCODER_CONFIG,
    config_class="torch.nn.TransformerEncoderLayer",
    make_inputs=torch_encoder_inputs,
    seq=12,
    input_axes={"src": {0: "batch"}, "src_key_padding_mask": {0: "batch"}},
    output_axes={"output": {0: "batch"}},
    check_shape=(3, 12),
)


def dynamo_variant(base: Fixture, **changes) -> Fixture:
    return dataclasses.replace(
        base,
        name=base.name + "_dynamo",
        description=(
            f"The `{base.name}` model exported with the torch.export-based "
            "(dynamo) exporter"
        ),
        exporter="dynamo",
        opset=DYNAMO_OPSET,
        **changes,
    )


FIXTURES = [
    BERT,
    dataclasses.replace(
        BERT,
        name="bert_dropout",
        description=(
            "The `bert` model exported in training mode without constant folding: "
            "it keeps 7 Dropout nodes (ratio 0.1), whose training_mode input is "
            "then replaced by a constant false so that the graph computes the same "
            "values as `bert`"
        ),
        keep_dropout=True,
    ),
    dynamo_variant(BERT),
    dataclasses.replace(
        BERT,
        name="minilm",
        description=(
            "BertModel in the MiniLM shape (head size 32, FFN 4x), scaled down "
            "to 2 layers and 4 heads"
        ),
        build=build_minilm,
        config=MINILM_CONFIG,
        seq=16,
    ),
    Fixture(
        name="distilbert",
        description="DistilBertModel (no token types, no pooler)",
        build=build_distilbert,
        config=DISTILBERT_CONFIG,
        config_class="DistilBertConfig",
        make_inputs=text_inputs(pad_id=0),
        seq=10,
        input_axes=TEXT_AXES,
        output_axes={"last_hidden_state": BATCH_SEQ},
    ),
    Fixture(
        name="roberta",
        description=(
            "RobertaModel (position ids derived from input_ids and pad id 1, "
            "3 heads of size 32)"
        ),
        build=build_roberta,
        config=ROBERTA_CONFIG,
        config_class="RobertaConfig",
        make_inputs=text_inputs(pad_id=1),
        seq=14,
        input_axes=TEXT_AXES,
        output_axes={"last_hidden_state": BATCH_SEQ, "pooler_output": {0: "batch"}},
    ),
    GPT2,
    dynamo_variant(GPT2),
    # Hugging Face's default attention implementation: torch's
    # scaled_dot_product_attention, exported with a -inf mask and an IsNaN
    # guard on the probabilities.
    dataclasses.replace(
        BERT,
        name="bert_sdpa",
        description="The `bert` model with attn_implementation='sdpa'",
        build=build_bert_sdpa,
    ),
    dataclasses.replace(
        GPT2,
        name="gpt2_sdpa",
        description="The `gpt2` model with attn_implementation='sdpa'",
        build=build_gpt2_sdpa,
    ),
    dataclasses.replace(
        GPT2,
        name="gpt2_past",
        description=(
            f"The `gpt2` model decoding with a KV cache: {GPT2_PAST_LEN} cached "
            "positions in past_key_i/past_value_i [batch, heads, past, head_size], "
            "attention_mask covers past + new tokens, outputs present_key_i/"
            "present_value_i"
        ),
        build=build_gpt2_past,
        make_inputs=gpt2_past_inputs,
        seq=8,
        input_axes=GPT2_PAST_INPUT_AXES,
        output_axes=GPT2_PAST_OUTPUT_AXES,
        check_shape=(3, 5, 3),  # batch, new tokens, cached positions
    ),
    dataclasses.replace(
        GPT2,
        name="gpt2_lm_past",
        description=(
            "GPT2LMHeadModel (the `gpt2` config, weights at 10x its initializer "
            "range, a tied LM head) decoding "
            f"with a KV cache: {GPT2_PAST_LEN} cached positions in past_key_i/"
            "past_value_i, outputs logits and present_key_i/present_value_i; "
            "lmopt-compile --kv-cache turns it into prefill and decode entries"
        ),
        build=build_gpt2_lm_past,
        config=GPT2_LM_CONFIG,
        make_inputs=gpt2_lm_past_inputs,
        seq=8,
        input_axes=GPT2_PAST_INPUT_AXES,
        output_axes={
            "logits": BATCH_SEQ,
            **{k: v for k, v in GPT2_PAST_OUTPUT_AXES.items()
               if k != "last_hidden_state"},
        },
        check_shape=(3, 5, 3),
    ),
    TORCH_ENCODER,
    dataclasses.replace(
        dynamo_variant(
            TORCH_ENCODER,
            input_axes={"src": BATCH_SEQ, "src_key_padding_mask": BATCH_SEQ},
            output_axes={"output": BATCH_SEQ},
            check_shape=(3, 7),
        ),
        description=(
            "The `torch_encoder` model exported with the torch.export-based "
            "(dynamo) exporter, which keeps the sequence length dynamic"
        ),
    ),
]


# --------------------------------------------------------------------------
# Export, check, reference.
# --------------------------------------------------------------------------


def to_torch(inputs: dict) -> tuple:
    return tuple(torch.from_numpy(np.ascontiguousarray(v)) for v in inputs.values())


def export_torchscript(fx: Fixture, module: nn.Module, args: tuple) -> onnx.ModelProto:
    buf = io.BytesIO()
    training = (
        torch.onnx.TrainingMode.TRAINING
        if fx.keep_dropout
        else torch.onnx.TrainingMode.EVAL
    )
    torch.onnx.export(
        module,
        args,
        buf,
        dynamo=False,
        opset_version=fx.opset,
        input_names=fx.input_names,
        output_names=fx.output_names,
        dynamic_axes={**fx.input_axes, **fx.output_axes},
        training=training,
        # Folding would rewrite parameters in a training-mode graph.
        do_constant_folding=not fx.keep_dropout,
    )
    # The exporter leaves the module in training mode after a TRAINING export.
    module.eval()
    model = onnx.load_from_string(buf.getvalue())
    if fx.keep_dropout:
        disable_dropout_training_mode(model)
    return model


def export_dynamo(fx: Fixture, module: nn.Module, args: tuple) -> onnx.ModelProto:
    dims = {}

    def dim(name):
        return dims.setdefault(name, torch.export.Dim(name, min=1, max=1024))

    dynamic_shapes = tuple(
        {axis: dim(sym) for axis, sym in axes.items()}
        for axes in fx.input_axes.values()
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.onnx")
        torch.onnx.export(
            module,
            args,
            path,
            dynamo=True,
            opset_version=fx.opset,
            input_names=fx.input_names,
            output_names=fx.output_names,
            dynamic_shapes=dynamic_shapes,
            external_data=False,
        )
        leftovers = sorted(set(os.listdir(tmp)) - {"model.onnx"})
        if leftovers:
            raise RuntimeError(f"dynamo export wrote external files: {leftovers}")
        return onnx.load(path)


def disable_dropout_training_mode(model: onnx.ModelProto) -> None:
    """Point every Dropout's training_mode at a constant false: the nodes stay in
    the graph (what dropout elimination is tested against) but compute the
    identity, so the reference outputs are deterministic."""
    graph = model.graph
    false_name = "dropout_training_mode_false"
    graph.initializer.append(
        onnx.numpy_helper.from_array(np.array(False), name=false_name)
    )
    replaced = set()
    for node in graph.node:
        if node.op_type != "Dropout":
            continue
        if len(node.input) >= 3 and node.input[2]:
            replaced.add(node.input[2])
            node.input[2] = false_name
    # Drop the now-unused true constants.
    used = {name for node in graph.node for name in node.input}
    dead = [
        n
        for n in graph.node
        if n.op_type == "Constant" and n.output[0] in replaced - used
    ]
    for n in dead:
        graph.node.remove(n)
    if not replaced:
        raise RuntimeError("training-mode export produced no Dropout training_mode")


def check_no_external_data(model: onnx.ModelProto) -> None:
    for init in model.graph.initializer:
        if init.data_location == onnx.TensorProto.EXTERNAL:
            raise RuntimeError(f"initializer '{init.name}' uses external data")


def session(path: str) -> ort.InferenceSession:
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def run_ort(sess: ort.InferenceSession, inputs: dict) -> dict:
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, inputs)))


def run_torch(module: nn.Module, names: list, inputs: dict) -> dict:
    # Grad mode keeps nn.TransformerEncoder off its fused fast path, which
    # export never records; it does not change any other model's result.
    with torch.enable_grad():
        out = module(*to_torch(inputs))
    if isinstance(out, torch.Tensor):
        out = (out,)
    return {n: t.detach().numpy() for n, t in zip(names, out)}


def max_abs_diff(a: dict, b: dict) -> float:
    assert a.keys() == b.keys(), (sorted(a), sorted(b))
    return max(float(np.max(np.abs(a[k] - b[k]))) for k in a)


def op_counts(model: onnx.ModelProto) -> dict:
    counts = collections.Counter()
    graphs = [model.graph] + [f for f in model.functions]
    while graphs:
        g = graphs.pop()
        for node in g.node:
            key = f"{node.domain}::{node.op_type}" if node.domain else node.op_type
            counts[key] += 1
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    graphs.append(attr.g)
                graphs.extend(attr.graphs)
    return dict(sorted(counts.items()))


def value_info(values) -> list:
    def dims(t):
        return [
            d.dim_param if d.HasField("dim_param") else d.dim_value
            for d in t.tensor_type.shape.dim
        ]

    return [
        {
            "name": v.name,
            "dtype": onnx.helper.tensor_dtype_to_np_dtype(
                v.type.tensor_type.elem_type
            ).name,
            "shape": dims(v.type),
        }
        for v in values
    ]


def sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def save_npz(path: str, arrays: dict) -> None:
    # np.savez writes zip entries with the current time; fix it so reruns are
    # byte-identical.
    import zipfile

    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for key, value in arrays.items():
            buf = io.BytesIO()
            # asarray, not ascontiguousarray, which turns a scalar into shape [1].
            np.lib.format.write_array(buf, np.asarray(value, order="C"))
            info = zipfile.ZipInfo(key + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, buf.getvalue())


def export(fx: Fixture, module: nn.Module, inputs: dict) -> onnx.ModelProto:
    args = to_torch(inputs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if fx.exporter == "dynamo":
            model = export_dynamo(fx, module, args)
        else:
            model = export_torchscript(fx, module, args)
    check_no_external_data(model)
    onnx.checker.check_model(model, full_check=True)
    return model


def reference(fx: Fixture, module: nn.Module, path: str, inputs: dict):
    """ORT outputs for `inputs`, after checking ORT against PyTorch on them and
    on a second shape (which catches axes the trace made static)."""
    sess = session(path)
    ref = run_ort(sess, inputs)
    if list(ref) != fx.output_names:
        raise RuntimeError(f"outputs {list(ref)}, expected {fx.output_names}")
    diff = max_abs_diff(ref, run_torch(module, fx.output_names, inputs))
    other = fx.make_inputs(np.random.default_rng(1), *fx.check_shape)
    other_diff = max_abs_diff(
        run_ort(sess, other), run_torch(module, fx.output_names, other)
    )
    print(
        f"{fx.name:20s} max |ORT - torch| = {diff:.3g} "
        f"(with make_inputs{fx.check_shape}: {other_diff:.3g})"
    )
    for what, d in (("fixed inputs", diff), (f"shape {fx.check_shape}", other_diff)):
        if not d <= TORCH_TOLERANCE:
            raise RuntimeError(
                f"ORT and PyTorch differ by {d:.3g} on {what} "
                f"(tolerance {TORCH_TOLERANCE})"
            )
    return ref, diff


def make_fixture(fx: Fixture, out_dir: str) -> dict:
    module = fx.build()
    rng = np.random.default_rng(zlib.crc32(fx.name.encode()))
    inputs = fx.make_inputs(rng, 2, fx.seq)
    assert list(inputs) == fx.input_names, (list(inputs), fx.input_names)
    model = export(fx, module, inputs)

    # Nothing lands in out_dir until every check has passed.
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = os.path.join(tmp, fx.name + ".onnx")
        onnx.save_model(model, tmp_path, save_as_external_data=False)
        ref, diff = reference(fx, module, tmp_path, inputs)
        path = os.path.join(out_dir, fx.name + ".onnx")
        shutil.move(tmp_path, path)
    save_npz(os.path.join(out_dir, fx.name + ".inputs.npz"), inputs)
    save_npz(os.path.join(out_dir, fx.name + ".ref.npz"), ref)

    ops = op_counts(model)
    declared = {
        sym
        for axes in (*fx.input_axes.values(), *fx.output_axes.values())
        for sym in axes.values()
    }
    # Dimensions the exporter named on its own (static in fact, but not in the
    # file): the importer has to treat them as dynamic.
    undeclared = [
        f"{v['name']}[{axis}] = {dim}"
        for v in value_info(model.graph.output)
        for axis, dim in enumerate(v["shape"])
        if isinstance(dim, str) and dim not in declared
    ]
    return {
        "description": fx.description,
        "exporter": fx.exporter,
        "opset": next(
            o.version for o in model.opset_import if o.domain in ("", "ai.onnx")
        ),
        "training_mode_export": fx.keep_dropout,
        "config_class": fx.config_class,
        "config": fx.config,
        "inputs": value_info(model.graph.input),
        "outputs": value_info(model.graph.output),
        "exporter_named_dims": undeclared,
        "size_bytes": os.path.getsize(path),
        "sha256": sha256(path),
        "nodes": sum(ops.values()),
        "op_types": ops,
        "max_abs_diff_vs_torch": float(f"{diff:.3g}"),
    }


# --------------------------------------------------------------------------
# README.
# --------------------------------------------------------------------------


DERIVED_SECTION = "## Quantized and ONNX Runtime-fused fixtures"


def write_readme(out_dir: str, manifest: dict) -> None:
    """Writes the README for this script's fixtures, keeping the section that
    make_quantized_fixtures.py's fixtures are described in."""
    own = {fx.name for fx in FIXTURES}
    fixtures = {k: v for k, v in manifest["fixtures"].items() if k in own}
    derived = ""
    path = os.path.join(out_dir, "README.md")
    if os.path.exists(path):
        with open(path) as fh:
            text = fh.read()
        if DERIVED_SECTION in text:
            derived = text[text.index(DERIVED_SECTION):]
    lines = [
        "# ONNX importer fixtures",
        "",
        "Tiny transformer models with seeded random weights, built from Hugging Face",
        "configs (`XxxConfig(...)` + `XxxModel(config)`, nothing downloaded) or",
        "`torch.nn`, exported to ONNX with every weight inside the `.onnx` file.",
        "Generated by `scripts/make_fixtures.py`; do not edit by hand.",
        "",
        "For each `NAME`:",
        "",
        "- `NAME.onnx`: the model.",
        "- `NAME.inputs.npz`: fixed inputs (batch 2; the last row ends in padding).",
        "- `NAME.ref.npz`: ONNX Runtime outputs for those inputs, keyed by output",
        "  name (CPUExecutionProvider, `ORT_DISABLE_ALL`, one thread). Generation",
        f"  checks they match PyTorch within {TORCH_TOLERANCE:.0e}, also at a second".replace(
            "e-0", "e-"
        ),
        "  batch and sequence length to prove the axes are dynamic.",
        "",
        "`manifest.json` holds the same facts in machine-readable form (configs,",
        "input/output signatures, op counts, sizes, SHA-256).",
        "",
        "Generated with "
        + ", ".join(f"{k} {v}" for k, v in manifest["versions"].items())
        + ".",
        "",
        "## Checking",
        "",
        "`python3 scripts/check_fixtures.py` (numpy and onnxruntime only) reruns",
        "ONNX Runtime on every fixture and compares with `NAME.ref.npz`.",
        "",
        "## Regenerating",
        "",
        "```sh",
        "pip install torch transformers onnxscript",
        "python3 scripts/make_fixtures.py              # all fixtures",
        "python3 scripts/make_fixtures.py --only gpt2  # one fixture",
        "```",
        "",
        "Weights and inputs are seeded, so regeneration with the same versions is",
        "byte-identical.",
        "",
        "## Fixtures",
        "",
        "| name | model | exporter | opset | size | nodes | max abs diff vs PyTorch |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, f in fixtures.items():
        lines.append(
            f"| `{name}` | {f['config_class']} | {f['exporter']} | {f['opset']} "
            f"| {f['size_bytes'] / 1024:.0f} KiB | {f['nodes']} | {f['max_abs_diff_vs_torch']:.2g} |"
        )
    for name, f in fixtures.items():
        cfg = ", ".join(f"{k}={v!r}" for k, v in f["config"].items())

        def sig(values):
            return ", ".join(
                f"`{v['name']}` {v['dtype']}[{', '.join(map(str, v['shape']))}]"
                for v in values
            )

        ops = ", ".join(f"{op} {n}" for op, n in f["op_types"].items())
        lines += [
            "",
            f"### `{name}`",
            "",
            f"{f['description']}.",
            "",
            f"- config: `{f['config_class']}({cfg})`"
            + (
                ", `attn_implementation='eager'`"
                if "Config" in f["config_class"]
                else ""
            ),
            f"- exporter: {f['exporter']}, opset {f['opset']}"
            + (
                ", training mode, no constant folding"
                if f["training_mode_export"]
                else ""
            ),
            f"- inputs: {sig(f['inputs'])}",
            f"- outputs: {sig(f['outputs'])}",
            f"- ops ({f['nodes']}): {ops}",
        ]
        if f["exporter_named_dims"]:
            lines.append(
                "- the exporter left these output dimensions symbolic although "
                "they are static: "
                + ", ".join(f"`{d}`" for d in f["exporter_named_dims"])
            )
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")
        if derived:
            fh.write("\n" + derived)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.normpath(DEFAULT_OUT))
    parser.add_argument(
        "--only",
        choices=[fx.name for fx in FIXTURES],
        action="append",
        help="regenerate only this fixture (repeatable)",
    )
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)

    manifest_path = os.path.join(args.out, "manifest.json")
    manifest = {"fixtures": {}}
    # Keep what is there: other scripts (make_quantized_fixtures.py) add
    # fixtures derived from these, and --only regenerates a subset.
    if os.path.exists(manifest_path):
        with open(manifest_path) as fh:
            manifest = json.load(fh)

    import transformers

    manifest["versions"] = {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "onnx": onnx.__version__,
        "onnxruntime": ort.__version__,
    }
    try:
        import onnxscript

        manifest["versions"]["onnxscript"] = onnxscript.__version__
    except ImportError:
        pass

    failed = []
    for fx in FIXTURES:
        if args.only and fx.name not in args.only:
            continue
        try:
            manifest["fixtures"][fx.name] = make_fixture(fx, args.out)
        except Exception as exc:  # report every failing fixture, then fail
            failed.append(fx.name)
            print(f"{fx.name}: FAILED: {type(exc).__name__}: {exc}", file=sys.stderr)

    order = [fx.name for fx in FIXTURES]
    manifest["fixtures"] = {
        k: manifest["fixtures"][k]
        for k in sorted(
            manifest["fixtures"],
            key=lambda k: (order.index(k) if k in order else len(order), k),
        )
    }
    with open(manifest_path, "w") as fh:
        json.dump(manifest, fh, indent=2)
        fh.write("\n")
    write_readme(args.out, manifest)
    total = sum(f["size_bytes"] for f in manifest["fixtures"].values())
    print(f"{len(manifest['fixtures'])} fixtures, {total / 2**20:.2f} MiB of .onnx")
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
