//===- RowCopies.cpp - Strided copies as memcpy of contiguous rows --------===//
//
// kiln-cpu-row-copies (CpuPasses.td): a linalg.copy on buffers whose last
// dim is contiguous on both sides (kiln-cpu-collapse-contiguous-loops has
// already made every dense run of last dims one) stops being a loop nest of
// its own. A copy contiguous as a whole is one memref.copy (an llvm.memcpy
// of a constant size), or a parallel loop over chunks of it when large. Any
// other copy calls a function of the module that copies rows of its length
// one memref.copy each, made once per row length and element type.
//
// Why: a copy loop between two buffers is, to LLVM, two pointers that may
// overlap. Its loop vectorizer emits the vector loop behind a run-time
// overlap check with the scalar loop as the fallback, and unrolls that
// scalar loop completely when the row is short: about 230 lines of LLVM IR
// per copy. DenseNet-121 concatenates every layer's input anew, 652 such
// copies in NHWC (rows of 32 channels into rows of 64 to 1024), and its
// entry function was 152,000 lines: 27 of its 30 s of compile time went to
// LLVM's optimization and code generation. With a memcpy per row in each
// copy's own loop nest, LLVM still unrolled every loop by 8 and its loop
// rotation alone took 2.2 s on the 1,200 loops of that function; one loop
// per row length does not grow with the model.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNCPUROWCOPIES
#include "kiln/Backends/CpuPasses.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

namespace {

/// Rows shorter than this many bytes stay a loop: a memcpy per row of a
/// few elements is a scalar loop over rows, no better than the copy loop.
constexpr int64_t kMinRowBytes = 16;

/// A contiguous copy of at least twice this many bytes is cut into chunks
/// of this size, copied in parallel; a smaller one is one memcpy.
constexpr int64_t kChunkBytes = 64 * 1024;

/// The length of `op`'s rows, if `op` copies rows: a linalg.copy between
/// statically shaped buffers of one whole-byte element type, both of unit
/// stride in their last dim.
std::optional<int64_t> rowLength(linalg::CopyOp op) {
  if (!op.hasPureBufferSemantics())
    return std::nullopt;
  auto source = dyn_cast<MemRefType>(op.getInputs()[0].getType());
  auto target = dyn_cast<MemRefType>(op.getOutputs()[0].getType());
  if (!source || !target || source.getElementType() != target.getElementType())
    return std::nullopt;
  Type element = source.getElementType();
  if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8 != 0)
    return std::nullopt;
  for (MemRefType type : {source, target}) {
    SmallVector<int64_t> strides;
    int64_t offset;
    if (type.getRank() == 0 || !type.hasStaticShape() ||
        type.getNumElements() == 0 ||
        failed(getStridesAndOffset(type, strides, offset)) ||
        strides.back() != 1)
      return std::nullopt;
  }
  if (source.getShape() != target.getShape())
    return std::nullopt;
  int64_t length = source.getShape().back();
  if (length * element.getIntOrFloatBitWidth() / 8 < kMinRowBytes)
    return std::nullopt;
  return length;
}

/// The row of `buffer` (of rank r) at the leading indices `at`, as a
/// one-dim view of `length` elements starting at `start` in the last dim.
Value rowOf(OpBuilder &b, Location loc, Value buffer, ValueRange at,
            OpFoldResult start, int64_t length) {
  auto type = cast<MemRefType>(buffer.getType());
  SmallVector<OpFoldResult> offsets(at.begin(), at.end());
  offsets.push_back(start);
  SmallVector<OpFoldResult> sizes(type.getRank() - 1, b.getIndexAttr(1));
  sizes.push_back(b.getIndexAttr(length));
  SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
  auto rowType = cast<MemRefType>(memref::SubViewOp::inferRankReducedResultType(
      {length}, type, offsets, sizes, strides));
  return b.create<memref::SubViewOp>(loc, rowType, buffer, offsets, sizes,
                                     strides);
}

/// The type the row-copy functions take: `rows` rows of `length` elements
/// of unit stride, any row stride and offset.
MemRefType rowsType(int64_t length, Type element) {
  MLIRContext *context = element.getContext();
  return MemRefType::get({ShapedType::kDynamic, length}, element,
                         StridedLayoutAttr::get(context, ShapedType::kDynamic,
                                                {ShapedType::kDynamic, 1}));
}

/// The module's function that copies rows of `length` elements of type
/// `element` from its first argument to its second (rowsType), one
/// memref.copy per row: created on first use, never inlined, so that the
/// loop is compiled once for all the copies of that row length.
func::FuncOp rowCopyFunction(ModuleOp module, int64_t length, Type element,
                             SymbolTable &symbols) {
  std::string name;
  llvm::raw_string_ostream os(name);
  os << "kiln_copy_rows_" << length << "x" << element;
  if (auto existing = symbols.lookup<func::FuncOp>(name))
    return existing;
  MLIRContext *context = module.getContext();
  MemRefType type = rowsType(length, element);
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Location loc = module.getLoc();
  auto function = b.create<func::FuncOp>(
      loc, name, FunctionType::get(context, {type, type}, {}));
  function.setPrivate();
  function->setAttr("no_inline", UnitAttr::get(context));
  symbols.insert(function);
  Block *body = function.addEntryBlock();
  b.setInsertionPointToStart(body);
  Value source = body->getArgument(0), target = body->getArgument(1);
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  Value rows = b.create<memref::DimOp>(loc, source, zero);
  b.create<scf::ForOp>(loc, zero, rows, one, ValueRange{},
                       [&](OpBuilder &nb, Location l, Value row, ValueRange) {
                         OpFoldResult start = nb.getIndexAttr(0);
                         Value from = rowOf(nb, l, source, row, start, length);
                         Value to = rowOf(nb, l, target, row, start, length);
                         nb.create<memref::CopyOp>(l, from, to);
                         nb.create<scf::YieldOp>(l);
                       });
  b.create<func::ReturnOp>(loc);
  return function;
}

/// The first of `type`'s leading dims (all but the last) from which on they
/// are dense over one another: those can be one dim of rows.
int64_t firstRowDim(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  (void)getStridesAndOffset(type, strides, offset);
  int64_t first = type.getRank() - 2;
  while (first > 0 && !ShapedType::isDynamic(strides[first - 1]) &&
         !ShapedType::isDynamic(strides[first]) &&
         strides[first - 1] == strides[first] * type.getDimSize(first))
    --first;
  return first;
}

/// An scf.parallel over `count` steps of `step`, marked with `work` for
/// kiln-cpu-parallel-loops; `body` builds an iteration from its start and
/// the step.
void parallelSteps(
    OpBuilder &b, Location loc, int64_t count, int64_t step, int64_t work,
    function_ref<void(OpBuilder &, Location, Value, Value)> body) {
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  Value steps = b.create<arith::ConstantIndexOp>(loc, count);
  Value stride = b.create<arith::ConstantIndexOp>(loc, step);
  auto loop = b.create<scf::ParallelOp>(
      loc, ValueRange{zero}, ValueRange{steps}, ValueRange{one},
      [&](OpBuilder &nb, Location l, ValueRange ivs) {
        body(nb, l, nb.create<arith::MulIOp>(l, ivs[0], stride), stride);
      });
  loop->setAttr(kiln::kBodyWorkAttrName, b.getI64IntegerAttr(work));
}

/// The elements [start, start + size) of the contiguous `buffer` as a
/// one-dim view: its dims of size 1 dropped, the others collapsed.
Value flatRange(OpBuilder &b, Location loc, Value buffer, OpFoldResult start,
                int64_t size) {
  auto type = cast<MemRefType>(buffer.getType());
  SmallVector<int64_t> kept;
  for (int64_t dim : type.getShape())
    if (dim != 1)
      kept.push_back(dim);
  if (kept.size() != (size_t)type.getRank()) {
    SmallVector<OpFoldResult> zeros(type.getRank(), b.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes, ones(type.getRank(), b.getIndexAttr(1));
    for (int64_t dim : type.getShape())
      sizes.push_back(b.getIndexAttr(dim));
    auto keptType =
        cast<MemRefType>(memref::SubViewOp::inferRankReducedResultType(
            kept, type, zeros, sizes, ones));
    buffer =
        b.create<memref::SubViewOp>(loc, keptType, buffer, zeros, sizes, ones);
  }
  if (kept.size() > 1) {
    SmallVector<ReassociationIndices> all(1);
    for (int64_t d = 0; d < (int64_t)kept.size(); ++d)
      all[0].push_back(d);
    buffer = b.create<memref::CollapseShapeOp>(loc, buffer, all);
  }
  return rowOf(b, loc, buffer, ValueRange{}, start, size);
}

/// Replaces the copy `op` between two contiguous buffers by memref.copy of
/// one-dim views: chunks of kChunkBytes in parallel, then the rest.
void copyContiguous(linalg::CopyOp op, RewriterBase &rewriter) {
  Location loc = op.getLoc();
  Value source = op.getInputs()[0], target = op.getOutputs()[0];
  auto type = cast<MemRefType>(source.getType());
  int64_t length = type.getNumElements();
  int64_t chunk = kChunkBytes / (type.getElementTypeBitWidth() / 8);
  int64_t chunks = length >= 2 * chunk ? length / chunk : 0;
  if (chunks > 0)
    parallelSteps(rewriter, loc, chunks, chunk, /*work=*/chunk,
                  [&](OpBuilder &b, Location l, Value start, Value) {
                    Value from = flatRange(b, l, source, start, chunk);
                    Value to = flatRange(b, l, target, start, chunk);
                    b.create<memref::CopyOp>(l, from, to);
                  });
  if (int64_t rest = length - chunks * chunk; rest > 0) {
    OpFoldResult start = rewriter.getIndexAttr(chunks * chunk);
    Value from = flatRange(rewriter, loc, source, start, rest);
    Value to = flatRange(rewriter, loc, target, start, rest);
    rewriter.create<memref::CopyOp>(loc, from, to);
  }
  rewriter.eraseOp(op);
}

/// Replaces the copy `op` of rows of `length` elements by calls of the row
/// copy function: the leading dims that are dense over one another on both
/// sides are one dim of rows, cut into blocks of about kChunkBytes copied
/// in parallel; the dims before them, if any, are a parallel loop around.
void copyRows(linalg::CopyOp op, int64_t length, func::FuncOp copyFunction,
              RewriterBase &rewriter) {
  Location loc = op.getLoc();
  Value source = op.getInputs()[0], target = op.getOutputs()[0];
  auto sourceType = cast<MemRefType>(source.getType());
  auto targetType = cast<MemRefType>(target.getType());
  int64_t rank = sourceType.getRank();
  int64_t first = std::max(firstRowDim(sourceType), firstRowDim(targetType));
  int64_t rows = 1;
  for (int64_t d = first; d < rank - 1; ++d)
    rows *= sourceType.getDimSize(d);
  int64_t elementBytes = sourceType.getElementTypeBitWidth() / 8;
  int64_t blockRows =
      std::max<int64_t>(1, kChunkBytes / (length * elementBytes));
  int64_t blocks = (rows + blockRows - 1) / blockRows;
  MemRefType argType = rowsType(length, sourceType.getElementType());

  // The rows of `buffer` at the indices `outer` of the dims before
  // `first`, from `start`, `count` of them, as the function's argument.
  auto rowsOf = [&](OpBuilder &b, Location l, Value buffer, ValueRange outer,
                    OpFoldResult start, OpFoldResult count) -> Value {
    auto type = cast<MemRefType>(buffer.getType());
    SmallVector<OpFoldResult> offsets(outer.begin(), outer.end());
    SmallVector<OpFoldResult> sizes(first, b.getIndexAttr(1));
    for (int64_t d = first; d < rank; ++d) {
      offsets.push_back(b.getIndexAttr(0));
      sizes.push_back(b.getIndexAttr(type.getDimSize(d)));
    }
    SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
    // The dims from `first` on, with their own strides: a rank-reducing
    // subview left to infer its type dropped whichever dims of size 1 it
    // chose, also one among the dims of rows while an outer dim of size 1
    // stayed, and the dims of rows it kept could then not be collapsed.
    auto full = cast<MemRefType>(
        memref::SubViewOp::inferResultType(type, offsets, sizes, strides));
    SmallVector<int64_t> fullStrides;
    int64_t fullOffset;
    (void)getStridesAndOffset(full, fullStrides, fullOffset);
    SmallVector<int64_t> kept(type.getShape().drop_front(first));
    auto keptType = MemRefType::get(
        kept, type.getElementType(),
        StridedLayoutAttr::get(b.getContext(), fullOffset,
                               ArrayRef(fullStrides).drop_front(first)));
    Value view = b.create<memref::SubViewOp>(l, keptType, buffer, offsets,
                                             sizes, strides);
    if (kept.size() > 2) {
      SmallVector<ReassociationIndices> groups(2);
      for (int64_t d = 0; d + 1 < (int64_t)kept.size(); ++d)
        groups[0].push_back(d);
      groups[1].push_back(kept.size() - 1);
      view = b.create<memref::CollapseShapeOp>(l, view, groups);
    }
    SmallVector<OpFoldResult> rowOffsets{start, b.getIndexAttr(0)};
    SmallVector<OpFoldResult> rowSizes{count, b.getIndexAttr(length)};
    SmallVector<OpFoldResult> unit(2, b.getIndexAttr(1));
    view = b.create<memref::SubViewOp>(l, view, rowOffsets, rowSizes, unit);
    return b.create<memref::CastOp>(l, argType, view);
  };

  // The blocks of rows at the outer indices `outer`.
  auto copyBlocks = [&](OpBuilder &b, Location l, ValueRange outer) {
    auto call = [&](OpBuilder &cb, Location cl, OpFoldResult start,
                    OpFoldResult count) {
      Value from = rowsOf(cb, cl, source, outer, start, count);
      Value to = rowsOf(cb, cl, target, outer, start, count);
      cb.create<func::CallOp>(cl, copyFunction, ValueRange{from, to});
    };
    if (blocks == 1) {
      call(b, l, b.getIndexAttr(0), b.getIndexAttr(rows));
      return;
    }
    Value all = b.create<arith::ConstantIndexOp>(l, rows);
    parallelSteps(b, l, blocks, blockRows, /*work=*/blockRows * length,
                  [&](OpBuilder &pb, Location pl, Value start, Value step) {
                    Value left = pb.create<arith::SubIOp>(pl, all, start);
                    Value size = pb.create<arith::MinSIOp>(pl, left, step);
                    call(pb, pl, start, size);
                  });
  };

  rewriter.setInsertionPoint(op);
  if (first == 0) {
    copyBlocks(rewriter, loc, ValueRange{});
  } else {
    Value zero = rewriter.create<arith::ConstantIndexOp>(loc, 0);
    Value one = rewriter.create<arith::ConstantIndexOp>(loc, 1);
    SmallVector<Value> lower(first, zero), steps(first, one), upper;
    for (int64_t size : sourceType.getShape().take_front(first))
      upper.push_back(rewriter.create<arith::ConstantIndexOp>(loc, size));
    auto loop = rewriter.create<scf::ParallelOp>(
        loc, lower, upper, steps,
        [&](OpBuilder &b, Location l, ValueRange ivs) {
          copyBlocks(b, l, ivs);
        });
    loop->setAttr(kiln::kBodyWorkAttrName,
                  rewriter.getI64IntegerAttr(rows * length));
  }
  rewriter.eraseOp(op);
}

struct KilnCpuRowCopiesPass
    : kiln::impl::KilnCpuRowCopiesBase<KilnCpuRowCopiesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<linalg::CopyOp, int64_t>> copies;
    module.walk([&](linalg::CopyOp op) {
      if (std::optional<int64_t> length = rowLength(op))
        copies.push_back({op, *length});
    });
    SymbolTable symbols(module);
    IRRewriter rewriter(&getContext());
    for (auto [op, length] : copies) {
      auto type = cast<MemRefType>(op.getInputs()[0].getType());
      rewriter.setInsertionPoint(op);
      // Contiguous as memref.copy's lowering sees it (a memcpy then).
      if (memref::isStaticShapeAndContiguousRowMajor(type) &&
          memref::isStaticShapeAndContiguousRowMajor(
              cast<MemRefType>(op.getOutputs()[0].getType()))) {
        copyContiguous(op, rewriter);
        continue;
      }
      copyRows(op, length,
               rowCopyFunction(module, length, type.getElementType(), symbols),
               rewriter);
    }
  }
};

} // namespace
