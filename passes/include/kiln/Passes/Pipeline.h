//===- Pipeline.h - Pipeline parallelism as a program rewrite ---*- C++ -*-===//
//
// The C++ entry point of the kiln-pipeline pass: derives, from the loss of
// one micro-batch written as a chain of stage calls, the SPMD training step
// that P ranks run as a pipeline of P stages over M micro-batches (see
// Passes.td and passes/parallel/README.md).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_PIPELINE_H
#define KILN_PASSES_PIPELINE_H

#include "kiln/Passes/PipelineSchedule.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string>

namespace mlir {
namespace kiln {

struct PipelineConfig {
  /// How many micro-batches a step runs (M >= 1).
  int64_t microbatches = 1;
  /// The arguments of the loss that are data of one micro-batch (split
  /// along their leading dimension); the others are parameters, each read
  /// by exactly one stage.
  llvm::SmallVector<int64_t> batchArgs;
  PipelineScheduleKind schedule = PipelineScheduleKind::GPipe;
  /// Data-parallel replicas of the pipeline (D >= 1): the step runs on
  /// D * P ranks, rank r as stage r % P of replica r / P, each replica on
  /// its own data; every stage's gradients are averaged over its replicas.
  int64_t replicas = 1;
  /// Tensor parallelism within each stage (T >= 1): parameters of the loss
  /// annotated `kiln.sharding` over the axis "tp" are split over T ranks
  /// per stage, each stage's functions are partitioned by kiln-partition,
  /// and the step runs on D * P * T ranks, rank r as block r % T of stage
  /// (r / T) % P of replica r / (P T). A stage's tensor-parallel
  /// collectives involve its T ranks alone (group-local), inside the
  /// kiln.cond the other stages skip.
  int64_t tensorParallel = 1;
  /// Whether each stage's backward pass recomputes its forward pass from
  /// the stage's input (the default: a stage keeps only its input of a
  /// micro-batch) or reads the intermediates its forward pass kept.
  bool recompute = true;
  /// The derived function's name; default `<loss>_pipeline`.
  std::string name;
};

/// Derives from `loss` (params..., data...) -> f32, whose body is a chain of
/// calls `%a1 = call @s0(...)`, `%a2 = call @s1(..., %a1, ...)`, ...,
/// `%l = call @sL(..., %aL, ...)` returning %l, the SPMD step
///
///   `name(packed: tensor<1xKxf32>, data...: tensor<M*b x ...>)
///        -> (loss: f32, grads: tensor<1xKxf32>)`
///
/// that rank s runs as stage s (call s): `packed` is rank s's row of the
/// [P, K] array holding each stage's parameters flattened and concatenated
/// in the order the stage's call reads them (padded with zeros to K), the
/// data are whole (M micro-batches of b rows), and every rank returns the
/// mean over the micro-batches of the loss and its row of the gradients,
/// packed the same way. Activations travel between neighbouring stages by
/// kiln.collective_permute, as `config.schedule` orders the work; the
/// backward pass recomputes each stage's forward pass from its saved input,
/// or, without `config.recompute`, reads what the forward pass kept. The
/// derived function and the stages' VJPs (or their forward and backward
/// halves, splitVjp) are inserted after `loss`.
/// Reports a loss that is not such a chain, parameters or activations that
/// are not f32, a parameter two stages read, at `loss` or the call at
/// fault, and fails leaving the module unchanged. With `schedule`, stores
/// there the schedule the step was laid out with.
/// Whether values of `type` can travel between a pipeline's ranks: the
/// stages' parameters (packed into f32 rows) and the activations between
/// stages (flat f32 buffers) are f32 tensors of static shape.
bool travelsAsF32(Type type);

FailureOr<func::FuncOp> buildPipeline(func::FuncOp loss,
                                      const PipelineConfig &config,
                                      PipelineSchedule *schedule = nullptr);

/// A loss cut into stages by cutIntoStages.
struct PipelineCut {
  /// `<loss>_stages`, private, with the loss's signature: the chain of
  /// stage calls buildPipeline takes.
  func::FuncOp chain;
  /// `<loss>_stage<s>(parameters..., activation, data...)`, private.
  llvm::SmallVector<func::FuncOp> stages;
  /// Each stage's estimated forward cost (floating-point operations).
  llvm::SmallVector<double> costs;
};

/// Cuts `loss` (params..., data...) -> f32, one block of ops, into
/// `stages` functions and a chain of their calls, inserted after `loss`,
/// choosing among the places where one f32 tensor and no parameter crosses
/// the P - 1 that minimise the most expensive stage's estimated cost
/// (products, attention and convolutions by their multiply-adds, other ops
/// by the elements they write). Values computed from constants alone are
/// computed again in each stage that reads them. `batchArgs` are the
/// arguments every stage may read; a stage's parameters come first in its
/// arguments, in the loss's argument order. Reports a loss of several
/// blocks or results and one with too few places to cut, at `loss`.
FailureOr<PipelineCut> cutIntoStages(func::FuncOp loss, int64_t stages,
                                     llvm::ArrayRef<int64_t> batchArgs);

} // namespace kiln
} // namespace mlir

#endif // KILN_PASSES_PIPELINE_H
