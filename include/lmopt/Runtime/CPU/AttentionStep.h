//===- AttentionStep.h - lmopt.attention at run time ------------*- C++ -*-===//
//
// The runtime's library step for `lmopt.attention`: per batch and head,
// softmax(Q K^T * scale + bias + mask) V with the op's exact semantics (see the
// op's description in LmoptFusedOps.td and the reference evaluator, which is
// the numerical oracle). Matrix products run on oneDNN (or, with
// bf16Products where the CPU has AMX-BF16, on bf16 tiles); batches x heads
// are spread over the context's threads. docs/cpu-backend.md describes the
// step.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_RUNTIME_CPU_ATTENTIONSTEP_H
#define LMOPT_RUNTIME_CPU_ATTENTIONSTEP_H

#include "lmopt/Format/Status.h"
#include "lmopt/Runtime/CPU/LinearStep.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace lmopt::runtime {

enum class AttentionMask : int {
  None = 0,
  /// f32, added to the scores.
  Additive = 1,
  /// One byte per element (0 or 1): keys where it is 0 are hidden.
  Bool = 2,
};

/// Where a query, key or value operand's rows lie in the buffer the step is
/// given: row r (the flattened [b, s]) is the H*D elements starting
/// `offset + r * rowStride` elements into it. The default is the dense
/// layout; a view reads Q, K and V straight out of a fused QKV projection
/// [B, S, 3*H*D] (offsets 0, H*D, 2*H*D, row stride 3*H*D).
struct AttentionOperandView {
  int64_t offset = 0;
  /// 0 means dense (H*D).
  int64_t rowStride = 0;
};

/// One `lmopt.attention`, as the plan describes it (static shapes).
struct AttentionStepDesc {
  std::string name;
  int64_t batch = 0;
  int64_t numHeads = 0;
  /// Key/value heads G (grouped-query attention), dividing numHeads; 0
  /// means numHeads. Query head h reads key/value head h / (H / G) in
  /// place: key and value are [B, Sk, G*D] (or [B, G, Sk, D]).
  int64_t numKvHeads = 0;
  int64_t queryLength = 0; // Sq
  int64_t keyLength = 0;   // Sk
  int64_t headDim = 0;     // D
  /// Scores are multiplied by this (the op's scale, or 1/sqrt(D)).
  float scale = 1;
  /// Hides keys after the query position, aligned to the end when Sk > Sq.
  bool causal = false;
  /// Key and value are [B, H, Sk, D] instead of packed [B, Sk, H*D].
  bool kvHeadsSplit = false;
  /// A query row whose every key is hidden yields zeros (the op's
  /// `zero_masked_rows`); otherwise the evaluator's rule applies.
  bool zeroMaskedRows = false;
  AttentionMask mask = AttentionMask::None;
  /// The mask's dims, rank <= 4, broadcasting (numpy rules, aligned on the
  /// right) to [B, H, Sq, Sk].
  std::vector<int64_t> maskDims;
  /// An f32 score bias (a relative-position bias) added to the scaled
  /// scores before the mask, dims [1|B, 1|H, 1|Sq, Sk] (biasDims).
  bool scoreBias = false;
  std::vector<int64_t> biasDims;
  /// Query, key and value as views (key and value with kvHeadsSplit must
  /// stay dense).
  AttentionOperandView queryView, keyView, valueView;
  /// Key and value rows allocated per sequence (per batch, and per head
  /// with kvHeadsSplit), of which the first Sk are read: a key/value cache
  /// kept at its capacity. 0 means Sk (dense); otherwise >= Sk, with a
  /// dense (non-view) operand.
  int64_t keyCapacity = 0, valueCapacity = 0;
  /// The plan allows bf16 products (`--quantize=bf16`): where the CPU has
  /// AMX-BF16 and D and Sk are multiples of 32, Q K^T and P V run on bf16
  /// tiles with f32 accumulation (the softmax stays f32); elsewhere, and
  /// by default, both are f32.
  bool bf16Products = false;
  /// The output is written quantized with a fixed scale and zero point, u8
  /// (or i8 with outputSigned), as a static QuantizeLinear (lmopt.quantize)
  /// would write the f32 result (see quant::Epilogue's q8Out), for a
  /// static int8 consumer: the plan's fusion of the quantize kernel that
  /// read the output.
  bool outputStatic = false;
  bool outputSigned = false;
  float outputScale = 1.0f;
  int32_t outputZeroPoint = 0;
  /// The output is written as bf16, rounded as floatToBFloat16 rounds the
  /// f32 result, for a bf16 consumer: the plan's fusion of the cast kernel
  /// that read the output. Not with outputStatic.
  bool outputBf16 = false;
  /// Query, key and value are bf16 (their producer rounded them from f32):
  /// with bf16 products they go to the tiles as they are (Q times the
  /// scale is rounded to bf16 again, as the f32 form rounds it); otherwise
  /// each work item widens its rows to f32 first. The same bits as the f32
  /// step given the values widened. Not with a key/value capacity.
  bool inputBf16 = false;
};

class AttentionStep {
public:
  AttentionStep(const AttentionStep &) = delete;
  AttentionStep &operator=(const AttentionStep &) = delete;
  ~AttentionStep();

  /// Validates `desc` (positive sizes, mask and bias dims broadcastable,
  /// each view's rows inside its row stride) and prepares the primitives.
  static Status create(const CpuContext &context, const AttentionStepDesc &desc,
                       std::unique_ptr<AttentionStep> &out);

  /// `query` [B, Sq, H*D]; `key`, `value` [B, Sk, H*D] (or [B, H, Sk, D] with
  /// kvHeadsSplit; f32, or bf16 with inputBf16)
  /// kvHeadsSplit), with their capacity in place of Sk in the layout; each
  /// the start of its buffer, read through its view;
  /// `mask` as the desc says (null when None); `output` [B, Sq, H*D] dense,
  /// f32 (u8 or i8 bytes with outputStatic, bf16 with outputBf16); `bias`
  /// the score bias when the
  /// desc has one (null otherwise); row-major, output not overlapping the
  /// operands' spans. Scratch memory is the step's own.
  Status run(const void *query, const void *key, const void *value,
             const void *mask, void *output, const float *bias = nullptr) const;

  const AttentionStepDesc &desc() const { return desc_; }

  /// True when run() computes the products in bf16 on AMX tiles.
  bool usesAmx() const;

private:
  // Out of line: destroying impl_ needs Impl's definition.
  explicit AttentionStep(const CpuContext &context);

  const CpuContext &context_;
  AttentionStepDesc desc_;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace lmopt::runtime

#endif // LMOPT_RUNTIME_CPU_ATTENTIONSTEP_H
