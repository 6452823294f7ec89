//===- Windows.cpp - Convolutions and windowed reductions ----------------===//
//
// kiln::conv_general_dilated records one kiln.conv and kiln::reduce_window
// one kiln.reduce_window, in the ops' own layouts (input [N, C, spatial...],
// weight [O, C / groups, spatial...]); the Python layer (kiln.lax, kiln.nn)
// maps JAX's dimension numbers and padding names onto them. Every
// attribute is checked here, with the operands in the message, so that a
// mistake is reported at the user's line rather than by the op verifier.
//
//===----------------------------------------------------------------------===//

#include "Emit.h"

namespace kiln {

using detail::fail;

namespace {

std::string describe(const char *name, const Tensor &t) {
  return std::string(name) + " " + dtypeName(t.dtype()) + shapeString(t.shape());
}

std::string listString(const std::vector<int64_t> &values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i)
    text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "]";
}

/// `values`, or `fill` repeated `count` times where it is empty; throws
/// unless it has `count` entries of at least `least`.
std::vector<int64_t> perDim(const std::vector<int64_t> &values, size_t count,
                            int64_t fill, int64_t least, const char *what,
                            const char *name, SourceLoc loc) {
  if (values.empty())
    return std::vector<int64_t>(count, fill);
  if (values.size() != count)
    fail(loc, std::string(what) + ": " + name + " " + listString(values) +
                  " needs " + std::to_string(count) + " entries");
  for (int64_t v : values)
    if (v < least)
      fail(loc, std::string(what) + ": " + name + " " + listString(values) +
                    " must be at least " + std::to_string(least));
  return values;
}

} // namespace

Tensor conv_general_dilated(const Tensor &input, const Tensor &weight,
                            const ConvOptions &options, SourceLoc loc) {
  const char *what = "kiln::conv_general_dilated";
  Operand in(input, loc), w(weight, loc);
  detail::TraceState &state = detail::TraceState::of({&in, &w}, loc, what);
  std::string operands =
      describe("input", input) + ", " + describe("weight", weight);
  int64_t rank = input.rank();
  if (rank < 3 || weight.rank() != rank)
    fail(loc, std::string(what) + ": input [N, C, spatial...] and weight "
                                  "[O, C / groups, spatial...] need one rank "
                                  "of at least 3, got " +
                  operands);
  size_t spatial = static_cast<size_t>(rank - 2);
  std::vector<int64_t> strides =
      perDim(options.strides, spatial, 1, 1, what, "strides", loc);
  std::vector<int64_t> low =
      perDim(options.paddingLow, spatial, 0, 0, what, "padding_low", loc);
  std::vector<int64_t> high =
      perDim(options.paddingHigh, spatial, 0, 0, what, "padding_high", loc);
  std::vector<int64_t> lhsDilation = perDim(
      options.lhsDilation, spatial, 1, 1, what, "lhs_dilation", loc);
  std::vector<int64_t> rhsDilation = perDim(
      options.rhsDilation, spatial, 1, 1, what, "rhs_dilation", loc);
  int64_t groups = options.groups;
  int64_t channels = input.shape()[1], outputs = weight.shape()[0];
  if (groups < 1 || channels % groups != 0 || outputs % groups != 0)
    fail(loc, std::string(what) + ": groups = " + std::to_string(groups) +
                  " must divide the input channels (" +
                  std::to_string(channels) + ") and the output channels (" +
                  std::to_string(outputs) + "), got " + operands);
  if (weight.shape()[1] * groups != channels)
    fail(loc, std::string(what) + ": weight dim 1 must be C / groups = " +
                  std::to_string(channels / groups) + ", got " + operands);
  DType dtype = detail::floatDType(
      detail::promoteTypes(input.dtype(), weight.dtype()));
  mlir::Value x = detail::castValue(state, state.use(input, loc), dtype, loc);
  mlir::Value k = detail::castValue(state, state.use(weight, loc), dtype, loc);
  auto op = state.create<mlir::kiln::ConvOp>(loc, x, k, strides, low, high,
                                             lhsDilation, rhsDilation, groups);
  state.verifyCreated(op, loc);
  return state.wrap(op.getResult());
}

Tensor reduce_window(const Tensor &x, WindowKind kind,
                     const std::vector<int64_t> &window,
                     const WindowOptions &options, SourceLoc loc) {
  const char *what = "kiln::reduce_window";
  Operand operand(x, loc);
  detail::TraceState &state = detail::TraceState::of({&operand}, loc, what);
  size_t rank = static_cast<size_t>(x.rank());
  if (x.dtype() == DType::I1)
    fail(loc, std::string(what) + " needs a numeric operand, got " +
                  describe("x", x));
  std::vector<int64_t> sizes =
      perDim(window, rank, 1, 1, what, "window", loc);
  std::vector<int64_t> strides =
      perDim(options.strides, rank, 1, 1, what, "strides", loc);
  std::vector<int64_t> low =
      perDim(options.paddingLow, rank, 0, 0, what, "padding_low", loc);
  std::vector<int64_t> high =
      perDim(options.paddingHigh, rank, 0, 0, what, "padding_high", loc);
  std::vector<int64_t> dilations =
      perDim(options.dilations, rank, 1, 1, what, "dilations", loc);
  for (size_t d = 0; d < rank; ++d) {
    int64_t padded = x.shape()[d] + low[d] + high[d];
    int64_t span = (sizes[d] - 1) * dilations[d] + 1;
    if (padded > 0 && span > padded)
      fail(loc, std::string(what) + ": the window spans " +
                    std::to_string(span) + " elements in dim " +
                    std::to_string(d) + " but the padded operand has " +
                    std::to_string(padded) + " (" + describe("x", x) + ")");
  }
  auto op = state.create<mlir::kiln::ReduceWindowOp>(
      loc, state.use(x, loc),
      kind == WindowKind::Max ? mlir::kiln::ReduceWindowKind::Max
                              : mlir::kiln::ReduceWindowKind::Sum,
      sizes, strides, low, high, dilations);
  state.verifyCreated(op, loc);
  return state.wrap(op.getResult());
}

} // namespace kiln
