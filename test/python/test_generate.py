# Session.generate and state access on gpt2_lm_past compiled with a
# key/value cache: the tokens and logits onnxruntime decodes step by step
# (gpt2_lm_past.generate.npz), the cache as states, save/load/reset.
# REQUIRES: lmopt-python
# RUN: %pytest %s

import numpy as np
import pytest

import lmopt
from conftest import fixture, load_npz


@pytest.fixture(scope="module")
def session():
    bundle = lmopt.compile(fixture("gpt2_lm_past.onnx"), kv_cache=32,
                           max_shapes={"input_ids": (2, 8)})
    return lmopt.Session(bundle)


def test_generate_matches_onnxruntime(session):
    ref = load_npz("gpt2_lm_past.generate.npz")
    session.reset_states()
    tokens, logits = session.generate(ref["prompt"], max_new_tokens=12,
                                      return_logits=True)
    np.testing.assert_array_equal(tokens, ref["tokens"])
    np.testing.assert_allclose(logits, ref["logits"], rtol=1e-4, atol=1e-4)


def test_states(session, tmp_path):
    assert [e["name"] for e in session.entries] == ["prefill", "decode"]
    states = session.states
    assert states and states[0]["name"] == "past_key_0"
    session.reset_states()
    with pytest.raises(lmopt.Error, match="no value"):
        session.read_state("past_key_0")
    session.generate(load_npz("gpt2_lm_past.generate.npz")["prompt"], 2)
    cache = session.read_state("past_key_0")
    assert cache.dtype == np.float32 and cache.shape[0] == 2
    session.save_states(str(tmp_path / "cache.npz"))
    session.reset_states()
    session.load_states(str(tmp_path / "cache.npz"))
    np.testing.assert_array_equal(session.read_state("past_key_0"), cache)
    session.write_state("past_key_0", np.zeros_like(cache))
    assert not session.read_state("past_key_0").any()
    with pytest.raises(lmopt.Error, match="cache of 34 positions"):
        session.reset_states()
        session.generate(load_npz("gpt2_lm_past.generate.npz")["prompt"], 30)


@pytest.mark.parametrize("all_logits", [False, True])
def test_prefill_logits(all_logits):
    # Prefill returns the last position's logits unless asked for all of
    # them; that position matches onnxruntime's first generation step.
    ref = load_npz("gpt2_lm_past.generate.npz")
    bundle = lmopt.compile(fixture("gpt2_lm_past.onnx"), kv_cache=32,
                           max_shapes={"input_ids": (2, 8)},
                           prefill_all_logits=all_logits)
    prompt = ref["prompt"]
    logits = lmopt.Session(bundle).run(
        {"input_ids": prompt, "attention_mask": np.ones_like(prompt)},
        entry="prefill")["logits"]
    assert logits.shape == (2, prompt.shape[1] if all_logits else 1, 1000)
    np.testing.assert_allclose(logits[:, -1], ref["logits"][0], rtol=1e-4,
                               atol=1e-4)


def test_prefill_logits_needs_cache():
    with pytest.raises(lmopt.Error, match="--prefill-all-logits applies"):
        lmopt.compile(fixture("gpt2_lm_past.onnx"),
                      max_shapes={"input_ids": (2, 8)},
                      prefill_all_logits=True)
