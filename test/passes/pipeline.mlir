// The kiln-pipeline pass: a two-stage loss (a tanh layer, then a squared
// error) over 2 micro-batches, with the GPipe and 1F1B schedules. Each
// action is a kiln.cond on the rank; activations go on by permuting (0 -> 1)
// after a tick with forward work, gradients back (1 -> 0) after a tick with
// backward work; the loss is summed over the ranks and divided by M.
// RUN: kiln-opt %s --kiln-pipeline="function=loss microbatches=2 batch-args=2,3" | FileCheck %s
// RUN: kiln-opt %s --kiln-pipeline="function=loss microbatches=3 batch-args=2,3 schedule=1f1b name=step" | FileCheck %s --check-prefix=ONEF
// The schedule's timeline: 2 stages, 4 micro-batches, GPipe: 10 ticks, 4 of
// the 20 stage-ticks idle, (P - 1) / (M + P - 1) = 0.2.
// RUN: kiln-opt %s --kiln-pipeline="function=loss microbatches=4 batch-args=2,3 schedule-trace=%t.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TRACE
// RUN: FileCheck %s --input-file=%t.json --check-prefix=JSON
// data-args, the option's old name, still works for one release, with a
// warning; given with batch-args it is an error.
// RUN: kiln-opt %s --kiln-pipeline="function=loss microbatches=2 data-args=2,3" 2>&1 -o /dev/null | FileCheck %s --check-prefix=ALIAS
// ALIAS: warning: kiln-pipeline: data-args is deprecated; it is called batch-args, as in kiln-data-parallel
// RUN: not kiln-opt %s --kiln-pipeline="function=loss microbatches=2 data-args=2,3 batch-args=2,3" 2>&1 -o /dev/null | FileCheck %s --check-prefix=BOTH
// BOTH: error: kiln-pipeline: give batch-args only (data-args is its deprecated spelling)
// TRACE: remark: kiln-pipeline: gpipe schedule of 2 stages and 4 micro-batches: 10 ticks, bubble 0.200 (written to
// JSON: "name":"stage 0 (rank 0)"
// JSON: "name":"F 0","cat":"forward","pid":0,"tid":0,"ts":0.000,"dur":1000.000
// JSON: "name":"B 3","cat":"backward","pid":0,"tid":0,"ts":9000.000
// Without recomputation each VJP is split: the forward half returns the
// stage's result and what the backward half reads (stage 0 its tanh, stage
// 1 the difference z - y), and the backward half takes them; no forward op
// runs in a backward pass.
// RUN: kiln-opt %s --kiln-pipeline="function=loss microbatches=2 batch-args=2,3 recompute=false" | FileCheck %s --check-prefix=KEEP
// RUN: kiln-opt %s --kiln-pipeline="function=loss microbatches=2 batch-args=2,3 recompute=false schedule=1f1b" | kiln-opt --verify-roundtrip -o /dev/null
// stages=2 on a loss written as one block: the pass cuts it where one f32
// value crosses and the stages' estimated costs balance (after the first
// product: 2 x 2 x 8 x 6 = 192 against 16 + 2 x 2 x 3 x 8 + 6 + 6 + 1 =
// 125; after the tanh it would be 208 against 109), reports the shares and
// the parameters each stage holds, and pipelines the chain it wrote.
// RUN: kiln-opt %s --kiln-pipeline="function=flat stages=2 microbatches=2 batch-args=2,3" 2>&1 | FileCheck %s --check-prefix=CUT
// CUT: remark: kiln-pipeline: @flat cut into 2 stages (@flat_stages); estimated forward cost and parameters: stage 0 60.6% #0; stage 1 39.4% #1
// CUT: func.func private @flat_stages(%[[W0:.+]]: tensor<6x8xf32>, %[[W1:.+]]: tensor<8x3xf32>, %[[X:.+]]: tensor<2x6xf32>, %[[Y:.+]]: tensor<2x3xf32>) -> tensor<f32>
// CUT:   %[[H:.+]] = call @flat_stage0(%[[W0]], %[[X]])
// CUT:   %[[L:.+]] = call @flat_stage1(%[[W1]], %[[H]], %[[Y]])
// CUT:   return %[[L]]
// CUT: func.func @flat_pipeline(%{{.+}}: tensor<1x48xf32>, %{{.+}}: tensor<4x6xf32>, %{{.+}}: tensor<4x3xf32>) -> (tensor<f32>, tensor<1x48xf32>)
// CUT: func.func private @flat_stage0(%{{.+}}: tensor<6x8xf32>, %{{.+}}: tensor<2x6xf32>) -> tensor<2x8xf32>
// CUT-NEXT: kiln.matmul
// CUT-NEXT: return
// CUT: func.func private @flat_stage1(%{{.+}}: tensor<8x3xf32>, %{{.+}}: tensor<2x8xf32>, %{{.+}}: tensor<2x3xf32>) -> tensor<f32>
// CUT-NEXT: kiln.tanh
// CUT-NEXT: kiln.matmul
// CUT-NEXT: kiln.sub
// The derived IR verifies and round-trips.
// RUN: kiln-opt %s --kiln-pipeline="function=loss microbatches=2 batch-args=2,3" | kiln-opt --verify-roundtrip -o /dev/null

// Each stage's VJP recomputes its forward pass; the first stage's is with
// respect to its weight only, the last's also to its input activation.
// CHECK:       func.func private @loss_pipeline_stage0_vjp(%{{.+}}: tensor<6x8xf32>, %{{.+}}: tensor<2x6xf32>, %{{.+}}: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<6x8xf32>)
// CHECK:       func.func private @loss_pipeline_stage1_vjp(%{{.+}}: tensor<8x3xf32>, %{{.+}}: tensor<2x8xf32>, %{{.+}}: tensor<2x3xf32>, %{{.+}}: tensor<f32>) -> (tensor<f32>, tensor<8x3xf32>, tensor<2x8xf32>)
// The step: rank s's row of the packed weights (48 = 6 x 8 floats for
// stage 0, 24 for stage 1), and the 2 micro-batches of 2 rows whole.
// CHECK-LABEL: func.func @loss_pipeline(
// CHECK-SAME:      %[[P:.+]]: tensor<1x48xf32>, %[[X:.+]]: tensor<4x6xf32>, %[[Y:.+]]: tensor<4x3xf32>)
// CHECK-SAME:      -> (tensor<f32>, tensor<1x48xf32>)
// CHECK:         %[[RANK:.+]] = kiln.rank : tensor<i64>
// Tick 0: stage 0 runs micro-batch 0 forward and sends it on.
// CHECK:         %[[X0:.+]] = kiln.slice %[[X]], start = [0, 0], limit = [2, 6]
// CHECK:         %[[ON0:.+]] = kiln.compare eq, %[[RANK]], %{{.+}} : tensor<i64>
// CHECK:         %[[F0:.+]] = kiln.cond %[[ON0]],
// CHECK:           func.call @stage0(
// CHECK:         %[[A0:.+]] = kiln.collective_permute %[[F0]], pairs = [0, 1] : tensor<16xf32>
// Tick 1: stage 0 forward on micro-batch 1, stage 1 on micro-batch 0 (its
// loss), then micro-batch 1's activation goes on.
// CHECK:           func.call @stage0(
// CHECK:         kiln.cond %{{.+}}, (%{{.+}}, %[[A0]], %{{.+}}, %{{.+}})
// CHECK:           func.call @stage1(
// CHECK:         kiln.collective_permute %{{.+}}, pairs = [0, 1] : tensor<16xf32>
// Backward: stage 1's VJP with cotangent 1/2, its weight's gradient placed
// in the packed row by one concat with the row's zero tail (not padded to
// the row parameter by parameter) and added once, its input gradient sent
// back to stage 0.
// CHECK:           kiln.constant dense<5.000000e-01> : tensor<f32>
// CHECK:           func.call @loss_pipeline_stage1_vjp(
// CHECK-NOT:       kiln.pad
// CHECK:           kiln.concat %{{.+}}, %{{.+}} dim = 0 : tensor<24xf32>, tensor<24xf32>
// CHECK-NEXT:      kiln.add %{{.+}}, %{{.+}} : tensor<48xf32>
// CHECK:         kiln.collective_permute %{{.+}}, pairs = [1, 0] : tensor<16xf32>
// CHECK:           func.call @loss_pipeline_stage0_vjp(
// The mean loss on every rank.
// CHECK:         %[[SUM:.+]] = kiln.all_reduce %{{.+}}, kind = sum, groups = {{\[\[}}0, 1]] : tensor<f32>
// CHECK:         %[[MEAN:.+]] = kiln.mul %[[SUM]], %{{.+}} : tensor<f32>
// CHECK:         %[[G:.+]] = kiln.reshape %{{.+}} : (tensor<48xf32>) -> tensor<1x48xf32>
// CHECK:         return %[[MEAN]], %[[G]]
// CHECK-NOT:     kiln.collective_permute

// 1F1B over 3 micro-batches: stage 0 runs one forward pass (P - 1 - s = 1),
// then alternates; stage 1 runs F0 B0 F1 B1 F2 B2. The first backward pass
// comes before the third forward pass.
// ONEF-LABEL: func.func @step(
// ONEF-SAME:      %{{.+}}: tensor<1x48xf32>, %{{.+}}: tensor<6x6xf32>, %{{.+}}: tensor<6x3xf32>)
// ONEF:         func.call @stage0(
// ONEF:         func.call @stage0(
// ONEF:         func.call @step_stage1_vjp(
// ONEF:         func.call @stage0(
// ONEF:         kiln.all_reduce

// KEEP-NOT:    _vjp
// KEEP:        func.func private @loss_pipeline_stage0_forward(%{{.+}}: tensor<6x8xf32>, %{{.+}}: tensor<2x6xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>)
// KEEP:          %[[T:.+]] = kiln.tanh
// KEEP:          return %[[T]], %[[T]]
// KEEP:        func.func private @loss_pipeline_stage0_backward(%{{.+}}: tensor<6x8xf32>, %{{.+}}: tensor<2x6xf32>, %{{.+}}: tensor<2x8xf32>, %{{.+}}: tensor<2x8xf32>) -> tensor<6x8xf32>
// KEEP-NOT:      kiln.tanh
// KEEP:          return
// KEEP:        func.func private @loss_pipeline_stage1_forward(%{{.+}}: tensor<8x3xf32>, %{{.+}}: tensor<2x8xf32>, %{{.+}}: tensor<2x3xf32>) -> (tensor<f32>, tensor<2x3xf32>)
// KEEP:          %[[D:.+]] = kiln.sub
// KEEP:          %[[L:.+]] = kiln.reduce_mean
// KEEP:          return %[[L]], %[[D]]
// KEEP:        func.func private @loss_pipeline_stage1_backward(%{{.+}}: tensor<8x3xf32>, %{{.+}}: tensor<2x8xf32>, %{{.+}}: tensor<2x3xf32>, %{{.+}}: tensor<2x3xf32>, %{{.+}}: tensor<f32>) -> (tensor<8x3xf32>, tensor<2x8xf32>)
// KEEP-NOT:      kiln.reduce_mean
// KEEP:          return
// The forward pass's cond returns the kept value (zeros on other ranks),
// and the backward pass of the same micro-batch reads it.
// KEEP-LABEL:  func.func @loss_pipeline(
// KEEP:          %[[F:.+]]:2 = kiln.cond
// KEEP:            func.call @loss_pipeline_stage0_forward(
// KEEP:          } else {
// KEEP:            kiln.constant dense<0.000000e+00> : tensor<2x8xf32>
// KEEP:          kiln.cond %{{.+}}, ({{.*}}%[[F]]#1,
// KEEP:            func.call @loss_pipeline_stage0_backward(

func.func private @stage0(%w: tensor<6x8xf32>, %x: tensor<2x6xf32>) -> tensor<2x8xf32> {
  %h = kiln.matmul %x, %w : tensor<2x6xf32>, tensor<6x8xf32>
  %a = kiln.tanh %h : tensor<2x8xf32>
  return %a : tensor<2x8xf32>
}
func.func private @stage1(%w: tensor<8x3xf32>, %h: tensor<2x8xf32>, %y: tensor<2x3xf32>) -> tensor<f32> {
  %z = kiln.matmul %h, %w : tensor<2x8xf32>, tensor<8x3xf32>
  %d = kiln.sub %z, %y : tensor<2x3xf32>
  %s = kiln.mul %d, %d : tensor<2x3xf32>
  %l = kiln.reduce_mean %s, dims = [0, 1] : tensor<2x3xf32>
  return %l : tensor<f32>
}
func.func @loss(%w0: tensor<6x8xf32>, %w1: tensor<8x3xf32>, %x: tensor<2x6xf32>, %y: tensor<2x3xf32>) -> tensor<f32> {
  %h = func.call @stage0(%w0, %x) : (tensor<6x8xf32>, tensor<2x6xf32>) -> tensor<2x8xf32>
  %l = func.call @stage1(%w1, %h, %y) : (tensor<8x3xf32>, tensor<2x8xf32>, tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
// The same network written as one block (stages=2 cuts it).
func.func @flat(%w0: tensor<6x8xf32>, %w1: tensor<8x3xf32>, %x: tensor<2x6xf32>, %y: tensor<2x3xf32>) -> tensor<f32> {
  %h = kiln.matmul %x, %w0 : tensor<2x6xf32>, tensor<6x8xf32>
  %a = kiln.tanh %h : tensor<2x8xf32>
  %z = kiln.matmul %a, %w1 : tensor<2x8xf32>, tensor<8x3xf32>
  %d = kiln.sub %z, %y : tensor<2x3xf32>
  %s = kiln.mul %d, %d : tensor<2x3xf32>
  %l = kiln.reduce_mean %s, dims = [0, 1] : tensor<2x3xf32>
  return %l : tensor<f32>
}
// Tensor-parallel stages (tp=2, 2 stages: ranks {0, 1} run stage 0, {2, 3}
// stage 1): the annotated weights reach the stages' functions as the
// rank's blocks, each stage's products all-reduce (and the head's input
// gradient is gathered) within {0, 1} and {2, 3}, block t of stage 0 sends
// piece t (rank % 2) of the 16-float activation to block t of stage 1, whose
// pair gathers the pieces in its forward action and keeps the whole for its
// backward action, the gradient comes back in pieces gathered by stage 0's
// backward action, the stage is rank / 2, and the loss, whole on both of the
// last stage's ranks, is divided by M T = 4.
// RUN: kiln-opt %s --kiln-pipeline="function=tp_loss microbatches=2 batch-args=4,5 tp=2" | FileCheck %s --check-prefix=TP
// TP-LABEL: func.func private @tp_loss_pipeline_stage0_primal(%{{.+}}: tensor<6x4xf32>, %{{.+}}: tensor<4x8xf32>, %{{.+}}: tensor<8xf32>, %{{.+}}: tensor<2x6xf32>) -> tensor<2x8xf32>
// TP:          kiln.all_reduce %{{.+}}, kind = sum, groups = {{\[\[}}0, 1], [2, 3]] : tensor<2x8xf32>
// TP-LABEL: func.func private @tp_loss_pipeline_stage0_vjp(
// TP-SAME:     -> (tensor<2x8xf32>, tensor<6x4xf32>, tensor<4x8xf32>, tensor<8xf32>)
// TP-LABEL: func.func private @tp_loss_pipeline_stage1_vjp(%{{.+}}: tensor<4x3xf32>,
// TP:          kiln.all_reduce %{{.+}}, kind = sum, groups = {{\[\[}}0, 1], [2, 3]] : tensor<2x3xf32>
// TP:          kiln.all_gather %{{.+}}, dim = 1, groups = {{\[\[}}0, 1], [2, 3]] : (tensor<2x4xf32>) -> tensor<2x8xf32>
// TP-LABEL: func.func @tp_loss_pipeline(%{{.+}}: tensor<1x64xf32>, %{{.+}}: tensor<4x6xf32>, %{{.+}}: tensor<4x3xf32>)
// TP:          %[[RANK:.+]] = kiln.rank : tensor<i64>
// TP:          %[[STAGE:.+]] = kiln.div %[[RANK]], %{{.+}} : tensor<i64>
// TP:          kiln.compare eq, %[[STAGE]], %{{.+}} : tensor<i64>
// TP:          func.call @tp_loss_pipeline_stage0_primal(
// TP:          %[[R:.+]] = kiln.rank : tensor<i64>
// TP:          %[[BLOCK:.+]] = kiln.rem %[[R]], %{{.+}} : tensor<i64>
// TP:          %[[START:.+]] = kiln.mul %[[BLOCK]], %{{.+}} : tensor<i64>
// TP:          kiln.dynamic_slice %{{.+}}[%[[START]]], size = 8 : tensor<16xf32>
// TP:          %[[SENT:.+]] = kiln.collective_permute %{{.+}}, pairs = [0, 2, 1, 3] : tensor<8xf32>
// TP:          %[[KEPT:[0-9]+]]:2 = kiln.cond %{{.+}}, (%{{.+}}, %[[SENT]], %{{.+}}) : tensor<i1>, (tensor<64xf32>, tensor<8xf32>, tensor<2x3xf32>, tensor<f32>) -> (tensor<f32>, tensor<16xf32>)
// TP:          kiln.all_gather %{{.+}}, dim = 0, groups = {{\[\[}}0, 1], [2, 3]] : (tensor<8xf32>) -> tensor<16xf32>
// TP:          func.call @tp_loss_pipeline_stage1_primal(
// TP:          kiln.cond %{{.+}}, (%{{.+}}, %[[KEPT]]#1, %{{.+}})
// TP-NOT:      kiln.all_gather
// TP:          func.call @tp_loss_pipeline_stage1_vjp(
// TP:          kiln.dynamic_slice %{{.+}}[%{{.+}}], size = 8 : tensor<16xf32>
// TP:          %[[BACK:.+]] = kiln.collective_permute %{{.+}}, pairs = [2, 0, 3, 1] : tensor<8xf32>
// TP:          kiln.cond %{{.+}}, (%{{.+}}, %{{.+}}, %[[BACK]], %{{.+}})
// TP:          kiln.all_gather %{{.+}}, dim = 0, groups = {{\[\[}}0, 1], [2, 3]] : (tensor<8xf32>) -> tensor<16xf32>
// TP:          func.call @tp_loss_pipeline_stage0_vjp(
// TP:          %[[SUM:.+]] = kiln.all_reduce %{{.+}}, kind = sum, groups = {{\[\[}}0, 1, 2, 3]] : tensor<f32>
// TP:          %[[QUARTER:.+]] = kiln.constant dense<2.500000e-01> : tensor<f32>
// TP:          kiln.mul %[[SUM]], %[[QUARTER]] : tensor<f32>
func.func private @tp_stage0(%w0: tensor<6x8xf32>, %w1: tensor<8x8xf32>, %b1: tensor<8xf32>,
                             %x: tensor<2x6xf32>) -> tensor<2x8xf32> {
  %h = kiln.matmul %x, %w0 : tensor<2x6xf32>, tensor<6x8xf32>
  %a = kiln.tanh %h : tensor<2x8xf32>
  %h1 = kiln.matmul %a, %w1 : tensor<2x8xf32>, tensor<8x8xf32>
  %bb = kiln.broadcast_in_dim %b1, dims = [1] : (tensor<8xf32>) -> tensor<2x8xf32>
  %s = kiln.add %h1, %bb : tensor<2x8xf32>
  return %s : tensor<2x8xf32>
}
func.func private @tp_stage1(%w: tensor<8x3xf32>, %h: tensor<2x8xf32>, %y: tensor<2x3xf32>) -> tensor<f32> {
  %z = kiln.matmul %h, %w : tensor<2x8xf32>, tensor<8x3xf32>
  %d = kiln.sub %z, %y : tensor<2x3xf32>
  %s = kiln.mul %d, %d : tensor<2x3xf32>
  %l = kiln.reduce_mean %s, dims = [0, 1] : tensor<2x3xf32>
  return %l : tensor<f32>
}
func.func @tp_loss(%w0: tensor<6x8xf32> {kiln.sharding = ["", "tp"]},
                   %w1: tensor<8x8xf32> {kiln.sharding = ["tp", ""]},
                   %b1: tensor<8xf32>,
                   %w2: tensor<8x3xf32> {kiln.sharding = ["tp", ""]},
                   %x: tensor<2x6xf32>, %y: tensor<2x3xf32>) -> tensor<f32> {
  %h = func.call @tp_stage0(%w0, %w1, %b1, %x) : (tensor<6x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<2x6xf32>) -> tensor<2x8xf32>
  %l = func.call @tp_stage1(%w2, %h, %y) : (tensor<8x3xf32>, tensor<2x8xf32>, tensor<2x3xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
