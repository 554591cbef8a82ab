//===- AdamW.h - one AdamW update, as every evaluator computes it -*- C++ -*-===//
//
// torch.optim.AdamW's update (foreach=False) in float32, in the order of
// its operations, so that the reference evaluator, the CPU step and any
// later target compute the same bits: weight decay first, then
// `m.lerp_(g, 1 - beta1)`, `v = v * beta2 + g * g * (1 - beta2)`, and
// `p -= step_size * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)` with
// step_size = lr / (1 - beta1^t). The host computes the per-step scalars.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_FORMAT_ADAMW_H
#define LMOPT_FORMAT_ADAMW_H

#include <cmath>

namespace lmopt::adamw {

/// The hyper-parameters as the update uses them: float32 values of
/// 1 - beta1, beta2, 1 - beta2, epsilon and weight_decay, each rounded once
/// from its double.
struct Constants {
  float oneMinusBeta1 = 0.1f, beta2 = 0.999f, oneMinusBeta2 = 0.001f,
        epsilon = 1e-8f, weightDecay = 0.0f;

  static Constants from(double beta1, double beta2, double epsilon,
                        double weightDecay) {
    Constants c;
    c.oneMinusBeta1 = float(1.0 - beta1);
    c.beta2 = float(beta2);
    c.oneMinusBeta2 = float(1.0 - beta2);
    c.epsilon = float(epsilon);
    c.weightDecay = float(weightDecay);
    return c;
  }
};

/// One step's scalars: the f32 inputs of the update.
struct Scalars {
  float lr = 0, stepSize = 0, biasCorrection2Sqrt = 1, gradScale = 1,
        clipCoef = 1;
  /// 1 - lr * weight_decay, the decay factor of the parameter.
  float decay(const Constants &c) const { return 1.0f - lr * c.weightDecay; }
};

/// Updates element (p, m, v) with gradient `grad`; `decay` is
/// Scalars::decay (used only with a nonzero weight decay).
inline void update(float &p, float &m, float &v, float grad, const Scalars &s,
                   const Constants &c, float decay) {
  float g = (grad * s.gradScale) * s.clipCoef;
  float param = c.weightDecay != 0.0f ? p * decay : p;
  float m2 = m + (g - m) * c.oneMinusBeta1;
  float v2 = v * c.beta2 + (g * g) * c.oneMinusBeta2;
  float denom = std::sqrt(v2) / s.biasCorrection2Sqrt + c.epsilon;
  p = param - s.stepSize * (m2 / denom);
  m = m2;
  v = v2;
}

} // namespace lmopt::adamw

#endif // LMOPT_FORMAT_ADAMW_H
