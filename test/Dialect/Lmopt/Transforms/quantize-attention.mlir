// RUN: lmopt-opt %s -lmopt-quantize=mode=bf16 | FileCheck %s --check-prefix=BF16
// RUN: lmopt-opt %s -lmopt-quantize=mode=fp16 | FileCheck %s --check-prefix=NONE
// RUN: lmopt-opt %s -lmopt-quantize=mode=int8-dynamic | FileCheck %s --check-prefix=NONE
// RUN: lmopt-opt %s -lmopt-quantize="mode=bf16 exclude=layer1/*" | FileCheck %s --check-prefix=EXCL
// RUN: lmopt-opt %s -lmopt-quantize="mode=int8-dynamic attention=bf16" | FileCheck %s --check-prefix=BF16
// RUN: lmopt-opt %s -lmopt-quantize="mode=bf16 attention=f32" | FileCheck %s --check-prefix=NONE
// RUN: not lmopt-opt %s -lmopt-quantize="mode=bf16 attention=f16" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not lmopt-compile %s --quantize=bf16 --quantize-attention=f16 -o %t.bad.lmopt 2>&1 | FileCheck %s --check-prefix=BAD-FLAG
// RUN: not lmopt-compile %s --quantize-attention=bf16 -o %t.bad.lmopt 2>&1 | FileCheck %s --check-prefix=NO-MODE
// RUN: not test -e %t.bad.lmopt
// RUN: lmopt-compile %s --quantize=int8-dynamic --quantize-attention=bf16 --dump-plan 2>/dev/null | FileCheck %s --check-prefix=PLAN
// RUN: lmopt-compile %s --quantize=bf16 --dump-plan 2>/dev/null | FileCheck %s --check-prefix=PLAN
// RUN: lmopt-compile %s --quantize=bf16 -o %t.lmopt 2>&1 | FileCheck %s --check-prefix=LOG
// RUN: lmopt-compile %s --quantize=int8-dynamic --dump-plan 2>/dev/null | FileCheck %s --check-prefix=PLAN-NONE

// Mode bf16 lets every attention it does not exclude run its two products
// in bf16 (the unit attribute bf16_products, written to the plan as
// bf16_products = 1); other modes, and an excluded name, leave attention
// as it is. attention=bf16 (--quantize-attention=bf16) does the same in
// any mode, attention=f32 in none.

// BF16-LABEL: func @main
// BF16: %[[A:.*]] = lmopt.attention %{{.*}} {bf16_products, num_heads = 2 : i64}
// BF16: lmopt.attention %[[A]], %{{.*}} {bf16_products, num_heads = 2 : i64}
// NONE-LABEL: func @main
// NONE-NOT: bf16_products
// EXCL-LABEL: func @main
// EXCL: %[[A:.*]] = lmopt.attention %{{.*}} {bf16_products, num_heads = 2 : i64}
// EXCL: lmopt.attention %[[A]], %{{.*}} {num_heads = 2 : i64}
// PLAN: step {{[0-9]+}}: attention 'layer0/attn' {{.*}}zero_masked_rows = 0, bf16_products = 1}
// PLAN: step {{[0-9]+}}: attention 'layer1/attn' {{.*}}zero_masked_rows = 0, bf16_products = 1}
// PLAN-NONE-NOT: bf16_products
// LOG: attention with bf16 products (f32 softmax): 2
// BAD: attention must be auto, bf16 or f32, got 'f16'
// BAD-FLAG: --quantize-attention must be auto, bf16 or f32, got 'f16'
// NO-MODE: quantization flags need --quantize=MODE

func.func @main(%q: tensor<1x32x64xf32>, %k: tensor<1x32x64xf32>,
                %v: tensor<1x32x64xf32>) -> tensor<1x32x64xf32>
    attributes {lmopt.input_names = ["q", "k", "v"],
                lmopt.output_names = ["out"]} {
  %a = lmopt.attention %q, %k, %v {num_heads = 2 : i64}
      : (tensor<1x32x64xf32>, tensor<1x32x64xf32>, tensor<1x32x64xf32>)
      -> tensor<1x32x64xf32> loc("layer0/attn")
  %c = lmopt.attention %a, %k, %v {num_heads = 2 : i64}
      : (tensor<1x32x64xf32>, tensor<1x32x64xf32>, tensor<1x32x64xf32>)
      -> tensor<1x32x64xf32> loc("layer1/attn")
  return %c : tensor<1x32x64xf32>
}
