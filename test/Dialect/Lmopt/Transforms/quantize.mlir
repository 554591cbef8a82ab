// RUN: lmopt-opt %s -lmopt-quantize=mode=int8-dynamic -split-input-file | FileCheck %s --check-prefixes=INT8,DYN
// RUN: lmopt-opt %s -lmopt-quantize="mode=int8-dynamic-per-tensor per-tensor-weights=true" -split-input-file | FileCheck %s --check-prefix=PT
// RUN: lmopt-opt %s -lmopt-quantize="mode=int8-static calibration-table=%S/Inputs/calibration.json" -split-input-file | FileCheck %s --check-prefixes=INT8,STATIC
// RUN: lmopt-opt %s -lmopt-quantize=mode=int4-weight -split-input-file | FileCheck %s --check-prefix=I4
// RUN: lmopt-opt %s -lmopt-quantize="mode=int4-weight symmetric=false" -split-input-file | FileCheck %s --check-prefix=U4
// RUN: lmopt-opt %s -lmopt-quantize=mode=bf16 -split-input-file | FileCheck %s --check-prefix=BF16
// RUN: lmopt-opt %s -lmopt-quantize=mode=fp16 -split-input-file | FileCheck %s --check-prefix=FP16
// RUN: lmopt-opt %s -lmopt-quantize="mode=int8-dynamic exclude=layer1/*,head*" -split-input-file | FileCheck %s --check-prefix=EXCL
// RUN: lmopt-opt %s -lmopt-quantize=mode=int4-weight --lmopt-report=- -o /dev/null | FileCheck %s --check-prefix=REPORT

// Expected scales and values are worked out by hand from the rules in
// docs/quantization.md (the weights are chosen so that f32 arithmetic is
// exact: max|w| = 127/64 gives scale 1/64; 2.5/64 and 3.5/64 check round
// half to even), except where a comment gives NumPy's float32 result.

// Per output channel (axis 1 of a [K, N] weight): column 0 has scale 1/64
// and values 127, 2 (2.5 rounds to even), -4 (-3.5), 32; column 1 is zeros,
// scale 1.
// INT8-LABEL: func @fc
// INT8: %[[W:.*]] = lmopt.constant dense_resource<[[BLOB:.*]]> : tensor<4x2xi8>
// INT8: %[[Q:.*]] = quant.scast %[[W]] : tensor<4x2xi8> to tensor<4x2x!quant.uniform<i8:f32:1, {1.562500e-02,1.000000e+00}>>
// DYN: lmopt.linear %{{.*}}, %[[Q]] bias %{{.*}} {input_quantization = #lmopt.input_quantization<dynamic_per_token>}
// Static: the calibration range [-2, 127/64] gives u8 scale 1/64, zero
// point 128.
// STATIC: %[[X:.*]] = lmopt.quantize %{{.*}} : tensor<2x4xf32> -> tensor<2x4x!quant.uniform<u8:f32, 1.562500e-02:128>>
// STATIC: lmopt.linear %[[X]], %[[Q]] bias %{{.*}} : (tensor<2x4x!quant.uniform<u8:f32, 1.562500e-02:128>>
// INT8: [[BLOB]]: "0x010000007F000200FC002000"
// Per tensor: one scale 1/64 for the whole matrix; the zero column stays 0.
// PT-LABEL: func @fc
// PT: quant.scast %{{.*}} : tensor<4x2xi8> to tensor<4x2x!quant.uniform<i8:f32, 1.562500e-02>>
// PT: lmopt.linear {{.*}}input_quantization = #lmopt.input_quantization<dynamic_per_tensor>
// BF16-LABEL: func @fc
// BF16-DAG: %[[W:.*]] = lmopt.constant dense<{{\[\[}}1.984380e+00, 0.000000e+00], [3.906250e-02, {{.*}}> : tensor<4x2xbf16>
// BF16-DAG: %[[X:.*]] = lmopt.cast %{{.*}} : tensor<2x4xf32> -> tensor<2x4xbf16>
// BF16: lmopt.linear %[[X]], %[[W]] bias %{{.*}} : (tensor<2x4xbf16>, tensor<4x2xbf16>, tensor<2xf32>) -> tensor<2x2xf32>
// FP16-LABEL: func @fc
// FP16: lmopt.linear %{{.*}}, %{{.*}} bias %{{.*}} : (tensor<2x4xf16>, tensor<4x2xf16>, tensor<2xf32>) -> tensor<2x2xf32>
// K = 4 is not a multiple of the block size: left in f32.
// I4-LABEL: func @fc
// I4: lmopt.linear %{{.*}}, %{{.*}} bias %{{.*}} : (tensor<2x4xf32>, tensor<4x2xf32>, tensor<2xf32>)
// EXCL-LABEL: func @fc
// EXCL: lmopt.linear {{.*}}input_quantization = #lmopt.input_quantization<dynamic_per_token>
func.func @fc(%x: tensor<2x4xf32>) -> tensor<2x2xf32> {
  %w = lmopt.constant dense<[[1.984375, 0.0], [0.0390625, 0.0], [-0.0546875, 0.0], [0.5, 0.0]]> : tensor<4x2xf32>
  %b = lmopt.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %y = lmopt.linear %x, %w bias %b : (tensor<2x4xf32>, tensor<4x2xf32>, tensor<2xf32>) -> tensor<2x2xf32> loc("layer0/fc")
  return %y : tensor<2x2xf32>
}

// -----

// The same weight as [N, K] with transpose_weight: the channels are axis 0.
// A dense_resource weight is read like a dense one. The calibration range
// [0.5, 3] widens to [0, 3]: scale 3/255 (NumPy float32:
// 0.011764706112444401), zero point 0.
// INT8-LABEL: func @fc_transposed
// INT8: lmopt.constant dense_resource<[[BLOB:.*]]> : tensor<2x4xi8>
// INT8: quant.scast %{{.*}} : tensor<2x4xi8> to tensor<2x4x!quant.uniform<i8:f32:0, {1.562500e-02,1.000000e+00}>>
// STATIC: lmopt.quantize %{{.*}} : tensor<2x4xf32> -> tensor<2x4x!quant.uniform<u8:f32, 0.011764706112444401>>
// INT8: [[BLOB]]: "0x010000007F02FC2000000000"
// EXCL-LABEL: func @fc_transposed
// EXCL: lmopt.linear %{{.*}}, %{{.*}} {transpose_weight = true} : (tensor<2x4xf32>, tensor<2x4xf32>)
func.func @fc_transposed(%x: tensor<2x4xf32>) -> tensor<2x2xf32> {
  %w = lmopt.constant dense_resource<w_t> : tensor<2x4xf32>
  %y = lmopt.linear %x, %w {transpose_weight = true} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x2xf32> loc("layer1/fc")
  return %y : tensor<2x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w_t: "0x040000000000FE3F0000203D000060BD0000003F00000000000000000000000000000000"
    }
  }
#-}

// -----

// int4 blocks of 32 along K of a [N = 2, K = 32] weight.
// Every scale is rounded to f16 and the clip ratio (1.0 down to 0.5 by 0.05)
// with the least squared block error wins, the first on ties.
// Symmetric: row 0 at ratio 1 has scale 0.875 / 7 = 0.125 and values 7, 2
// (1.5 rounds to even), 2 (2.5), -4, squared error 2 * 0.0625^2 = 0.0078125;
// ratio 0.95 has scale f16(0.95 * 0.875 / 7 = 0.11875) = 0.1187744140625
// and values 7, 2, 3, -4 (0.875 clips to 0.8314), error 0.00694, the least
// (0.9 gives 0.0122, lower ratios more). Row 1 keeps ratio 1: scale
// f16(1.375 / 7 = 0.19642857) = 0.1964111328125, values 7, -3, 0.
// I4-LABEL: func @int4
// I4: %[[W:.*]] = lmopt.constant dense<{{\[\[}}7, 2, 3, -4, 0, {{.*}}], [7, -3, 0, 0, {{.*}}]]> : tensor<2x32xi4>
// I4: quant.scast %[[W]] : tensor<2x32xi4> to tensor<2x32x!quant.uniform<i4:f32:{0:1, 1:32}, {{[{][{]}}0.118774414}, {0.196411133}}>>
// I4: lmopt.linear %{{.*}}, %{{.*}} {transpose_weight = true} : (tensor<3x32xf32>, tensor<2x32x!quant.uniform<i4:f32:
// Asymmetric (each end of the range clipped by its own ratio; both stay 1
// here): row 0's range [-0.5, 0.875] gives scale f16(1.375 / 15 =
// 0.0916667) = 0.0916748046875, zero point 5 and values 15, 7, 8, 0, then
// 5 for the zeros; row 1's [-0.5, 1.375] gives scale 0.125, zero point 4,
// values 15, 0, 4 (0.5 rounds to even, plus 4). u4 values print as the
// signless i4 bits (15 as -1, 8 as -8).
// U4-LABEL: func @int4
// U4: %[[W:.*]] = lmopt.constant dense<{{\[\[}}-1, 7, -8, 0, 5, {{.*}}], [-1, 0, 4, 4, {{.*}}]]> : tensor<2x32xi4>
// U4: quant.scast %[[W]] : tensor<2x32xi4> to tensor<2x32x!quant.uniform<u4:f32:{0:1, 1:32}, {{[{][{]}}0.0916748046:5}, {1.250000e-01:4}}>>
func.func @int4(%x: tensor<3x32xf32>) -> tensor<3x2xf32> {
  %w = lmopt.constant dense<[[0.875, 0.1875, 0.3125, -0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [1.375, -0.5, 0.0625, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]> : tensor<2x32xf32>
  %y = lmopt.linear %x, %w {transpose_weight = true} : (tensor<3x32xf32>, tensor<2x32xf32>) -> tensor<3x2xf32> loc("layer2/fc")
  return %y : tensor<3x2xf32>
}

// -----

// negative: a weight that is not a constant stays f32 (a remark says so).
// INT8-LABEL: func @negative_weight_not_constant
// INT8: lmopt.linear %{{.*}}, %{{.*}} : (tensor<2x4xf32>, tensor<4x2xf32>) -> tensor<2x2xf32>
func.func @negative_weight_not_constant(%x: tensor<2x4xf32>, %w: tensor<4x2xf32>) -> tensor<2x2xf32> {
  %y = lmopt.linear %x, %w : (tensor<2x4xf32>, tensor<4x2xf32>) -> tensor<2x2xf32> loc("layer3/fc")
  return %y : tensor<2x2xf32>
}

// -----

// negative: a layer matched by exclude stays f32 (not in the table either:
// excluded layers need no entry).
// EXCL-LABEL: func @negative_excluded
// EXCL: lmopt.linear %{{.*}}, %{{.*}} : (tensor<2x4xf32>, tensor<4x2xf32>) -> tensor<2x2xf32>
func.func @negative_excluded(%x: tensor<2x4xf32>) -> tensor<2x2xf32> {
  %w = lmopt.constant dense<0.25> : tensor<4x2xf32>
  %y = lmopt.linear %x, %w : (tensor<2x4xf32>, tensor<4x2xf32>) -> tensor<2x2xf32> loc("head/classifier")
  return %y : tensor<2x2xf32>
}

// The report counts quantized linears and names each skipped one.
// REPORT: quantize {{ *}}1 {{ *}}4
// REPORT-DAG: near miss: quantize at 'layer0/fc': block size 32 does not divide K = 4
// REPORT-DAG: near miss: quantize at 'layer1/fc': block size 32 does not divide K = 4
// REPORT-DAG: near miss: quantize at 'layer3/fc': weight is not a constant f32
// REPORT-DAG: near miss: quantize at 'head/classifier': block size 32 does not divide K = 4
