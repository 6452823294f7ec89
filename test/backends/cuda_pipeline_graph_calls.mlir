// The CUDA pipeline hands a function whose host code only queues device
// work to the runtime as a CUDA graph (kiln-cuda-graph-calls): its entry
// asks kiln_cuda_graph_call_begin first and returns when the runtime
// launched a graph of an earlier call, and otherwise queues the call's
// work (its constant read in place where the runtime keeps it on the
// device, kiln-cuda-resident-constants, the product, the kernel) and calls
// kiln_cuda_graph_call_end.
// A function with a kiln.while is captured whole too, its loop in the
// graph form (kiln-cuda-graph-loops) whose WHILE node the runtime puts
// into the call's graph. A dynamic slice's index is read by the kernel
// that copies the rows (kiln-cuda-device-index-reads), so its function is
// captured too, also where a product reads the rows: a kernel copies them
// for the library first (kiln-cuda-library-matmul). --no-cuda-graphs turns
// graphs off; constants are still read where the runtime keeps them.
// REQUIRES: cuda-backend
// RUN: kiln-compile %s --target=cuda --emit=llvm | FileCheck %s
// RUN: kiln-compile %s --target=cuda --no-cuda-graphs --emit=llvm | FileCheck %s --check-prefix=OFF
// RUN: kiln-compile %s --target=cuda -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s --check-prefix=LIST

// CHECK-DAG:   @kiln_gpu_fn_kiln_cuda_graph_call_begin = global ptr null
// CHECK-DAG:   @kiln_gpu_fn_kiln_cuda_graph_call_end = global ptr null
// CHECK-DAG:   @kiln_gpu_fn_kiln_cuda_resident_constant = global ptr null
// CHECK-LABEL: define void @kiln_entry_dense(
// CHECK:         %[[B:.+]] = tail call i32 @kiln_cuda_graph_call_begin()
// CHECK:         icmp eq i32 %[[B]], 0
// CHECK:         call ptr @kiln_cuda_resident_constant(ptr nonnull @{{.+}}, i64 128)
// CHECK:         call void @kiln_cuda_matmul(
// CHECK:         call void @mgpuLaunchKernel(
// CHECK-NOT:     @mgpuStreamSynchronize
// CHECK:         call void @kiln_cuda_graph_call_end()
// CHECK-LABEL: define void @kiln_entry_countdown(
// CHECK:         call i32 @kiln_cuda_graph_call_begin()
// CHECK:         call void @kiln_cuda_graph_call_end()
// A loop inside a loop: the inner loop's graph form inside the outer's,
// both inside the call's capture (the inner host loop, laid out after the
// inner graph form, waits; it runs only where the runtime has no graphs).
// CHECK-LABEL: define internal {{.*}}@kiln_impl_nested(
// CHECK:         %[[OUTER:.+]] = call ptr @kiln_cuda_graph_while_begin()
// CHECK:         call void @kiln_cuda_graph_while_test(ptr %[[OUTER]],
// CHECK-NOT:     @mgpuStreamSynchronize
// CHECK:         %[[INNER:.+]] = call ptr @kiln_cuda_graph_while_begin()
// CHECK:         call void @kiln_cuda_graph_while_test(ptr %[[INNER]],
// CHECK-NOT:     @mgpuStreamSynchronize
// CHECK:         call void @kiln_cuda_graph_while_end_iteration(ptr %[[INNER]],
// CHECK:         call void @kiln_cuda_graph_while_end_iteration(ptr %[[OUTER]],
// CHECK-LABEL: define void @kiln_entry_nested(
// CHECK:         call i32 @kiln_cuda_graph_call_begin()
// CHECK:         call void @kiln_cuda_graph_call_end()
// A cond inside a loop: its graph form (kiln-cuda-graph-conds runs first)
// inside the loop's, the cond's IF nodes in the loop's iteration.
// CHECK-LABEL: define internal {{.*}}@kiln_impl_branchy(
// CHECK:         %[[LOOP:.+]] = call ptr @kiln_cuda_graph_while_begin()
// CHECK:         call void @kiln_cuda_graph_while_test(ptr %[[LOOP]],
// CHECK-NOT:     @mgpuStreamSynchronize
// CHECK:         call i32 @kiln_cuda_graph_conds()
// CHECK:         %[[IF:.+]] = call ptr @kiln_cuda_graph_if_begin(
// CHECK:         call void @kiln_cuda_graph_if_else(ptr %[[IF]])
// CHECK:         call void @kiln_cuda_graph_if_end(ptr %[[IF]])
// CHECK:         call void @kiln_cuda_graph_while_end_iteration(ptr %[[LOOP]],
// CHECK-LABEL: define void @kiln_entry_branchy(
// CHECK:         call i32 @kiln_cuda_graph_call_begin()
// CHECK:         call void @kiln_cuda_graph_call_end()
// A loop inside a cond's branch: the loop's graph form inside the
// branch's IF node (kiln-cuda-graph-conds runs again after the loops).
// CHECK-LABEL: define internal {{.*}}@kiln_impl_grow(
// CHECK:         call i32 @kiln_cuda_graph_conds()
// CHECK:         %[[IF:.+]] = call ptr @kiln_cuda_graph_if_begin(
// CHECK:         %[[LOOP:.+]] = call ptr @kiln_cuda_graph_while_begin()
// CHECK:         call void @kiln_cuda_graph_while_end_iteration(ptr %[[LOOP]],
// CHECK:         call void @kiln_cuda_graph_if_else(ptr %[[IF]])
// CHECK:         call void @kiln_cuda_graph_if_end(ptr %[[IF]])
// CHECK-LABEL: define void @kiln_entry_grow(
// CHECK:         call i32 @kiln_cuda_graph_call_begin()
// CHECK:         call void @kiln_cuda_graph_call_end()
// A cond whose second branch yields its input unchanged: that branch
// copies it into a buffer of its own (kiln-cuda-fresh-cond-results), so
// freeing the result does not read the predicate on the host, and the
// cond is an IF node of the call's graph.
// CHECK-LABEL: define internal {{.*}}@kiln_impl_keep(
// CHECK:         call i32 @kiln_cuda_graph_conds()
// CHECK:         %[[IF:.+]] = call ptr @kiln_cuda_graph_if_begin(
// CHECK:         call void @kiln_cuda_graph_if_else(ptr %[[IF]])
// CHECK:         call void @kiln_cuda_graph_if_end(ptr %[[IF]])
// CHECK-LABEL: define void @kiln_entry_keep(
// CHECK:         call i32 @kiln_cuda_graph_call_begin()
// CHECK:         call void @kiln_cuda_graph_call_end()
// CHECK-LABEL: define void @kiln_entry_rows(
// CHECK:         call i32 @kiln_cuda_graph_call_begin()
// CHECK:         call void @kiln_cuda_graph_call_end()
// A loop that reads and updates row i of a table each iteration (a cache
// filled step by step): its kernels read i, so the loop runs as a graph.
// CHECK-LABEL: define internal {{.*}}@kiln_impl_fill(
// CHECK:         %[[LOOP:.+]] = call ptr @kiln_cuda_graph_while_begin()
// CHECK:         call void @kiln_cuda_graph_while_end_iteration(ptr %[[LOOP]],
// CHECK-LABEL: define void @kiln_entry_fill(
// CHECK:         call i32 @kiln_cuda_graph_call_begin()
// CHECK:         call void @kiln_cuda_graph_call_end()
// An if / elif / else chain in a loop: the elif's cond gets its graph form,
// then the outer cond's (which holds it), then the loop's (which holds
// that), kiln-cuda-graph-forms running the passes until nothing changes.
// CHECK-LABEL: define internal {{.*}}@kiln_impl_elif(
// CHECK:         %[[LOOP:.+]] = call ptr @kiln_cuda_graph_while_begin()
// CHECK:         %[[IF:.+]] = call ptr @kiln_cuda_graph_if_begin(
// CHECK:         call void @kiln_cuda_graph_if_else(ptr %[[IF]])
// CHECK:         %[[ELIF:.+]] = call ptr @kiln_cuda_graph_if_begin(
// CHECK:         call void @kiln_cuda_graph_if_end(ptr %[[ELIF]])
// CHECK:         call void @kiln_cuda_graph_if_end(ptr %[[IF]])
// CHECK:         call void @kiln_cuda_graph_while_end_iteration(ptr %[[LOOP]],
// CHECK-LABEL: define void @kiln_entry_elif(
// CHECK:         call i32 @kiln_cuda_graph_call_begin()
// CHECK:         call void @kiln_cuda_graph_call_end()
// The rows a product reads at an index of device memory: a kernel copies
// them (reading the index itself), the library reads the copy, and the
// call is captured whole.
// CHECK-LABEL: define void @kiln_entry_product_rows(
// CHECK:         call i32 @kiln_cuda_graph_call_begin()
// CHECK-NOT:     mgpuStreamSynchronize
// CHECK:         call void @mgpuLaunchKernel(
// CHECK-NOT:     mgpuStreamSynchronize
// CHECK:         call void @kiln_cuda_matmul(
// CHECK:         call void @kiln_cuda_graph_call_end()
// A loop whose carried buffers are copies that each iteration frees: the
// ownership the loop carries for them is false on entry and after every
// iteration, which canonicalizing after the deallocation simplification
// folds, so no generic deallocation helper call is left in the loop's
// test to keep it (and the call) off a graph.
// CHECK-LABEL: define internal {{.*}}@kiln_impl_zero_trip(
// CHECK-NOT:     @dealloc_helper
// CHECK:         %[[LOOP:.+]] = call ptr @kiln_cuda_graph_while_begin()
// CHECK-NOT:     @dealloc_helper
// CHECK:         call void @kiln_cuda_graph_while_end_iteration(ptr %[[LOOP]],
// CHECK-LABEL: define void @kiln_entry_zero_trip(
// CHECK:         call i32 @kiln_cuda_graph_call_begin()
// CHECK:         call void @kiln_cuda_graph_call_end()
// A step kept only where the gradient is finite (a select of whole
// tensors by a rank-0 predicate): the kernel that writes the result reads
// the predicate and picks, so the host waits for nothing and the call is
// captured.
// CHECK-LABEL: define void @kiln_entry_finite_step(
// CHECK:         call i32 @kiln_cuda_graph_call_begin()
// CHECK-NOT:     @mgpuStreamSynchronize
// CHECK-NOT:     @mgpuMemcpy
// CHECK:         call void @kiln_cuda_graph_call_end()
// A loop inside a cond inside a loop: the inner loop gets a graph form of
// its own, the cond then one that holds it (its WHILE node inside the
// IF node), and the outer loop one that holds the cond; the call is
// captured whole.
// CHECK-LABEL: define internal {{.*}}@kiln_impl_loop_cond_loop(
// CHECK:         %[[OUTER:.+]] = call ptr @kiln_cuda_graph_while_begin()
// CHECK:         call void @kiln_cuda_graph_while_test(ptr %[[OUTER]],
// CHECK:         %[[IF:.+]] = call ptr @kiln_cuda_graph_if_begin(
// CHECK:         %[[INNER:.+]] = call ptr @kiln_cuda_graph_while_begin()
// CHECK:         call void @kiln_cuda_graph_while_end_iteration(ptr %[[INNER]],
// CHECK:         call void @kiln_cuda_graph_if_else(ptr %[[IF]])
// CHECK:         call void @kiln_cuda_graph_if_end(ptr %[[IF]])
// CHECK:         call void @kiln_cuda_graph_while_end_iteration(ptr %[[OUTER]],
// CHECK-LABEL: define void @kiln_entry_loop_cond_loop(
// CHECK:         call i32 @kiln_cuda_graph_call_begin()
// CHECK:         call void @kiln_cuda_graph_call_end()
// A loop whose body holds a kiln.for of three trips: the for loop stays a
// host loop in the iteration's code, and the capture of the iteration runs
// it, so each trip's kernel is a node of the iteration; no wait for the
// stream in between, and the call is captured whole.
// CHECK-LABEL: define internal {{.*}}@kiln_impl_while_with_for(
// CHECK:         %[[LOOP:.+]] = call ptr @kiln_cuda_graph_while_begin()
// CHECK:         call void @kiln_cuda_graph_while_test(ptr %[[LOOP]],
// CHECK-NOT:     @mgpuStreamSynchronize
// CHECK:         call void @kiln_cuda_graph_while_end_iteration(ptr %[[LOOP]],
// CHECK-LABEL: define void @kiln_entry_while_with_for(
// CHECK:         call i32 @kiln_cuda_graph_call_begin()
// CHECK:         call void @kiln_cuda_graph_call_end()
// A kiln.for inside a cond inside a loop: the cond's branch yields the for
// loop's last buffer and an ownership flag, which the cond's graph form
// takes (its result a fresh home, the flag true); the loop's graph holds
// the cond's IF nodes, and the call is captured whole.
// CHECK-LABEL: define internal {{.*}}@kiln_impl_while_cond_for(
// CHECK:         %[[LOOP:.+]] = call ptr @kiln_cuda_graph_while_begin()
// CHECK:         %[[IF:.+]] = call ptr @kiln_cuda_graph_if_begin(
// CHECK:         call void @kiln_cuda_graph_if_end(ptr %[[IF]])
// CHECK:         call void @kiln_cuda_graph_while_end_iteration(ptr %[[LOOP]],
// CHECK-LABEL: define void @kiln_entry_while_cond_for(
// CHECK:         call i32 @kiln_cuda_graph_call_begin()
// CHECK:         call void @kiln_cuda_graph_call_end()

// A kiln.while inside a kiln.for: the while loop has no while loop around
// it, so it takes its graph form, and the capture of the call runs the for
// loop's trips, each adding a WHILE node to the call's graph.
// CHECK-LABEL: define internal {{.*}}@kiln_impl_for_with_while(
// CHECK:         %[[LOOP:.+]] = call ptr @kiln_cuda_graph_while_begin()
// CHECK:         call void @kiln_cuda_graph_while_end_iteration(ptr %[[LOOP]],
// CHECK-LABEL: define void @kiln_entry_for_with_while(
// CHECK:         call i32 @kiln_cuda_graph_call_begin()
// CHECK:         call void @kiln_cuda_graph_call_end()
// A kiln.cond inside a kiln.for inside a kiln.while: the for loop carries
// the cond's result (a layout of dynamic strides, dense in the cond's graph
// form) and a counter; what it started from and what it ended with are
// freed apart (kiln-split-counted-deallocs), with no call of the generic
// deallocation helper, so the loop takes its graph form, holding the IF
// nodes of the for loop's trips.
// CHECK-LABEL: define internal {{.*}}@kiln_impl_while_for_cond(
// CHECK:         %[[LOOP:.+]] = call ptr @kiln_cuda_graph_while_begin()
// CHECK:         %[[IF:.+]] = call ptr @kiln_cuda_graph_if_begin(
// CHECK:         call void @kiln_cuda_graph_if_end(ptr %[[IF]])
// CHECK:         call void @kiln_cuda_graph_while_end_iteration(ptr %[[LOOP]],
// CHECK-LABEL: define void @kiln_entry_while_for_cond(
// CHECK:         call i32 @kiln_cuda_graph_call_begin()
// CHECK:         call void @kiln_cuda_graph_call_end()
// A kiln.while inside a kiln.for inside a kiln.cond: the branch yields the
// for loop's result, the while loop's graph-form result of its last trip,
// which the cond's graph form copies into its home; the IF node holds the
// trips' WHILE nodes.
// CHECK-LABEL: define internal {{.*}}@kiln_impl_cond_for_while(
// CHECK:         %[[IF:.+]] = call ptr @kiln_cuda_graph_if_begin(
// CHECK:         %[[LOOP:.+]] = call ptr @kiln_cuda_graph_while_begin()
// CHECK:         call void @kiln_cuda_graph_while_end_iteration(ptr %[[LOOP]],
// CHECK:         call void @kiln_cuda_graph_if_end(ptr %[[IF]])
// CHECK-LABEL: define void @kiln_entry_cond_for_while(
// CHECK:         call i32 @kiln_cuda_graph_call_begin()
// CHECK:         call void @kiln_cuda_graph_call_end()
// A kiln.for carrying two buffers inside a cond whose branch yields one:
// the branch frees the other, a buffer of the for loop's last trip, which
// the cond's graph form takes as a buffer of its own.
// CHECK-LABEL: define internal {{.*}}@kiln_impl_cond_for_pair(
// CHECK:         %[[IF:.+]] = call ptr @kiln_cuda_graph_if_begin(
// CHECK:         call void @kiln_cuda_graph_if_end(ptr %[[IF]])
// CHECK-LABEL: define void @kiln_entry_cond_for_pair(
// CHECK:         call i32 @kiln_cuda_graph_call_begin()
// CHECK:         call void @kiln_cuda_graph_call_end()
// A select and a cond on one predicate: the select's kernel reads the
// predicate, the cond has the host's read to itself and takes its graph
// form, and the call is captured whole.
// CHECK-LABEL: define internal {{.*}}@kiln_impl_select_and_cond(
// CHECK:         %[[IF:.+]] = call ptr @kiln_cuda_graph_if_begin(
// CHECK:         call void @kiln_cuda_graph_if_end(ptr %[[IF]])
// CHECK-LABEL: define void @kiln_entry_select_and_cond(
// CHECK:         call i32 @kiln_cuda_graph_call_begin()
// CHECK:         call void @kiln_cuda_graph_call_end()
// CHECK-NOT:     @dealloc_helper
// A select on one predicate and a cond on another written into the same
// byte before the pick is read again: the pick's kernels read a copy of
// the first predicate made on the device, and the call is captured whole.
// CHECK-LABEL: define internal {{.*}}@kiln_impl_select_reused_byte(
// CHECK:         %[[IF:.+]] = call ptr @kiln_cuda_graph_if_begin(
// CHECK:         call void @kiln_cuda_graph_if_end(ptr %[[IF]])
// CHECK-LABEL: define void @kiln_entry_select_reused_byte(
// CHECK:         call i32 @kiln_cuda_graph_call_begin()
// CHECK:         call void @kiln_cuda_graph_call_end()
// A recurrent step over a sequence in a kiln.while whose counter is
// carried: each iteration's product reads the step's rows at the counter,
// which a kernel copies, so the loop takes its graph form.
// CHECK-LABEL: define internal {{.*}}@kiln_impl_rnn_while(
// CHECK:         %[[LOOP:.+]] = call ptr @kiln_cuda_graph_while_begin()
// CHECK:         call void @kiln_cuda_graph_while_end_iteration(ptr %[[LOOP]],
// CHECK-LABEL: define void @kiln_entry_rnn_while(
// CHECK:         call i32 @kiln_cuda_graph_call_begin()
// CHECK:         call void @kiln_cuda_graph_call_end()
// A cond whose branch yields a reshape of the buffer it computes: the
// branch writes its home through a view of the buffer's shape.
// CHECK-LABEL: define internal {{.*}}@kiln_impl_cond_reshape(
// CHECK:         %[[IF:.+]] = call ptr @kiln_cuda_graph_if_begin(
// CHECK:         call void @kiln_cuda_graph_if_end(ptr %[[IF]])
// CHECK-LABEL: define void @kiln_entry_cond_reshape(
// CHECK:         call i32 @kiln_cuda_graph_call_begin()
// CHECK:         call void @kiln_cuda_graph_call_end()
// A cond whose branch yields one buffer for both results (whose frees
// bufferization decides by a run-time alias check): the second result's
// home takes a copy.
// CHECK-LABEL: define internal {{.*}}@kiln_impl_cond_same_twice(
// CHECK:         %[[IF:.+]] = call ptr @kiln_cuda_graph_if_begin(
// CHECK:         call void @kiln_cuda_graph_if_end(ptr %[[IF]])
// CHECK-LABEL: define void @kiln_entry_cond_same_twice(
// CHECK:         call i32 @kiln_cuda_graph_call_begin()
// CHECK:         call void @kiln_cuda_graph_call_end()
// Loops whose inits are a strided slice, a dynamic slice (in a counted
// loop) and a pick: each init is copied into a buffer of its own first
// (kiln-copy-sliced-call-operands' loop-inits), whose kernel reads the
// index or the predicate.
// CHECK-LABEL: define internal {{.*}}@kiln_impl_while_from_slice(
// CHECK:         %[[LOOP:.+]] = call ptr @kiln_cuda_graph_while_begin()
// CHECK-LABEL: define void @kiln_entry_while_from_slice(
// CHECK:         call i32 @kiln_cuda_graph_call_begin()
// CHECK-LABEL: define void @kiln_entry_for_from_dynamic_slice(
// CHECK:         call i32 @kiln_cuda_graph_call_begin()
// CHECK-LABEL: define internal {{.*}}@kiln_impl_while_from_pick(
// CHECK:         %[[LOOP:.+]] = call ptr @kiln_cuda_graph_while_begin()
// CHECK-LABEL: define void @kiln_entry_while_from_pick(
// CHECK:         call i32 @kiln_cuda_graph_call_begin()
// Two conds on one predicate read (a cond and its gradient's cond): the
// second reads a device copy of the byte; and a cond per trip of a
// kiln.for on a predicate at the trip's index (a gradient's backward loop
// over stacked predicates), which a one-thread kernel loads: both
// captured whole.
// CHECK-LABEL: define internal {{.*}}@kiln_impl_cond_twice(
// CHECK:         call ptr @kiln_cuda_graph_if_begin(
// CHECK:         call ptr @kiln_cuda_graph_if_begin(
// CHECK-LABEL: define void @kiln_entry_cond_twice(
// CHECK:         call i32 @kiln_cuda_graph_call_begin()
// CHECK-LABEL: define internal {{.*}}@kiln_impl_cond_on_stacked(
// CHECK:         call ptr @kiln_cuda_graph_if_begin(
// CHECK-LABEL: define void @kiln_entry_cond_on_stacked(
// CHECK:         call i32 @kiln_cuda_graph_call_begin()
// The gradient of a cond whose branch holds a kiln.for (the derived
// function of test/e2e/grad_loops.mlir): its branch frees the loop's
// buffers through bufferization's run-time alias check, which the capture
// decides.
// CHECK-LABEL: define void @kiln_entry_cond_with_loop_grad(
// CHECK:         call i32 @kiln_cuda_graph_call_begin()

// OFF-NOT:     kiln_cuda_graph_call
// OFF:         call ptr @kiln_cuda_resident_constant(
// OFF-NOT:     kiln_cuda_graph_call

// LIST: dense(arg0: f32[8,16], arg1: f32[16,4]) -> (out0: f32[8,4])
// LIST: countdown(arg0: f32[4], arg1: i32[]) -> (out0: f32[4])
// LIST: nested(arg0: f32[4], arg1: i32[]) -> (out0: f32[4])
// LIST: branchy(arg0: f32[3], arg1: i32[]) -> (out0: f32[3])
// LIST: grow(arg0: f32[4], arg1: i32[], arg2: f32[]) -> (out0: f32[4])
// LIST: keep(arg0: f32[4], arg1: f32[]) -> (out0: f32[4])
// LIST: rows(arg0: f32[8,4], arg1: i64[]) -> (out0: f32[3,4])
// LIST: fill(arg0: f32[64,8], arg1: f32[1,8], arg2: i64[]) -> (out0: f32[64,8])
// LIST: elif(arg0: f32[4], arg1: i32[]) -> (out0: f32[4])
// LIST: product_rows(arg0: f32[8,4], arg1: i64[], arg2: f32[4,16]) -> (out0: f32[3,16])
// LIST: zero_trip(arg0: f32[1000], arg1: f32[1000], arg2: i32[], arg3: i64[3]) -> (out0: f32[1000], out1: i64[3], out2: i32[], out3: i64[3])
// LIST: finite_step(arg0: f32[64], arg1: f32[64]) -> (out0: f32[64])
// LIST: loop_cond_loop(arg0: f32[4], arg1: i32[]) -> (out0: f32[4])
// LIST: while_with_for(arg0: f32[64], arg1: i32[]) -> (out0: f32[64], out1: i32[])
// LIST: while_cond_for(arg0: f32[64], arg1: i32[]) -> (out0: f32[64])
// LIST: for_with_while(arg0: f32[64], arg1: i32[]) -> (out0: f32[64])
// LIST: while_for_cond(arg0: f32[64], arg1: i32[]) -> (out0: f32[64], out1: i32[])
// LIST: cond_for_while(arg0: f32[64], arg1: i32[]) -> (out0: f32[64])
// LIST: cond_for_pair(arg0: f32[8], arg1: i32[]) -> (out0: f32[8])
// LIST: select_and_cond(arg0: f32[64], arg1: f32[64], arg2: i32[]) -> (out0: f32[64], out1: f32[64])
// LIST: select_reused_byte(arg0: f32[64], arg1: f32[64], arg2: i32[]) -> (out0: f32[64], out1: f32[64])
// LIST: rnn_while(arg0: f32[8,4,16], arg1: f32[16,16], arg2: f32[4,16], arg3: i64[]) -> (out0: f32[4,16])
// LIST: cond_reshape(arg0: f32[4,16], arg1: f32[64], arg2: i32[]) -> (out0: f32[64])
// LIST: cond_same_twice(arg0: f32[16], arg1: i32[]) -> (out0: f32[16], out1: f32[16])
// LIST: while_from_slice(arg0: f32[4,16], arg1: i32[]) -> (out0: f32[4,8])
// LIST: for_from_dynamic_slice(arg0: f32[8,4], arg1: i64[]) -> (out0: f32[3,4])
// LIST: while_from_pick(arg0: f32[16], arg1: f32[16], arg2: i32[]) -> (out0: f32[16])
// LIST: cond_twice(arg0: f32[16], arg1: i32[]) -> (out0: f32[16])
// LIST: cond_on_stacked(arg0: i1[4], arg1: f32[16]) -> (out0: f32[16])
// LIST: cond_with_loop_grad(arg0: f32[], arg1: f32[]) -> (out0: f32[], out1: f32[])
func.func @dense(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %bias = kiln.constant dense<[0.5, -1.0, 2.0, 0.25]> : tensor<4xf32>
  %m = kiln.matmul %x, %w : tensor<8x16xf32>, tensor<16x4xf32>
  %bb = kiln.broadcast_in_dim %bias, dims = [1] : (tensor<4xf32>) -> tensor<8x4xf32>
  %y = kiln.add %m, %bb : tensor<8x4xf32>
  %r = kiln.relu %y : tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

func.func @countdown(%x: tensor<4xf32>, %n: tensor<i32>) -> tensor<4xf32> {
  %r:2 = kiln.while (%x, %n) : (tensor<4xf32>, tensor<i32>) cond {
  ^bb0(%v: tensor<4xf32>, %i: tensor<i32>):
    %zero = kiln.constant dense<0> : tensor<i32>
    %more = kiln.compare gt, %i, %zero : tensor<i32>
    kiln.yield %more : tensor<i1>
  } do {
  ^bb0(%v: tensor<4xf32>, %i: tensor<i32>):
    %half = kiln.constant dense<0.5> : tensor<4xf32>
    %w = kiln.mul %v, %half : tensor<4xf32>
    %one = kiln.constant dense<1> : tensor<i32>
    %j = kiln.sub %i, %one : tensor<i32>
    kiln.yield %w, %j : tensor<4xf32>, tensor<i32>
  }
  return %r#0 : tensor<4xf32>
}

func.func @nested(%x: tensor<4xf32>, %n: tensor<i32>) -> tensor<4xf32> {
  %r:2 = kiln.while (%x, %n) : (tensor<4xf32>, tensor<i32>) cond {
  ^bb0(%v: tensor<4xf32>, %i: tensor<i32>):
    %zero = kiln.constant dense<0> : tensor<i32>
    %more = kiln.compare gt, %i, %zero : tensor<i32>
    kiln.yield %more : tensor<i1>
  } do {
  ^bb0(%v: tensor<4xf32>, %i: tensor<i32>):
    %s:2 = kiln.while (%v, %i) : (tensor<4xf32>, tensor<i32>) cond {
    ^bb0(%u: tensor<4xf32>, %k: tensor<i32>):
      %zero = kiln.constant dense<0> : tensor<i32>
      %more = kiln.compare gt, %k, %zero : tensor<i32>
      kiln.yield %more : tensor<i1>
    } do {
    ^bb0(%u: tensor<4xf32>, %k: tensor<i32>):
      %half = kiln.constant dense<0.5> : tensor<4xf32>
      %w = kiln.mul %u, %half : tensor<4xf32>
      %one = kiln.constant dense<1> : tensor<i32>
      %k1 = kiln.sub %k, %one : tensor<i32>
      kiln.yield %w, %k1 : tensor<4xf32>, tensor<i32>
    }
    %one = kiln.constant dense<1> : tensor<i32>
    %j = kiln.sub %i, %one : tensor<i32>
    kiln.yield %s#0, %j : tensor<4xf32>, tensor<i32>
  }
  return %r#0 : tensor<4xf32>
}

func.func @branchy(%x: tensor<3xf32>, %n: tensor<i32>) -> tensor<3xf32> {
  %r:2 = kiln.while (%x, %n) : (tensor<3xf32>, tensor<i32>) cond {
  ^bb0(%v: tensor<3xf32>, %i: tensor<i32>):
    %zero = kiln.constant dense<0> : tensor<i32>
    %more = kiln.compare gt, %i, %zero : tensor<i32>
    kiln.yield %more : tensor<i1>
  } do {
  ^bb0(%v: tensor<3xf32>, %i: tensor<i32>):
    %two = kiln.constant dense<2> : tensor<i32>
    %h = kiln.div %i, %two : tensor<i32>
    %h2 = kiln.mul %h, %two : tensor<i32>
    %even = kiln.compare eq, %h2, %i : tensor<i32>
    %w = kiln.cond %even, (%v) : tensor<i1>, (tensor<3xf32>) -> (tensor<3xf32>) {
    ^bb0(%a: tensor<3xf32>):
      %half = kiln.constant dense<0.5> : tensor<3xf32>
      %b = kiln.mul %a, %half : tensor<3xf32>
      kiln.yield %b : tensor<3xf32>
    } else {
    ^bb0(%a: tensor<3xf32>):
      %one = kiln.constant dense<1.0> : tensor<3xf32>
      %b = kiln.add %a, %one : tensor<3xf32>
      kiln.yield %b : tensor<3xf32>
    }
    %one = kiln.constant dense<1> : tensor<i32>
    %j = kiln.sub %i, %one : tensor<i32>
    kiln.yield %w, %j : tensor<3xf32>, tensor<i32>
  }
  return %r#0 : tensor<3xf32>
}

func.func @grow(%x: tensor<4xf32>, %n: tensor<i32>, %t: tensor<f32>) -> tensor<4xf32> {
  %zero = kiln.constant dense<0.0> : tensor<f32>
  %p = kiln.compare gt, %t, %zero : tensor<f32>
  %r = kiln.cond %p, (%x, %n) : tensor<i1>, (tensor<4xf32>, tensor<i32>) -> (tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>, %k: tensor<i32>):
    %w:2 = kiln.while (%a, %k) : (tensor<4xf32>, tensor<i32>) cond {
    ^bb0(%v: tensor<4xf32>, %i: tensor<i32>):
      %none = kiln.constant dense<0> : tensor<i32>
      %more = kiln.compare gt, %i, %none : tensor<i32>
      kiln.yield %more : tensor<i1>
    } do {
    ^bb0(%v: tensor<4xf32>, %i: tensor<i32>):
      %v2 = kiln.add %v, %v : tensor<4xf32>
      %one = kiln.constant dense<1> : tensor<i32>
      %j = kiln.sub %i, %one : tensor<i32>
      kiln.yield %v2, %j : tensor<4xf32>, tensor<i32>
    }
    kiln.yield %w#0 : tensor<4xf32>
  } else {
  ^bb0(%a: tensor<4xf32>, %k: tensor<i32>):
    %b = kiln.neg %a : tensor<4xf32>
    kiln.yield %b : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

func.func @keep(%x: tensor<4xf32>, %t: tensor<f32>) -> tensor<4xf32> {
  %zero = kiln.constant dense<0.0> : tensor<f32>
  %p = kiln.compare gt, %t, %zero : tensor<f32>
  %r = kiln.cond %p, (%x) : tensor<i1>, (tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    %b = kiln.add %a, %a : tensor<4xf32>
    kiln.yield %b : tensor<4xf32>
  } else {
  ^bb0(%a: tensor<4xf32>):
    kiln.yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

func.func @rows(%b: tensor<8x4xf32>, %i: tensor<i64>) -> tensor<3x4xf32> {
  %s = kiln.dynamic_slice %b[%i], size = 3 : tensor<8x4xf32>
  return %s : tensor<3x4xf32>
}

func.func @fill(%cache: tensor<64x8xf32>, %row: tensor<1x8xf32>, %n: tensor<i64>) -> tensor<64x8xf32> {
  %zero = kiln.constant dense<0> : tensor<i64>
  %w:4 = kiln.while (%cache, %zero, %n, %row) : (tensor<64x8xf32>, tensor<i64>, tensor<i64>, tensor<1x8xf32>) cond {
  ^bb0(%c: tensor<64x8xf32>, %i: tensor<i64>, %m: tensor<i64>, %r: tensor<1x8xf32>):
    %go = kiln.compare lt, %i, %m : tensor<i64>
    kiln.yield %go : tensor<i1>
  } do {
  ^bb0(%c: tensor<64x8xf32>, %i: tensor<i64>, %m: tensor<i64>, %r: tensor<1x8xf32>):
    %prev = kiln.dynamic_slice %c[%i], size = 1 : tensor<64x8xf32>
    %next = kiln.add %prev, %r : tensor<1x8xf32>
    %u = kiln.dynamic_update_slice %c[%i], %next : tensor<64x8xf32>, tensor<1x8xf32>
    %one = kiln.constant dense<1> : tensor<i64>
    %j = kiln.add %i, %one : tensor<i64>
    kiln.yield %u, %j, %m, %r : tensor<64x8xf32>, tensor<i64>, tensor<i64>, tensor<1x8xf32>
  }
  return %w#0 : tensor<64x8xf32>
}

func.func @elif(%x: tensor<4xf32>, %n: tensor<i32>) -> tensor<4xf32> {
  %w:2 = kiln.while (%x, %n) : (tensor<4xf32>, tensor<i32>) cond {
  ^bb0(%v: tensor<4xf32>, %i: tensor<i32>):
    %none = kiln.constant dense<0> : tensor<i32>
    %more = kiln.compare gt, %i, %none : tensor<i32>
    kiln.yield %more : tensor<i1>
  } do {
  ^bb0(%v: tensor<4xf32>, %i: tensor<i32>):
    %five = kiln.constant dense<5> : tensor<i32>
    %big = kiln.compare gt, %i, %five : tensor<i32>
    %b = kiln.cond %big, (%v, %i) : tensor<i1>, (tensor<4xf32>, tensor<i32>) -> (tensor<4xf32>) {
    ^bb0(%u: tensor<4xf32>, %j: tensor<i32>):
      %half = kiln.constant dense<0.5> : tensor<4xf32>
      %h = kiln.mul %u, %half : tensor<4xf32>
      kiln.yield %h : tensor<4xf32>
    } else {
    ^bb0(%u: tensor<4xf32>, %j: tensor<i32>):
      %two = kiln.constant dense<2> : tensor<i32>
      %mid = kiln.compare gt, %j, %two : tensor<i32>
      %c = kiln.cond %mid, (%u) : tensor<i1>, (tensor<4xf32>) -> (tensor<4xf32>) {
      ^bb0(%z: tensor<4xf32>):
        %e = kiln.exp %z : tensor<4xf32>
        kiln.yield %e : tensor<4xf32>
      } else {
      ^bb0(%z: tensor<4xf32>):
        %ng = kiln.neg %z : tensor<4xf32>
        kiln.yield %ng : tensor<4xf32>
      }
      kiln.yield %c : tensor<4xf32>
    }
    %one = kiln.constant dense<1> : tensor<i32>
    %i2 = kiln.sub %i, %one : tensor<i32>
    kiln.yield %b, %i2 : tensor<4xf32>, tensor<i32>
  }
  return %w#0 : tensor<4xf32>
}

func.func @product_rows(%b: tensor<8x4xf32>, %i: tensor<i64>, %w: tensor<4x16xf32>) -> tensor<3x16xf32> {
  %s = kiln.dynamic_slice %b[%i], size = 3 : tensor<8x4xf32>
  %m = kiln.matmul %s, %w : tensor<3x4xf32>, tensor<4x16xf32>
  return %m : tensor<3x16xf32>
}

func.func @zero_trip(%x: tensor<1000xf32>, %y: tensor<1000xf32>, %n: tensor<i32>, %k: tensor<3xi64>) -> (tensor<1000xf32>, tensor<3xi64>, tensor<i32>, tensor<3xi64>) {
  %f:2 = kiln.for 0 iterations (%x, %k) : (tensor<1000xf32>, tensor<3xi64>) {
  ^bb0(%i: tensor<i64>, %v: tensor<1000xf32>, %w: tensor<3xi64>):
    %nv = kiln.neg %v : tensor<1000xf32>
    %iw = kiln.broadcast_in_dim %i, dims = [] : (tensor<i64>) -> tensor<3xi64>
    %w1 = kiln.add %w, %iw : tensor<3xi64>
    kiln.yield %nv, %w1 : tensor<1000xf32>, tensor<3xi64>
  }
  %xy = kiln.add %f#0, %y : tensor<1000xf32>
  %kk = kiln.mul %f#1, %k : tensor<3xi64>
  %an = kiln.abs %n : tensor<i32>
  %w:2 = kiln.while (%an, %k) : (tensor<i32>, tensor<3xi64>) cond {
  ^bb0(%c: tensor<i32>, %v: tensor<3xi64>):
    %zero = kiln.constant dense<0> : tensor<i32>
    %go = kiln.compare lt, %c, %zero : tensor<i32>
    kiln.yield %go : tensor<i1>
  } do {
  ^bb0(%c: tensor<i32>, %v: tensor<3xi64>):
    %one = kiln.constant dense<1> : tensor<i32>
    %c1 = kiln.add %c, %one : tensor<i32>
    %nv = kiln.neg %v : tensor<3xi64>
    kiln.yield %c1, %nv : tensor<i32>, tensor<3xi64>
  }
  %seven = kiln.constant dense<7> : tensor<i32>
  %c7 = kiln.add %w#0, %seven : tensor<i32>
  %one64 = kiln.constant dense<1> : tensor<3xi64>
  %v1 = kiln.add %w#1, %one64 : tensor<3xi64>
  return %xy, %kk, %c7, %v1 : tensor<1000xf32>, tensor<3xi64>, tensor<i32>, tensor<3xi64>
}

func.func @finite_step(%w: tensor<64xf32>, %g: tensor<64xf32>) -> tensor<64xf32> {
  %s = kiln.reduce_sum %g, dims = [0] : tensor<64xf32>
  %finite = kiln.compare eq, %s, %s : tensor<f32>
  %lr = kiln.constant dense<0.1> : tensor<64xf32>
  %step = kiln.mul %g, %lr : tensor<64xf32>
  %next = kiln.sub %w, %step : tensor<64xf32>
  %r = kiln.select %finite, %next, %w : tensor<i1>, tensor<64xf32>
  return %r : tensor<64xf32>
}

func.func @loop_cond_loop(%x: tensor<4xf32>, %n: tensor<i32>) -> tensor<4xf32> {
  %w:2 = kiln.while (%x, %n) : (tensor<4xf32>, tensor<i32>) cond {
  ^bb0(%v: tensor<4xf32>, %i: tensor<i32>):
    %zero = kiln.constant dense<0> : tensor<i32>
    %go = kiln.compare gt, %i, %zero : tensor<i32>
    kiln.yield %go : tensor<i1>
  } do {
  ^bb0(%v: tensor<4xf32>, %i: tensor<i32>):
    %two = kiln.constant dense<2> : tensor<i32>
    %r = kiln.rem %i, %two : tensor<i32>
    %zero = kiln.constant dense<0> : tensor<i32>
    %even = kiln.compare eq, %r, %zero : tensor<i32>
    %b = kiln.cond %even, (%v, %i) : tensor<i1>, (tensor<4xf32>, tensor<i32>) -> (tensor<4xf32>) {
    ^bb0(%u: tensor<4xf32>, %k: tensor<i32>):
      %inner:2 = kiln.while (%u, %k) : (tensor<4xf32>, tensor<i32>) cond {
      ^bb0(%a: tensor<4xf32>, %j: tensor<i32>):
        %z = kiln.constant dense<0> : tensor<i32>
        %more = kiln.compare gt, %j, %z : tensor<i32>
        kiln.yield %more : tensor<i1>
      } do {
      ^bb0(%a: tensor<4xf32>, %j: tensor<i32>):
        %half = kiln.constant dense<0.5> : tensor<4xf32>
        %h = kiln.mul %a, %half : tensor<4xf32>
        %one = kiln.constant dense<1> : tensor<i32>
        %j1 = kiln.sub %j, %one : tensor<i32>
        kiln.yield %h, %j1 : tensor<4xf32>, tensor<i32>
      }
      kiln.yield %inner#0 : tensor<4xf32>
    } else {
    ^bb0(%u: tensor<4xf32>, %k: tensor<i32>):
      %e = kiln.exp %u : tensor<4xf32>
      kiln.yield %e : tensor<4xf32>
    }
    %one = kiln.constant dense<1> : tensor<i32>
    %i1 = kiln.sub %i, %one : tensor<i32>
    kiln.yield %b, %i1 : tensor<4xf32>, tensor<i32>
  }
  return %w#0 : tensor<4xf32>
}

func.func @while_with_for(%x: tensor<64xf32>, %n: tensor<i32>) -> (tensor<64xf32>, tensor<i32>) {
  %w:2 = kiln.while (%x, %n) : (tensor<64xf32>, tensor<i32>) cond {
  ^bb0(%v: tensor<64xf32>, %i: tensor<i32>):
    %none = kiln.constant dense<0> : tensor<i32>
    %more = kiln.compare gt, %i, %none : tensor<i32>
    kiln.yield %more : tensor<i1>
  } do {
  ^bb0(%v: tensor<64xf32>, %i: tensor<i32>):
    %f = kiln.for 3 iterations (%v) : (tensor<64xf32>) {
    ^bb0(%k: tensor<i64>, %u: tensor<64xf32>):
      %t = kiln.tanh %u : tensor<64xf32>
      %scale = kiln.constant dense<0.9> : tensor<64xf32>
      %s = kiln.mul %t, %scale : tensor<64xf32>
      %kf = kiln.cast %k : tensor<i64> to tensor<f32>
      %kb = kiln.broadcast_in_dim %kf, dims = [] : (tensor<f32>) -> tensor<64xf32>
      %r = kiln.add %s, %kb : tensor<64xf32>
      kiln.yield %r : tensor<64xf32>
    }
    %one = kiln.constant dense<1> : tensor<i32>
    %i1 = kiln.sub %i, %one : tensor<i32>
    kiln.yield %f, %i1 : tensor<64xf32>, tensor<i32>
  }
  return %w#0, %w#1 : tensor<64xf32>, tensor<i32>
}

func.func @while_cond_for(%x: tensor<64xf32>, %n: tensor<i32>) -> tensor<64xf32> {
  %w:2 = kiln.while (%x, %n) : (tensor<64xf32>, tensor<i32>) cond {
  ^bb0(%v: tensor<64xf32>, %i: tensor<i32>):
    %none = kiln.constant dense<0> : tensor<i32>
    %more = kiln.compare gt, %i, %none : tensor<i32>
    kiln.yield %more : tensor<i1>
  } do {
  ^bb0(%v: tensor<64xf32>, %i: tensor<i32>):
    %two = kiln.constant dense<2> : tensor<i32>
    %r = kiln.rem %i, %two : tensor<i32>
    %zero = kiln.constant dense<0> : tensor<i32>
    %even = kiln.compare eq, %r, %zero : tensor<i32>
    %b = kiln.cond %even, (%v) : tensor<i1>, (tensor<64xf32>) -> (tensor<64xf32>) {
    ^bb0(%u: tensor<64xf32>):
      %f = kiln.for 2 iterations (%u) : (tensor<64xf32>) {
      ^bb0(%k: tensor<i64>, %a: tensor<64xf32>):
        %half = kiln.constant dense<0.5> : tensor<64xf32>
        %h = kiln.mul %a, %half : tensor<64xf32>
        kiln.yield %h : tensor<64xf32>
      }
      kiln.yield %f : tensor<64xf32>
    } else {
    ^bb0(%u: tensor<64xf32>):
      %ng = kiln.neg %u : tensor<64xf32>
      kiln.yield %ng : tensor<64xf32>
    }
    %one = kiln.constant dense<1> : tensor<i32>
    %i1 = kiln.sub %i, %one : tensor<i32>
    kiln.yield %b, %i1 : tensor<64xf32>, tensor<i32>
  }
  return %w#0 : tensor<64xf32>
}

func.func @for_with_while(%x: tensor<64xf32>, %n: tensor<i32>) -> tensor<64xf32> {
  %f:2 = kiln.for 3 iterations (%x, %n) : (tensor<64xf32>, tensor<i32>) {
  ^bb0(%k: tensor<i64>, %u: tensor<64xf32>, %m: tensor<i32>):
    %kf = kiln.cast %k : tensor<i64> to tensor<f32>
    %kb = kiln.broadcast_in_dim %kf, dims = [] : (tensor<f32>) -> tensor<64xf32>
    %w:3 = kiln.while (%u, %m, %kb) : (tensor<64xf32>, tensor<i32>, tensor<64xf32>) cond {
    ^bb0(%v: tensor<64xf32>, %i: tensor<i32>, %c: tensor<64xf32>):
      %none = kiln.constant dense<0> : tensor<i32>
      %more = kiln.compare gt, %i, %none : tensor<i32>
      kiln.yield %more : tensor<i1>
    } do {
    ^bb0(%v: tensor<64xf32>, %i: tensor<i32>, %c: tensor<64xf32>):
      %half = kiln.constant dense<0.5> : tensor<64xf32>
      %h = kiln.mul %v, %half : tensor<64xf32>
      %a = kiln.add %h, %c : tensor<64xf32>
      %one = kiln.constant dense<1> : tensor<i32>
      %i1 = kiln.sub %i, %one : tensor<i32>
      kiln.yield %a, %i1, %c : tensor<64xf32>, tensor<i32>, tensor<64xf32>
    }
    kiln.yield %w#0, %m : tensor<64xf32>, tensor<i32>
  }
  return %f#0 : tensor<64xf32>
}

func.func @while_for_cond(%x: tensor<64xf32>, %n: tensor<i32>) -> (tensor<64xf32>, tensor<i32>) {
  %w:2 = kiln.while (%x, %n) : (tensor<64xf32>, tensor<i32>) cond {
  ^bb0(%v: tensor<64xf32>, %i: tensor<i32>):
    %none = kiln.constant dense<0> : tensor<i32>
    %more = kiln.compare gt, %i, %none : tensor<i32>
    kiln.yield %more : tensor<i1>
  } do {
  ^bb0(%v: tensor<64xf32>, %i: tensor<i32>):
    %f:2 = kiln.for 4 iterations (%v, %i) : (tensor<64xf32>, tensor<i32>) {
    ^bb0(%k: tensor<i64>, %u: tensor<64xf32>, %j: tensor<i32>):
      %two = kiln.constant dense<2> : tensor<i32>
      %r = kiln.rem %j, %two : tensor<i32>
      %zero = kiln.constant dense<0> : tensor<i32>
      %even = kiln.compare eq, %r, %zero : tensor<i32>
      %b = kiln.cond %even, (%u) : tensor<i1>, (tensor<64xf32>) -> (tensor<64xf32>) {
      ^bb0(%a: tensor<64xf32>):
        %half = kiln.constant dense<0.5> : tensor<64xf32>
        %h = kiln.mul %a, %half : tensor<64xf32>
        kiln.yield %h : tensor<64xf32>
      } else {
      ^bb0(%a: tensor<64xf32>):
        %ng = kiln.neg %a : tensor<64xf32>
        kiln.yield %ng : tensor<64xf32>
      }
      %one = kiln.constant dense<1> : tensor<i32>
      %j1 = kiln.add %j, %one : tensor<i32>
      kiln.yield %b, %j1 : tensor<64xf32>, tensor<i32>
    }
    %one = kiln.constant dense<1> : tensor<i32>
    %i1 = kiln.sub %i, %one : tensor<i32>
    kiln.yield %f#0, %i1 : tensor<64xf32>, tensor<i32>
  }
  return %w#0, %w#1 : tensor<64xf32>, tensor<i32>
}

func.func @cond_for_while(%x: tensor<64xf32>, %n: tensor<i32>) -> tensor<64xf32> {
  %two = kiln.constant dense<2> : tensor<i32>
  %r = kiln.rem %n, %two : tensor<i32>
  %zero = kiln.constant dense<0> : tensor<i32>
  %even = kiln.compare eq, %r, %zero : tensor<i32>
  %b = kiln.cond %even, (%x, %n) : tensor<i1>, (tensor<64xf32>, tensor<i32>) -> (tensor<64xf32>) {
  ^bb0(%u: tensor<64xf32>, %m: tensor<i32>):
    %f:2 = kiln.for 2 iterations (%u, %m) : (tensor<64xf32>, tensor<i32>) {
    ^bb0(%k: tensor<i64>, %a: tensor<64xf32>, %c: tensor<i32>):
      %w:2 = kiln.while (%a, %c) : (tensor<64xf32>, tensor<i32>) cond {
      ^bb0(%v: tensor<64xf32>, %i: tensor<i32>):
        %none = kiln.constant dense<0> : tensor<i32>
        %more = kiln.compare gt, %i, %none : tensor<i32>
        kiln.yield %more : tensor<i1>
      } do {
      ^bb0(%v: tensor<64xf32>, %i: tensor<i32>):
        %t = kiln.tanh %v : tensor<64xf32>
        %one = kiln.constant dense<1> : tensor<i32>
        %i1 = kiln.sub %i, %one : tensor<i32>
        kiln.yield %t, %i1 : tensor<64xf32>, tensor<i32>
      }
      kiln.yield %w#0, %c : tensor<64xf32>, tensor<i32>
    }
    kiln.yield %f#0 : tensor<64xf32>
  } else {
  ^bb0(%u: tensor<64xf32>, %m: tensor<i32>):
    %ng = kiln.neg %u : tensor<64xf32>
    kiln.yield %ng : tensor<64xf32>
  }
  return %b : tensor<64xf32>
}

func.func @cond_for_pair(%x: tensor<8xf32>, %n: tensor<i32>) -> tensor<8xf32> {
  %two = kiln.constant dense<2> : tensor<i32>
  %r = kiln.rem %n, %two : tensor<i32>
  %zero = kiln.constant dense<0> : tensor<i32>
  %even = kiln.compare eq, %r, %zero : tensor<i32>
  %b = kiln.cond %even, (%x) : tensor<i1>, (tensor<8xf32>) -> (tensor<8xf32>) {
  ^bb0(%u: tensor<8xf32>):
    %f:2 = kiln.for 2 iterations (%u, %u) : (tensor<8xf32>, tensor<8xf32>) {
    ^bb0(%k: tensor<i64>, %a: tensor<8xf32>, %c: tensor<8xf32>):
      %half = kiln.constant dense<0.5> : tensor<8xf32>
      %h = kiln.mul %a, %half : tensor<8xf32>
      %s = kiln.add %h, %c : tensor<8xf32>
      %t = kiln.tanh %c : tensor<8xf32>
      kiln.yield %s, %t : tensor<8xf32>, tensor<8xf32>
    }
    kiln.yield %f#0 : tensor<8xf32>
  } else {
  ^bb0(%u: tensor<8xf32>):
    %ng = kiln.neg %u : tensor<8xf32>
    kiln.yield %ng : tensor<8xf32>
  }
  return %b : tensor<8xf32>
}

func.func @select_and_cond(%x: tensor<64xf32>, %y: tensor<64xf32>, %n: tensor<i32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %zero = kiln.constant dense<0> : tensor<i32>
  %p = kiln.compare gt, %n, %zero : tensor<i32>
  %picked = kiln.select %p, %x, %y : tensor<i1>, tensor<64xf32>
  %e = kiln.tanh %picked : tensor<64xf32>
  %b = kiln.cond %p, (%x) : tensor<i1>, (tensor<64xf32>) -> (tensor<64xf32>) {
  ^bb0(%u: tensor<64xf32>):
    %h = kiln.tanh %u : tensor<64xf32>
    kiln.yield %h : tensor<64xf32>
  } else {
  ^bb0(%u: tensor<64xf32>):
    %ng = kiln.neg %u : tensor<64xf32>
    kiln.yield %ng : tensor<64xf32>
  }
  return %e, %b : tensor<64xf32>, tensor<64xf32>
}

func.func @select_reused_byte(%x: tensor<64xf32>, %y: tensor<64xf32>, %n: tensor<i32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %zero = kiln.constant dense<0> : tensor<i32>
  %p = kiln.compare gt, %n, %zero : tensor<i32>
  %picked = kiln.select %p, %x, %y : tensor<i1>, tensor<64xf32>
  %t = kiln.tanh %picked : tensor<64xf32>
  %three = kiln.constant dense<3> : tensor<i32>
  %q = kiln.compare gt, %n, %three : tensor<i32>
  %b = kiln.cond %q, (%t) : tensor<i1>, (tensor<64xf32>) -> (tensor<64xf32>) {
  ^bb0(%u: tensor<64xf32>):
    %h = kiln.exp %u : tensor<64xf32>
    kiln.yield %h : tensor<64xf32>
  } else {
  ^bb0(%u: tensor<64xf32>):
    %ng = kiln.neg %u : tensor<64xf32>
    kiln.yield %ng : tensor<64xf32>
  }
  %s = kiln.add %picked, %b : tensor<64xf32>
  return %s, %b : tensor<64xf32>, tensor<64xf32>
}

func.func @rnn_while(%xs: tensor<8x4x16xf32>, %w: tensor<16x16xf32>, %h0: tensor<4x16xf32>, %n: tensor<i64>) -> tensor<4x16xf32> {
  %zero = kiln.constant dense<0> : tensor<i64>
  %r:5 = kiln.while (%h0, %xs, %w, %zero, %n) : (tensor<4x16xf32>, tensor<8x4x16xf32>, tensor<16x16xf32>, tensor<i64>, tensor<i64>) cond {
  ^bb0(%h: tensor<4x16xf32>, %xv: tensor<8x4x16xf32>, %wv: tensor<16x16xf32>, %i: tensor<i64>, %nv: tensor<i64>):
    %more = kiln.compare lt, %i, %nv : tensor<i64>
    kiln.yield %more : tensor<i1>
  } do {
  ^bb0(%h: tensor<4x16xf32>, %xv: tensor<8x4x16xf32>, %wv: tensor<16x16xf32>, %i: tensor<i64>, %nv: tensor<i64>):
    %x = kiln.dynamic_slice %xv[%i], size = 1 : tensor<8x4x16xf32>
    %x2 = kiln.reshape %x : (tensor<1x4x16xf32>) -> tensor<4x16xf32>
    %m = kiln.matmul %x2, %wv : tensor<4x16xf32>, tensor<16x16xf32>
    %m2 = kiln.matmul %h, %wv : tensor<4x16xf32>, tensor<16x16xf32>
    %s = kiln.add %m, %m2 : tensor<4x16xf32>
    %t = kiln.tanh %s : tensor<4x16xf32>
    %one = kiln.constant dense<1> : tensor<i64>
    %i2 = kiln.add %i, %one : tensor<i64>
    kiln.yield %t, %xv, %wv, %i2, %nv : tensor<4x16xf32>, tensor<8x4x16xf32>, tensor<16x16xf32>, tensor<i64>, tensor<i64>
  }
  return %r#0 : tensor<4x16xf32>
}

func.func @cond_reshape(%x: tensor<4x16xf32>, %y: tensor<64xf32>, %n: tensor<i32>) -> tensor<64xf32> {
  %zero = kiln.constant dense<0> : tensor<i32>
  %p = kiln.compare gt, %n, %zero : tensor<i32>
  %r = kiln.cond %p, (%x, %y) : tensor<i1>, (tensor<4x16xf32>, tensor<64xf32>) -> (tensor<64xf32>) {
  ^bb0(%a: tensor<4x16xf32>, %b: tensor<64xf32>):
    %e = kiln.exp %a : tensor<4x16xf32>
    %f = kiln.reshape %e : (tensor<4x16xf32>) -> tensor<64xf32>
    kiln.yield %f : tensor<64xf32>
  } else {
  ^bb0(%a: tensor<4x16xf32>, %b: tensor<64xf32>):
    %t = kiln.tanh %b : tensor<64xf32>
    kiln.yield %t : tensor<64xf32>
  }
  return %r : tensor<64xf32>
}

func.func @cond_same_twice(%x: tensor<16xf32>, %n: tensor<i32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %zero = kiln.constant dense<0> : tensor<i32>
  %p = kiln.compare gt, %n, %zero : tensor<i32>
  %r:2 = kiln.cond %p, (%x) : tensor<i1>, (tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  ^bb0(%a: tensor<16xf32>):
    %e = kiln.exp %a : tensor<16xf32>
    kiln.yield %e, %e : tensor<16xf32>, tensor<16xf32>
  } else {
  ^bb0(%a: tensor<16xf32>):
    %t = kiln.tanh %a : tensor<16xf32>
    %u = kiln.neg %a : tensor<16xf32>
    kiln.yield %t, %u : tensor<16xf32>, tensor<16xf32>
  }
  %s = kiln.add %r#0, %r#1 : tensor<16xf32>
  return %s, %r#1 : tensor<16xf32>, tensor<16xf32>
}

func.func @while_from_slice(%x: tensor<4x16xf32>, %n: tensor<i32>) -> tensor<4x8xf32> {
  %s = kiln.slice %x, start = [0, 1], limit = [4, 16], stride = [1, 2] : tensor<4x16xf32>
  %r:2 = kiln.while (%s, %n) : (tensor<4x8xf32>, tensor<i32>) cond {
  ^bb0(%v: tensor<4x8xf32>, %i: tensor<i32>):
    %zero = kiln.constant dense<0> : tensor<i32>
    %more = kiln.compare gt, %i, %zero : tensor<i32>
    kiln.yield %more : tensor<i1>
  } do {
  ^bb0(%v: tensor<4x8xf32>, %i: tensor<i32>):
    %half = kiln.constant dense<0.5> : tensor<4x8xf32>
    %one = kiln.constant dense<1.0> : tensor<4x8xf32>
    %h = kiln.mul %v, %half : tensor<4x8xf32>
    %w = kiln.add %h, %one : tensor<4x8xf32>
    %step = kiln.constant dense<1> : tensor<i32>
    %j = kiln.sub %i, %step : tensor<i32>
    kiln.yield %w, %j : tensor<4x8xf32>, tensor<i32>
  }
  return %r#0 : tensor<4x8xf32>
}

func.func @for_from_dynamic_slice(%xs: tensor<8x4xf32>, %k: tensor<i64>) -> tensor<3x4xf32> {
  %d = kiln.dynamic_slice %xs[%k], size = 3 : tensor<8x4xf32>
  %r = kiln.for 3 iterations (%d) : (tensor<3x4xf32>) {
  ^bb0(%t: tensor<i64>, %v: tensor<3x4xf32>):
    %h = kiln.tanh %v : tensor<3x4xf32>
    kiln.yield %h : tensor<3x4xf32>
  }
  return %r : tensor<3x4xf32>
}

func.func @while_from_pick(%x: tensor<16xf32>, %y: tensor<16xf32>, %n: tensor<i32>) -> tensor<16xf32> {
  %two = kiln.constant dense<2> : tensor<i32>
  %p = kiln.compare gt, %n, %two : tensor<i32>
  %pick = kiln.select %p, %x, %y : tensor<i1>, tensor<16xf32>
  %r:2 = kiln.while (%pick, %n) : (tensor<16xf32>, tensor<i32>) cond {
  ^bb0(%v: tensor<16xf32>, %i: tensor<i32>):
    %zero = kiln.constant dense<0> : tensor<i32>
    %more = kiln.compare gt, %i, %zero : tensor<i32>
    kiln.yield %more : tensor<i1>
  } do {
  ^bb0(%v: tensor<16xf32>, %i: tensor<i32>):
    %half = kiln.constant dense<0.5> : tensor<16xf32>
    %h = kiln.mul %v, %half : tensor<16xf32>
    %step = kiln.constant dense<1> : tensor<i32>
    %j = kiln.sub %i, %step : tensor<i32>
    kiln.yield %h, %j : tensor<16xf32>, tensor<i32>
  }
  return %r#0 : tensor<16xf32>
}

func.func @cond_twice(%x: tensor<16xf32>, %n: tensor<i32>) -> tensor<16xf32> {
  %zero = kiln.constant dense<0> : tensor<i32>
  %p = kiln.compare gt, %n, %zero : tensor<i32>
  %a = kiln.cond %p, (%x) : tensor<i1>, (tensor<16xf32>) -> (tensor<16xf32>) {
  ^bb0(%u: tensor<16xf32>):
    %e = kiln.exp %u : tensor<16xf32>
    kiln.yield %e : tensor<16xf32>
  } else {
  ^bb0(%u: tensor<16xf32>):
    %ng = kiln.neg %u : tensor<16xf32>
    kiln.yield %ng : tensor<16xf32>
  }
  %s = kiln.sin %a : tensor<16xf32>
  %b = kiln.cond %p, (%s) : tensor<i1>, (tensor<16xf32>) -> (tensor<16xf32>) {
  ^bb0(%u: tensor<16xf32>):
    %t = kiln.tanh %u : tensor<16xf32>
    kiln.yield %t : tensor<16xf32>
  } else {
  ^bb0(%u: tensor<16xf32>):
    %two = kiln.constant dense<2.0> : tensor<16xf32>
    %m = kiln.mul %u, %two : tensor<16xf32>
    kiln.yield %m : tensor<16xf32>
  }
  return %b : tensor<16xf32>
}

func.func @cond_on_stacked(%flags: tensor<4xi1>, %x: tensor<16xf32>) -> tensor<16xf32> {
  %r:2 = kiln.for 4 iterations (%x, %flags) : (tensor<16xf32>, tensor<4xi1>) {
  ^bb0(%i: tensor<i64>, %v: tensor<16xf32>, %fs: tensor<4xi1>):
    %three = kiln.constant dense<3> : tensor<i64>
    %j = kiln.sub %three, %i : tensor<i64>
    %f = kiln.dynamic_slice %fs[%j], size = 1 : tensor<4xi1>
    %p = kiln.reshape %f : (tensor<1xi1>) -> tensor<i1>
    %w = kiln.cond %p, (%v) : tensor<i1>, (tensor<16xf32>) -> (tensor<16xf32>) {
    ^bb0(%u: tensor<16xf32>):
      %t = kiln.tanh %u : tensor<16xf32>
      kiln.yield %t : tensor<16xf32>
    } else {
    ^bb0(%u: tensor<16xf32>):
      %s = kiln.sin %u : tensor<16xf32>
      kiln.yield %s : tensor<16xf32>
    }
    kiln.yield %w, %fs : tensor<16xf32>, tensor<4xi1>
  }
  return %r#0 : tensor<16xf32>
}

func.func @cond_with_loop_grad(%arg0: tensor<f32>, %arg1: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %0 = kiln.constant dense<5.000000e-01> : tensor<f32>
  %1 = kiln.compare le, %arg0, %0 : tensor<f32>
  %2:3 = kiln.cond %1, (%arg0) : tensor<i1>, (tensor<f32>) -> (tensor<f32>, tensor<2xf32>, tensor<2xf32>) {
  ^bb0(%arg2: tensor<f32>):
    %4 = kiln.abs %arg2 : tensor<f32>
    %5 = kiln.constant dense<0.000000e+00> : tensor<2xf32>
    %6 = kiln.constant dense<0.000000e+00> : tensor<2xf32>
    %7:4 = kiln.for 2 iterations(%4, %4, %5, %6) : (tensor<f32>, tensor<f32>, tensor<2xf32>, tensor<2xf32>) {
    ^bb0(%arg3: tensor<i64>, %arg4: tensor<f32>, %arg5: tensor<f32>, %arg6: tensor<2xf32>, %arg7: tensor<2xf32>):
      %8 = kiln.constant dense<5.000000e-01> : tensor<f32>
      %9 = kiln.mul %arg4, %8 : tensor<f32>
      %10 = kiln.tanh %arg4 : tensor<f32>
      %11 = kiln.add %9, %10 : tensor<f32>
      %12 = kiln.mul %arg5, %8 : tensor<f32>
      %13 = kiln.sin %9 : tensor<f32>
      %14 = kiln.add %12, %13 : tensor<f32>
      %15 = kiln.reshape %9 : (tensor<f32>) -> tensor<1xf32>
      %16 = kiln.dynamic_update_slice %arg6[%arg3], %15 : tensor<2xf32>, tensor<1xf32>
      %17 = kiln.reshape %10 : (tensor<f32>) -> tensor<1xf32>
      %18 = kiln.dynamic_update_slice %arg7[%arg3], %17 : tensor<2xf32>, tensor<1xf32>
      kiln.yield %11, %14, %16, %18 : tensor<f32>, tensor<f32>, tensor<2xf32>, tensor<2xf32>
    }
    kiln.yield %7#1, %7#2, %7#3 : tensor<f32>, tensor<2xf32>, tensor<2xf32>
  } else {
  ^bb0(%arg2: tensor<f32>):
    %4 = kiln.constant dense<0.000000e+00> : tensor<2xf32>
    %5 = kiln.constant dense<0.000000e+00> : tensor<2xf32>
    kiln.yield %arg2, %4, %5 : tensor<f32>, tensor<2xf32>, tensor<2xf32>
  }
  %3 = kiln.cond %1, (%arg1, %2#1, %2#2, %arg0) : tensor<i1>, (tensor<f32>, tensor<2xf32>, tensor<2xf32>, tensor<f32>) -> tensor<f32> {
  ^bb0(%arg2: tensor<f32>, %arg3: tensor<2xf32>, %arg4: tensor<2xf32>, %arg5: tensor<f32>):
    %4 = kiln.constant dense<0.000000e+00> : tensor<f32>
    %5:4 = kiln.for 2 iterations(%4, %arg2, %arg3, %arg4) : (tensor<f32>, tensor<f32>, tensor<2xf32>, tensor<2xf32>) {
    ^bb0(%arg6: tensor<i64>, %arg7: tensor<f32>, %arg8: tensor<f32>, %arg9: tensor<2xf32>, %arg10: tensor<2xf32>):
      %13 = kiln.constant dense<1> : tensor<i64>
      %14 = kiln.sub %13, %arg6 : tensor<i64>
      %15 = kiln.dynamic_slice %arg9[%14], size = 1 : tensor<2xf32>
      %16 = kiln.reshape %15 : (tensor<1xf32>) -> tensor<f32>
      %17 = kiln.constant dense<5.000000e-01> : tensor<f32>
      %18 = kiln.dynamic_slice %arg10[%14], size = 1 : tensor<2xf32>
      %19 = kiln.reshape %18 : (tensor<1xf32>) -> tensor<f32>
      %20 = kiln.cos %16 : tensor<f32>
      %21 = kiln.mul %arg8, %20 : tensor<f32>
      %22 = kiln.mul %arg8, %17 : tensor<f32>
      %23 = kiln.add %21, %arg7 : tensor<f32>
      %24 = kiln.mul %19, %19 : tensor<f32>
      %25 = kiln.constant dense<1.000000e+00> : tensor<f32>
      %26 = kiln.sub %25, %24 : tensor<f32>
      %27 = kiln.mul %arg7, %26 : tensor<f32>
      %28 = kiln.mul %23, %17 : tensor<f32>
      %29 = kiln.add %27, %28 : tensor<f32>
      kiln.yield %29, %22, %arg9, %arg10 : tensor<f32>, tensor<f32>, tensor<2xf32>, tensor<2xf32>
    }
    %6 = kiln.add %5#0, %5#1 : tensor<f32>
    %7 = kiln.constant dense<0.000000e+00> : tensor<f32>
    %8 = kiln.compare gt, %arg5, %7 : tensor<f32>
    %9 = kiln.compare lt, %arg5, %7 : tensor<f32>
    %10 = kiln.neg %6 : tensor<f32>
    %11 = kiln.select %9, %10, %7 : tensor<i1>, tensor<f32>
    %12 = kiln.select %8, %6, %11 : tensor<i1>, tensor<f32>
    kiln.yield %12 : tensor<f32>
  } else {
  ^bb0(%arg2: tensor<f32>, %arg3: tensor<2xf32>, %arg4: tensor<2xf32>, %arg5: tensor<f32>):
    kiln.yield %arg2 : tensor<f32>
  }
  return %2#0, %3 : tensor<f32>, tensor<f32>
}
