//===- TraceState.h - The state of one trace being recorded -----*- C++ -*-===//
//
// Private to the tracer. A TraceState owns the module while a function is
// being traced, shares the MLIRContext it lives in, and holds the builder
// and the stack of scopes (the function body and the control-flow regions
// currently open). A trace started while another is recording on the same
// thread shares that trace's context, so IR derived from the inner one can
// be cloned into the outer one (kiln/Tracer/Inline.h). Tensors keep
// their TraceState alive through a shared_ptr, so a Tensor that outlives its
// trace can still tell that the trace is finished instead of touching freed
// IR.
//
// Scopes implement closure conversion. Every scope records the values of its
// parent it has captured; capturing adds a block argument to each of the
// scope's blocks (both branches of a cond, cond and body of a while), so the
// blocks of one region op always have identical signatures, and the
// captured parent values become extra operands when the region op is built.
// A value from k levels up is captured by each of the k scopes in turn.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TRACER_TRACESTATE_H
#define KILN_TRACER_TRACESTATE_H

#include "kiln/Tracer/DType.h"
#include "kiln/Tracer/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln {
namespace detail {

/// What a scope traces; used in messages.
enum class ScopeKind { Function, Cond, While, For };

/// A function body or a group of sibling regions being traced.
struct Scope {
  ScopeKind kind = ScopeKind::Function;
  /// The blocks that share one signature (one per region of the op).
  llvm::SmallVector<mlir::Block *, 2> blocks;
  /// Index into `blocks` of the block being traced now.
  unsigned current = 0;
  /// Identifies the block being traced now; Tensors created in it carry it.
  uint64_t frame = 0;
  /// Number of leading block arguments that are not captures.
  unsigned fixedArgs = 0;
  /// Captured values of the parent scope, in capture order; capture k is
  /// block argument fixedArgs + k of every block.
  llvm::SmallVector<mlir::Value> captured;
  llvm::DenseMap<mlir::Value, unsigned> captureIndex;

  mlir::Block *block() const { return blocks[current]; }
};

/// Maps between DType and MLIR element types.
mlir::Type elementTypeOf(mlir::MLIRContext *context, DType dtype);
DType dtypeOf(mlir::Type elementType);
mlir::RankedTensorType tensorType(mlir::MLIRContext *context,
                                  llvm::ArrayRef<int64_t> shape, DType dtype);
mlir::RankedTensorType typeOf(mlir::Value value);
/// `tensor<3x4xf32>` as text, for messages.
std::string typeString(mlir::Type type);

class TraceState : public std::enable_shared_from_this<TraceState> {
public:
  /// Creates the module and a function `name` taking tensors described by
  /// `inputs` (its result types are set when it returns), in `context`; if
  /// that is null, in the context of the trace recording on this thread, or
  /// else in a new one.
  TraceState(const std::string &name, llvm::ArrayRef<TensorSpec> inputs,
             SourceLoc loc,
             std::shared_ptr<mlir::MLIRContext> context = nullptr);
  ~TraceState();
  TraceState(const TraceState &) = delete;
  TraceState &operator=(const TraceState &) = delete;

  mlir::MLIRContext *getContext() const { return context; }
  mlir::OpBuilder &getBuilder() { return *builder; }
  mlir::func::FuncOp getFunction() const { return function; }
  bool isFinished() const { return finished; }

  /// The trace being recorded on this thread (innermost), or null.
  static TraceState *active();
  /// The active trace; throws if there is none (`what` names the caller).
  static TraceState &requireActive(SourceLoc loc, const char *what);
  /// The trace `tensor` belongs to, checked to be the active one and still
  /// recording.
  static TraceState &of(const Tensor &tensor, SourceLoc loc);
  /// The trace of the tensor operands, or the active one if all are scalars.
  static TraceState &of(llvm::ArrayRef<const Operand *> operands,
                        SourceLoc loc, const char *what);

  /// Makes this trace the active one on this thread until popActive().
  void pushActive();
  void popActive();

  /// Lets the function traced here use the tensors of `enclosing` (the
  /// trace that was active when this one started) and of the traces it
  /// captures from in turn, as the function of a transform does (a closure
  /// over the enclosing trace). Each tensor used becomes an extra input,
  /// appended after the declared ones; captures() lists them.
  void captureFrom(TraceState *enclosing) { captureParent = enclosing; }
  /// The tensors of the enclosing trace that the extra inputs stand for,
  /// in input order.
  const std::vector<Tensor> &captures() const { return functionCaptures; }

  /// The value `tensor` stands for, usable in the block being traced now:
  /// captures it into every region between its definition and here.
  mlir::Value use(const Tensor &tensor, SourceLoc loc);
  /// A Tensor for `value`, which must be defined in the current block.
  Tensor wrap(mlir::Value value);

  /// Opens `scope` (not yet entering any of its blocks).
  void pushScope(Scope &scope);
  /// Closes the innermost scope, which must be `scope`.
  void popScope(Scope &scope);
  /// Starts tracing block `index` of the innermost scope.
  void enterBlock(Scope &scope, unsigned index);
  /// Inserts a non-capture block argument after the existing fixed ones in
  /// every block of `scope`; returns it in the current block.
  mlir::BlockArgument addFixedArgument(Scope &scope, mlir::Type type,
                                       mlir::Location loc);
  Scope &innermost() { return *scopes.back(); }

  /// The MLIR location of the user's source position.
  mlir::Location location(SourceLoc loc);

  /// Builds an op at the end of the current block and verifies it; a
  /// verification failure erases the op and throws TraceError at `loc`.
  template <typename OpTy, typename... Args>
  OpTy create(SourceLoc loc, Args &&...args) {
    OpTy op = builder->create<OpTy>(location(loc), std::forward<Args>(args)...);
    verifyCreated(op.getOperation(), loc);
    return op;
  }
  /// Verifies `op` and the terminators of its regions (nested ops were
  /// verified when they were created); on failure erases it and throws.
  void verifyCreated(mlir::Operation *op, SourceLoc loc);

  /// Takes the diagnostics collected since the last call.
  std::string takeDiagnostics();

  /// Ends a successful trace: hands over the context and the module. The
  /// state stays behind, finished, for Tensors that still refer to it.
  std::pair<std::shared_ptr<mlir::MLIRContext>,
            mlir::OwningOpRef<mlir::ModuleOp>>
  release();
  /// Ends a failed trace: destroys the module and lets go of the context
  /// (destroyed unless another trace or TracedFunction shares it).
  void discard();

private:
  /// True if tensors of `state` may be captured here (it encloses this
  /// trace through captureFrom links).
  bool capturesFrom(const TraceState *state) const;
  /// The argument of this function standing for `tensor`, a tensor of an
  /// enclosing trace; added on first use.
  mlir::Value captureEnclosing(const Tensor &tensor, SourceLoc loc);

  std::shared_ptr<mlir::MLIRContext> sharedContext;
  mlir::MLIRContext *context = nullptr;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::func::FuncOp function;
  std::optional<mlir::OpBuilder> builder;
  std::optional<mlir::ScopedDiagnosticHandler> diagnosticHandler;
  std::string diagnostics;
  Scope root;
  std::vector<Scope *> scopes;
  uint64_t nextFrame = 1;
  bool finished = false;
  TraceState *captureParent = nullptr;
  std::vector<Tensor> functionCaptures;
  /// Index into functionCaptures by the captured value in the parent.
  llvm::DenseMap<mlir::Value, unsigned> functionCaptureIndex;
};

} // namespace detail
} // namespace kiln

#endif // KILN_TRACER_TRACESTATE_H
