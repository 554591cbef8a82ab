// Bad options and calibration tables: one error each, and no output.
// RUN: rm -f %t.mlir
// RUN: not lmopt-opt %s -lmopt-quantize=mode=int3 -o %t.mlir 2>&1 | FileCheck %s --check-prefix=MODE
// RUN: not test -e %t.mlir
// MODE: error: unknown quantization mode 'int3'; expected int8-dynamic, int8-dynamic-per-tensor, int8-static, int4-weight, bf16 or fp16
// RUN: not lmopt-opt %s -lmopt-quantize="mode=int4-weight block-size=48" 2>&1 | FileCheck %s --check-prefix=BLOCK
// BLOCK: error: block-size 48 is not 32, 64 or 128
// RUN: not lmopt-opt %s -lmopt-quantize=mode=int8-static 2>&1 | FileCheck %s --check-prefix=NO-TABLE
// NO-TABLE: error: mode int8-static needs calibration-table=<path>
// RUN: not lmopt-opt %s -lmopt-quantize="mode=int8-static calibration-table=%S/Inputs/missing.json" 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: cannot read calibration table '{{.*}}missing.json': No such file or directory
// RUN: not lmopt-opt %s -lmopt-quantize="mode=int8-static calibration-table=%S/Inputs/calibration-bad-entry.json" 2>&1 | FileCheck %s --check-prefix=ENTRY
// ENTRY: error: calibration table '{{.*}}calibration-bad-entry.json': entry 'layer0/fc' needs finite numbers "min" <= "max"
// RUN: not lmopt-opt %s -lmopt-quantize="mode=int8-static calibration-table=%S/Inputs/calibration-version.json" 2>&1 | FileCheck %s --check-prefix=VERSION
// VERSION: error: calibration table '{{.*}}calibration-version.json' must be an object with "version": 1
// RUN: not lmopt-opt %s -lmopt-quantize="mode=int8-static calibration-table=%s" 2>&1 | FileCheck %s --check-prefix=JSON
// JSON: error: calibration table '{{.*}}quantize-options.mlir' is not JSON: {{.*}}
// RUN: not lmopt-opt %s -lmopt-quantize="mode=int8-dynamic exclude=layer[" 2>&1 | FileCheck %s --check-prefix=GLOB
// GLOB: error: invalid exclude pattern 'layer[': {{.*}}

func.func @fc(%x: tensor<2x4xf32>) -> tensor<2x2xf32> {
  %w = lmopt.constant dense<0.5> : tensor<4x2xf32>
  %y = lmopt.linear %x, %w : (tensor<2x4xf32>, tensor<4x2xf32>) -> tensor<2x2xf32> loc("layer0/fc")
  return %y : tensor<2x2xf32>
}
