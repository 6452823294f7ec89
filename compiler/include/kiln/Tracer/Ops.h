//===- Ops.h - Tensor operations recorded by the tracer ---------*- C++ -*-===//
//
// The numpy/JAX-style tensor API. Every function records kiln ops into the
// trace being built and returns the symbolic result. Binary operations
// broadcast their operands numpy-style and promote dtypes by the rules in
// docs/tracer.md; shape errors throw TraceError at the caller's line.
//
// The trailing `SourceLoc loc` argument of every function is filled in by the
// compiler with the caller's position; callers never pass it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TRACER_OPS_H
#define KILN_TRACER_OPS_H

#include "kiln/Tracer/Tensor.h"

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace kiln {

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

/// A constant tensor from host data in row-major order; `values` must have
/// one element per element of `shape`. The dtype follows the C++ element
/// type: float -> f32, double -> f64, int32_t -> i32, int64_t -> i64,
/// uint32_t -> ui32, bool -> i1. Without a shape the result is 1-D.
Tensor constant(const std::vector<float> &values, const Shape &shape,
                SourceLoc loc = SourceLoc::current());
Tensor constant(const std::vector<double> &values, const Shape &shape,
                SourceLoc loc = SourceLoc::current());
Tensor constant(const std::vector<int32_t> &values, const Shape &shape,
                SourceLoc loc = SourceLoc::current());
Tensor constant(const std::vector<int64_t> &values, const Shape &shape,
                SourceLoc loc = SourceLoc::current());
Tensor constant(const std::vector<uint32_t> &values, const Shape &shape,
                SourceLoc loc = SourceLoc::current());
Tensor constant(const std::vector<bool> &values, const Shape &shape,
                SourceLoc loc = SourceLoc::current());
Tensor constant(const std::vector<float> &values,
                SourceLoc loc = SourceLoc::current());
Tensor constant(const std::vector<double> &values,
                SourceLoc loc = SourceLoc::current());
Tensor constant(const std::vector<int32_t> &values,
                SourceLoc loc = SourceLoc::current());
Tensor constant(const std::vector<int64_t> &values,
                SourceLoc loc = SourceLoc::current());
Tensor constant(const std::vector<uint32_t> &values,
                SourceLoc loc = SourceLoc::current());
Tensor constant(const std::vector<bool> &values,
                SourceLoc loc = SourceLoc::current());

/// A rank-0 constant of `dtype`. The value is converted as kiln::cast would
/// (floats truncate toward zero into integers); an integer that does not fit
/// the dtype is an error.
Tensor constant(Scalar value, DType dtype,
                SourceLoc loc = SourceLoc::current());
/// A rank-0 constant whose dtype follows the C++ type, like the vector
/// overloads: float -> f32, double -> f64, integers of up to 32 bits -> i32,
/// 64-bit integers (int64_t, long) -> i64, bool -> i1. Unlike a bare C++
/// number in an expression, a constant is a tensor and promotes strongly:
/// `x_f32 * kiln::constant(0.5)` is f64, `x_f32 * 0.5` stays f32.
Tensor constant(Scalar value, SourceLoc loc = SourceLoc::current());

/// A tensor of `shape` filled with `value` (converted as by constant()).
Tensor full(const Shape &shape, Scalar value, DType dtype = DType::F32,
            SourceLoc loc = SourceLoc::current());
Tensor zeros(const Shape &shape, DType dtype = DType::F32,
             SourceLoc loc = SourceLoc::current());
Tensor ones(const Shape &shape, DType dtype = DType::F32,
            SourceLoc loc = SourceLoc::current());

/// Indices 0, 1, ... along `axis`, broadcast over the other dimensions of
/// `shape` (rank >= 1). Bool is not an index type.
Tensor iota(const Shape &shape, int64_t axis = 0, DType dtype = DType::I64,
            SourceLoc loc = SourceLoc::current());

//===----------------------------------------------------------------------===//
// Elementwise arithmetic (numpy broadcasting, dtype promotion)
//===----------------------------------------------------------------------===//

/// `/` on integers divides with truncation toward zero, as in C++.
Tensor add(const Operand &lhs, const Operand &rhs,
           SourceLoc loc = SourceLoc::current());
Tensor sub(const Operand &lhs, const Operand &rhs,
           SourceLoc loc = SourceLoc::current());
Tensor mul(const Operand &lhs, const Operand &rhs,
           SourceLoc loc = SourceLoc::current());
Tensor div(const Operand &lhs, const Operand &rhs,
           SourceLoc loc = SourceLoc::current());
/// lhs - trunc(lhs / rhs) * rhs, with the sign of lhs (C's % and fmod,
/// lax.rem); an integer remainder by 0 is lhs.
Tensor rem(const Operand &lhs, const Operand &rhs,
           SourceLoc loc = SourceLoc::current());
/// Elementwise maximum/minimum (NaN-propagating for floats).
Tensor maximum(const Operand &lhs, const Operand &rhs,
               SourceLoc loc = SourceLoc::current());
Tensor minimum(const Operand &lhs, const Operand &rhs,
               SourceLoc loc = SourceLoc::current());
/// Float-only: integer and bool operands are promoted to f32.
Tensor pow(const Operand &base, const Operand &exponent,
           SourceLoc loc = SourceLoc::current());

Tensor operator+(const Operand &lhs, const Operand &rhs);
Tensor operator-(const Operand &lhs, const Operand &rhs);
Tensor operator*(const Operand &lhs, const Operand &rhs);
Tensor operator/(const Operand &lhs, const Operand &rhs);
Tensor operator-(const Operand &operand);

//===----------------------------------------------------------------------===//
// Elementwise unary functions
//===----------------------------------------------------------------------===//

/// Numeric only: bool tensors are rejected (cast them first).
Tensor neg(const Tensor &x, SourceLoc loc = SourceLoc::current());
Tensor abs(const Tensor &x, SourceLoc loc = SourceLoc::current());
Tensor relu(const Tensor &x, SourceLoc loc = SourceLoc::current());

/// Float-only: integer and bool inputs are promoted to f32.
Tensor exp(const Tensor &x, SourceLoc loc = SourceLoc::current());
Tensor log(const Tensor &x, SourceLoc loc = SourceLoc::current());
Tensor sqrt(const Tensor &x, SourceLoc loc = SourceLoc::current());
Tensor rsqrt(const Tensor &x, SourceLoc loc = SourceLoc::current());
Tensor tanh(const Tensor &x, SourceLoc loc = SourceLoc::current());
Tensor sigmoid(const Tensor &x, SourceLoc loc = SourceLoc::current());
Tensor sin(const Tensor &x, SourceLoc loc = SourceLoc::current());
Tensor cos(const Tensor &x, SourceLoc loc = SourceLoc::current());
Tensor erf(const Tensor &x, SourceLoc loc = SourceLoc::current());
/// The inverse of erf on (-1, 1); +-inf at +-1 and NaN beyond. f32 uses
/// Giles' single-precision polynomial (as XLA does; f16 and bf16 through
/// f32), f64 refines it by two Newton steps on erf.
Tensor erf_inv(const Tensor &x, SourceLoc loc = SourceLoc::current());
/// Rounding to integral values (in the float dtype); round goes to the
/// nearest value with ties to even, as numpy.round does.
Tensor floor(const Tensor &x, SourceLoc loc = SourceLoc::current());
Tensor ceil(const Tensor &x, SourceLoc loc = SourceLoc::current());
Tensor round(const Tensor &x, SourceLoc loc = SourceLoc::current());
Tensor tan(const Tensor &x, SourceLoc loc = SourceLoc::current());
Tensor asin(const Tensor &x, SourceLoc loc = SourceLoc::current());
Tensor acos(const Tensor &x, SourceLoc loc = SourceLoc::current());
Tensor atan(const Tensor &x, SourceLoc loc = SourceLoc::current());
Tensor sinh(const Tensor &x, SourceLoc loc = SourceLoc::current());
Tensor cosh(const Tensor &x, SourceLoc loc = SourceLoc::current());
Tensor asinh(const Tensor &x, SourceLoc loc = SourceLoc::current());
Tensor acosh(const Tensor &x, SourceLoc loc = SourceLoc::current());
Tensor atanh(const Tensor &x, SourceLoc loc = SourceLoc::current());
/// -1, 0 or 1 in x's dtype (numeric only; zeros and NaN are their own sign).
Tensor sign(const Tensor &x, SourceLoc loc = SourceLoc::current());

/// Converts elementwise: float to integer truncates toward zero, anything
/// to i1 means `!= 0`, i1 to numbers gives 0 or 1.
Tensor cast(const Tensor &x, DType dtype,
            SourceLoc loc = SourceLoc::current());

/// Every element's bits read as `dtype`, of the same bit width and not bool
/// (f32 <-> i32 <-> ui32, f64 <-> i64): nothing is converted.
Tensor bitcast_convert_type(const Tensor &x, DType dtype,
                            SourceLoc loc = SourceLoc::current());

//===----------------------------------------------------------------------===//
// Comparisons and logic (results are i1)
//===----------------------------------------------------------------------===//

Tensor equal(const Operand &lhs, const Operand &rhs,
             SourceLoc loc = SourceLoc::current());
Tensor not_equal(const Operand &lhs, const Operand &rhs,
                 SourceLoc loc = SourceLoc::current());
Tensor less(const Operand &lhs, const Operand &rhs,
            SourceLoc loc = SourceLoc::current());
Tensor less_equal(const Operand &lhs, const Operand &rhs,
                  SourceLoc loc = SourceLoc::current());
Tensor greater(const Operand &lhs, const Operand &rhs,
               SourceLoc loc = SourceLoc::current());
Tensor greater_equal(const Operand &lhs, const Operand &rhs,
                     SourceLoc loc = SourceLoc::current());

Tensor operator==(const Operand &lhs, const Operand &rhs);
Tensor operator!=(const Operand &lhs, const Operand &rhs);
Tensor operator<(const Operand &lhs, const Operand &rhs);
Tensor operator<=(const Operand &lhs, const Operand &rhs);
Tensor operator>(const Operand &lhs, const Operand &rhs);
Tensor operator>=(const Operand &lhs, const Operand &rhs);

/// Elementwise logic on i1 tensors (broadcasting). As in numpy, the
/// operators are `&`, `|` and `~`: `&&`, `||` and `!` need a C++ bool and
/// throw a concretization error.
Tensor logical_and(const Operand &lhs, const Operand &rhs,
                   SourceLoc loc = SourceLoc::current());
Tensor logical_or(const Operand &lhs, const Operand &rhs,
                  SourceLoc loc = SourceLoc::current());
Tensor logical_not(const Tensor &x, SourceLoc loc = SourceLoc::current());

/// Bitwise ops on bool or integer operands, promoted as arithmetic is; on
/// bool they are the logical ops. The operators &, |, ^ and ~ call them.
Tensor bitwise_and(const Operand &lhs, const Operand &rhs,
                   SourceLoc loc = SourceLoc::current());
Tensor bitwise_or(const Operand &lhs, const Operand &rhs,
                  SourceLoc loc = SourceLoc::current());
Tensor bitwise_xor(const Operand &lhs, const Operand &rhs,
                   SourceLoc loc = SourceLoc::current());
Tensor bitwise_not(const Tensor &x, SourceLoc loc = SourceLoc::current());
Tensor operator&(const Operand &lhs, const Operand &rhs);
Tensor operator|(const Operand &lhs, const Operand &rhs);
Tensor operator^(const Operand &lhs, const Operand &rhs);
Tensor operator~(const Operand &operand);

/// Shifts of integers (JAX's lax names): shift_right_logical fills with
/// zeros, shift_right_arithmetic with the sign bit, whatever the dtype's
/// sign. An amount outside [0, bit width) shifts every bit out (giving 0,
/// or -1 for an arithmetic shift of a negative value).
Tensor shift_left(const Operand &x, const Operand &amount,
                  SourceLoc loc = SourceLoc::current());
Tensor shift_right_logical(const Operand &x, const Operand &amount,
                           SourceLoc loc = SourceLoc::current());
Tensor shift_right_arithmetic(const Operand &x, const Operand &amount,
                              SourceLoc loc = SourceLoc::current());

/// Elementwise `pred ? onTrue : onFalse`. `pred` must be i1; the three
/// operands broadcast together and the values are promoted like a binary op.
Tensor where(const Tensor &pred, const Operand &onTrue, const Operand &onFalse,
             SourceLoc loc = SourceLoc::current());

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

/// Row-major reinterpretation; one dimension may be -1 (inferred).
Tensor reshape(const Tensor &x, const Shape &shape,
               SourceLoc loc = SourceLoc::current());
/// Result dimension i is input dimension perm[i]; an empty perm reverses the
/// dimensions (matrix transpose for rank 2).
Tensor transpose(const Tensor &x, const std::vector<int64_t> &perm = {},
                 SourceLoc loc = SourceLoc::current());
/// Strided static slice [start, limit) with step `stride` per dimension.
/// `start`/`limit` may list fewer dimensions than the rank (the rest are
/// taken whole); negative entries count from the end of the dimension; an
/// empty `stride` means 1 everywhere.
Tensor slice(const Tensor &x, const std::vector<int64_t> &start,
             const std::vector<int64_t> &limit,
             const std::vector<int64_t> &stride = {},
             SourceLoc loc = SourceLoc::current());
/// Joins tensors along `axis`; dtypes are promoted to a common one.
Tensor concat(const Tensors &xs, int64_t axis = 0,
              SourceLoc loc = SourceLoc::current());
/// numpy.broadcast_to: prepend dimensions and stretch size-1 ones.
Tensor broadcast_to(const Tensor &x, const Shape &shape,
                    SourceLoc loc = SourceLoc::current());
/// Rows of `table` along axis 0 picked by integer `indices` (i32 or i64);
/// the result has shape indices.shape + table.shape[1:]. Out-of-range
/// indices are clamped to the table.
Tensor gather(const Tensor &table, const Tensor &indices,
              SourceLoc loc = SourceLoc::current());

/// The transpose of gather: `table` with each row of `updates` added into
/// the row its index names (clamped like gather's), the rows of one index
/// after the other in the indices' row-major order. `updates` has shape
/// indices.shape + table.shape[1:] and the table's dtype (not bool).
Tensor scatter_add(const Tensor &table, const Tensor &indices,
                   const Tensor &updates, SourceLoc loc = SourceLoc::current());

//===----------------------------------------------------------------------===//
// Reductions and contractions
//===----------------------------------------------------------------------===//

/// Sum/maximum over `axes` (all by default); with keepdims the reduced
/// dimensions stay as size 1. Bool tensors are rejected.
Tensor sum(const Tensor &x, Axes axes = Axes::all(), bool keepdims = false,
           SourceLoc loc = SourceLoc::current());
Tensor max(const Tensor &x, Axes axes = Axes::all(), bool keepdims = false,
           SourceLoc loc = SourceLoc::current());
/// Mean over `axes`; integer and bool inputs are promoted to f32.
Tensor mean(const Tensor &x, Axes axes = Axes::all(), bool keepdims = false,
            SourceLoc loc = SourceLoc::current());

/// The i64 index of the largest (smallest) element along `axis`; ties give
/// the first index, or the last with `selectLastIndex`, and NaN counts as
/// the extreme value. The axis is removed; bool tensors are rejected.
Tensor argmax(const Tensor &x, int64_t axis, bool selectLastIndex = false,
              SourceLoc loc = SourceLoc::current());
Tensor argmin(const Tensor &x, int64_t axis, bool selectLastIndex = false,
              SourceLoc loc = SourceLoc::current());
/// Running sum along `axis` (ONNX CumSum): `exclusive` leaves out the
/// element itself, `reverse` sums from the end. Bool tensors are rejected.
Tensor cumsum(const Tensor &x, int64_t axis, bool exclusive = false,
              bool reverse = false, SourceLoc loc = SourceLoc::current());
/// Stable sort along `axis`, ascending (or `descending`): the sorted values
/// and the i64 index along `axis` each came from. Equal elements keep their
/// order; NaN sorts above +inf. Bool tensors are rejected.
std::pair<Tensor, Tensor> sort(const Tensor &x, int64_t axis = -1,
                               bool descending = false,
                               SourceLoc loc = SourceLoc::current());
/// The indices of sort(x, axis, descending).
Tensor argsort(const Tensor &x, int64_t axis = -1, bool descending = false,
               SourceLoc loc = SourceLoc::current());

/// Matrix product. Supports [M,K]x[K,N], [B,M,K]x[B,K,N], a rank-2 operand
/// with a rank-3 one (broadcast over the batch), and 1-D vectors on either
/// side (numpy.matmul: a vector is a row on the left, a column on the right,
/// and that dimension is dropped from the result).
Tensor matmul(const Tensor &lhs, const Tensor &rhs,
              SourceLoc loc = SourceLoc::current());

//===----------------------------------------------------------------------===//
// Compositions
//===----------------------------------------------------------------------===//

/// exp(x - max) / sum(exp(x - max)) along `axis` (numerically stable).
Tensor softmax(const Tensor &x, int64_t axis = -1,
               SourceLoc loc = SourceLoc::current());
/// (x - max) - log(sum(exp(x - max))) along `axis`.
Tensor log_softmax(const Tensor &x, int64_t axis = -1,
                   SourceLoc loc = SourceLoc::current());
/// (x - mean) / sqrt(var + eps) * gamma + beta, with mean and (biased)
/// variance over `axes`; gamma and beta broadcast against x.
Tensor layer_norm(const Tensor &x, const Tensor &gamma, const Tensor &beta,
                  double eps = 1e-5, Axes axes = -1,
                  SourceLoc loc = SourceLoc::current());

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// softmax(query key^T * scale + mask) value over the last two dims, as
/// PyTorch's scaled_dot_product_attention: query [..., Nq, D], key
/// [..., Nk, D], value [..., Nk, Dv] with equal leading dims; `scale`
/// defaults to 1/sqrt(D); `mask` (optional, undefined for none) broadcasts
/// to the scores [..., Nq, Nk], a bool mask keeping the keys where it is
/// true and a float mask added to the scores; `causal` lets query i attend
/// to keys j <= i. One kiln.attention: the CPU backend computes it without
/// forming the scores (FlashAttention) and its gradient from the saved
/// log-sum-exp. The result is [..., Nq, Dv].
Tensor scaled_dot_product_attention(const Tensor &query, const Tensor &key,
                                    const Tensor &value,
                                    const Tensor &mask = Tensor(),
                                    bool causal = false,
                                    std::optional<double> scale = std::nullopt,
                                    SourceLoc loc = SourceLoc::current());

//===----------------------------------------------------------------------===//
// Convolutions and windowed reductions
//===----------------------------------------------------------------------===//

/// The attributes of conv_general_dilated, one entry per spatial dim (an
/// empty list means all 1 for strides and dilations, all 0 for padding).
struct ConvOptions {
  std::vector<int64_t> strides;
  std::vector<int64_t> paddingLow;
  std::vector<int64_t> paddingHigh;
  /// Input dilation (a transposed convolution's stride).
  std::vector<int64_t> lhsDilation;
  /// Kernel dilation.
  std::vector<int64_t> rhsDilation;
  int64_t groups = 1;
};

/// An N-d convolution (cross-correlation, kiln.conv): input [N, C,
/// spatial...], weight [O, C / groups, spatial...], result [N, O,
/// spatial...], in the operands' promoted float dtype. Mistakes (ranks,
/// channels that groups does not divide, attribute lists of the wrong
/// length or out of range) throw a TraceError naming the operands.
Tensor conv_general_dilated(const Tensor &input, const Tensor &weight,
                            const ConvOptions &options = {},
                            SourceLoc loc = SourceLoc::current());

/// How reduce_window combines a window.
enum class WindowKind { Max, Sum };

/// The attributes of reduce_window, one entry per operand dim (an empty
/// list means all 1 for strides and dilations, all 0 for padding).
struct WindowOptions {
  std::vector<int64_t> strides;
  std::vector<int64_t> paddingLow;
  std::vector<int64_t> paddingHigh;
  /// Window dilation.
  std::vector<int64_t> dilations;
};

/// The max or sum of every placement of `window` (one size per dim) over
/// `x` (kiln.reduce_window): pooling. Padding holds the kind's identity
/// (-inf for a float max, 0 for sum). A window wider than the padded
/// operand throws.
Tensor reduce_window(const Tensor &x, WindowKind kind,
                     const std::vector<int64_t> &window,
                     const WindowOptions &options = {},
                     SourceLoc loc = SourceLoc::current());

} // namespace kiln

#endif // KILN_TRACER_OPS_H
