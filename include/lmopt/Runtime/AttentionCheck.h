//===- AttentionCheck.h - Checking an attention step ------------*- C++ -*-===//
//
// What every device checks of an `lmopt.attention` step: the attributes
// AttentionPlan.cpp writes (heads, scale, flags, views into a fused
// projection), operand counts and dims, key and value read at a state's
// capacity, and the mask's dtype. A device adds the dtypes it runs and its
// kernels' limits.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_RUNTIME_ATTENTIONCHECK_H
#define LMOPT_RUNTIME_ATTENTIONCHECK_H

#include "lmopt/Runtime/StepCheck.h"

#include <cstdint>

namespace lmopt::runtime {

/// An operand read through a view of a wider buffer [B, S, rowStride]: its
/// rows start `offset` elements into the buffer's (rowStride 0: dense).
struct AttentionView {
  int64_t offset = 0, rowStride = 0;
};

enum class AttentionMaskKind { None, Additive, Bool };

/// An attention step's attributes and sizes.
struct AttentionShape {
  int64_t batch = 0, heads = 0, queryLength = 0, keyLength = 0, headDim = 0;
  /// Key/value heads (`num_kv_heads`, default `heads`); divides `heads`.
  int64_t kvHeads = 0;
  double scale = 0;
  bool causal = false, kvHeadsSplit = false, zeroMaskedRows = false;
  AttentionView queryView, keyView, valueView;
  /// Rows per sequence of a key or value that is a state view (read at the
  /// state's capacity); 0 for a dense operand.
  int64_t keyCapacity = 0, valueCapacity = 0;
  /// checkAttentionMask's.
  AttentionMaskKind mask = AttentionMaskKind::None;
  /// The `score_bias` attribute: the last operand is an f32 score bias
  /// [1|B, 1|H, 1|Sq, Sk] (checkAttentionBias checks it).
  bool scoreBias = false;
  /// The `bf16_products` attribute (`--quantize=bf16`): the products may
  /// run in bf16 with f32 accumulation where the device has a kernel for
  /// it; a device without one runs them as it would otherwise.
  bool bf16Products = false;
  /// The `output_static` attribute with `output_scale` and
  /// `output_zero_point`: the output is u8 or i8, quantized as a static
  /// QuantizeLinear would quantize the f32 result (a CPU plan rewrite).
  bool outputStatic = false;
  double outputScale = 0;
  int64_t outputZeroPoint = 0;
  /// The `output_bf16` attribute: the output is bf16, rounded from the f32
  /// result (a CPU plan rewrite). Not with `output_static`.
  bool outputBf16 = false;
  /// The `input_bf16` attribute: query, key and value are bf16 (a CPU
  /// plan rewrite, with bf16_products).
  bool inputBf16 = false;
};

/// A device's rule for the dtypes of query, key, value (operands 0 to 2)
/// and output (result 0); called once the operand count is checked.
using AttentionDTypeRule = Status (*)(const StepCheck &c);

/// Attributes, operand and result counts, dtypes (by `dtypes`) and dims of
/// an attention step.
Status checkAttentionStep(const StepCheck &c, AttentionDTypeRule dtypes,
                          AttentionShape &out);
/// The optional mask operand's dtype: f32 (additive) or bool; sets
/// `out.mask`.
Status checkAttentionMask(const StepCheck &c, AttentionShape &out);
/// Attributes (num_heads, scale, causal, zero_masked_rows), operand and
/// result counts and dims of an attention_grad step: query, output_grad and
/// the query's gradient [B, Sq, H*D], key, value and their gradients
/// [B, Sk, H*D], all dense; the optional mask (operand 4) f32 or bool.
/// Dtypes other than the mask's are the device's to check.
Status checkAttentionGradStep(const StepCheck &c, AttentionShape &out);
/// The score bias operand, when `score_bias` says there is one: f32, rank 4,
/// [1|B, 1|H, 1|Sq, Sk].
Status checkAttentionBias(const StepCheck &c, const AttentionShape &s);

} // namespace lmopt::runtime

#endif // LMOPT_RUNTIME_ATTENTIONCHECK_H
