//===- Plan.h - The execution plan stored in a bundle -----------*- C++ -*-===//
//
// The `plan` section of a bundle: the tensors a compiled model touches (where
// each lives: a model input, the weights section, or the activation arena),
// the model's inputs and outputs by name, and the steps in execution order.
// The compiler builds a `Plan` and serializes it; the runtime parses and
// validates it before anything runs. Both sides use this one definition, so
// the encoding is written down once (docs/bundle-format.md, "plan section").
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_FORMAT_PLAN_H
#define LMOPT_FORMAT_PLAN_H

#include "lmopt/Format/Npy.h"
#include "lmopt/Format/Status.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lmopt::runtime {

/// Version of the plan encoding, independent of the bundle container's.
/// A parser refuses other major versions and ignores nothing: the encoding
/// has no optional parts, so a minor bump must only add step kinds or
/// attributes that old executors refuse by name.
/// Version 1.1 adds symbolic dims (symbols, dim expressions, assumptions);
/// a plan without symbols is still written as 1.0, byte for byte as before.
inline constexpr uint32_t kPlanVersionMajor = 1;
inline constexpr uint32_t kPlanVersionMinor = 1;

/// Where a tensor's bytes are at run time.
enum class TensorStorage : uint32_t {
  /// Model input number `offset`; the caller's buffer, read-only.
  Input = 1,
  /// `byteSize` bytes at `offset` in the `weights` section, read-only.
  Weight = 2,
  /// `byteSize` bytes at `offset` in the activation arena.
  Arena = 3,
};

const char *tensorStorageName(TensorStorage storage);

struct PlanTensor {
  /// Diagnostic name (the producing node's name, or the value's), unique
  /// not required.
  std::string name;
  DType dtype = DType::F32;
  /// Dims, each >= 0. A symbolic dim holds its value at the symbols'
  /// bounds (the most bytes it can take: arena offsets are planned for it).
  std::vector<int64_t> dims;
  TensorStorage storage = TensorStorage::Arena;
  /// Input number, or byte offset in the weights section or the arena.
  /// Weight and arena offsets are multiples of 64.
  uint64_t offset = 0;
  /// Empty when every dim is static; otherwise one entry per dim: -1 for a
  /// static dim, else the index of its expression in Plan::exprs.
  /// (Last, so that brace initialization of static tensors stays as it was.)
  std::vector<int32_t> dimExprs = {};

  bool isSymbolic() const { return !dimExprs.empty(); }
  /// Number of elements; the parser has checked it does not overflow.
  uint64_t elementCount() const;
  /// elementCount() times the dtype's size.
  uint64_t byteSize() const;
};

/// A named model input or output and the tensor that holds it.
struct PlanValue {
  std::string name;
  uint32_t tensor = 0;
};

/// A step's attribute: an integer, a float or a string, by name.
struct PlanAttr {
  enum class Kind : uint32_t { Int = 1, Float = 2, String = 3 };
  std::string name;
  Kind kind = Kind::Int;
  int64_t intValue = 0;
  double floatValue = 0;
  std::string stringValue;
};

/// What a step does. Operands and results are tensor indices; their order
/// and the attributes each kind reads are listed in docs/bundle-format.md.
enum class StepKind : uint32_t {
  /// A generated kernel in the `kernels` section: attribute `entry` (string)
  /// names an `extern "C" void entry(void **args)` whose args are the
  /// operands' then the results' data pointers, in step order.
  Kernel = 1,
  /// `lmopt.linear` on oneDNN (runtime/CPU/LinearStep.h).
  Linear = 2,
  /// `lmopt.attention` (runtime/CPU/AttentionStep.h).
  Attention = 3,
  /// ONNX Gather with bounds-checked indices.
  Gather = 4,
  /// Copies operand 0's bytes to result 0 (same byte size).
  Copy = 5,
  /// A bare `lmopt.matmul` (numpy semantics, f32): operands lhs, rhs
  /// (runtime/CPU/MatMulStep.h).
  MatMul = 6,
  /// A quantized or mixed-precision `lmopt.linear` (attribute `mode`:
  /// int8 dynamic per token or per tensor, int8 static, bf16, int4
  /// weight-only; runtime/CPU/QuantLinearStep.h).
  QuantLinear = 7,
};

const char *stepKindName(StepKind kind);

struct PlanStep {
  StepKind kind = StepKind::Kernel;
  /// The source node's name, for errors and profiles.
  std::string name;
  std::vector<uint32_t> operands;
  std::vector<uint32_t> results;
  std::vector<PlanAttr> attrs;

  const PlanAttr *findAttr(std::string_view attrName) const;
  /// Typed lookups that fail with a message naming the step and attribute.
  Status getInt(std::string_view attrName, int64_t &out) const;
  Status getFloat(std::string_view attrName, double &out) const;
  Status getString(std::string_view attrName, std::string &out) const;
  /// Like getInt, but `fallback` when the attribute is absent.
  Status getInt(std::string_view attrName, int64_t fallback,
                int64_t &out) const;
};

/// A symbolic dim: dim `dim` of model input `input`, at most `bound`.
struct PlanSymbol {
  std::string name;
  uint32_t input = 0;
  uint32_t dim = 0;
  int64_t bound = 0;
};

/// One operation of a dim expression, run on a stack of int64 values:
/// Const and Symbol push (`value` is the constant or the symbol's index),
/// the others pop rhs then lhs and push `lhs op rhs`.
struct DimOp {
  enum class Kind : uint32_t {
    Const = 1,
    Symbol = 2,
    Add = 3,
    Sub = 4,
    Mul = 5,
    /// Floor division; a zero divisor is an error at run time.
    FloorDiv = 6,
    Min = 7,
    Max = 8,
  };
  Kind kind = Kind::Const;
  int64_t value = 0;
};

/// A dim as a postfix program over the symbols; it leaves one value.
struct DimExpr {
  std::vector<DimOp> ops;
};

/// A fact about the symbols the compiler relied on; every run checks it
/// before any step runs.
struct PlanAssumption {
  enum class Kind : uint32_t { Equal = 1, LessEqual = 2 };
  Kind kind = Kind::Equal;
  /// Indices in Plan::exprs.
  uint32_t lhs = 0, rhs = 0;
};

struct Plan {
  /// Bytes of the activation arena; every Arena tensor lies inside it (at
  /// the symbols' bounds when dims are symbolic).
  uint64_t arenaSize = 0;
  /// Symbolic dims (version 1.1); empty for a static plan.
  std::vector<PlanSymbol> symbols;
  std::vector<DimExpr> exprs;
  std::vector<PlanAssumption> assumptions;
  std::vector<PlanTensor> tensors;
  std::vector<PlanValue> inputs;
  std::vector<PlanValue> outputs;
  std::vector<PlanStep> steps;

  /// Builder conveniences for the compiler.
  uint32_t addTensor(PlanTensor tensor);
  PlanStep &addStep(StepKind kind, std::string name);
  /// The index of `expr` in `exprs`, added unless an identical one exists
  /// (so that equal indices mean equal dims).
  uint32_t addExpr(DimExpr expr);

  bool isSymbolic() const { return !symbols.empty(); }
};

/// Encodes `plan` (little-endian, see docs/bundle-format.md).
std::vector<uint8_t> serializePlan(const Plan &plan);

/// Decodes and validates a plan section. Checks the magic and version, every
/// length against the remaining bytes, tensor and step references, dims and
/// byte sizes (overflow-safe), arena offsets + sizes within `arenaSize`,
/// weight offsets + sizes within `weightsSize`, input numbers, that inputs
/// and outputs name distinct tensors of the right storage, and 64-byte
/// alignment of arena and weight offsets. `source` names the bundle in
/// messages.
Status parsePlan(const uint8_t *data, size_t size, uint64_t weightsSize,
                 std::string_view source, Plan &out);

} // namespace lmopt::runtime

#endif // LMOPT_FORMAT_PLAN_H
