// The element-wise formulas of the training step, written once for the CPU reference (double)
// and the GPU kernels (float): SwiGLU and its derivative, the rotary rotation, and AdamW.
//
//   silu(g) = g * sigmoid(g);  silu'(g) = s * (1 + g * (1 - s)),  s = sigmoid(g)
//   SwiGLU: h = silu(gate) * up;  dgate = dh * up * silu'(gate);  dup = dh * silu(gate)
//   rotary (Hugging Face's rotate_half pairing, element i with i + d/2):
//     y1 = x1 cos - x2 sin;  y2 = x2 cos + x1 sin;   backward: the transpose (sin -> -sin)
//   AdamW (torch.optim.AdamW): p *= 1 - lr * wd;  m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;
//     p -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
//   gradient clipping by global norm (torch.nn.utils.clip_grad_norm_):
//     g *= min(1, max_norm / (||g|| + 1e-6))
#pragma once

#include "model/host_device.hpp"

#include <cmath>
#if !defined(__CUDACC__)
#include <algorithm>
#endif

namespace ub {

namespace train_math_detail {
template <class T>
UB_HD T exp_(T x) {
#if defined(__CUDA_ARCH__)
  return static_cast<T>(::exp(static_cast<double>(x)));
#else
  return std::exp(x);
#endif
}
UB_HD float exp_(float x) {
#if defined(__CUDA_ARCH__)
  return __expf(x);
#else
  return std::exp(x);
#endif
}
template <class T>
UB_HD T sqrt_(T x) {
#if defined(__CUDA_ARCH__)
  return sqrt(x);
#else
  return std::sqrt(x);
#endif
}
}  // namespace train_math_detail

template <class T>
UB_HD T sigmoid(T x) {
  return T(1) / (T(1) + train_math_detail::exp_(-x));
}

template <class T>
UB_HD T silu(T g) {
  return g * sigmoid(g);
}

template <class T>
UB_HD T silu_grad(T g) {
  const T s = sigmoid(g);
  return s * (T(1) + g * (T(1) - s));
}

template <class T>
struct Pair {
  T a, b;
};

// The rotary rotation of the pair (x1, x2) = (x[i], x[i + d/2]).
template <class T>
UB_HD Pair<T> rope_rotate(T x1, T x2, T c, T s) {
  return {x1 * c - x2 * s, x2 * c + x1 * s};
}
// Its transpose: the gradient of the inputs from the gradient of the outputs.
template <class T>
UB_HD Pair<T> rope_rotate_backward(T d1, T d2, T c, T s) {
  return {d1 * c + d2 * s, d2 * c - d1 * s};
}

struct AdamWParams {
  double lr = 3e-4, beta1 = 0.9, beta2 = 0.95, eps = 1e-8, weight_decay = 0.1;
  double max_grad_norm = 1.0;  // 0: no clipping
};

// The clip coefficient for a global gradient norm.
template <class T>
UB_HD T clip_coefficient(T grad_norm, T max_norm) {
  if (!(max_norm > T(0))) return T(1);
  const T c = max_norm / (grad_norm + T(1e-6));
  return c < T(1) ? c : T(1);
}

// The scalars of one AdamW step t (1-based), the same for every element: written once for the
// GPU kernel and the CPU optimizer (offload).
struct AdamWScalars {
  float lr, beta1, beta2, eps, wd, bias1, bias2, max_norm;
};
inline AdamWScalars adamw_scalars(const AdamWParams& p, long long step) {
  const double t = static_cast<double>(step);
  return {static_cast<float>(p.lr), static_cast<float>(p.beta1), static_cast<float>(p.beta2), static_cast<float>(p.eps),
          static_cast<float>(p.weight_decay), static_cast<float>(1 - std::pow(p.beta1, t)),
          static_cast<float>(1 - std::pow(p.beta2, t)), static_cast<float>(p.max_grad_norm)};
}

// One AdamW update of one element at step t (1-based); p, m, v updated in place.
// bias1 = 1 - beta1^t, bias2 = 1 - beta2^t, computed once per step by the caller.
template <class T>
UB_HD void adamw_update(T& p, T& m, T& v, T g, T lr, T beta1, T beta2, T eps, T wd, T bias1, T bias2) {
  p *= T(1) - lr * wd;
  m = beta1 * m + (T(1) - beta1) * g;
  v = beta2 * v + (T(1) - beta2) * g * g;
  p -= lr * (m / bias1) / (train_math_detail::sqrt_(v / bias2) + eps);
}

}  // namespace ub
