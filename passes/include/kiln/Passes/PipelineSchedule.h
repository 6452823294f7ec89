//===- PipelineSchedule.h - Which stage runs what, when ---------*- C++ -*-===//
//
// A pipeline schedule assigns the work of a training step split into P
// stages and M micro-batches to ticks: at each tick every stage runs at
// most one action, the forward pass of one micro-batch (F m) or its
// backward pass (B m), and what a stage sends at one tick its neighbour can
// use from the next. The last stage's forward pass computes the loss, its
// backward pass starts the gradient.
//
// GPipe runs all forward passes, then all backward passes; 1F1B
// (PipeDream-flush) runs P - 1 - s forward passes on stage s, then
// alternates one forward and one backward pass, so that a stage holds the
// inputs of at most P - s micro-batches at a time instead of M. Both take
// M + P - 1 ticks of forward and as many of backward work on the first
// stage; the bubble, the share of stage-ticks without work, is
// (P - 1) / (M + P - 1) when forward and backward passes take a tick each.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_PIPELINESCHEDULE_H
#define KILN_PASSES_PIPELINESCHEDULE_H

#include <cstdint>
#include <string>
#include <vector>

namespace mlir {
namespace kiln {

enum class PipelineScheduleKind { GPipe, OneFOneB };

struct PipelineAction {
  enum Kind { Idle, Forward, Backward };
  Kind kind = Idle;
  int64_t microbatch = -1;
};

struct PipelineSchedule {
  int64_t stages = 0;
  int64_t microbatches = 0;
  /// ticks[t][s]: what stage s runs at tick t.
  std::vector<std::vector<PipelineAction>> ticks;

  /// The share of (tick, stage) slots without an action.
  double bubbleFraction() const;
  /// The most micro-batches whose forward pass stage `s` has run and whose
  /// backward pass it has not, at any tick: the inputs it holds.
  int64_t peakInFlight(int64_t s) const;
  /// The schedule as a Chrome trace / Perfetto JSON: one track per stage
  /// (its rank), one event per action, `tickMicros` microseconds a tick.
  std::string chromeTrace(double tickMicros = 1000.0) const;
};

/// The schedule of `kind` for `stages` >= 1 stages and `microbatches` >= 1
/// micro-batches: each stage's actions in its order, placed at the first
/// tick where what they need has arrived.
PipelineSchedule buildPipelineSchedule(PipelineScheduleKind kind,
                                       int64_t stages, int64_t microbatches);

} // namespace kiln
} // namespace mlir

#endif // KILN_PASSES_PIPELINESCHEDULE_H
