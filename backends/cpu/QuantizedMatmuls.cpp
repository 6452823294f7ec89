//===- QuantizedMatmuls.cpp - QDQ products on the 8-bit integers ---------===//
//
// A matrix product in ONNX's QDQ form (DequantizeLinear before a MatMul or
// Gemm: the final classifier of a quantized ResNet, every projection of a
// statically quantized transformer) reaches kiln IR as an f32 kiln.matmul
// of a dequantized activation, (cast(x) - z) * s, and constant weights the
// importer folded to f32 (DequantizeLinear of an int8 initializer). Run so,
// it reads four bytes per weight and multiplies in f32. Where every weight
// is exactly an int8 value times one scale (per tensor, or per output
// column as ONNX's per-axis DequantizeLinear makes them), the product is
//
//   (x - z) W = (x W8 - z colsum(W8)) * s * w_scale[n]
//
// with x W8 the 8-bit product summed exactly in i32 (kiln.matmul's `-> i32`,
// oneDNN's int8 kernels on the CPU: kiln-cpu-matmul-to-dnnl), z colsum(W8)
// a constant, and one multiply per result. The sum is exact where the f32
// one rounded; the results differ from the f32 product by its rounding.
//
//===----------------------------------------------------------------------===//

#include "Dequantized.h"
#include "DnnlConvLayouts.h"

#include "kiln/Backends/Passes.h"
#include "kiln/IR/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCPUQUANTIZEDMATMULS
#include "kiln/Backends/CpuPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;
using namespace mlir::kiln;

namespace {

/// The most terms an i32 sum of (uint8 - zero point) * int8 products holds
/// without wrapping: |x - z| <= 255 and |w| <= 127 (exactInt8Scale's).
constexpr int64_t kMaxTerms = (int64_t(1) << 31) / (255 * 127);

/// `value` dequantized, or a kiln.reshape of a dequantized value (the
/// importer flattens a batched MatMul's rows; then `reshape` is set and
/// the 8-bit source still has to be reshaped alike). Only matches: the
/// weights are checked before anything is created.
std::optional<Dequantized> dequantizedRows(Value value, ReshapeOp &reshape) {
  if (std::optional<Dequantized> d = dequantized(value))
    return d;
  reshape = value.getDefiningOp<ReshapeOp>();
  return reshape ? dequantized(reshape.getOperand()) : std::nullopt;
}

/// Rewrites `op` where it is such a product (see the top).
LogicalResult rewriteQuantized(MatmulOp op, RewriterBase &rewriter) {
  auto type = cast<RankedTensorType>(op.getType());
  auto rhsType = cast<RankedTensorType>(op.getRhs().getType());
  DenseElementsAttr weights;
  if (!type.getElementType().isF32() || op.getResultElementTypeAttr() ||
      !rhsType.getElementType().isF32() ||
      !matchPattern(op.getRhs(), m_Constant(&weights)))
    return failure();
  int64_t rank = type.getRank();
  int64_t k = rhsType.getDimSize(rank - 2), n = rhsType.getDimSize(rank - 1);
  if (k > kMaxTerms || rhsType.getNumElements() == 0)
    return failure(); // an i32 sum could wrap
  // The cheap test first: most f32 products (every one of an f32 model)
  // fail it, before their weights are copied and scanned.
  ReshapeOp rows;
  std::optional<Dequantized> lhs = dequantizedRows(op.getLhs(), rows);
  if (!lhs)
    return failure();
  // The weights as int8 times one scale, else one per column n (all
  // batches' and rows' entries of the column).
  SmallVector<float> values(weights.getValues<float>());
  SmallVector<int8_t> q(values.size());
  SmallVector<float> scales;
  if (std::optional<float> s = exactInt8Scale(values, q.data())) {
    scales.push_back(*s);
  } else {
    SmallVector<float> column;
    SmallVector<int8_t> qColumn;
    for (int64_t c = 0; c < n; ++c) {
      column.clear();
      for (size_t i = c; i < values.size(); i += n)
        column.push_back(values[i]);
      qColumn.resize(column.size());
      std::optional<float> s = exactInt8Scale(column, qColumn.data());
      if (!s)
        return failure();
      for (size_t j = 0; j < qColumn.size(); ++j)
        q[c + j * n] = qColumn[j];
      scales.push_back(*s);
    }
  }

  Location loc = op.getLoc();
  if (rows) {
    rewriter.setInsertionPoint(rows);
    lhs->source = rewriter.create<ReshapeOp>(
        rows.getLoc(),
        rows.getType().clone(
            cast<RankedTensorType>(lhs->source.getType()).getElementType()),
        lhs->source);
  }
  rewriter.setInsertionPoint(op);
  Type i32 = rewriter.getI32Type(), f32 = rewriter.getF32Type();
  auto int8Type = rhsType.clone(rewriter.getI8Type());
  Value int8Weights = rewriter.create<ConstantOp>(
      loc, int8Type, DenseElementsAttr::get(int8Type, ArrayRef(q)));
  Value product = rewriter.create<MatmulOp>(loc, lhs->source, int8Weights,
                                            TypeAttr::get(i32));
  auto i32Type = type.clone(i32);
  // The zero point's share, z * colsum(W8): [N], or [B, N] batched,
  // broadcast over the rows.
  SmallVector<int64_t> sumDims;
  for (int64_t d = 0; d + 2 < rank; ++d)
    sumDims.push_back(d);
  sumDims.push_back(rank - 1);
  if (lhs->zeroPoint != 0) {
    int64_t batches = rhsType.getNumElements() / (k * n);
    SmallVector<int32_t> sums(batches * n, 0);
    for (int64_t b = 0; b < batches; ++b)
      for (int64_t r = 0; r < k; ++r)
        for (int64_t c = 0; c < n; ++c)
          sums[b * n + c] += lhs->zeroPoint * q[(b * k + r) * n + c];
    SmallVector<int64_t> shape;
    for (int64_t d : sumDims)
      shape.push_back(type.getDimSize(d));
    auto sumsType = RankedTensorType::get(shape, i32);
    Value share = rewriter.create<BroadcastInDimOp>(
        loc, i32Type,
        rewriter.create<ConstantOp>(
            loc, sumsType, DenseElementsAttr::get(sumsType, ArrayRef(sums))),
        sumDims);
    product = rewriter.create<SubOp>(loc, product, share);
  }
  Value result = rewriter.create<CastOp>(loc, type, product);
  // Each column's scale: the activation's times the weights'.
  Value scale;
  if (scales.size() == 1) {
    scale = rewriter.create<ConstantOp>(
        loc, type, DenseElementsAttr::get(type, lhs->scale * scales[0]));
  } else {
    SmallVector<float> columns;
    for (float s : scales)
      columns.push_back(lhs->scale * s);
    auto vector = RankedTensorType::get({n}, f32);
    scale = rewriter.create<BroadcastInDimOp>(
        loc, type,
        rewriter.create<ConstantOp>(
            loc, vector, DenseElementsAttr::get(vector, ArrayRef(columns))),
        ArrayRef<int64_t>{rank - 1});
  }
  rewriter.replaceOpWithNewOp<MulOp>(op, result, scale);
  return success();
}

struct KilnCpuQuantizedMatmulsPass
    : mlir::kiln::impl::KilnCpuQuantizedMatmulsBase<
          KilnCpuQuantizedMatmulsPass> {
  using KilnCpuQuantizedMatmulsBase::KilnCpuQuantizedMatmulsBase;

  void runOnOperation() override {
    if (queryCpu && !dnnl::hasInt8DotProducts())
      return;
    // A walk, not the greedy driver: its folding would turn the broadcast
    // constants into dense ones of the result's size.
    SmallVector<MatmulOp> products;
    getOperation().walk([&](MatmulOp op) { products.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (MatmulOp op : products)
      (void)rewriteQuantized(op, rewriter);
  }
};

} // namespace
