#!/usr/bin/env python3
"""Greedy decoding of a past-key-values ONNX export in ONNX Runtime, step by
step: the reference that `lmopt-run --generate` must match token for token.

The model takes `input_ids`, `attention_mask` (covering past and new tokens),
optionally `position_ids`, and one past tensor per cache entry
([batch, heads, past, head_size]); it returns `logits` first and one present
tensor per past tensor, in the same order. The first step runs the whole
prompt with empty past tensors (what `lmopt-compile --kv-cache` calls
prefill); each further step feeds the previous step's presents back with the
argmax of the last logits.

    python3 scripts/make_generation_reference.py test/models/onnx/gpt2_lm_past.onnx \\
        --batch 2 --prompt-length 5 --new-tokens 12 \\
        -o test/models/onnx/gpt2_lm_past.generate.npz

The output holds `prompt` (int64 [batch, prompt]), `tokens` (int64
[batch, new]) and `logits` (float32 [new, batch, vocab], each step's logits
for the last position). Only numpy and onnxruntime are needed.
"""

import argparse
import sys

import numpy as np
import onnxruntime as ort


class Model:
    def __init__(self, path, threads):
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        self.session = ort.InferenceSession(
            path, opts, providers=["CPUExecutionProvider"]
        )
        inputs = self.session.get_inputs()
        fixed = {"input_ids", "attention_mask", "position_ids"}
        self.input_names = {i.name for i in inputs}
        self.past = [i for i in inputs if i.name not in fixed]
        outputs = [o.name for o in self.session.get_outputs()]
        if outputs[0] != "logits" or len(outputs) != 1 + len(self.past):
            raise SystemExit(
                f"expected outputs 'logits' then one present per past input "
                f"({[p.name for p in self.past]}), got {outputs}"
            )
        self.outputs = outputs

    def empty_past(self, batch):
        past = {}
        for p in self.past:
            dims = [d if isinstance(d, int) else 0 for d in p.shape]
            dims[0] = batch
            if not all(isinstance(d, int) for d in p.shape[1:2] + p.shape[3:]):
                raise SystemExit(f"past input '{p.name}' needs static heads and "
                                 f"head size, has {p.shape}")
            past[p.name] = np.zeros(dims, np.float32)
        return past

    def step(self, ids, past_len, past):
        batch, seq = ids.shape
        feed = {"input_ids": ids,
                "attention_mask": np.ones((batch, past_len + seq), np.int64)}
        if "position_ids" in self.input_names:
            feed["position_ids"] = np.broadcast_to(
                np.arange(past_len, past_len + seq, dtype=np.int64), (batch, seq)
            ).copy()
        feed.update(past)
        out = self.session.run(self.outputs, feed)
        presents = {p.name: v for p, v in zip(self.past, out[1:])}
        return out[0], presents


def generate(model, prompt, new_tokens):
    """The new tokens [batch, new] and each step's last logits [new, batch,
    vocab]."""
    batch = prompt.shape[0]
    past = model.empty_past(batch)
    ids, past_len, tokens, last = prompt, 0, [], []
    for _ in range(new_tokens):
        logits, past = model.step(ids, past_len, past)
        past_len += ids.shape[1]
        last.append(logits[:, -1, :])
        ids = np.argmax(logits[:, -1, :], axis=-1).astype(np.int64)[:, None]
        tokens.append(ids)
    return np.concatenate(tokens, axis=1), np.stack(last)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--prompt-length", type=int, default=8)
    parser.add_argument("--new-tokens", type=int, default=16)
    parser.add_argument("--vocab", type=int, default=None,
                        help="prompt ids below this (default: the logits' size)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args()

    model = Model(args.model, args.threads)
    vocab = args.vocab
    if vocab is None:
        vocab = model.session.get_outputs()[0].shape[-1]
        if not isinstance(vocab, int):
            raise SystemExit("the logits' vocabulary size is symbolic; pass --vocab")
    rng = np.random.default_rng(args.seed)
    prompt = rng.integers(1, vocab, size=(args.batch, args.prompt_length),
                          dtype=np.int64)
    tokens, logits = generate(model, prompt, args.new_tokens)
    np.savez(args.output, prompt=prompt, tokens=tokens, logits=logits)
    print(f"{args.output}: prompt {prompt.shape}, tokens {tokens.shape}")
    for row in tokens:
        print(" ".join(map(str, row)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
