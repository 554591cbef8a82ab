//===- ElementwiseToLinalg.cpp - elementwise lmopt ops to linalg ----------===//
//
// One pattern per family (unary, broadcasting binary, where, cast), each
// driven by a table of scalar builders, mirroring the reference evaluator's
// ElementwiseOps.cpp. Integers are signed, as in ONNX and the evaluator.
//
//===----------------------------------------------------------------------===//

#include "lmopt/Conversion/LmoptToLinalg/LmoptToLinalg.h"

#include "BuildUtils.h"

#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::lmopt;
using namespace mlir::lmopt::linalg_lowering;

static Value floatConstant(OpBuilder &b, Location loc, Type type,
                           double value) {
  return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
}

static Value intConstant(OpBuilder &b, Location loc, Type type, int64_t value) {
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, value));
}

/// Floats and signless integers: arith has no ops on `ui8`/`si8`, so those
/// (ONNX uint8 tensors) are left to a lowering that reinterprets them.
static bool isIntOrFloat(Type type) {
  return type.isSignlessInteger() || llvm::isa<FloatType>(type);
}

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

using UnaryScalarFn = Value (*)(OpBuilder &, Location, Value);

/// Scalar builders of one unary op: `onFloat` gets the operand in the compute
/// type (narrow floats widened to f32), `onInt` gets signed integers wider
/// than `i1`, `onBool` gets `i1` (which signed arithmetic would read as -1).
struct UnaryFns {
  UnaryScalarFn onFloat = nullptr;
  UnaryScalarFn onInt = nullptr;
  UnaryScalarFn onBool = nullptr;
};

/// The builder of `fns` for `elementType`, or null when it has none.
template <typename Fns> static auto selectFn(const Fns &fns, Type elementType) {
  if (llvm::isa<FloatType>(elementType))
    return fns.onFloat;
  if (elementType.isInteger(1))
    return fns.onBool;
  return fns.onInt;
}

static Value buildSigmoid(OpBuilder &b, Location loc, Value x) {
  Type type = x.getType();
  Value one = floatConstant(b, loc, type, 1.0);
  Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
  return arith::DivFOp::create(b, loc, one,
                               arith::AddFOp::create(b, loc, one, e));
}

static Value buildGeluErf(OpBuilder &b, Location loc, Value x) {
  Type type = x.getType();
  Value scaled = arith::MulFOp::create(
      b, loc, x, floatConstant(b, loc, type, 1.0 / std::sqrt(2.0)));
  Value onePlus =
      arith::AddFOp::create(b, loc, floatConstant(b, loc, type, 1.0),
                            math::ErfOp::create(b, loc, scaled));
  Value half =
      arith::MulFOp::create(b, loc, floatConstant(b, loc, type, 0.5), x);
  return arith::MulFOp::create(b, loc, half, onePlus);
}

static Value buildGeluTanh(OpBuilder &b, Location loc, Value x) {
  Type type = x.getType();
  Value cube =
      arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, x, x), x);
  Value inner = arith::AddFOp::create(
      b, loc, x,
      arith::MulFOp::create(b, loc, floatConstant(b, loc, type, 0.044715),
                            cube));
  Value scaled = arith::MulFOp::create(
      b, loc, floatConstant(b, loc, type, std::sqrt(2.0 / M_PI)), inner);
  Value onePlus =
      arith::AddFOp::create(b, loc, floatConstant(b, loc, type, 1.0),
                            math::TanhOp::create(b, loc, scaled));
  Value half =
      arith::MulFOp::create(b, loc, floatConstant(b, loc, type, 0.5), x);
  return arith::MulFOp::create(b, loc, half, onePlus);
}

namespace {

/// Any unary op whose scalar builders `selectFns` picks (from the op's
/// attributes where they matter, as for gelu).
template <typename OpTy> struct UnaryToLinalg : OpRewritePattern<OpTy> {
  using SelectFn = UnaryFns (*)(OpTy);
  UnaryToLinalg(MLIRContext *context, SelectFn selectFns)
      : OpRewritePattern<OpTy>(context), selectFns(selectFns) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    auto resultType = llvm::cast<RankedTensorType>(op.getType());
    Type elementType = resultType.getElementType();
    UnaryScalarFn fn = selectFn(selectFns(op), elementType);
    if (!fn)
      return rewriter.notifyMatchFailure(op, "unsupported element type");
    bool isFloat = llvm::isa<FloatType>(elementType);
    Value result = buildElementwise(
        rewriter, op.getLoc(), resultType, op->getOperands(),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          if (!isFloat)
            return fn(b, loc, args[0]);
          Value x = convertFloat(b, loc, args[0], getComputeType(elementType));
          return convertFloat(b, loc, fn(b, loc, x), elementType);
        });
    rewriter.replaceOp(op, result);
    return success();
  }

  SelectFn selectFns;
};

} // namespace

//===----------------------------------------------------------------------===//
// Cast (ONNX Cast: round to nearest even, truncation toward zero for float to
// integer, nonzero to true for bool)
//===----------------------------------------------------------------------===//

static Value buildCastScalar(OpBuilder &b, Location loc, Value x, Type to) {
  Type from = x.getType();
  if (from == to)
    return x;
  auto fromFloat = llvm::dyn_cast<FloatType>(from);
  auto toFloat = llvm::dyn_cast<FloatType>(to);
  if (to.isInteger(1)) {
    if (fromFloat)
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, x,
                                   floatConstant(b, loc, from, 0.0));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, x,
                                 intConstant(b, loc, from, 0));
  }
  if (fromFloat && toFloat)
    return convertFloat(b, loc, x, to);
  if (fromFloat)
    return arith::FPToSIOp::create(b, loc, to, x);
  // Booleans are 0 and 1, not 0 and -1.
  bool fromBool = from.isInteger(1);
  if (toFloat) {
    if (fromBool)
      return arith::UIToFPOp::create(b, loc, to, x);
    return arith::SIToFPOp::create(b, loc, to, x);
  }
  if (from.getIntOrFloatBitWidth() > to.getIntOrFloatBitWidth())
    return arith::TruncIOp::create(b, loc, to, x);
  if (fromBool)
    return arith::ExtUIOp::create(b, loc, to, x);
  return arith::ExtSIOp::create(b, loc, to, x);
}

namespace {

struct CastToLinalg : OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CastOp op,
                                PatternRewriter &rewriter) const override {
    auto resultType = llvm::cast<RankedTensorType>(op.getType());
    Type to = resultType.getElementType();
    Type from = op.getInput().getType().getElementType();
    if (!isIntOrFloat(from) || !isIntOrFloat(to))
      return rewriter.notifyMatchFailure(op, "cast of a non-numeric type");
    Value result =
        buildElementwise(rewriter, op.getLoc(), resultType, op.getInput(),
                         [&](OpBuilder &b, Location loc, ValueRange args) {
                           return buildCastScalar(b, loc, args[0], to);
                         });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// Binary and where, with numpy broadcasting
//===----------------------------------------------------------------------===//

using BinaryScalarFn = Value (*)(OpBuilder &, Location, Value, Value);

/// Scalar builders of one binary op, on float, signed integer and `i1`
/// operands; a missing one means the op is not lowered for that type.
struct BinaryFns {
  BinaryScalarFn onFloat = nullptr;
  BinaryScalarFn onInt = nullptr;
  BinaryScalarFn onBool = nullptr;
};

template <typename ArithOp>
static Value buildArith(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  return ArithOp::create(b, loc, lhs, rhs);
}

/// Integer powers through f64 (exact while the result fits its 53-bit
/// mantissa, as numpy's integer power is), truncated back.
static Value buildIntPow(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  Type f64 = b.getF64Type(), type = lhs.getType();
  Value base = arith::SIToFPOp::create(b, loc, f64, lhs);
  Value exponent = arith::SIToFPOp::create(b, loc, f64, rhs);
  Value power = math::PowFOp::create(b, loc, base, exponent);
  return arith::FPToSIOp::create(b, loc, type, power);
}

template <arith::CmpFPredicate predicate>
static Value buildCmpF(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  return arith::CmpFOp::create(b, loc, predicate, lhs, rhs);
}

template <arith::CmpIPredicate predicate>
static Value buildCmpI(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  return arith::CmpIOp::create(b, loc, predicate, lhs, rhs);
}

/// Why `operands` cannot be lowered elementwise to `resultType`, or empty.
static std::string checkElementwise(RankedTensorType resultType,
                                    ValueRange operands) {
  SmallVector<RankedTensorType> types;
  for (Value operand : operands) {
    auto type = llvm::dyn_cast<RankedTensorType>(operand.getType());
    if (!type)
      return "unranked operand";
    types.push_back(type);
  }
  return checkBroadcast(resultType, types);
}

namespace {

template <typename OpTy> struct BinaryToLinalg : OpRewritePattern<OpTy> {
  BinaryToLinalg(MLIRContext *context, BinaryFns fns)
      : OpRewritePattern<OpTy>(context), fns(fns) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    auto resultType = llvm::cast<RankedTensorType>(op.getType());
    Type operandType = op.getLhs().getType().getElementType();
    if (!isIntOrFloat(operandType))
      return rewriter.notifyMatchFailure(op, "non-numeric operands");
    BinaryScalarFn fn = selectFn(fns, operandType);
    if (!fn)
      return rewriter.notifyMatchFailure(op, "unsupported element type");
    std::string reason = checkElementwise(resultType, op->getOperands());
    if (!reason.empty())
      return rewriter.notifyMatchFailure(op, reason);
    Value result =
        buildElementwise(rewriter, op.getLoc(), resultType, op->getOperands(),
                         [&](OpBuilder &b, Location loc, ValueRange args) {
                           return fn(b, loc, args[0], args[1]);
                         });
    rewriter.replaceOp(op, result);
    return success();
  }

  BinaryFns fns;
};

struct WhereToLinalg : OpRewritePattern<WhereOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(WhereOp op,
                                PatternRewriter &rewriter) const override {
    auto resultType = llvm::cast<RankedTensorType>(op.getType());
    std::string reason = checkElementwise(resultType, op->getOperands());
    if (!reason.empty())
      return rewriter.notifyMatchFailure(op, reason);
    Value result = buildElementwise(
        rewriter, op.getLoc(), resultType, op->getOperands(),
        [](OpBuilder &b, Location loc, ValueRange args) -> Value {
          return arith::SelectOp::create(b, loc, args[0], args[1], args[2]);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// `lmopt.rotary` as one generic over the input, its halves swapped, cos
/// and sin: out = x * cos + (d < half ? -swapped : swapped) * sin. The swap
/// is two slice copies, so the generic reads every operand in place.
struct RotaryToLinalg : OpRewritePattern<RotaryOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RotaryOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = llvm::cast<RankedTensorType>(op.getType());
    std::string reason = checkElementwise(resultType, op->getOperands());
    if (!reason.empty())
      return rewriter.notifyMatchFailure(op, reason);
    Value input = op.getInput();
    int64_t rank = resultType.getRank();
    int64_t half = resultType.getShape().back() / 2;
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, input);
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
    sizes.back() = rewriter.getIndexAttr(half);
    Value swapped = tensor::EmptyOp::create(
        rewriter, loc, tensor::getMixedSizes(rewriter, loc, input),
        resultType.getElementType());
    for (auto [from, to] :
         {std::pair(half, int64_t(0)), std::pair(int64_t(0), half)}) {
      offsets.back() = rewriter.getIndexAttr(from);
      Value part = tensor::ExtractSliceOp::create(rewriter, loc, input, offsets,
                                                  sizes, strides);
      offsets.back() = rewriter.getIndexAttr(to);
      swapped = tensor::InsertSliceOp::create(rewriter, loc, part, swapped,
                                              offsets, sizes, strides);
    }
    Type elementType = resultType.getElementType();
    Value result = buildElementwise(
        rewriter, loc, resultType, {input, swapped, op.getCos(), op.getSin()},
        [&](OpBuilder &b, Location nestedLoc, ValueRange args) -> Value {
          Type compute = getComputeType(elementType);
          SmallVector<Value> v;
          for (Value arg : args)
            v.push_back(convertFloat(b, nestedLoc, arg, compute));
          Value d = linalg::IndexOp::create(b, nestedLoc, rank - 1);
          Value firstHalf = arith::CmpIOp::create(
              b, nestedLoc, arith::CmpIPredicate::ult, d,
              arith::ConstantIndexOp::create(b, nestedLoc, half));
          Value negated = arith::NegFOp::create(b, nestedLoc, v[1]);
          Value rotated =
              arith::SelectOp::create(b, nestedLoc, firstHalf, negated, v[1]);
          Value sum = arith::AddFOp::create(
              b, nestedLoc, arith::MulFOp::create(b, nestedLoc, v[0], v[2]),
              arith::MulFOp::create(b, nestedLoc, rotated, v[3]));
          return convertFloat(b, nestedLoc, sum, elementType);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// The tables
//===----------------------------------------------------------------------===//

template <typename OpTy>
static void addUnary(RewritePatternSet &patterns, UnaryFns (*select)(OpTy)) {
  patterns.add<UnaryToLinalg<OpTy>>(patterns.getContext(), select);
}

template <typename OpTy>
static void addBinary(RewritePatternSet &patterns, BinaryFns fns) {
  patterns.add<BinaryToLinalg<OpTy>>(patterns.getContext(), fns);
}

template <typename MathOp>
static Value buildMath(OpBuilder &b, Location loc, Value x) {
  return MathOp::create(b, loc, x);
}

/// ONNX Sign from the two comparisons with 0: `x` itself where neither
/// holds (0, and NaN for floats).
template <typename CmpOp, auto greater, auto less, typename Number,
          Value (*constant)(OpBuilder &, Location, Type, Number)>
static Value buildSign(OpBuilder &b, Location loc, Value x) {
  Type type = x.getType();
  Value zero = constant(b, loc, type, Number(0));
  Value positive = CmpOp::create(b, loc, greater, x, zero);
  Value negative = CmpOp::create(b, loc, less, x, zero);
  Value rest = arith::SelectOp::create(
      b, loc, negative, constant(b, loc, type, Number(-1)), x);
  return arith::SelectOp::create(b, loc, positive,
                                 constant(b, loc, type, Number(1)), rest);
}

static void addUnaryPatterns(RewritePatternSet &patterns) {
  addUnary<NegOp>(patterns, [](NegOp) {
    return UnaryFns{buildMath<arith::NegFOp>,
                    [](OpBuilder &b, Location loc, Value x) -> Value {
                      return arith::SubIOp::create(
                          b, loc, intConstant(b, loc, x.getType(), 0), x);
                    }};
  });
  addUnary<AbsOp>(patterns, [](AbsOp) {
    // `max(x, 0 - x)`: `math.absi` has no lowering in convert-to-llvm.
    return UnaryFns{buildMath<math::AbsFOp>,
                    [](OpBuilder &b, Location loc, Value x) -> Value {
                      Value negated = arith::SubIOp::create(
                          b, loc, intConstant(b, loc, x.getType(), 0), x);
                      return arith::MaxSIOp::create(b, loc, x, negated);
                    }};
  });
  // `x > 0 ? 1 : x < 0 ? -1 : x`: zero and NaN are their own sign.
  addUnary<SignOp>(patterns, [](SignOp) {
    return UnaryFns{
        buildSign<arith::CmpFOp, arith::CmpFPredicate::OGT,
                  arith::CmpFPredicate::OLT, double, floatConstant>,
        buildSign<arith::CmpIOp, arith::CmpIPredicate::sgt,
                  arith::CmpIPredicate::slt, int64_t, intConstant>};
  });
  // `x > 0 ? x : 0`, so NaN becomes 0 as in the evaluator.
  addUnary<ReluOp>(patterns, [](ReluOp) {
    return UnaryFns{[](OpBuilder &b, Location loc, Value x) -> Value {
                      Value zero = floatConstant(b, loc, x.getType(), 0.0);
                      Value positive = arith::CmpFOp::create(
                          b, loc, arith::CmpFPredicate::OGT, x, zero);
                      return arith::SelectOp::create(b, loc, positive, x, zero);
                    },
                    [](OpBuilder &b, Location loc, Value x) -> Value {
                      return arith::MaxSIOp::create(
                          b, loc, x, intConstant(b, loc, x.getType(), 0));
                    }};
  });
  addUnary<ExpOp>(patterns,
                  [](ExpOp) { return UnaryFns{buildMath<math::ExpOp>}; });
  addUnary<LogOp>(patterns,
                  [](LogOp) { return UnaryFns{buildMath<math::LogOp>}; });
  addUnary<SqrtOp>(patterns,
                   [](SqrtOp) { return UnaryFns{buildMath<math::SqrtOp>}; });
  addUnary<TanhOp>(patterns,
                   [](TanhOp) { return UnaryFns{buildMath<math::TanhOp>}; });
  addUnary<ErfOp>(patterns,
                  [](ErfOp) { return UnaryFns{buildMath<math::ErfOp>}; });
  addUnary<CosOp>(patterns,
                  [](CosOp) { return UnaryFns{buildMath<math::CosOp>}; });
  addUnary<SinOp>(patterns,
                  [](SinOp) { return UnaryFns{buildMath<math::SinOp>}; });
  addUnary<CeilOp>(patterns,
                   [](CeilOp) { return UnaryFns{buildMath<math::CeilOp>}; });
  addUnary<FloorOp>(patterns,
                    [](FloorOp) { return UnaryFns{buildMath<math::FloorOp>}; });
  addUnary<RoundOp>(patterns, [](RoundOp) {
    return UnaryFns{buildMath<math::RoundEvenOp>};
  });
  addUnary<ReciprocalOp>(patterns, [](ReciprocalOp) {
    return UnaryFns{[](OpBuilder &b, Location loc, Value x) -> Value {
      return arith::DivFOp::create(b, loc,
                                   floatConstant(b, loc, x.getType(), 1.0), x);
    }};
  });
  addUnary<SigmoidOp>(patterns,
                      [](SigmoidOp) { return UnaryFns{buildSigmoid}; });
  addUnary<NotOp>(patterns, [](NotOp) {
    return UnaryFns{nullptr, nullptr,
                    [](OpBuilder &b, Location loc, Value x) -> Value {
                      return arith::XOrIOp::create(
                          b, loc, x, intConstant(b, loc, x.getType(), 1));
                    }};
  });
  addUnary<GeluOp>(patterns, [](GeluOp op) {
    if (op.getApproximate() == GeluApproximation::tanh)
      return UnaryFns{buildGeluTanh};
    return UnaryFns{buildGeluErf};
  });
}

static void addBinaryPatterns(RewritePatternSet &patterns) {
  using P = arith::CmpFPredicate;
  using I = arith::CmpIPredicate;
  addBinary<AddOp>(patterns,
                   {buildArith<arith::AddFOp>, buildArith<arith::AddIOp>});
  addBinary<SubOp>(patterns,
                   {buildArith<arith::SubFOp>, buildArith<arith::SubIOp>});
  addBinary<MulOp>(patterns,
                   {buildArith<arith::MulFOp>, buildArith<arith::MulIOp>});
  // Integer division truncates toward zero, as ONNX Div does.
  addBinary<DivOp>(patterns,
                   {buildArith<arith::DivFOp>, buildArith<arith::DivSIOp>});
  // Integer pow has no lowering to LLVM upstream; it stays.
  addBinary<PowOp>(patterns, {buildArith<math::PowFOp>, buildIntPow});
  // maximumf/minimumf propagate NaN, as the evaluator does.
  addBinary<MaxOp>(patterns,
                   {buildArith<arith::MaximumFOp>, buildArith<arith::MaxSIOp>});
  addBinary<MinOp>(patterns,
                   {buildArith<arith::MinimumFOp>, buildArith<arith::MinSIOp>});
  addBinary<EqualOp>(patterns,
                     {buildCmpF<P::OEQ>, buildCmpI<I::eq>, buildCmpI<I::eq>});
  addBinary<LessOp>(patterns, {buildCmpF<P::OLT>, buildCmpI<I::slt>});
  addBinary<GreaterOp>(patterns, {buildCmpF<P::OGT>, buildCmpI<I::sgt>});
  addBinary<AndOp>(patterns, {nullptr, nullptr, buildArith<arith::AndIOp>});
  addBinary<OrOp>(patterns, {nullptr, nullptr, buildArith<arith::OrIOp>});
}

void mlir::lmopt::populateLmoptElementwiseToLinalgPatterns(
    RewritePatternSet &patterns) {
  addUnaryPatterns(patterns);
  addBinaryPatterns(patterns);
  patterns.add<CastToLinalg, WhereToLinalg, RotaryToLinalg>(
      patterns.getContext());
}
