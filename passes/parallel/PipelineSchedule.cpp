//===- PipelineSchedule.cpp - Which stage runs what, when -----------------===//
//
// Each stage's actions are listed in the order of the schedule kind, then
// placed tick by tick: a stage runs its next action at the first tick where
// what it needs was sent at an earlier tick (a forward pass needs the
// previous stage's forward pass of that micro-batch, a backward pass the
// next stage's backward pass and its own forward pass).
//
//===----------------------------------------------------------------------===//

#include "kiln/Passes/PipelineSchedule.h"

#include <algorithm>
#include <cassert>
#include <cstdio>

using namespace mlir::kiln;

namespace {

using Action = PipelineAction;

/// Stage s's actions in the order `kind` runs them.
std::vector<Action> stageOrder(PipelineScheduleKind kind, int64_t s,
                               int64_t stages, int64_t microbatches) {
  std::vector<Action> order;
  auto forward = [&](int64_t m) { order.push_back({Action::Forward, m}); };
  auto backward = [&](int64_t m) { order.push_back({Action::Backward, m}); };
  if (kind == PipelineScheduleKind::GPipe) {
    for (int64_t m = 0; m < microbatches; ++m)
      forward(m);
    for (int64_t m = 0; m < microbatches; ++m)
      backward(m);
    return order;
  }
  int64_t warmup = std::min(stages - 1 - s, microbatches);
  for (int64_t m = 0; m < warmup; ++m)
    forward(m);
  for (int64_t i = 0; i + warmup < microbatches; ++i) {
    forward(i + warmup);
    backward(i);
  }
  for (int64_t m = std::max<int64_t>(0, microbatches - warmup);
       m < microbatches; ++m)
    backward(m);
  return order;
}

} // namespace

PipelineSchedule mlir::kiln::buildPipelineSchedule(PipelineScheduleKind kind,
                                                   int64_t stages,
                                                   int64_t microbatches) {
  assert(stages >= 1 && microbatches >= 1 && "a pipeline");
  PipelineSchedule schedule;
  schedule.stages = stages;
  schedule.microbatches = microbatches;
  std::vector<std::vector<Action>> orders;
  for (int64_t s = 0; s < stages; ++s)
    orders.push_back(stageOrder(kind, s, stages, microbatches));
  // The tick each (stage, micro-batch) finished its forward / backward
  // pass; -1 until then.
  std::vector<std::vector<int64_t>> forwardAt(
      stages, std::vector<int64_t>(microbatches, -1));
  std::vector<std::vector<int64_t>> backwardAt = forwardAt;
  std::vector<size_t> next(stages, 0);
  size_t remaining = 0;
  for (const auto &order : orders)
    remaining += order.size();
  for (int64_t t = 0; remaining > 0; ++t) {
    std::vector<Action> tick(stages);
    for (int64_t s = 0; s < stages; ++s) {
      if (next[s] == orders[s].size())
        continue;
      Action action = orders[s][next[s]];
      int64_t m = action.microbatch;
      auto before = [&](int64_t at) { return at >= 0 && at < t; };
      bool ready;
      if (action.kind == Action::Forward)
        ready = s == 0 || before(forwardAt[s - 1][m]);
      else
        ready = before(forwardAt[s][m]) &&
                (s == stages - 1 || before(backwardAt[s + 1][m]));
      if (!ready)
        continue;
      tick[s] = action;
      ++next[s];
      --remaining;
    }
    for (int64_t s = 0; s < stages; ++s) {
      if (tick[s].kind == Action::Forward)
        forwardAt[s][tick[s].microbatch] = t;
      else if (tick[s].kind == Action::Backward)
        backwardAt[s][tick[s].microbatch] = t;
    }
    schedule.ticks.push_back(std::move(tick));
  }
  return schedule;
}

double PipelineSchedule::bubbleFraction() const {
  int64_t idle = 0, slots = 0;
  for (const auto &tick : ticks)
    for (const Action &action : tick) {
      ++slots;
      idle += action.kind == Action::Idle;
    }
  return slots ? static_cast<double>(idle) / static_cast<double>(slots) : 0.0;
}

int64_t PipelineSchedule::peakInFlight(int64_t s) const {
  int64_t held = 0, peak = 0;
  for (const auto &tick : ticks) {
    const Action &action = tick[s];
    if (action.kind == Action::Forward)
      ++held;
    peak = std::max(peak, held);
    if (action.kind == Action::Backward)
      --held;
  }
  return peak;
}

std::string PipelineSchedule::chromeTrace(double tickMicros) const {
  std::string out = "{\"traceEvents\":[";
  bool first = true;
  char buffer[256];
  for (int64_t s = 0; s < stages; ++s) {
    std::snprintf(buffer, sizeof buffer,
                  "%s{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":0,"
                  "\"tid\":%lld,\"args\":{\"name\":\"stage %lld (rank %lld)\"}}",
                  first ? "" : ",", static_cast<long long>(s),
                  static_cast<long long>(s), static_cast<long long>(s));
    out += buffer;
    first = false;
  }
  for (size_t t = 0; t < ticks.size(); ++t)
    for (int64_t s = 0; s < stages; ++s) {
      const Action &action = ticks[t][s];
      if (action.kind == Action::Idle)
        continue;
      std::snprintf(buffer, sizeof buffer,
                    ",{\"ph\":\"X\",\"name\":\"%s %lld\",\"cat\":\"%s\","
                    "\"pid\":0,\"tid\":%lld,\"ts\":%.3f,\"dur\":%.3f}",
                    action.kind == Action::Forward ? "F" : "B",
                    static_cast<long long>(action.microbatch),
                    action.kind == Action::Forward ? "forward" : "backward",
                    static_cast<long long>(s), tickMicros * t, tickMicros);
      out += buffer;
    }
  out += "]}\n";
  return out;
}
