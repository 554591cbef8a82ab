//===- Plan.h - The execution plan stored in a bundle -----------*- C++ -*-===//
//
// The `plan` section of a bundle holds a `Program`: the devices its steps
// run on, the state tensors a session owns across runs, and one `Plan` per
// entry point. An entry's plan lists the tensors it touches (where each
// lives: a model input, the weights section, the activation arena of a
// device, or a state tensor), its named inputs and outputs, and its steps in
// execution order. Entries share the weights section and the states. The
// compiler builds a `Program` and serializes it; the runtime parses and
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
/// A parser ignores nothing: the encoding has no optional parts, so a minor
/// bump must only add step kinds or attributes that old executors refuse by
/// name. Version 2.0 holds a Program (devices, states, several entries);
/// parsePlan also reads 1.0 and 1.1 (one entry, no states, the host CPU).
inline constexpr uint32_t kPlanVersionMajor = 2;
inline constexpr uint32_t kPlanVersionMinor = 0;
/// The newest 1.x encoding: symbolic dims (symbols, dim expressions,
/// assumptions) added to 1.0. serializeLegacyPlan writes it.
inline constexpr uint32_t kLegacyPlanVersionMinor = 1;

/// Where a tensor's bytes are at run time.
enum class TensorStorage : uint32_t {
  /// Model input number `offset`; the caller's buffer, read-only.
  Input = 1,
  /// `byteSize` bytes at `offset` in the `weights` section, read-only.
  Weight = 2,
  /// `byteSize` bytes at `offset` in the activation arena of the tensor's
  /// device.
  Arena = 3,
  /// A view of state tensor number `offset` (Program::states): the state's
  /// bytes, laid out with the strides of its capacity dims. The view's dims
  /// are at most the capacity's, axis by axis (version 2.0).
  State = 4,
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
  /// Input number, byte offset in the weights section or the arena, or
  /// state number. Weight and arena offsets are multiples of 64.
  uint64_t offset = 0;
  /// Empty when every dim is static; otherwise one entry per dim: -1 for a
  /// static dim, else the index of its expression in Plan::exprs.
  /// (Last, so that brace initialization of static tensors stays as it was.)
  std::vector<int32_t> dimExprs = {};
  /// Where the bytes are: an index in Program::devices. Inputs are the
  /// caller's host memory (device 0); a state tensor is on its state's
  /// device.
  uint32_t device = 0;

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
  /// Writes operand 0 into result 0, a state view, as its last rows along
  /// attribute `axis`: rows [dims[axis] - n, dims[axis]) of the result,
  /// with n the operand's dims[axis]; every other dim equal. What precedes
  /// those rows is the state's content, left in place (a key/value cache
  /// growing by the new tokens). Version 2.0.
  Append = 8,
  /// `lmopt.gather_grad`: result 0 (f32 `[N, D...]`) is zeroed, then each
  /// row of operand 0 (f32, `indices.dims + [D...]`) is added to the row
  /// operand 1 (i32/i64 indices) names; an index outside [-N, N) fails
  /// the run. The gradient of an embedding table. Version 2.0.
  GatherGrad = 9,
  /// `lmopt.adamw`: one AdamW update of one parameter in place
  /// (include/lmopt/Format/AdamW.h). Operands: param, grad, m, v (f32, one
  /// shape), then the f32 scalars lr, step_size, bias_correction2_sqrt,
  /// grad_scale, clip_coef; results: the new param, m and v, which may be
  /// the very tensors operands 0, 2 and 3 are (a state updated in place).
  /// Float attributes beta1, beta2, epsilon, weight_decay. Version 2.0.
  AdamW = 10,
  /// ONNX GatherElements: operands data (any dtype) and indices (i32/i64,
  /// data's rank, dims at most data's off `axis`); result 0 has the
  /// indices' dims and data's dtype. Every index is checked against
  /// data's size along attribute `axis` (negative counts from the end)
  /// before any byte is read; one outside fails the run. Version 2.0.
  GatherElements = 11,
  /// `lmopt.attention_grad` (runtime/CPU/AttentionGradStep.h): operands
  /// query, key, value, output_grad (f32 [B, Sq|Sk, H*D], dense), [mask]
  /// (f32 additive or bool, broadcasting to [B, H, Sq, Sk]); results the
  /// gradients of query, key and value. Attributes num_heads, scale, causal,
  /// zero_masked_rows as an attention step's. Version 2.0.
  AttentionGrad = 12,
  /// ONNX ScatterND: operands data (any dtype), indices (i32/i64, `[..., k]`
  /// with k from 1 to rank(data)) and updates (data's dtype,
  /// `indices.dims[:-1] + data.dims[k:]`); result 0 has data's dtype and
  /// dims. Attribute `reduction` (int: 0 none, 1 add, 2 mul, 3 max, 4 min;
  /// default 0). Every index is checked before any byte is written; one
  /// outside its dim fails the run. Version 2.0.
  ScatterND = 13,
};

const char *stepKindName(StepKind kind);

struct PlanStep {
  StepKind kind = StepKind::Kernel;
  /// The source node's name, for errors and profiles.
  std::string name;
  /// The device that runs the step (an index in Program::devices); it reads
  /// and writes tensors on that device only, except a copy step, whose
  /// operand and result may be on different devices.
  uint32_t device = 0;
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

/// Whether `step` touches its result (`result`) or operand `index` in place
/// at a state's capacity, when that is a state view: an attention step's key
/// and value, an append step's result, and the operands a kernel step lists
/// in its `dims_only` attribute (comma-separated operand numbers: the
/// kernel reads their dims, never their bytes). Every other state view a
/// step touches must be one dense block of its state.
bool readsStateAtCapacity(const PlanStep &step, bool result, size_t index);

/// A symbolic dim: dim `dim` of model input `index`, or of the current
/// value of state `index`, at most `bound`.
struct PlanSymbol {
  enum class Source : uint32_t { Input = 1, State = 2 };
  std::string name;
  uint32_t index = 0;
  uint32_t dim = 0;
  int64_t bound = 0;
  /// (Last, so that brace initialization of input symbols stays short.)
  Source source = Source::Input;
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

  bool operator==(const DimOp &other) const {
    return kind == other.kind && value == other.value;
  }
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

/// An entry's use of a state: the state's number and the plan tensor (a
/// view of that state) that holds its value.
struct PlanStateUse {
  uint32_t state = 0;
  uint32_t tensor = 0;
};

/// The plan of one entry point.
struct Plan {
  /// The entry's name ("main" for a bundle with one entry).
  std::string name = "main";
  /// Bytes of the activation arena of each device (index = device); every
  /// Arena tensor lies inside its device's (at the symbols' bounds when dims
  /// are symbolic). Shorter than Program::devices when the last devices
  /// need none.
  std::vector<uint64_t> arenaSizes;
  /// Symbolic dims (version 1.1); empty for a static plan.
  std::vector<PlanSymbol> symbols;
  std::vector<DimExpr> exprs;
  std::vector<PlanAssumption> assumptions;
  std::vector<PlanTensor> tensors;
  std::vector<PlanValue> inputs;
  std::vector<PlanValue> outputs;
  std::vector<PlanStep> steps;
  /// States the entry reads: before any step runs, each state must hold a
  /// value whose dims equal its tensor's for this run.
  std::vector<PlanStateUse> stateReads;
  /// States the entry writes: after every step has run, each state's value
  /// has its tensor's dims for this run.
  std::vector<PlanStateUse> stateWrites;

  /// Bytes of device `device`'s arena (0 when it has none).
  uint64_t arenaSize(uint32_t device = 0) const {
    return device < arenaSizes.size() ? arenaSizes[device] : 0;
  }

  /// Builder conveniences for the compiler.
  uint32_t addTensor(PlanTensor tensor);
  PlanStep &addStep(StepKind kind, std::string name);
  /// The index of `expr` in `exprs`, added unless an identical one exists
  /// (so that equal indices mean equal dims).
  uint32_t addExpr(DimExpr expr);

  bool isSymbolic() const { return !symbols.empty(); }
};

/// A device the program's steps run on, by the name the runtime creates it
/// with ("cpu"), and the bundle section holding its kernels ("" for none).
struct PlanDevice {
  std::string name;
  std::string kernels;
};

/// A tensor the session owns: created when the session is, it keeps its
/// value from one run to the next, entries read and write it, and the
/// caller can export and import it (parameters and optimizer moments in
/// training, a key/value cache in generation).
struct PlanState {
  enum class Init : uint32_t {
    /// No value until an entry (or the caller) writes one; reading it
    /// first is an error.
    None = 1,
    /// Zeros, with the capacity dims.
    Zero = 2,
    /// The `byteSize()` bytes at `offset` in the weights section, with the
    /// capacity dims.
    Weight = 3,
  };
  std::string name;
  DType dtype = DType::F32;
  /// Capacity: the most each dim can hold; the state's bytes.
  std::vector<int64_t> dims;
  uint32_t device = 0;
  Init init = Init::None;
  /// Weight init only: byte offset in the weights section, a multiple of 64.
  uint64_t offset = 0;

  uint64_t elementCount() const;
  uint64_t byteSize() const;
};

/// "none", "zero" or "weight".
const char *planStateInitName(PlanState::Init init);

/// What the plan section holds.
struct Program {
  /// Device 0 is always the host CPU ("cpu").
  std::vector<PlanDevice> devices = {{"cpu", ""}};
  std::vector<PlanState> states;
  /// Distinct names; the first is the default entry.
  std::vector<Plan> entries;

  /// The entry named `name`, or null.
  const Plan *findEntry(std::string_view name) const;
  /// The state named `name`'s index, or -1.
  long findState(std::string_view name) const;
};

/// Encodes `program` as version 2.0 (little-endian, see
/// docs/bundle-format.md).
std::vector<uint8_t> serializeProgram(const Program &program);

/// Encodes `plan`, an entry on the host CPU that uses no state, as version
/// 1.0 (no symbols) or 1.1: what compilers before 2.0 wrote. Kept so that
/// the tests can check that such bundles still load.
std::vector<uint8_t> serializeLegacyPlan(const Plan &plan);

/// Decodes and validates a plan section. Checks the magic and version, every
/// length against the remaining bytes, device, state, tensor and step
/// references, dims and byte sizes (overflow-safe), arena offsets + sizes
/// within the arena of their device, weight offsets + sizes within
/// `weightsSize`, state views within their state's capacity, input
/// numbers, that inputs and outputs name distinct tensors of the right
/// storage, that steps write only arena and state tensors on their own
/// device, and 64-byte alignment of arena and weight offsets. A 1.x plan
/// becomes a program with one entry, "main", on the host CPU, whose kernels
/// are in the section named `kernels`. `source` names the bundle in
/// messages.
Status parsePlan(const uint8_t *data, size_t size, uint64_t weightsSize,
                 std::string_view source, Program &out);

} // namespace lmopt::runtime

#endif // LMOPT_FORMAT_PLAN_H
