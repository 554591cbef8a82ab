#!/usr/bin/env bash
# The GPU checks of the CUDA target, in two halves (docs/cuda-backend.md,
# "Checking on a GPU"):
#
#   scripts/gpu-check.sh prepare   here, where LLVM/MLIR are: builds, compiles
#                                  every fixture (and the GPU bench model) with
#                                  --target=cuda, and packs the bundles, the
#                                  runtime's tools and the libraries they link
#                                  into .gpu/pack.tar.xz (git ignores .gpu/).
#   scripts/gpu-check.sh run       on a machine with an NVIDIA GPU, from the
#                                  repository root with .gpu/ beside it: the
#                                  runtime's GPU tests, every fixture bundle
#                                  against onnxruntime's outputs, the key/value
#                                  cache generation, and the bench against
#                                  PyTorch (bench/compare_gpu.py). Logs go to
#                                  $OUT (or .gpu/out); it exits nonzero when a
#                                  check fails.
#
# The run half needs no LLVM, no build tools and no installs: the GPU
# driver, cuBLASLt (found on the library path, in LMOPT_CUDA_LIBRARY_PATH,
# or in the Python nvidia-cublas package), and for the bench torch and
# transformers.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${LMOPT_BUILD_DIR:-$root/build}
gpu=$root/.gpu
fixtures=$root/test/models/onnx

# name|model|compile flags|inputs|reference: every fixture the CPU's
# end-to-end tests run, pinned to its inputs' shapes, plus bounded dynamic
# shapes.
FIXTURES=(
  "bert|bert|--input-shapes-from $fixtures/bert.inputs.npz|bert.inputs.npz|bert.ref.npz"
  "bert_dropout|bert_dropout|--input-shapes-from $fixtures/bert_dropout.inputs.npz|bert_dropout.inputs.npz|bert_dropout.ref.npz"
  "bert_ort_fused|bert_ort_fused|--input-shapes-from $fixtures/bert_ort_fused.inputs.npz|bert_ort_fused.inputs.npz|bert_ort_fused.ref.npz"
  "bert_sdpa|bert_sdpa|--input-shapes-from $fixtures/bert_sdpa.inputs.npz|bert_sdpa.inputs.npz|bert_sdpa.ref.npz"
  "bert_dynamo|bert_dynamo|--input-shapes-from $fixtures/bert_dynamo.inputs.npz|bert_dynamo.inputs.npz|bert_dynamo.ref.npz"
  "distilbert|distilbert|--input-shapes-from $fixtures/distilbert.inputs.npz|distilbert.inputs.npz|distilbert.ref.npz"
  "minilm|minilm|--input-shapes-from $fixtures/minilm.inputs.npz|minilm.inputs.npz|minilm.ref.npz"
  "roberta|roberta|--input-shapes-from $fixtures/roberta.inputs.npz|roberta.inputs.npz|roberta.ref.npz"
  "gpt2|gpt2|--input-shapes-from $fixtures/gpt2.inputs.npz|gpt2.inputs.npz|gpt2.ref.npz"
  "gpt2_ort_fused|gpt2_ort_fused|--input-shapes-from $fixtures/gpt2_ort_fused.inputs.npz|gpt2_ort_fused.inputs.npz|gpt2_ort_fused.ref.npz"
  "gpt2_sdpa|gpt2_sdpa|--input-shapes-from $fixtures/gpt2_sdpa.inputs.npz|gpt2_sdpa.inputs.npz|gpt2_sdpa.ref.npz"
  "gpt2_dynamo|gpt2_dynamo|--input-shapes-from $fixtures/gpt2_dynamo.inputs.npz|gpt2_dynamo.inputs.npz|gpt2_dynamo.ref.npz"
  "gpt2_past|gpt2_past|--input-shapes-from $fixtures/gpt2_past.inputs.npz|gpt2_past.inputs.npz|gpt2_past.ref.npz"
  "torch_encoder|torch_encoder|--input-shapes-from $fixtures/torch_encoder.inputs.npz|torch_encoder.inputs.npz|torch_encoder.ref.npz"
  "bert_dyn_1x7|bert|--max-shape input_ids:4x32 --max-shape attention_mask:4x32 --max-shape token_type_ids:4x32|bert.dyn_1x7.inputs.npz|bert.dyn_1x7.ref.npz"
  "bert_dyn_3x20|bert|--max-shape input_ids:4x32 --max-shape attention_mask:4x32 --max-shape token_type_ids:4x32|bert.dyn_3x20.inputs.npz|bert.dyn_3x20.ref.npz"
  "gpt2_dyn_2x16|gpt2|--max-shape input_ids:4x32 --max-shape attention_mask:4x32|gpt2.dyn_2x16.inputs.npz|gpt2.dyn_2x16.ref.npz"
)
# Tolerance of f32 on the GPU against onnxruntime on the CPU (the issue's
# 1e-3 relative; TF32 is off unless asked for).
RTOL=1e-3
ATOL=1e-4
# The same fixtures with --precision=fp16 / bf16 (linears and attention in
# half precision, docs/cuda-backend.md "Precision"), against onnxruntime's
# f32 outputs at the issue's half-precision tolerance. On the CPU's
# reference evaluator (test/e2e/half_precision.test) they use at most 0.12
# of it, except GPT-2 in bf16 (0.87).
HALF_FIXTURES=()
for precision in fp16 bf16; do
  for model in bert distilbert roberta minilm gpt2 gpt2_past; do
    HALF_FIXTURES+=("${model}_$precision|$model|--precision=$precision --input-shapes-from $fixtures/$model.inputs.npz|$model.inputs.npz|$model.ref.npz")
  done
done
HALF_RTOL=2e-2
HALF_ATOL=2e-2

log() { echo "gpu-check: $*" >&2; }

prepare() {
  set -e
  ninja -C "$build" lmopt-compile lmopt-run lmopt-runtime-tests >/dev/null
  local stage=$gpu/stage
  rm -rf "$stage" "$gpu/pack.tar.xz"
  mkdir -p "$stage/bin" "$stage/lib" "$stage/bundles" "$stage/bench"
  cp "$build/bin/lmopt-run" "$build/bin/lmopt-runtime-tests" "$stage/bin/"
  # The libraries the tools link that a GPU machine may lack (oneDNN and
  # what it needs); its C and C++ libraries are newer than Debian 12's.
  for lib in libdnnl.so.2 libOpenCL.so.1 libgomp.so.1; do
    local path
    path=$(ldd "$build/bin/lmopt-run" | awk -v l="$lib" '$1 == l {print $3}')
    [[ -n $path ]] && cp -L "$path" "$stage/lib/$lib"
  done
  set +e
  local failed=0
  for line in "${FIXTURES[@]}" "${HALF_FIXTURES[@]}"; do
    IFS='|' read -r name model flags _ _ <<<"$line"
    # shellcheck disable=SC2086
    if "$build/bin/lmopt-compile" "$fixtures/$model.onnx" --target=cuda $flags \
        -o "$stage/bundles/$name.lmopt" >"$stage/bundles/$name.log" 2>&1; then
      log "compiled $name"
    else
      log "FAILED to compile $name: $(grep -m1 error "$stage/bundles/$name.log")"
      failed=1
    fi
  done
  # The cache generation, in f32 and with half-precision linears (the
  # attention on the f32 cache stays f32).
  for precision in fp32 fp16 bf16; do
    local kv=gpt2_lm_past_kv
    [[ $precision == fp32 ]] || kv=gpt2_lm_past_kv_$precision
    if "$build/bin/lmopt-compile" "$fixtures/gpt2_lm_past.onnx" --target=cuda \
        --kv-cache=32 --max-shape input_ids:2x8 --precision=$precision \
        -o "$stage/bundles/$kv.lmopt" >"$stage/bundles/$kv.log" 2>&1; then
      log "compiled $kv"
    else
      log "FAILED to compile $kv: $(grep -m1 error "$stage/bundles/$kv.log")"
      failed=1
    fi
  done
  # The bench model (bench/make_models.py --only bert_gpu_small), one bundle
  # for batches 1 to 32 at sequence 128.
  local bench=$root/bench/models
  if [[ ! -f $bench/bert_gpu_small.onnx ]]; then
    python3 "$root/bench/make_models.py" --only bert_gpu_small >/dev/null
  fi
  if "$build/bin/lmopt-compile" "$bench/bert_gpu_small.onnx" --target=cuda \
      --max-shape input_ids:32x128 --max-shape attention_mask:32x128 \
      --max-shape token_type_ids:32x128 -o "$stage/bench/bert_gpu_small.lmopt" \
      >"$stage/bench/bert_gpu_small.log" 2>&1; then
    log "compiled the bench model"
  else
    log "FAILED to compile the bench model: $(grep -m1 error "$stage/bench/bert_gpu_small.log")"
    failed=1
  fi
  cp "$bench"/bert_gpu_small.b*.inputs.npz "$stage/bench/"
  # The bench models in fp16, one static-shape bundle per batch (a layer
  # norm feeding both the residual and an f16 linear does not compile with
  # bounded dynamic shapes yet), weights left out: timed with random
  # weights against PyTorch in float16.
  local batch model
  for model in bert_gpu_small bert_base; do
    [[ -f $bench/$model.onnx ]] || continue
    for batch in 1 8 32; do
      if "$build/bin/lmopt-compile" "$bench/$model.onnx" --target=cuda \
          --precision=fp16 --omit-weights --input-shape input_ids:${batch}x128 \
          --input-shape attention_mask:${batch}x128 \
          --input-shape token_type_ids:${batch}x128 \
          -o "$stage/bench/$model.fp16.b$batch.lmopt" \
          >"$stage/bench/$model.fp16.b$batch.log" 2>&1; then
        log "compiled $model fp16 batch $batch (weights omitted)"
      else
        log "FAILED to compile $model fp16 batch $batch: $(grep -m1 error "$stage/bench/$model.fp16.b$batch.log")"
        failed=1
      fi
    done
  done
  # BERT-base at full size, its weights left out (--omit-weights: random
  # values at load time, which time like trained ones; 64 MiB travel).
  if [[ -f $bench/bert_base.onnx ]] && "$build/bin/lmopt-compile" \
      "$bench/bert_base.onnx" --target=cuda --omit-weights \
      --max-shape input_ids:32x128 --max-shape attention_mask:32x128 \
      --max-shape token_type_ids:32x128 -o "$stage/bench/bert_base.lmopt" \
      >"$stage/bench/bert_base.log" 2>&1; then
    log "compiled BERT-base (weights omitted)"
    python3 - "$stage/bench" <<'EOF'
import sys
import numpy as np
rng = np.random.default_rng(0)
for batch in (1, 8, 32):
    np.savez(f"{sys.argv[1]}/bert_base.b{batch}.inputs.npz",
             input_ids=rng.integers(3, 30522, size=(batch, 128), dtype=np.int64),
             attention_mask=np.ones((batch, 128), np.int64),
             token_type_ids=np.zeros((batch, 128), np.int64))
EOF
  else
    log "no BERT-base bench (bench/make_models.py --only bert_base makes it)"
  fi
  tar -C "$stage" -cJf "$gpu/pack.tar.xz" .
  rm -rf "$stage"
  log "packed $(du -h "$gpu/pack.tar.xz" | cut -f1) into $gpu/pack.tar.xz"
  return $failed
}

find_cublaslt() {
  if [[ -n ${LMOPT_CUDA_LIBRARY_PATH:-} ]]; then
    echo "$LMOPT_CUDA_LIBRARY_PATH"
    return
  fi
  local found
  found=$(python3 - 2>/dev/null <<'EOF'
import glob, os, site
for base in site.getsitepackages():
    for path in glob.glob(os.path.join(base, "nvidia", "**", "libcublasLt.so.13"), recursive=True):
        print(os.path.dirname(path))
        raise SystemExit
EOF
)
  if [[ -z $found ]]; then
    found=$(find / -name 'libcublasLt.so.13' -not -path '/proc/*' 2>/dev/null | head -n1)
    found=${found%/*}
  fi
  echo "$found"
}

run() {
  local out=${OUT:-$gpu/out}
  local work=${TMPDIR:-/tmp}/lmopt-gpu
  mkdir -p "$out"
  rm -rf "$work" && mkdir -p "$work"
  tar -C "$work" -xJf "$gpu/pack.tar.xz" || { log "no $gpu/pack.tar.xz; run 'prepare' first"; return 1; }
  local cublas
  cublas=$(find_cublaslt)
  export LMOPT_CUDA_LIBRARY_PATH=$cublas
  export LD_LIBRARY_PATH=$work/lib${cublas:+:$cublas}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  local failed=0
  {
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    echo "cuBLASLt from: ${cublas:-(not found)}"
  } 2>&1 | tee "$out/machine.txt"

  log "runtime GPU tests"
  timeout 300 "$work/bin/lmopt-runtime-tests" --gtest_filter='*Cuda*:*CUDA*:*Gpu*:*GPU*' \
      --gtest_color=no >"$out/gtest.log" 2>&1 || failed=1
  grep -E '^\[  (PASSED|FAILED|SKIPPED) |^\[==========\]' "$out/gtest.log" | tail -n 20

  log "fixtures against onnxruntime (f32: rtol $RTOL, atol $ATOL; fp16/bf16: rtol $HALF_RTOL, atol $HALF_ATOL)"
  : >"$out/fixtures.log"
  local half=${#FIXTURES[@]} index=0 rtol atol
  for line in "${FIXTURES[@]}" "${HALF_FIXTURES[@]}"; do
    IFS='|' read -r name _ _ inputs ref <<<"$line"
    if ((index++ < half)); then rtol=$RTOL atol=$ATOL; else rtol=$HALF_RTOL atol=$HALF_ATOL; fi
    local bundle=$work/bundles/$name.lmopt
    if [[ ! -f $bundle ]]; then
      echo "NOT COMPILED $name: $(grep -m1 error "$work/bundles/$name.log")" | tee -a "$out/fixtures.log"
      failed=1
      continue
    fi
    if result=$(timeout 60 "$work/bin/lmopt-run" "$bundle" --inputs "$fixtures/$inputs" \
        --compare "$fixtures/$ref" --rtol $rtol --atol $atol 2>&1); then
      echo "ok   $name: $(echo "$result" | tail -n1)" | tee -a "$out/fixtures.log"
    else
      echo "FAIL $name: $result" | tee -a "$out/fixtures.log"
      failed=1
    fi
  done
  # bf16's 8 mantissa bits flip a greedy token of this fixture (its weights
  # are 10 times the usual range) at the last of 12 steps, measured on the
  # H200: generation is compared exactly in f32 and fp16 only.
  local kvname
  for kvname in gpt2_lm_past_kv gpt2_lm_past_kv_fp16; do
    local kv=$work/bundles/$kvname.lmopt
    if [[ $kvname == gpt2_lm_past_kv ]]; then rtol=$RTOL atol=$ATOL; else rtol=$HALF_RTOL atol=$HALF_ATOL; fi
    result=""
    if [[ -f $kv ]] && result=$(timeout 60 "$work/bin/lmopt-run" "$kv" --generate 12 \
        --prompt "$fixtures/gpt2_lm_past.generate.npz" \
        --compare "$fixtures/gpt2_lm_past.generate.npz" --rtol $rtol --atol $atol 2>&1); then
      echo "ok   $kvname generate: $(echo "$result" | tail -n1)" | tee -a "$out/fixtures.log"
    else
      echo "FAIL $kvname generate: ${result:-not compiled}" | tee -a "$out/fixtures.log"
      failed=1
    fi
  done

  # LMOPT_GPU_CHECK_BENCH=half|none: only the half-precision bench, or no
  # bench (a shorter lease when only those changed).
  local bench=${LMOPT_GPU_CHECK_BENCH:-all}
  [[ $bench == none ]] && return $failed
  if [[ $bench == all ]]; then
  log "profile of the bench model (batch 8)"
  timeout 60 "$work/bin/lmopt-run" "$work/bench/bert_gpu_small.lmopt" \
      --inputs "$work/bench/bert_gpu_small.b8.inputs.npz" --bench 20 --profile \
      >"$out/profile.txt" 2>&1 || failed=1
  head -n 30 "$out/profile.txt"

  log "bench against PyTorch"
  PYTHONUNBUFFERED=1 timeout 200 python3 "$root/bench/compare_gpu.py" --rounds ${LMOPT_GPU_CHECK_ROUNDS:-3} --lmopt-run "$work/bin/lmopt-run" \
      --bundle "$work/bench/bert_gpu_small.lmopt" \
      --inputs "$work/bench/bert_gpu_small.b{batch}.inputs.npz" \
      2>&1 | tee "$out/bench.txt" || failed=1
  if [[ -n ${LMOPT_GPU_CHECK_EAGER:-} ]]; then
  PYTHONUNBUFFERED=1 timeout 100 python3 "$root/bench/compare_gpu.py" --rounds ${LMOPT_GPU_CHECK_ROUNDS:-3} --lmopt-run "$work/bin/lmopt-run" \
      --bundle "$work/bench/bert_gpu_small.lmopt" --rounds 1 \
      --inputs "$work/bench/bert_gpu_small.b{batch}.inputs.npz" --lmopt-args=--no-record-runs \
      2>&1 | tee -a "$out/bench.txt" || failed=1
  fi
  if [[ -f $work/bench/bert_base.lmopt ]]; then
    timeout 60 "$work/bin/lmopt-run" "$work/bench/bert_base.lmopt" --random-weights 1 \
        --inputs "$work/bench/bert_base.b8.inputs.npz" --bench 20 --profile \
        >"$out/profile-bert-base.txt" 2>&1 || failed=1
    grep -v '^last_hidden_state' "$out/profile-bert-base.txt" | head -n 30
    PYTHONUNBUFFERED=1 timeout 200 python3 "$root/bench/compare_gpu.py" --rounds ${LMOPT_GPU_CHECK_ROUNDS:-3} --lmopt-run "$work/bin/lmopt-run" \
        --bundle "$work/bench/bert_base.lmopt" --model bert_base \
        --inputs "$work/bench/bert_base.b{batch}.inputs.npz" --lmopt-args="--random-weights 1" \
        2>&1 | tee -a "$out/bench.txt" || failed=1
    PYTHONUNBUFFERED=1 timeout 200 python3 "$root/bench/compare_gpu.py" --rounds ${LMOPT_GPU_CHECK_ROUNDS:-3} --lmopt-run "$work/bin/lmopt-run" \
        --bundle "$work/bench/bert_base.lmopt" --model bert_base --tf32 --rounds 1 \
        --inputs "$work/bench/bert_base.b{batch}.inputs.npz" --lmopt-args="--random-weights 1" \
        2>&1 | tee -a "$out/bench.txt" || failed=1
  fi
  fi
  local model
  for model in bert_gpu_small bert_base; do
    [[ -f $work/bench/$model.fp16.b1.lmopt ]] || continue
    log "bench $model in fp16 against PyTorch in float16"
    PYTHONUNBUFFERED=1 timeout 200 python3 "$root/bench/compare_gpu.py" --rounds ${LMOPT_GPU_CHECK_ROUNDS:-3} --lmopt-run "$work/bin/lmopt-run" \
        --bundle "$work/bench/$model.fp16.b{batch}.lmopt" --model $model --dtype float16 \
        --inputs "$work/bench/$model.b{batch}.inputs.npz" --lmopt-args="--random-weights 1" \
        2>&1 | tee -a "$out/bench.txt" || failed=1
  done
  return $failed
}

case ${1:-} in
prepare) prepare ;;
run) run ;;
*)
  echo "usage: scripts/gpu-check.sh prepare|run" >&2
  exit 2
  ;;
esac
