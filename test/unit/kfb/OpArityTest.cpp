//===- OpArityTest.cpp - Arity read off the ops' traits -------------------===//

#include "KfbTestSupport.h"

#include "OpArity.h"

#include "kiln/IR/KilnDialect.h"

namespace kiln {
namespace kfbtest {
namespace {

using modelfile::Arity;
using modelfile::OpArity;

using OpArityTest = KfbTest;

/// Every kiln op is storable and its traits pin down its arity, so the
/// reader can check any kiln op, including ones added after this test.
TEST_F(OpArityTest, EveryKilnOpHasAKnownArity) {
  int kilnOps = 0;
  for (mlir::RegisteredOperationName name : context.getRegisteredOperations()) {
    if (name.getDialectNamespace() != "kiln")
      continue;
    ++kilnOps;
    EXPECT_TRUE(modelfile::isStorableOp(name)) << name.getStringRef().str();
    EXPECT_TRUE(modelfile::getOpArity(name).has_value())
        << name.getStringRef().str();
  }
  EXPECT_GE(kilnOps, 30);
}

std::optional<OpArity> arityOf(mlir::MLIRContext &context,
                               llvm::StringRef name) {
  std::optional<mlir::RegisteredOperationName> op =
      modelfile::lookupStorableOp(name, &context);
  if (!op)
    return std::nullopt;
  return modelfile::getOpArity(*op);
}

void expectArity(const Arity &arity, unsigned minimum, bool variadic) {
  EXPECT_EQ(arity.minimum, minimum);
  EXPECT_EQ(arity.variadic, variadic);
}

TEST_F(OpArityTest, ReadsCountsOffTraits) {
  std::optional<OpArity> add = arityOf(context, "kiln.add");
  ASSERT_TRUE(add);
  expectArity(add->operands, 2, false);
  expectArity(add->results, 1, false);
  expectArity(add->regions, 0, false);

  std::optional<OpArity> select = arityOf(context, "kiln.select");
  ASSERT_TRUE(select);
  expectArity(select->operands, 3, false);

  std::optional<OpArity> cond = arityOf(context, "kiln.cond");
  ASSERT_TRUE(cond);
  expectArity(cond->operands, 1, true);
  expectArity(cond->results, 0, true);
  expectArity(cond->regions, 2, false);

  std::optional<OpArity> loop = arityOf(context, "kiln.for");
  ASSERT_TRUE(loop);
  expectArity(loop->operands, 0, true);
  expectArity(loop->regions, 1, false);

  std::optional<OpArity> ret = arityOf(context, "func.return");
  ASSERT_TRUE(ret);
  expectArity(ret->operands, 0, true);
  expectArity(ret->results, 0, false);

  std::optional<OpArity> call = arityOf(context, "func.call");
  ASSERT_TRUE(call);
  expectArity(call->results, 0, true);
}

TEST_F(OpArityTest, OnlyKilnOpsReturnAndCallAreStorable) {
  EXPECT_FALSE(modelfile::lookupStorableOp("func.func", &context));
  EXPECT_FALSE(modelfile::lookupStorableOp("builtin.module", &context));
  EXPECT_FALSE(modelfile::lookupStorableOp("kiln.nonexistent", &context));
  EXPECT_FALSE(modelfile::lookupStorableOp("", &context));
}

TEST(ArityTest, Describes) {
  EXPECT_EQ((Arity{2, false}).describe("operand"), "2 operands");
  EXPECT_EQ((Arity{1, false}).describe("result"), "1 result");
  EXPECT_EQ((Arity{0, false}).describe("region"), "no regions");
  EXPECT_EQ((Arity{1, true}).describe("operand"), "at least 1 operand");
  EXPECT_EQ((Arity{0, true}).describe("result"), "at least 0 results");
}

} // namespace
} // namespace kfbtest
} // namespace kiln
