"""Writes the inputs of adamw.mlir and the result of one step of
torch.optim.AdamW's single-tensor update (foreach=False), replayed in numpy
float32 in the order of PyTorch's operations: param.mul_(1 - lr * wd);
exp_avg.lerp_(grad, 1 - beta1); exp_avg_sq.mul_(beta2).addcmul_(grad, grad,
value=1 - beta2); denom = exp_avg_sq.sqrt() / bias_correction2_sqrt + eps;
param.addcdiv_(exp_avg, denom, value=-step_size). The gradient is first
scaled by grad_scale and clip_grad_norm_'s coefficient, as the training
step does.

Usage: adamw_ref.py INPUTS.npz EXPECTED.npz
"""
import sys

import numpy as np

F = np.float32
BETA1, BETA2, EPS, WD, LR, STEP = 0.9, 0.999, 1e-8, 0.01, 2e-3, 7


def main():
    inputs, expected = sys.argv[1:]
    rng = np.random.default_rng(20261205)
    shape = (37, 29)
    p = rng.standard_normal(shape).astype(F)
    g = rng.standard_normal(shape).astype(F)
    m = (0.1 * rng.standard_normal(shape)).astype(F)
    v = (0.01 * rng.random(shape)).astype(F)
    bc1 = 1 - BETA1 ** STEP
    bc2_sqrt = F(np.sqrt(1 - BETA2 ** STEP))
    step_size = F(LR / bc1)
    grad_scale, clip_coef = F(0.5), F(0.75)
    lr = F(LR)
    scalars = dict(lr=lr, step_size=step_size, bc2=bc2_sqrt,
                   grad_scale=grad_scale, clip_coef=clip_coef)
    np.savez(inputs, p=p, g=g, m=m, v=v, **scalars)

    grad = (g * grad_scale) * clip_coef
    param = p * (F(1) - lr * F(WD))
    w = F(1 - BETA1)
    exp_avg = m + w * (grad - m)  # lerp with weight < 0.5
    exp_avg_sq = v * F(BETA2) + F(1 - BETA2) * grad * grad  # addcmul
    denom = np.sqrt(exp_avg_sq) / bc2_sqrt + F(EPS)
    param = param + (-step_size) * (exp_avg / denom)
    np.savez(expected, new_p=param, new_m=exp_avg, new_v=exp_avg_sq)


if __name__ == "__main__":
    main()
