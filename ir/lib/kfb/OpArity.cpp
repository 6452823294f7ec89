//===- OpArity.cpp - Which ops a .kfb file may hold, and their arity ------===//

#include "OpArity.h"

#include "kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/OpDefinition.h"

#include <utility>

namespace kiln {
namespace modelfile {

namespace {

/// The largest fixed count probed for. ODS emits NOperands<N> (and the like)
/// for N >= 2 and AtLeastNOperands<N> for N >= 1; kiln ops stay far below.
constexpr unsigned kMaxProbedCount = 16;

/// Returns the N for which \p name has the trait Fixed<N>::Impl, if any.
template <template <unsigned> class Fixed, unsigned... Ns>
std::optional<unsigned> findCount(mlir::RegisteredOperationName name,
                                  std::integer_sequence<unsigned, Ns...>) {
  std::optional<unsigned> found;
  (void)((name.hasTrait<Fixed<Ns>::template Impl>() ? (found = Ns, true)
                                                    : false) ||
         ...);
  return found;
}

/// The counts First, First + 1, ..., kMaxProbedCount.
template <unsigned First, unsigned... Is>
constexpr auto countsFrom(std::integer_sequence<unsigned, Is...>) {
  return std::integer_sequence<unsigned, First + Is...>();
}
template <unsigned First>
using CountsFrom = decltype(countsFrom<First>(
    std::make_integer_sequence<unsigned, kMaxProbedCount + 1 - First>()));

/// Decodes one family of ODS count traits (operands, results or regions).
template <template <typename> class Zero, template <typename> class One,
          template <unsigned> class Exactly, template <unsigned> class AtLeast,
          template <typename> class Variadic>
std::optional<Arity> getArity(mlir::RegisteredOperationName name) {
  if (name.hasTrait<Zero>())
    return Arity{0, false};
  if (name.hasTrait<One>())
    return Arity{1, false};
  if (std::optional<unsigned> n = findCount<Exactly>(name, CountsFrom<2>()))
    return Arity{*n, false};
  if (std::optional<unsigned> n = findCount<AtLeast>(name, CountsFrom<1>()))
    return Arity{*n, true};
  if (name.hasTrait<Variadic>())
    return Arity{0, true};
  return std::nullopt;
}

} // namespace

std::string Arity::describe(llvm::StringRef noun) const {
  std::string text = variadic ? "at least " : "";
  if (!variadic && minimum == 0)
    text += "no";
  else
    text += std::to_string(minimum);
  text += " ";
  text += noun.str();
  if (minimum != 1)
    text += "s";
  return text;
}

bool isStorableOp(mlir::OperationName name) {
  if (!name.isRegistered())
    return false;
  if (name.getDialectNamespace() ==
      mlir::kiln::KilnDialect::getDialectNamespace())
    return true;
  return name.getStringRef() == mlir::func::ReturnOp::getOperationName() ||
         name.getStringRef() == mlir::func::CallOp::getOperationName();
}

std::optional<mlir::RegisteredOperationName>
lookupStorableOp(llvm::StringRef name, mlir::MLIRContext *context) {
  std::optional<mlir::RegisteredOperationName> op =
      mlir::RegisteredOperationName::lookup(name, context);
  if (!op || !isStorableOp(*op))
    return std::nullopt;
  return op;
}

std::optional<OpArity> getOpArity(mlir::RegisteredOperationName name) {
  using namespace mlir::OpTrait;
  if (!name.hasTrait<ZeroSuccessors>())
    return std::nullopt;
  std::optional<Arity> operands =
      getArity<ZeroOperands, OneOperand, NOperands, AtLeastNOperands,
               VariadicOperands>(name);
  std::optional<Arity> results =
      getArity<ZeroResults, OneResult, NResults, AtLeastNResults,
               VariadicResults>(name);
  std::optional<Arity> regions =
      getArity<ZeroRegions, OneRegion, NRegions, AtLeastNRegions,
               VariadicRegions>(name);
  if (!operands || !results || !regions)
    return std::nullopt;
  return OpArity{*operands, *results, *regions};
}

} // namespace modelfile
} // namespace kiln
