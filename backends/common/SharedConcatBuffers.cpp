//===- SharedConcatBuffers.cpp - Concatenations of common prefixes -------===//
//
// A DenseNet block concatenates, before each of its layers, all of the
// block's earlier outputs anew: concat(x0, f1), concat(x0, f1, f2), ... .
// kiln-to-linalg lowers each to a tensor.empty and one tensor.insert_slice
// per input, so that, bufferized as they are, layer k copies all k earlier
// outputs: the copies grow with the square of the block's length
// (DenseNet-121 at batch 8 on one thread: 593 copies, 47 of 407 ms).
//
// kiln-shared-concat-buffers finds such families, concatenations in one
// block whose inputs are a prefix of the longest one's, and rewrites them
// as one chain of insertions into a tensor of the longest one's shape: each
// input inserted once, right after it is computed (or after the insertion
// before it), and each shorter concatenation an extract_slice of the chain
// once its last input is in. The chain's tensors are read (through the
// extracts) only before the next insertion, so one-shot bufferization
// writes every insertion in place: each input is copied once into one
// buffer, and each concatenation is a view of it.
//
//===----------------------------------------------------------------------===//

#include "kiln/Backends/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/MapVector.h"

namespace mlir {
namespace kiln {
#define GEN_PASS_DEF_KILNSHAREDCONCATBUFFERS
#include "kiln/Backends/Passes.h.inc"
} // namespace kiln
} // namespace mlir

using namespace mlir;

namespace {
/// A concatenation as kiln-to-linalg lowers it: `inserts` put `sources`, in
/// order, at consecutive offsets from 0 along `dim` into a tensor.empty of
/// static shape, which they cover; the last one's result is its value.
struct Concat {
  SmallVector<tensor::InsertSliceOp> inserts;
  SmallVector<Value> sources;
  int64_t dim = -1;

  tensor::InsertSliceOp last() const { return inserts.back(); }
  RankedTensorType type() const { return last().getDestType(); }
};
} // namespace

/// The concatenation whose last insertion is `op`, if it is one of at
/// least two inputs.
static std::optional<Concat> matchConcat(tensor::InsertSliceOp op) {
  RankedTensorType type = op.getDestType();
  if (!type.hasStaticShape())
    return std::nullopt;
  Concat concat;
  Value dest = op.getResult();
  for (auto insert = op; insert;
       insert = dest.getDefiningOp<tensor::InsertSliceOp>()) {
    if (insert != op && !insert->hasOneUse())
      return std::nullopt;
    concat.inserts.push_back(insert);
    dest = insert.getDest();
  }
  if (!dest.getDefiningOp<tensor::EmptyOp>() || concat.inserts.size() < 2)
    return std::nullopt;
  std::reverse(concat.inserts.begin(), concat.inserts.end());
  // Static, unit-stride insertions of whole sources of the result's rank,
  // full along every dim but one, where they follow each other from 0.
  int64_t offset = 0;
  for (tensor::InsertSliceOp insert : concat.inserts) {
    RankedTensorType source = insert.getSourceType();
    if (source.getRank() != type.getRank() ||
        ShapedType::isDynamicShape(insert.getStaticOffsets()) ||
        ShapedType::isDynamicShape(insert.getStaticSizes()) ||
        llvm::any_of(insert.getStaticStrides(),
                     [](int64_t s) { return s != 1; }) ||
        insert.getStaticSizes() != source.getShape())
      return std::nullopt;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      bool full = insert.getStaticOffsets()[d] == 0 &&
                  source.getDimSize(d) == type.getDimSize(d);
      if (full && d != concat.dim)
        continue;
      if (concat.dim < 0)
        concat.dim = d;
      if (d != concat.dim || insert.getStaticOffsets()[d] != offset)
        return std::nullopt;
    }
    if (concat.dim >= 0)
      offset += source.getDimSize(concat.dim);
    concat.sources.push_back(insert.getSource());
  }
  if (concat.dim < 0 || offset != type.getDimSize(concat.dim))
    return std::nullopt;
  return concat;
}

/// Whether `a`'s sources are the first of `b`'s (both along the same dim).
static bool isPrefixOf(const Concat &a, const Concat &b) {
  return a.sources.size() <= b.sources.size() &&
         std::equal(a.sources.begin(), a.sources.end(), b.sources.begin());
}

/// The later of two positions in `block` (an op, or null for the block's
/// start) after which to insert.
static Operation *later(Operation *a, Operation *b) {
  if (!a)
    return b;
  if (!b)
    return a;
  return a->isBeforeInBlock(b) ? b : a;
}

/// Rewrites the concatenations of `family` (each a prefix of `longest`,
/// which is one of them) as one insertion chain (see the top).
static void share(ArrayRef<Concat> family, const Concat &longest) {
  Block *block = longest.last()->getBlock();
  RankedTensorType type = longest.type();
  OpBuilder builder(longest.last());
  Location loc = longest.last().getLoc();
  // The chain's value after each insertion, placed after the source's
  // definition and the insertion before it (the first after the empty
  // tensor, created right before it).
  SmallVector<Value> chain;
  Operation *cursor = nullptr;
  for (auto [source, placed] :
       llvm::zip_equal(longest.sources, longest.inserts)) {
    tensor::InsertSliceOp original = placed; // a handle, not const
    Operation *definition = source.getDefiningOp();
    if (definition && definition->getBlock() != block)
      definition = nullptr; // defined in a block that encloses this one
    cursor = later(cursor, definition);
    if (cursor)
      builder.setInsertionPointAfter(cursor);
    else
      builder.setInsertionPointToStart(block);
    Value dest = chain.empty()
                     ? builder.create<tensor::EmptyOp>(loc, type.getShape(),
                                                       type.getElementType())
                     : chain.back();
    auto insert = builder.create<tensor::InsertSliceOp>(
        original.getLoc(), source, dest, original.getMixedOffsets(),
        original.getMixedSizes(), original.getMixedStrides());
    chain.push_back(insert.getResult());
    cursor = insert;
  }
  for (const Concat &concat : family) {
    tensor::InsertSliceOp last = concat.last();
    Value value = chain[concat.sources.size() - 1];
    if (concat.type() != type) {
      builder.setInsertionPoint(last);
      SmallVector<OpFoldResult> offsets(type.getRank(),
                                        builder.getIndexAttr(0));
      SmallVector<OpFoldResult> sizes,
          strides(type.getRank(), builder.getIndexAttr(1));
      for (int64_t size : concat.type().getShape())
        sizes.push_back(builder.getIndexAttr(size));
      value = builder.create<tensor::ExtractSliceOp>(
          last.getLoc(), concat.type(), value, offsets, sizes, strides);
    }
    last.getResult().replaceAllUsesWith(value);
    Value dest;
    for (tensor::InsertSliceOp insert : llvm::reverse(concat.inserts)) {
      dest = insert.getDest();
      insert->erase();
    }
    if (Operation *empty = dest.getDefiningOp(); empty && empty->use_empty())
      empty->erase();
  }
}

namespace {
struct KilnSharedConcatBuffersPass
    : mlir::kiln::impl::KilnSharedConcatBuffersBase<
          KilnSharedConcatBuffersPass> {
  void runOnOperation() override {
    // The concatenations, by block, first source and dim.
    llvm::MapVector<std::tuple<Block *, Value, int64_t>, SmallVector<Concat>>
        groups;
    getOperation().walk([&](tensor::InsertSliceOp op) {
      // Only the last insertion of a chain.
      if (op->hasOneUse())
        if (auto next = dyn_cast<tensor::InsertSliceOp>(*op->user_begin());
            next && next.getDest() == op.getResult())
          return;
      if (std::optional<Concat> concat = matchConcat(op))
        groups[{op->getBlock(), concat->sources.front(), concat->dim}]
            .push_back(std::move(*concat));
    });
    for (auto &[key, concats] : groups) {
      const Concat *longest = &concats.front();
      for (const Concat &concat : concats)
        if (concat.sources.size() > longest->sources.size())
          longest = &concat;
      SmallVector<Concat> family;
      for (const Concat &concat : concats)
        if (isPrefixOf(concat, *longest))
          family.push_back(concat);
      if (family.size() < 2)
        continue;
      share(family, *longest);
    }
  }
};
} // namespace
