//===- KvCacheEntries.cpp - Prefill and decode entries of a decoder -------===//
//
// Finds the cache pairs (a result that is concat(<argument>, new) along one
// axis), checks that the model has the form generation fills, and clones
// @main twice: @prefill with every past input's length fixed at 0, and
// @decode with one new token. The plan builder turns the state attributes
// into state views, the concats into in-place appends and the presents into
// state writes. Prefill's logits keep the last position only (a slice of
// the LM head's input rows when the logits come straight from a linear).
//
//===----------------------------------------------------------------------===//

#include "lmopt/Target/Common/KvCacheEntries.h"

#include "lmopt/Dialect/Lmopt/IR/GraphNames.h"
#include "lmopt/Dialect/Lmopt/IR/LmoptOps.h"
#include "lmopt/Dialect/Lmopt/Transforms/PatternUtils.h"
#include "lmopt/Support/FusionReport.h"
#include "lmopt/Target/Common/PlanBuilder.h"
#include "lmopt/Target/Common/RuntimeTypes.h"

#include "mlir/IR/Builders.h"

#include <limits>

using namespace mlir;
using namespace mlir::lmopt;
namespace rt = ::lmopt::runtime;

namespace {
/// A past input, the present output that appends to it, and the axis.
struct CachePair {
  unsigned arg;
  unsigned result;
  int64_t axis;
};

/// The inputs generation fills besides the cache.
enum class TokenInput { Ids, Mask, Positions };
} // namespace

static FailureOr<SmallVector<CachePair>> findCachePairs(func::FuncOp main) {
  SmallVector<CachePair> pairs;
  auto ret = cast<func::ReturnOp>(main.getBody().front().getTerminator());
  for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
    auto concat = value.getDefiningOp<ConcatOp>();
    if (!concat || concat.getInputs().size() != 2)
      continue;
    auto arg = llvm::dyn_cast<BlockArgument>(concat.getInputs()[0]);
    if (!arg || arg.getOwner() != &main.getBody().front())
      continue;
    int64_t axis = concat.getAxis();
    if (axis < 0)
      axis += llvm::cast<RankedTensorType>(concat.getType()).getRank();
    pairs.push_back({arg.getArgNumber(), unsigned(index), axis});
  }
  if (pairs.empty())
    return main.emitError(
        "--kv-cache: no output of the model is a past input concatenated "
        "with new values (present = Concat(past, new)); export the model "
        "with past key/values (use_cache=True)");
  for (const CachePair &pair : pairs) {
    BlockArgument arg = main.getArgument(pair.arg);
    Operation *concat = ret.getOperand(pair.result).getDefiningOp();
    for (Operation *user : arg.getUsers())
      if (user != concat && !isa<ShapeOp>(user))
        return user->emitError()
               << "--kv-cache: past input '"
               << getGraphInputName(main, pair.arg) << "' is read by '"
               << user->getName() << "' (node '" << describeNode(user->getLoc())
               << "'); only its concatenation with the new values and its "
                  "shape may read a cache kept in place";
  }
  return pairs;
}

static std::optional<TokenInput> getTokenInput(StringRef name) {
  if (name == "input_ids")
    return TokenInput::Ids;
  if (name == "attention_mask")
    return TokenInput::Mask;
  if (name == "position_ids")
    return TokenInput::Positions;
  return std::nullopt;
}

/// Sets `func`'s argument `index` to `type` (and its function type).
static void setArgumentType(func::FuncOp func, unsigned index, Type type) {
  func.getArgument(index).setType(type);
  SmallVector<Type> inputs(func.getArgumentTypes());
  func.setType(
      FunctionType::get(func.getContext(), inputs, func.getResultTypes()));
}

/// A copy of `main` named `name` whose cache pairs read and write their
/// states.
static func::FuncOp cloneEntry(func::FuncOp main, StringRef name,
                               ArrayRef<CachePair> pairs) {
  OpBuilder builder(main);
  auto entry = cast<func::FuncOp>(builder.clone(*main));
  entry.setSymName(name);
  for (const CachePair &pair : pairs) {
    auto state =
        StringAttr::get(main.getContext(), getGraphInputName(main, pair.arg));
    entry.setArgAttr(pair.arg, kStateAttrName, state);
    entry.setResultAttr(pair.result, kStateWriteAttrName, state);
  }
  return entry;
}

/// `type` [d0, d1, ...] with d1 = 1: one position.
static RankedTensorType lastPositionType(Type type) {
  auto ranked = llvm::cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(ranked.getShape());
  shape[1] = 1;
  return ranked.clone(shape);
}

/// `values` [d0, d1, ...] sliced to its last entry along dim 1.
static Value sliceLastPosition(OpBuilder &builder, Location loc, Value values) {
  return SliceOp::create(builder, loc, lastPositionType(values.getType()),
                         values, buildI64Vector(builder, loc, {-1}),
                         buildI64Vector(builder, loc,
                                        {std::numeric_limits<int64_t>::max()}),
                         buildI64Vector(builder, loc, {1}), Value())
      .getOutput();
}

/// Makes `prefill` return only the last position of its `logits` output
/// [batch, tokens, vocab], which is all generation reads. A linear that
/// produces the logits for nothing else (the LM head) multiplies that
/// position's input row alone; otherwise the result is sliced.
static void keepLastLogits(func::FuncOp prefill) {
  auto ret = cast<func::ReturnOp>(prefill.getBody().front().getTerminator());
  for (unsigned index = 0; index < ret.getNumOperands(); ++index) {
    if (getGraphOutputName(prefill, index) != "logits" ||
        prefill.getResultAttr(index, kStateWriteAttrName))
      continue;
    Value logits = ret.getOperand(index);
    auto type = llvm::dyn_cast<RankedTensorType>(logits.getType());
    if (!type || type.getRank() != 3 || type.getDimSize(1) == 1)
      return;
    OpBuilder builder(ret);
    Value last;
    auto linear = logits.getDefiningOp<LinearOp>();
    auto input =
        linear ? llvm::dyn_cast<RankedTensorType>(linear.getInput().getType())
               : RankedTensorType();
    // A per-tensor dynamic quantization's scale depends on every row, so
    // such a linear keeps its rows.
    if (linear && logits.hasOneUse() && input && input.getRank() == 3 &&
        !linear.getTransposeInput() &&
        linear.getInputQuantization() !=
            InputQuantization::dynamic_per_tensor) {
      builder.setInsertionPoint(linear);
      Location loc = linear.getLoc();
      Value rows = sliceLastPosition(builder, loc, linear.getInput());
      Value residual =
          linear.getResidual()
              ? sliceLastPosition(builder, loc, linear.getResidual())
              : Value();
      auto sliced = cast<LinearOp>(builder.clone(*linear));
      sliced.getInputMutable().assign(rows);
      if (residual)
        sliced.getResidualMutable().assign(residual);
      sliced.getOutput().setType(lastPositionType(type));
      last = sliced.getOutput();
    } else {
      last = sliceLastPosition(builder, ret.getLoc(), logits);
    }
    ret.setOperand(index, last);
    if (linear && linear->use_empty())
      linear.erase();
    SmallVector<Type> results(ret.getOperandTypes());
    prefill.setType(FunctionType::get(prefill.getContext(),
                                      prefill.getArgumentTypes(), results));
    return;
  }
}

FailureOr<KvCacheEntries>
mlir::lmopt::buildKvCacheEntries(ModuleOp module,
                                 const KvCacheOptions &options) {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main || main.isExternal())
    return module.emitError("the module has no func.func @main to compile");
  FailureOr<SmallVector<CachePair>> pairs = findCachePairs(main);
  if (failed(pairs))
    return failure();

  // The bounds the user gave: input_ids [batch, prompt].
  auto ids = options.maxShapes.find("input_ids");
  if (ids == options.maxShapes.end() || ids->second.size() != 2)
    return main.emitError("--kv-cache needs the batch and prompt bounds as "
                          "--max-shape input_ids:<batch>x<prompt>");
  const int64_t batch = ids->second[0], prompt = ids->second[1];
  if (options.capacity <= prompt)
    return main.emitError("--kv-cache=")
           << options.capacity << " holds fewer tokens than the prompt bound "
           << prompt << " and one more; give at least " << prompt + 1;

  llvm::SmallDenseSet<unsigned> pastArgs;
  for (const CachePair &pair : *pairs)
    pastArgs.insert(pair.arg);
  std::map<unsigned, TokenInput> tokenInputs;
  for (BlockArgument arg : main.getArguments()) {
    if (pastArgs.contains(arg.getArgNumber()))
      continue;
    std::string name = getGraphInputName(main, arg.getArgNumber());
    std::optional<TokenInput> kind = getTokenInput(name);
    auto type = llvm::dyn_cast<RankedTensorType>(arg.getType());
    if (!kind)
      return emitError(arg.getLoc())
             << "--kv-cache: input '" << name
             << "' is neither a past input nor one that generation fills "
                "(input_ids, attention_mask, position_ids)";
    if (!type || type.getRank() != 2)
      return emitError(arg.getLoc())
             << "--kv-cache: input '" << name << "' has type " << arg.getType()
             << "; generation fills int64 [batch, tokens]";
    tokenInputs[arg.getArgNumber()] = *kind;
  }
  if (!llvm::is_contained(llvm::make_second_range(tokenInputs),
                          TokenInput::Ids))
    return main.emitError("--kv-cache: the model has no input 'input_ids'");
  for (const auto &[name, dims] : options.maxShapes)
    if (!getTokenInput(name))
      return main.emitError("--kv-cache: --max-shape names '")
             << name
             << "'; the cache's bounds come from --kv-cache, and the other "
                "inputs are input_ids, attention_mask and position_ids";

  KvCacheEntries result;
  std::map<std::string, std::vector<int64_t>> prefillBounds, decodeBounds;
  for (const CachePair &pair : *pairs) {
    BlockArgument arg = main.getArgument(pair.arg);
    std::string name = getGraphInputName(main, pair.arg);
    auto type = llvm::dyn_cast<RankedTensorType>(arg.getType());
    std::optional<rt::DType> dtype =
        type ? getRuntimeDType(type.getElementType()) : std::nullopt;
    if (!dtype || pair.axis == 0 || pair.axis >= type.getRank())
      return emitError(arg.getLoc())
             << "--kv-cache: past input '" << name << "' has type "
             << arg.getType() << ", not [batch, ..., length, ...] of a "
             << "runtime dtype appended along a later axis";
    rt::PlanState state;
    state.name = name;
    state.dtype = *dtype;
    std::vector<int64_t> prefillDims, decodeDims;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      int64_t dim = type.getDimSize(d);
      if (d == 0 || d == pair.axis) {
        state.dims.push_back(d == 0 ? batch : options.capacity);
        prefillDims.push_back(d == 0 ? batch : 0);
        decodeDims.push_back(d == 0 ? batch : options.capacity - 1);
        continue;
      }
      if (ShapedType::isDynamic(dim))
        return emitError(arg.getLoc())
               << "--kv-cache: past input '" << name << "' dim " << d
               << " is dynamic; only its batch and length may be";
      state.dims.push_back(dim);
      prefillDims.push_back(dim);
      decodeDims.push_back(dim);
    }
    prefillBounds[name] = prefillDims;
    decodeBounds[name] = decodeDims;
    result.states.push_back(std::move(state));
  }

  func::FuncOp prefill = cloneEntry(main, "prefill", *pairs);
  func::FuncOp decode = cloneEntry(main, "decode", *pairs);
  if (!options.allLogits)
    keepLastLogits(prefill);
  // Prefill starts from an empty cache: every past input has length 0.
  for (const CachePair &pair : *pairs) {
    auto type =
        llvm::cast<RankedTensorType>(main.getArgument(pair.arg).getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[pair.axis] = 0;
    setArgumentType(prefill, pair.arg, type.clone(shape));
  }
  // Decode runs one new token after a cache of up to capacity - 1.
  for (const auto &[index, kind] : tokenInputs) {
    std::string name = getGraphInputName(main, index);
    auto type = llvm::cast<RankedTensorType>(main.getArgument(index).getType());
    auto given = options.maxShapes.find(name);
    prefillBounds[name] = given != options.maxShapes.end()
                              ? given->second
                              : std::vector<int64_t>{batch, prompt};
    if (kind == TokenInput::Mask) {
      decodeBounds[name] = {batch, options.capacity};
      continue;
    }
    if (!type.isDynamicDim(1) && type.getDimSize(1) != 1)
      return emitError(main.getArgument(index).getLoc())
             << "--kv-cache: input '" << name << "' has " << type.getDimSize(1)
             << " tokens fixed by the model; decoding runs one at a time";
    setArgumentType(decode, index, type.clone({type.getDimSize(0), 1}));
    decodeBounds[name] = {batch, 1};
  }
  main.erase();
  result.entries.push_back({"prefill", prefill, std::move(prefillBounds)});
  result.entries.push_back({"decode", decode, std::move(decodeBounds)});
  return result;
}
