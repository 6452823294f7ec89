//===- EinsumOps.cpp - ONNX Einsum ----------------------------------------===//
//
// Einsum as the ops kiln has: a label repeated on one operand takes the
// diagonal (a strided slice of the two dims flattened), labels no later
// operand or the output needs are summed out, and operands are contracted
// left to right, each pair as one batched kiln.matmul after transposes and
// reshapes ([batch, kept of the left, summed] x [batch, summed, kept of the
// right]). The result is transposed to the output's order. Ellipsis dims
// broadcast like numpy's (aligned at the right); the implicit output is
// the ellipsis dims, then the labels used once, in alphabetical order.
//
//===----------------------------------------------------------------------===//

#include "Emit.h"
#include "Importer.h"

#include "kiln/IR/KilnDialect.h"
#include "kiln/IR/KilnOps.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::kiln;

namespace kiln {
namespace onnx_import {
namespace {

/// A label: a letter, or (kEllipsisBase + k) for the k-th of the
/// broadcast (ellipsis) dims, counted from the left of the widest.
constexpr int kEllipsisBase = 1000;

/// An operand (or the result so far) with one label per dim.
struct Term {
  Value value;
  SmallVector<int> labels;
};

/// One term of the equation: its letters, with -1 where "..." stands.
FailureOr<SmallVector<int>> parseTerm(NodeContext &ctx, StringRef text) {
  SmallVector<int> labels;
  bool ellipsis = false;
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (text.substr(i).starts_with("...")) {
      if (ellipsis) {
        (void)ctx.fail("a term of the equation has two ellipses");
        return failure();
      }
      ellipsis = true;
      labels.push_back(-1);
      i += 3;
      continue;
    }
    if (!llvm::isAlpha(c)) {
      (void)ctx.fail("the equation has '" + Twine(c) +
                     "', which is not a letter, ',', '->' or '...'");
      return failure();
    }
    labels.push_back(c);
    ++i;
  }
  return labels;
}

/// `labels` with the ellipsis replaced by the last `count` of the
/// `total` ellipsis labels.
SmallVector<int> expandEllipsis(ArrayRef<int> labels, int64_t count,
                                int64_t total) {
  SmallVector<int> result;
  for (int label : labels) {
    if (label != -1) {
      result.push_back(label);
      continue;
    }
    for (int64_t k = total - count; k < total; ++k)
      result.push_back(kEllipsisBase + k);
  }
  return result;
}

/// Takes the diagonal of every label repeated in `term`.
void takeDiagonals(OpBuilder &b, Location loc, Term &term) {
  for (;;) {
    int64_t first = -1, second = -1;
    for (size_t i = 0; i < term.labels.size() && first < 0; ++i)
      for (size_t j = i + 1; j < term.labels.size(); ++j)
        if (term.labels[i] == term.labels[j]) {
          first = i;
          second = j;
          break;
        }
    if (first < 0)
      return;
    // Move the two dims last, flatten them and take every (n + 1)-th
    // element: [..., n, n] -> [..., n * n] -> [..., n].
    SmallVector<int64_t> perm;
    SmallVector<int> labels;
    for (int64_t i = 0; i < static_cast<int64_t>(term.labels.size()); ++i)
      if (i != first && i != second) {
        perm.push_back(i);
        labels.push_back(term.labels[i]);
      }
    perm.append({first, second});
    Value v = transpose(b, loc, term.value, perm);
    int64_t n = shapeOf(v).back();
    SmallVector<int64_t> flat(shapeOf(v).drop_back(2));
    flat.push_back(n * n);
    v = reshape(b, loc, v, flat);
    SmallVector<int64_t> start(flat.size(), 0), limit(flat),
        stride(flat.size(), 1);
    stride.back() = n + 1;
    v = slice(b, loc, v, start, limit, stride);
    labels.push_back(term.labels[first]);
    term = {v, labels};
  }
}

/// Sums out the dims of `term` whose labels are not in `needed`.
void sumUnneeded(OpBuilder &b, Location loc, Term &term,
                 ArrayRef<int> needed) {
  SmallVector<int64_t> axes;
  SmallVector<int> kept;
  for (size_t i = 0; i < term.labels.size(); ++i) {
    if (llvm::is_contained(needed, term.labels[i]))
      kept.push_back(term.labels[i]);
    else
      axes.push_back(i);
  }
  if (axes.empty())
    return;
  term = {reduce(b, loc, Reduction::Sum, term.value, axes, false), kept};
}

int64_t dimOf(const Term &t, int label) {
  auto it = llvm::find(t.labels, label);
  return shapeOf(t.value)[it - t.labels.begin()];
}

/// Broadcasts size-1 dims of `t` to `size` for the labels the other
/// operand has with a larger size.
void broadcastShared(OpBuilder &b, Location loc, Term &t, const Term &other) {
  SmallVector<int64_t> shape(shapeOf(t.value));
  bool changed = false;
  for (size_t i = 0; i < t.labels.size(); ++i)
    if (llvm::is_contained(other.labels, t.labels[i])) {
      int64_t size = dimOf(other, t.labels[i]);
      if (shape[i] == 1 && size != 1) {
        shape[i] = size;
        changed = true;
      }
    }
  if (changed)
    t.value = broadcastTo(b, loc, t.value, shape);
}

/// Contracts two terms; the result keeps the labels in `needed`.
Term contract(OpBuilder &b, Location loc, Term lhs, Term rhs,
              ArrayRef<int> needed) {
  broadcastShared(b, loc, lhs, rhs);
  broadcastShared(b, loc, rhs, lhs);
  SmallVector<int> batch, lhsOnly, rhsOnly, summed;
  for (int label : lhs.labels) {
    if (llvm::is_contained(rhs.labels, label))
      (llvm::is_contained(needed, label) ? batch : summed).push_back(label);
    else
      lhsOnly.push_back(label);
  }
  for (int label : rhs.labels)
    if (!llvm::is_contained(lhs.labels, label))
      rhsOnly.push_back(label);
  auto arrange = [&](const Term &t, ArrayRef<ArrayRef<int>> groups) {
    SmallVector<int64_t> perm, shape;
    for (ArrayRef<int> group : groups) {
      int64_t size = 1;
      for (int label : group) {
        perm.push_back(llvm::find(t.labels, label) - t.labels.begin());
        size *= dimOf(t, label);
      }
      shape.push_back(size);
    }
    return reshape(b, loc, transpose(b, loc, t.value, perm), shape);
  };
  Value a = arrange(lhs, {batch, lhsOnly, summed});
  Value c = arrange(rhs, {batch, summed, rhsOnly});
  Value product = b.create<MatmulOp>(loc, a, c);
  SmallVector<int64_t> shape;
  SmallVector<int> labels;
  for (int label : batch) {
    shape.push_back(dimOf(lhs, label));
    labels.push_back(label);
  }
  for (int label : lhsOnly) {
    shape.push_back(dimOf(lhs, label));
    labels.push_back(label);
  }
  for (int label : rhsOnly) {
    shape.push_back(dimOf(rhs, label));
    labels.push_back(label);
  }
  return {reshape(b, loc, product, shape), labels};
}

LogicalResult einsumOp(NodeContext &ctx) {
  const onnx::AttributeProto *eq = ctx.attr("equation");
  if (!eq || !eq->has_s())
    return ctx.fail("attribute 'equation' is required");
  std::string equation;
  for (char c : eq->s())
    if (c != ' ')
      equation.push_back(c);
  StringRef text(equation);
  auto [inputText, outputText] = text.split("->");
  bool explicitOutput = text.contains("->");
  SmallVector<StringRef> inputTerms;
  inputText.split(inputTerms, ',');
  if (inputTerms.size() != ctx.numInputs())
    return ctx.fail("the equation has " + Twine(inputTerms.size()) +
                    " input terms for " + Twine(ctx.numInputs()) + " inputs");
  for (unsigned i = 0; i < ctx.numInputs(); ++i)
    if (!ctx.hasInput(i))
      return ctx.fail("input " + Twine(i) + " is missing");
  for (unsigned i = 1; i < ctx.numInputs(); ++i)
    if (elementTypeOf(ctx.input(i)) != elementTypeOf(ctx.input(0)))
      return ctx.fail("the inputs have different element types");
  if (elementTypeOf(ctx.input(0)).isInteger(1))
    return ctx.fail("Einsum of bool tensors is not supported");

  // Parse, then count the ellipsis dims of each operand.
  SmallVector<SmallVector<int>> parsed;
  SmallVector<int64_t> ellipsisCount;
  int64_t ellipsisTotal = 0;
  for (unsigned i = 0; i < inputTerms.size(); ++i) {
    FailureOr<SmallVector<int>> labels = parseTerm(ctx, inputTerms[i]);
    if (failed(labels))
      return failure();
    int64_t letters = llvm::count_if(*labels, [](int l) { return l != -1; });
    bool hasEllipsis = llvm::is_contained(*labels, -1);
    int64_t rank = rankOf(ctx.input(i));
    if (hasEllipsis ? rank < letters : rank != letters)
      return ctx.fail("term '" + inputTerms[i] + "' does not match input " +
                      Twine(i) + " of rank " + Twine(rank));
    ellipsisCount.push_back(hasEllipsis ? rank - letters : 0);
    ellipsisTotal = std::max(ellipsisTotal, ellipsisCount.back());
    parsed.push_back(*labels);
  }
  SmallVector<Term> terms;
  for (unsigned i = 0; i < parsed.size(); ++i)
    terms.push_back({ctx.input(i), expandEllipsis(parsed[i], ellipsisCount[i],
                                                  ellipsisTotal)});

  SmallVector<int> output;
  if (explicitOutput) {
    FailureOr<SmallVector<int>> labels = parseTerm(ctx, outputText);
    if (failed(labels))
      return failure();
    output = expandEllipsis(*labels, ellipsisTotal, ellipsisTotal);
    for (size_t i = 0; i < output.size(); ++i) {
      if (llvm::is_contained(ArrayRef<int>(output).take_front(i), output[i]))
        return ctx.fail("the output repeats a label");
      if (llvm::none_of(terms, [&](const Term &t) {
            return llvm::is_contained(t.labels, output[i]);
          }))
        return ctx.fail("an output label is on no input");
    }
  } else {
    for (int64_t k = 0; k < ellipsisTotal; ++k)
      output.push_back(kEllipsisBase + k);
    SmallVector<int> once;
    for (int c = 'A'; c <= 'z'; ++c) {
      int uses = 0;
      for (const Term &t : terms)
        uses += llvm::count(t.labels, c);
      if (uses == 1)
        once.push_back(c);
    }
    output.append(once);
  }

  // Every label must have one size across the operands; ellipsis dims may
  // also be 1 and broadcast.
  for (size_t i = 0; i < terms.size(); ++i)
    for (size_t j = 0; j < terms[i].labels.size(); ++j)
      for (size_t k = 0; k < terms.size(); ++k)
        for (size_t l = 0; l < terms[k].labels.size(); ++l) {
          if (terms[i].labels[j] != terms[k].labels[l])
            continue;
          int64_t m = shapeOf(terms[i].value)[j],
                  n = shapeOf(terms[k].value)[l];
          bool broadcastable = terms[i].labels[j] >= kEllipsisBase;
          if (m != n && !(broadcastable && (m == 1 || n == 1)))
            return ctx.fail(
                (terms[i].labels[j] >= kEllipsisBase
                     ? Twine("an ellipsis dim")
                     : "label '" + Twine(char(terms[i].labels[j])) + "'") +
                " has sizes " + Twine(m) + " and " + Twine(n) +
                " on inputs " + Twine(i) + " and " + Twine(k));
        }

  OpBuilder &b = ctx.b;
  Location loc = ctx.loc;
  // The labels still needed after operand i: the output's and those of the
  // operands after it.
  auto neededAfter = [&](size_t i) {
    SmallVector<int> needed(output);
    for (size_t k = i + 1; k < terms.size(); ++k)
      needed.append(terms[k].labels);
    return needed;
  };
  for (Term &t : terms)
    takeDiagonals(b, loc, t);
  Term result = terms[0];
  sumUnneeded(b, loc, result, neededAfter(0));
  for (size_t i = 1; i < terms.size(); ++i) {
    Term next = terms[i];
    SmallVector<int> needed = neededAfter(i);
    // Labels only this operand has and nothing later needs.
    SmallVector<int> keep(needed);
    keep.append(result.labels);
    sumUnneeded(b, loc, next, keep);
    result = contract(b, loc, result, next, needed);
  }
  sumUnneeded(b, loc, result, output);
  SmallVector<int64_t> perm;
  for (int label : output)
    perm.push_back(llvm::find(result.labels, label) - result.labels.begin());
  Value v = result.value;
  if (!llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    v = transpose(b, loc, v, perm);
  return ctx.setResults(v);
}

} // namespace

void registerEinsumOps(OpTable &table) { table.add("Einsum", einsumOp); }

} // namespace onnx_import
} // namespace kiln
