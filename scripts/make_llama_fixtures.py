#!/usr/bin/env python3
"""Regenerate the Llama-style decoder fixtures in test/models/onnx.

A tiny LlamaModel (rotary position embeddings, RMSNorm, SwiGLU feed-forward,
grouped-query attention: 4 query heads sharing 2 key/value heads) built from
transformers' LlamaConfig with seeded random weights -- nothing is
downloaded -- exported with the TorchScript-based exporter, with fixed inputs
(llama.inputs.npz), ONNX Runtime's outputs for them (llama.ref.npz), and two
more shapes for bounded dynamic shapes (llama.dyn_BxS.{inputs,ref}.npz).
ONNX Runtime's outputs are checked against PyTorch's on every shape before
anything is written. The fixture's facts go to README.llama.md.

llama_lm_past.onnx is the same decoder with its LM head, exported as one
decoding step with a key/value cache (past_key_i/past_value_i in,
logits and present_key_i/present_value_i out; rotary positions follow the
cache length), for `lmopt-compile --kv-cache`; llama_lm_past.generate.npz
holds PyTorch's greedy `generate` for a fixed prompt (tokens, and each
step's last logits), checked against ONNX Runtime decoding the export step
by step (scripts/make_generation_reference.py).

Needs torch, transformers and onnxscript (regeneration only; the tests read
the committed files):

    pip install torch transformers onnxscript
    python3 scripts/make_llama_fixtures.py [--out test/models/onnx]
"""

import argparse
import os
import sys
import zlib

import numpy as np
import onnx
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixtures as fixtures  # noqa: E402

LLAMA_CONFIG = dict(
    vocab_size=1000,
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=128,
    rms_norm_eps=1e-6,
    rope_theta=10000.0,
    hidden_act="silu",
    tie_word_embeddings=False,
)
# Extra shapes (batch, sequence) for bounded dynamic shapes.
DYNAMIC_SHAPES = [(1, 7), (3, 20)]
# The decoding fixture: weights ten times the default scale, so that a small
# random model does not repeat one token (which would not tell a wrong cache
# from a right one).
LLAMA_LM_CONFIG = dict(LLAMA_CONFIG, initializer_range=0.2)
PAST_LEN = 4
# Greedy generation reference: prompt [batch, length], new tokens.
GENERATE = dict(batch=2, prompt_length=5, new_tokens=12, seed=0)


def build_llama():
    from transformers import LlamaConfig, LlamaModel

    return fixtures.HiddenOnly(
        fixtures.hf_model("llama", LlamaConfig, LlamaModel, LLAMA_CONFIG),
        use_cache=False,
    )


LLAMA = fixtures.Fixture(
    name="llama",
    description=(
        "LlamaModel (pre-RMSNorm decoder, rotary position embeddings, SwiGLU, "
        "grouped-query attention with 4 query and 2 key/value heads, causal "
        "mask and a padding mask), use_cache=False"
    ),
    build=build_llama,
    config=LLAMA_CONFIG,
    config_class="LlamaConfig",
    make_inputs=fixtures.text_inputs(pad_id=0),
    seq=12,
    input_axes=fixtures.TEXT_AXES,
    output_axes={"last_hidden_state": fixtures.BATCH_SEQ},
)


def build_llama_lm():
    from transformers import LlamaConfig, LlamaForCausalLM

    return fixtures.hf_model("llama_lm", LlamaConfig, LlamaForCausalLM,
                             LLAMA_LM_CONFIG)


def build_llama_lm_past():
    # The wrapper only builds a DynamicCache from the flat past tensors.
    return fixtures.Gpt2LmWithPast(build_llama_lm())


def llama_lm_past_inputs(rng, batch, seq, past_len=PAST_LEN):
    return fixtures.gpt2_past_inputs(rng, batch, seq, past_len,
                                     build=build_llama_lm_past)


_PAST_INPUTS, _PAST_OUTPUTS = fixtures.gpt2_past_axes(
    LLAMA_CONFIG["num_hidden_layers"])

LLAMA_LM_PAST = fixtures.Fixture(
    name="llama_lm_past",
    description=(
        "LlamaForCausalLM (the llama config, weights at 10x its initializer "
        "range) decoding with a KV cache: "
        f"{PAST_LEN} cached positions in past_key_i/past_value_i [batch, 2 "
        "key/value heads, past, 16], outputs logits and present_key_i/"
        "present_value_i; lmopt-compile --kv-cache turns it into prefill and "
        "decode entries"
    ),
    build=build_llama_lm_past,
    config=LLAMA_LM_CONFIG,
    config_class="LlamaConfig",
    make_inputs=llama_lm_past_inputs,
    seq=8,
    input_axes=_PAST_INPUTS,
    output_axes={
        "logits": fixtures.BATCH_SEQ,
        **{k: v for k, v in _PAST_OUTPUTS.items() if k != "last_hidden_state"},
    },
    check_shape=(3, 5, 3),
)


# The same decoder through the torch.export-based (dynamo) exporter: its
# repeat_kv names the key/value head count as a constant.
LLAMA_DYNAMO = fixtures.dynamo_variant(LLAMA)


def write_generate_reference(out_dir):
    """PyTorch's greedy generate, checked against ONNX Runtime decoding the
    export step by step with its cache."""
    import make_generation_reference as gen

    model = build_llama_lm()
    rng = np.random.default_rng(GENERATE["seed"])
    prompt = rng.integers(1, LLAMA_CONFIG["vocab_size"],
                          size=(GENERATE["batch"], GENERATE["prompt_length"]),
                          dtype=np.int64)
    with torch.no_grad():
        out = model.generate(
            torch.from_numpy(prompt),
            attention_mask=torch.ones(prompt.shape, dtype=torch.int64),
            max_new_tokens=GENERATE["new_tokens"], do_sample=False,
            output_logits=True, return_dict_in_generate=True,
            pad_token_id=0)
    tokens = out.sequences[:, prompt.shape[1]:].numpy()
    logits = torch.stack(out.logits).numpy().astype(np.float32)
    ort_tokens, ort_logits = gen.generate(
        gen.Model(os.path.join(out_dir, "llama_lm_past.onnx"), 1), prompt,
        GENERATE["new_tokens"])
    diff = float(np.abs(ort_logits - logits).max())
    print(f"llama_lm_past.generate: max |ORT - torch| logits = {diff:.3g}")
    if not np.array_equal(tokens, ort_tokens) or not diff <= 1e-4:
        raise RuntimeError("ORT's step-by-step decoding differs from PyTorch's "
                           f"generate: {ort_tokens} vs {tokens}")
    fixtures.save_npz(os.path.join(out_dir, "llama_lm_past.generate.npz"),
                      {"prompt": prompt, "tokens": tokens, "logits": logits})
    return tokens


def write_dynamic_shapes(fx, out_dir):
    """Inputs and ORT outputs at DYNAMIC_SHAPES, each checked against PyTorch."""
    module = fx.build()
    sess = fixtures.session(os.path.join(out_dir, fx.name + ".onnx"))
    rng = np.random.default_rng(zlib.crc32((fx.name + ".dyn").encode()))
    for batch, seq in DYNAMIC_SHAPES:
        inputs = fx.make_inputs(rng, batch, seq)
        ref = fixtures.run_ort(sess, inputs)
        diff = fixtures.max_abs_diff(
            ref, fixtures.run_torch(module, fx.output_names, inputs))
        print(f"{fx.name}.dyn_{batch}x{seq}: max |ORT - torch| = {diff:.3g}")
        if not diff <= fixtures.TORCH_TOLERANCE:
            raise RuntimeError(f"ORT and PyTorch differ by {diff:.3g}")
        stem = os.path.join(out_dir, f"{fx.name}.dyn_{batch}x{seq}")
        fixtures.save_npz(stem + ".inputs.npz", inputs)
        fixtures.save_npz(stem + ".ref.npz", ref)


def write_readme(out_dir, facts, past_facts, dynamo_facts, tokens):
    import transformers

    ops = ", ".join(f"{k} {v}" for k, v in sorted(facts["op_types"].items()))
    lines = [
        "# Llama-style decoder fixtures",
        "",
        "Generated by `scripts/make_llama_fixtures.py`; do not edit by hand.",
        "",
        f"- `llama.onnx`: {facts['description']}. Built from",
        f"  `LlamaConfig({', '.join(f'{k}={v!r}' for k, v in LLAMA_CONFIG.items())})`",
        "  with seeded random weights (norm scales perturbed away from 1),",
        f"  exported by torch.onnx's TorchScript-based exporter at opset "
        f"{facts['opset']}",
        "  with dynamic batch and sequence axes.",
        "- `llama.inputs.npz`: `input_ids` and `attention_mask`, batch 2,",
        "  sequence 12, the last row ending in padding.",
        "- `llama.ref.npz`: ONNX Runtime's `last_hidden_state` for them",
        "  (CPUExecutionProvider, `ORT_DISABLE_ALL`, one thread), within",
        f"  {facts['max_abs_diff_vs_torch']:.3g} of PyTorch's.",
        "- `llama.dyn_BxS.inputs.npz` / `.ref.npz`: the same at batch x",
        "  sequence " + " and ".join(f"{b}x{s}" for b, s in DYNAMIC_SHAPES)
        + ", for bounded",
        "  dynamic shapes (`--max-shape`); each checked against PyTorch within",
        f"  {fixtures.TORCH_TOLERANCE}.",
        "",
        f"The graph has {facts['nodes']} nodes: {ops}.",
        "",
        "- `llama_dynamo.onnx` / `.inputs.npz` / `.ref.npz`: the `llama` "
        "model exported",
        f"  by the torch.export-based (dynamo) exporter at opset "
        f"{dynamo_facts['opset']} ({dynamo_facts['nodes']} nodes),",
        "  ONNX Runtime's outputs within "
        f"{dynamo_facts['max_abs_diff_vs_torch']:.3g} of PyTorch's.",
        f"- `llama_lm_past.onnx`: {past_facts['description']}. Exported",
        "  like `llama.onnx` from",
        "  `LlamaConfig(..., initializer_range=0.2)`; "
        f"{past_facts['nodes']} nodes.",
        "- `llama_lm_past.inputs.npz` / `.ref.npz`: 8 new tokens after "
        f"{PAST_LEN}",
        "  cached ones (the cache from running the model on a prefix), batch",
        "  2, and ONNX Runtime's outputs for them, within "
        f"{past_facts['max_abs_diff_vs_torch']:.3g} of PyTorch's.",
        "- `llama_lm_past.generate.npz`: PyTorch's greedy `generate` "
        "(`do_sample=False`)",
        f"  for `prompt` [{GENERATE['batch']}, {GENERATE['prompt_length']}] "
        f"(seed {GENERATE['seed']}): `tokens` "
        f"[{GENERATE['batch']}, {GENERATE['new_tokens']}] and `logits`",
        "  [new, batch, vocab], each step's last logits; ONNX Runtime decoding",
        "  the export step by step gives the same tokens. Tokens: "
        + "; ".join(" ".join(map(str, row)) for row in tokens) + ".",
        "",
        f"Generated with torch {torch.__version__}, transformers "
        f"{transformers.__version__}, onnx {onnx.__version__}, onnxruntime "
        f"{fixtures.ort.__version__}.",
        "",
        "```sh",
        "pip install torch transformers onnxscript",
        "python3 scripts/make_llama_fixtures.py",
        "```",
        "",
    ]
    with open(os.path.join(out_dir, "README.llama.md"), "w") as fh:
        fh.write("\n".join(lines))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.normpath(fixtures.DEFAULT_OUT))
    args = parser.parse_args()
    facts = fixtures.make_fixture(LLAMA, args.out)
    write_dynamic_shapes(LLAMA, args.out)
    dynamo_facts = fixtures.make_fixture(LLAMA_DYNAMO, args.out)
    past_facts = fixtures.make_fixture(LLAMA_LM_PAST, args.out)
    tokens = write_generate_reference(args.out)
    write_readme(args.out, facts, past_facts, dynamo_facts, tokens)
    print(f"{LLAMA.name}: {facts['nodes']} nodes, "
          f"{facts['size_bytes'] / 2**10:.0f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
