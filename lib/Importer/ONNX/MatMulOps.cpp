//===- MatMulOps.cpp - ONNX MatMul and Gemm -------------------------------===//

#include "lmopt/Importer/ONNX/OpConverter.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::onnx_import;

static LogicalResult convertMatMul(NodeContext &ctx) {
  if (failed(ctx.checkInputs(2, 2)))
    return failure();
  RankedTensorType lhs = ctx.getInputType(0), rhs = ctx.getInputType(1);
  if (lhs.getElementType() != rhs.getElementType())
    return ctx.emitError() << "operand element types " << lhs.getElementType()
                           << " and " << rhs.getElementType() << " differ";
  std::optional<SmallVector<int64_t>> shape =
      matmulShape(lhs.getShape(), rhs.getShape());
  if (!shape)
    return ctx.emitError() << "cannot multiply shapes "
                           << formatShape(lhs.getShape()) << " and "
                           << formatShape(rhs.getShape());
  auto type = RankedTensorType::get(*shape, lhs.getElementType());
  ctx.setOutput(0,
                ctx.createOp<MatMulOp>(type, ctx.getInput(0), ctx.getInput(1))
                    .getOutput());
  return success();
}

static LogicalResult convertGemm(NodeContext &ctx) {
  if (failed(ctx.checkInputs(2, 3)))
    return failure();
  FailureOr<float> alpha = ctx.getFloat("alpha", 1.0f);
  FailureOr<float> beta = ctx.getFloat("beta", 1.0f);
  FailureOr<int64_t> transA = ctx.getInt("transA", 0);
  FailureOr<int64_t> transB = ctx.getInt("transB", 0);
  if (failed(alpha) || failed(beta) || failed(transA) || failed(transB))
    return failure();
  RankedTensorType a = ctx.getInputType(0), b = ctx.getInputType(1);
  if (a.getRank() != 2 || b.getRank() != 2)
    return ctx.emitError() << "operands 'A' and 'B' must be rank 2, got "
                           << formatShape(a.getShape()) << " and "
                           << formatShape(b.getShape());
  int64_t m = *transA ? a.getDimSize(1) : a.getDimSize(0);
  int64_t k1 = *transA ? a.getDimSize(0) : a.getDimSize(1);
  int64_t k2 = *transB ? b.getDimSize(1) : b.getDimSize(0);
  int64_t n = *transB ? b.getDimSize(0) : b.getDimSize(1);
  if (!ShapedType::isDynamic(k1) && !ShapedType::isDynamic(k2) && k1 != k2)
    return ctx.emitError() << "contraction dims " << k1 << " and " << k2
                           << " differ";
  auto type = RankedTensorType::get({m, n}, a.getElementType());
  auto op = ctx.createOp<GemmOp>(type, ctx.getInput(0), ctx.getInput(1),
                                 ctx.getInput(2), APFloat(*alpha),
                                 APFloat(*beta), *transA != 0, *transB != 0);
  ctx.setOutput(0, op.getOutput());
  return success();
}

static constexpr int64_t kMax = kMaxSupportedOpset;

static const ConverterEntry kMatMulConverters[] = {
    {"", "MatMul", 1, kMax, convertMatMul},
    {"", "Gemm", 7, kMax, convertGemm},
};

ArrayRef<ConverterEntry> mlir::lmopt::onnx_import::getMatMulConverters() {
  return kMatMulConverters;
}
