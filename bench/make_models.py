#!/usr/bin/env python3
"""Builds the full-size benchmark models (random weights, no download):
BERT-base (Hugging Face BertModel default config), DistilBERT-base,
GPT-2-small and a DeBERTa-v3-base-shaped DebertaV2Model, exported to ONNX with dynamic batch and sequence, plus fixed
inputs (sequence 128, batch 1 and 8); and GPT-2-small with its LM head
exported with past key/values (gpt2_small_lm_past, for
bench/compare_generate.py), and a Llama-style ~135M decoder exported the
same way (llama_135m_lm_past: hidden 576, 30 layers, 9 query and 3
key/value heads, FFN 1536, vocabulary 49152, tied embeddings; the shape of
SmolLM-135M, random weights from the config). They are large (100-650 MB), so they live in
bench/models/, which git ignores; this script recreates them.

usage: bench/make_models.py [--out bench/models] [--only NAME]
needs: pip install torch transformers (not needed by the tests or CI)
"""
import argparse
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def build(name):
    import torch
    import transformers as tf

    torch.manual_seed(0)
    if name == "bert_base":
        config = tf.BertConfig(attn_implementation="eager")
        return tf.BertModel(config), ["input_ids", "attention_mask", "token_type_ids"], config.vocab_size
    if name == "distilbert_base":
        config = tf.DistilBertConfig(attn_implementation="eager")
        return tf.DistilBertModel(config), ["input_ids", "attention_mask"], config.vocab_size
    if name == "bert_gpu_small":
        # BERT at MiniLM's width, two layers: small enough that its bundle
        # travels to a lent GPU (scripts/gpu-check.sh).
        config = tf.BertConfig(hidden_size=384, num_hidden_layers=2, num_attention_heads=6,
                               intermediate_size=1536, vocab_size=256,
                               max_position_embeddings=256, attn_implementation="eager")
        return tf.BertModel(config), ["input_ids", "attention_mask", "token_type_ids"], config.vocab_size
    if name == "deberta_v3_base":
        # DeBERTa-v3-base's shape (disentangled attention with shared
        # relative-position keys, 256 buckets) at BERT's vocabulary, so the
        # export stays BERT-sized; the embedding table does not change the
        # latency.
        config = tf.DebertaV2Config(
            hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
            intermediate_size=3072, vocab_size=30522, relative_attention=True,
            position_buckets=256, pos_att_type=["p2c", "c2p"],
            max_relative_positions=-1, norm_rel_ebd="layer_norm",
            share_att_key=True, type_vocab_size=0, attn_implementation="eager")
        return tf.DebertaV2Model(config), ["input_ids", "attention_mask"], config.vocab_size
    if name == "gpt2_small":
        config = tf.GPT2Config(use_cache=False, attn_implementation="eager")
        return tf.GPT2Model(config), ["input_ids", "attention_mask"], config.vocab_size
    raise SystemExit(f"error: unknown model '{name}'")


def inputs_for(names, vocab, batch, seq, rng):
    arrays = {"input_ids": rng.integers(3, vocab, size=(batch, seq), dtype=np.int64),
              "attention_mask": np.ones((batch, seq), dtype=np.int64),
              "token_type_ids": np.zeros((batch, seq), dtype=np.int64)}
    return {n: arrays[n] for n in names}


def export(name, out):
    import torch

    model, names, vocab = build(name)
    model.eval()

    class ByName(torch.nn.Module):
        """Calls the model with keyword inputs; returns last_hidden_state."""

        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, *args):
            return self.inner(**dict(zip(names, args))).last_hidden_state

    wrapped = ByName(model).eval()
    rng = np.random.default_rng(0)
    example = inputs_for(names, vocab, 1, 128, rng)
    path = os.path.join(out, f"{name}.onnx")
    axes = {n: {0: "batch", 1: "sequence"} for n in names}
    axes["last_hidden_state"] = {0: "batch", 1: "sequence"}
    with torch.no_grad():
        torch.onnx.export(wrapped, tuple(torch.from_numpy(example[n]) for n in names),
                          path, input_names=names, output_names=["last_hidden_state"],
                          dynamic_axes=axes, opset_version=17, dynamo=False)
    for batch in (1, 8, 32) if name == "bert_gpu_small" else (1, 8):
        np.savez(os.path.join(out, f"{name}.b{batch}.inputs.npz"),
                 **inputs_for(names, vocab, batch, 128, rng))
    print(f"wrote {path} ({os.path.getsize(path) / 2**20:.0f} MiB)")


def build_lm(name):
    """The LM, its layer count, key/value heads and head size."""
    import transformers as tf

    if name == "llama_135m_lm_past":
        config = tf.LlamaConfig(
            hidden_size=576, num_hidden_layers=30, num_attention_heads=9,
            num_key_value_heads=3, intermediate_size=1536, vocab_size=49152,
            max_position_embeddings=2048, rope_theta=10000.0,
            rms_norm_eps=1e-5, tie_word_embeddings=True,
            attn_implementation="eager")
        return (tf.LlamaForCausalLM(config), config.num_hidden_layers,
                config.num_key_value_heads,
                config.hidden_size // config.num_attention_heads)
    config = tf.GPT2Config(attn_implementation="eager")
    return (tf.GPT2LMHeadModel(config), config.n_layer, config.n_head,
            config.n_embd // config.n_head)


def export_lm_past(name, out):
    """An LM (GPT2LMHeadModel's default config, or the Llama-style
    llama_135m) as one decoding step: (input_ids, attention_mask, past_key_i,
    past_value_i...) -> (logits, present...), the wrapper the gpt2_lm_past
    fixture uses."""
    import torch

    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    from make_fixtures import Gpt2LmWithPast

    torch.manual_seed(0)
    lm, layers, heads, head_size = build_lm(name)
    model = Gpt2LmWithPast(lm).eval()
    vocab = lm.config.vocab_size
    batch, seq, past = 1, 4, 3
    names = ["input_ids", "attention_mask"]
    args = [torch.randint(3, vocab, (batch, seq)),
            torch.ones(batch, past + seq, dtype=torch.int64)]
    axes = {"input_ids": {0: "batch", 1: "sequence"},
            "attention_mask": {0: "batch", 1: "total_sequence"},
            "logits": {0: "batch", 1: "sequence"}}
    outputs = ["logits"]
    for i in range(layers):
        for kind in ("key", "value"):
            names.append(f"past_{kind}_{i}")
            outputs.append(f"present_{kind}_{i}")
            args.append(torch.randn(batch, heads, past, head_size))
            axes[names[-1]] = {0: "batch", 2: "past_sequence"}
            axes[outputs[-1]] = {0: "batch", 2: "total_sequence"}
    path = os.path.join(out, f"{name}.onnx")
    with torch.no_grad():
        torch.onnx.export(model, tuple(args), path, input_names=names,
                          output_names=outputs, dynamic_axes=axes,
                          opset_version=17, dynamo=False)
    print(f"wrote {path} ({os.path.getsize(path) / 2**20:.0f} MiB)")


MODELS = ["bert_base", "distilbert_base", "gpt2_small", "gpt2_small_lm_past",
          "llama_135m_lm_past", "deberta_v3_base", "bert_gpu_small"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "models"))
    parser.add_argument("--only", choices=MODELS)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    # bert_gpu_small only when asked for (scripts/gpu-check.sh).
    for name in [args.only] if args.only else MODELS[:-1]:
        if name.endswith("_lm_past"):
            export_lm_past(name, args.out)
        else:
            export(name, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
