//===- GatherPlan.cpp - Row-quantized lmopt.gather to a gather step -------===//

#include "GatherPlan.h"

#include "mlir/Dialect/Quant/IR/QuantTypes.h"

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::cpu;

static Type tableElementType(GatherOp op) {
  return llvm::cast<ShapedType>(op.getData().getType()).getElementType();
}

bool mlir::lmopt::cpu::isQuantizedGather(GatherOp op) {
  Type result =
      llvm::cast<ShapedType>(op.getOutput().getType()).getElementType();
  return llvm::isa<quant::QuantizedType>(tableElementType(op)) &&
         result != tableElementType(op);
}

FailureOr<QuantConstant>
mlir::lmopt::cpu::lowerQuantizedGather(GatherOp op, StringRef node) {
  Type type = tableElementType(op);
  // The verifier has checked 8-bit storage, per-axis 0 and an f32 result.
  auto perAxis = llvm::cast<quant::UniformQuantizedPerAxisType>(type);
  if (!perAxis.isSigned() ||
      llvm::any_of(perAxis.getZeroPoints(), [](int64_t z) { return z != 0; }))
    return op.emitError() << "no CPU lowering for a gather from quantized "
                             "table "
                          << type << " (node '" << node
                          << "'): the gather step dequantizes signed i8 "
                             "rows with zero points 0";
  SmallVector<float> scales;
  for (double scale : perAxis.getScales())
    scales.push_back(static_cast<float>(scale));
  auto scaleType = RankedTensorType::get({static_cast<int64_t>(scales.size())},
                                         Float32Type::get(op.getContext()));
  return QuantConstant{node.str() + ".scales",
                       DenseElementsAttr::get(scaleType, ArrayRef(scales))};
}
