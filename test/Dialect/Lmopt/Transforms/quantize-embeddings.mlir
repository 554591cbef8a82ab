// RUN: lmopt-opt %s -lmopt-quantize="quantize-embeddings=true embedding-min-elements=8" -split-input-file | FileCheck %s
// RUN: lmopt-opt %s -lmopt-quantize="quantize-embeddings=true" -split-input-file | FileCheck %s --check-prefix=MIN
// RUN: lmopt-opt %s -lmopt-quantize="mode=int4-weight quantize-embeddings=true embedding-min-elements=8 exclude=embeddings/word" -split-input-file | FileCheck %s --check-prefix=EXCL
// RUN: lmopt-opt %s -lmopt-quantize -split-input-file | FileCheck %s --check-prefix=OFF
// RUN: lmopt-opt %s -lmopt-quantize="mode=bf16 quantize-embeddings=true embedding-min-elements=8" --lmopt-report=- -o /dev/null | FileCheck %s --check-prefix=REPORT

// `quantize-embeddings` of lmopt-quantize (docs/quantization.md). The
// expected scales and values are worked out by hand from the rule: one
// scale per row, max|row| / 127, a zero row scale 1, round half to even.
//   row 0 [127/64, -0.5]:       scale 1/64, values 127, -32
//   row 1 [2.5/64, 127/64]:     scale 1/64, values 2 (2.5 to even), 127
//   row 2 [0, 0]:               scale 1, values 0, 0
//   row 3 [-254/64, 3.5/32]:    scale 1/32, values -127, 4 (3.5 to even)
// so the i8 bytes are 7F E0 02 7F 00 00 81 04.

// CHECK-LABEL: func @word_embeddings
// CHECK: %[[T:.*]] = lmopt.constant dense_resource<[[BLOB:.*]]> : tensor<4x2xi8>
// CHECK: %[[Q:.*]] = quant.scast %[[T]] : tensor<4x2xi8> to tensor<4x2x!quant.uniform<i8:f32:0, {1.562500e-02,1.562500e-02,1.000000e+00,3.125000e-02}>>
// CHECK: lmopt.gather %[[Q]], %{{.*}} : (tensor<4x2x!quant.uniform<i8:f32:0, {{.*}}>>, tensor<2x3xi64>) -> tensor<2x3x2xf32>
// CHECK: [[BLOB]]: "0x010000007FE0027F00008104"
// Below the default minimum of 4096 elements the table stays f32.
// MIN-LABEL: func @word_embeddings
// MIN: lmopt.gather %{{.*}}, %{{.*}} : (tensor<4x2xf32>, tensor<2x3xi64>)
// EXCL-LABEL: func @word_embeddings
// EXCL: lmopt.gather %{{.*}}, %{{.*}} : (tensor<4x2xf32>, tensor<2x3xi64>)
// OFF-LABEL: func @word_embeddings
// OFF: lmopt.gather %{{.*}}, %{{.*}} : (tensor<4x2xf32>, tensor<2x3xi64>)
// REPORT: quantize_embedding{{ +}}2{{ +}}0
func.func @word_embeddings(%ids: tensor<2x3xi64>) -> tensor<2x3x2xf32> {
  %t = lmopt.constant dense<[[1.984375, -0.5], [0.0390625, 1.984375], [0.0, 0.0], [-3.96875, 0.109375]]> : tensor<4x2xf32>
  %y = lmopt.gather %t, %ids : (tensor<4x2xf32>, tensor<2x3xi64>) -> tensor<2x3x2xf32> loc("embeddings/word")
  return %y : tensor<2x3x2xf32>
}

// -----

// A rank-3 table: rows are dim 0, the other dims flattened into each row
// (row 0 max 127/64, row 1 max 127/32), and a dense_resource table is read
// like a dense one (here [[[127/64, 0.5], [1, 0]], [[-127/32, 127/32],
// [0, 0]]]); negative axis -3 is axis 0.
// CHECK-LABEL: func @rank3_table
// CHECK: quant.scast %{{.*}} : tensor<2x2x2xi8> to tensor<2x2x2x!quant.uniform<i8:f32:0, {1.562500e-02,3.125000e-02}>>
// CHECK: [[BLOB:.*]]: "0x010000007F204000817F0000"
func.func @rank3_table(%ids: tensor<3xi32>) -> tensor<3x2x2xf32> {
  %t = lmopt.constant dense_resource<table3> : tensor<2x2x2xf32>
  %y = lmopt.gather %t, %ids {axis = -3 : i64} : (tensor<2x2x2xf32>, tensor<3xi32>) -> tensor<3x2x2xf32> loc("pos")
  return %y : tensor<3x2x2xf32>
}
{-#
  dialect_resources: {
    builtin: {
      table3: "0x040000000000FE3F0000003F0000803F0000000000007EC000007E400000000000000000"
    }
  }
#-}

// -----

// negative_: gathers that are not row lookups in a constant f32 table.
// CHECK-LABEL: func @negative_not_tables
// CHECK: lmopt.gather %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<4x2xf32>
// CHECK: lmopt.gather %{{.*}}, %{{.*}} : (tensor<4x2xf32>
// CHECK: lmopt.gather %{{.*}}, %{{.*}} : (tensor<8xf32>
// CHECK: lmopt.gather %{{.*}}, %{{.*}} : (tensor<4x2xi64>
// CHECK-NOT: quant.scast
func.func @negative_not_tables(%arg: tensor<4x2xf32>, %ids: tensor<3xi64>) -> (tensor<4x3xf32>, tensor<3x2xf32>, tensor<3xf32>, tensor<3x2xi64>) {
  %t = lmopt.constant dense<1.5> : tensor<4x2xf32>
  %a = lmopt.gather %t, %ids {axis = 1 : i64} : (tensor<4x2xf32>, tensor<3xi64>) -> tensor<4x3xf32>
  %b = lmopt.gather %arg, %ids : (tensor<4x2xf32>, tensor<3xi64>) -> tensor<3x2xf32>
  %v = lmopt.constant dense<1.5> : tensor<8xf32>
  %c = lmopt.gather %v, %ids : (tensor<8xf32>, tensor<3xi64>) -> tensor<3xf32>
  %n = lmopt.constant dense<7> : tensor<4x2xi64>
  %d = lmopt.gather %n, %ids : (tensor<4x2xi64>, tensor<3xi64>) -> tensor<3x2xi64>
  return %a, %b, %c, %d : tensor<4x3xf32>, tensor<3x2xf32>, tensor<3xf32>, tensor<3x2xi64>
}

