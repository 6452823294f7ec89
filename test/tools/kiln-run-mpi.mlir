// kiln-run on two ranks under mpirun: a compiled program whose collectives
// (an asynchronous all-reduce, an all-gather, a permutation, kiln.rank) call
// the runtime's communicator over the MPI plug-in, with the input split
// between the ranks. Expected values are worked out by hand.
//
// REQUIRES: mpi
// RUN: rm -rf %t && split-file %s %t
// RUN: kiln-compile %t/prog.mlir -o %t/prog.kmod
// RUN: kiln-run %t/prog.kmod --function whole --output-dir %t/in
//
// The whole input is x[i][j] = 3i + j (8 x 3); rank 0 keeps rows 0-3, rank 1
// rows 4-7. Both get the sum of the halves, the gather of max(half, 10) in
// rank order, and the other rank's half.
// RUN: %mpirun -n 2 kiln-run %t/prog.kmod --function step --input %t/in/out0.npy \
// RUN:   --shard-input 0=0 --all-ranks-write | sort | FileCheck %s --check-prefix=RUN2
// RUN2: rank 0: out0: f32[4,3] = {{\[}}[12, 14, 16], [18, 20, 22], [24, 26, 28], [30, 32, 34]]
// RUN2-NEXT: rank 0: out1: f32[8,3] = {{\[}}[10, 10, 10], [10, 10, 10], [10, 10, 10], [10, 10, 11], [12, 13, 14], [15, 16, 17], [18, 19, 20], [21, 22, 23]]
// RUN2-NEXT: rank 0: out2: f32[4,3] = {{\[}}[12, 13, 14], [15, 16, 17], [18, 19, 20], [21, 22, 23]]
// RUN2-NEXT: rank 0: out3: i64[] = 0
// RUN2-NEXT: rank 1: out0: f32[4,3] = {{\[}}[12, 14, 16], [18, 20, 22], [24, 26, 28], [30, 32, 34]]
// RUN2-NEXT: rank 1: out1: f32[8,3] = {{\[}}[10, 10, 10], [10, 10, 10], [10, 10, 10], [10, 10, 11], [12, 13, 14], [15, 16, 17], [18, 19, 20], [21, 22, 23]]
// RUN2-NEXT: rank 1: out2: f32[4,3] = {{\[}}[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11]]
// RUN2-NEXT: rank 1: out3: i64[] = 1
//
// The same over Gloo, the ranks started by kiln-launch (which kiln-run
// notices, as it notices mpirun), and with the communicator named.
// RUN: %if gloo %{ timeout 120 kiln-launch --nproc 2 -- kiln-run %t/prog.kmod --function step \
// RUN:   --input %t/in/out0.npy --shard-input 0=0 --all-ranks-write \
// RUN:   | sort | FileCheck %s --check-prefix=RUN2 %}
// RUN: %if gloo %{ timeout 120 kiln-launch --nproc 2 -- kiln-run %t/prog.kmod --function step \
// RUN:   --input %t/in/out0.npy --comm gloo --shard-input 0=0 \
// RUN:   | FileCheck %s --check-prefix=QUIET %}
//
// Without --all-ranks-write only rank 0 prints.
// RUN: %mpirun -n 2 kiln-run %t/prog.kmod --function step --input %t/in/out0.npy \
// RUN:   --shard-input 0=0 | FileCheck %s --check-prefix=QUIET
// QUIET: out0: f32[4,3]
// QUIET-NOT: rank
// QUIET: out3: i64[] = 0
// QUIET-NOT: out
//
// Split over an axis of a mesh of the two ranks: with --mesh a=1,b=2 the
// axis b spans both ranks, so 0:0:b keeps the same rows as 0:0; with
// b=2,a=1 too (a has size 1).
// RUN: %mpirun -n 2 kiln-run %t/prog.kmod --function step --input %t/in/out0.npy \
// RUN:   --mesh a=1,b=2 --shard-input 0=0:b | FileCheck %s --check-prefix=QUIET
// RUN: %mpirun -n 2 kiln-run %t/prog.kmod --function step --input %t/in/out0.npy \
// RUN:   --mesh=b=2,a=1 --shard-input 0=0:b | FileCheck %s --check-prefix=QUIET
// Over the axis a of size 1 both ranks keep all 8 rows, which the
// signature (4 rows) refuses.
// RUN: not %mpirun -n 2 kiln-run %t/prog.kmod --function step --input %t/in/out0.npy \
// RUN:   --mesh a=1,b=2 --shard-input 0=0:a 2>&1 | FileCheck %s --check-prefix=AXIS-A
// AXIS-A: rank 0: function 'step': input 0
// Mistakes in the mesh or the axis.
// RUN: not %mpirun -n 2 kiln-run %t/prog.kmod --function step --input %t/in/out0.npy \
// RUN:   --shard-input 0=0:b 2>&1 | FileCheck %s --check-prefix=NO-MESH
// NO-MESH: rank 0: --shard-input splits over the mesh axis 'b', but no --mesh was given
// RUN: not %mpirun -n 2 kiln-run %t/prog.kmod --function step --input %t/in/out0.npy \
// RUN:   --mesh a=2,b=2 --shard-input 0=0:b 2>&1 | FileCheck %s --check-prefix=SIZE
// SIZE: rank 0: --mesh has 4 ranks, but the run has 2
// RUN: not %mpirun -n 2 kiln-run %t/prog.kmod --function step --input %t/in/out0.npy \
// RUN:   --mesh a=1,b=2 --shard-input 0=0:c 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: rank 0: --shard-input names the mesh axis 'c', which --mesh does not have (its axes: a, b)
// RUN: not kiln-run %t/prog.kmod --mesh a=0 2>&1 | FileCheck %s --check-prefix=BAD-MESH
// BAD-MESH: --mesh needs NAME=SIZE,... with sizes >= 1 (e.g. dp=2,tp=2), not 'a=0'
// RUN: not kiln-run %t/prog.kmod --mesh a=2,a=1 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: --mesh names the axis 'a' twice
// RUN: not kiln-run %t/prog.kmod --shard-input 0:b 2>&1 | FileCheck %s --check-prefix=BAD-SHARD
// BAD-SHARD: --shard-input needs NAME_OR_INDEX=DIM or NAME_OR_INDEX=DIM:AXIS (e.g. x=0, 1=0 or w=1:tp), not '0:b'
//
// The program was compiled for two ranks: on four, every rank fails naming
// the number to start it with; so does a run of one, with --comm=self, and
// without a communicator the first collective says to use mpirun.
// RUN: kiln-run %t/prog.kmod --function ones --output-dir %t/ones
// RUN: not %mpirun -n 4 kiln-run %t/prog.kmod --function step \
// RUN:   --input %t/ones/out0.npy 2>&1 | FileCheck %s --check-prefix=FOUR
// FOUR-DAG: kiln-run: error: rank 0: function 'step', collective #1 (kiln.all_reduce): its replica groups span 2 ranks (1 group of 2) but the run has 4; start it with 'mpirun -n 2'
// FOUR-DAG: kiln-run: error: rank 3: function 'step', collective #1 (kiln.all_reduce): its replica groups span 2 ranks (1 group of 2) but the run has 4; start it with 'mpirun -n 2'
// RUN: not kiln-run %t/prog.kmod --function step --input %t/ones/out0.npy \
// RUN:   --comm=self 2>&1 | FileCheck %s --check-prefix=SELF
// SELF: kiln-run: error: rank 0: function 'step', collective #1 (kiln.all_reduce): its replica groups span 2 ranks (1 group of 2) but the run has 1; start it with 'mpirun -n 2'
// RUN: not kiln-run %t/prog.kmod --function step --input %t/ones/out0.npy \
// RUN:   2>&1 | FileCheck %s --check-prefix=PLAIN
// PLAIN: kiln-run: error: function 'step': this module uses collectives over 2 ranks; run it with 'mpirun -n 2 kiln-run ...' or call kiln_function_call_with_comm

// With --profile and --all-ranks-write each rank writes its own trace, named
// as its outputs are: trace.rank0.json and trace.rank1.json, no trace.json.
// RUN: kiln-compile %t/prog.mlir --profile -o %t/profiled.kmod
// RUN: %mpirun -n 2 kiln-run %t/profiled.kmod --function step \
// RUN:   --input %t/in/out0.npy --shard-input 0=0 --all-ranks-write \
// RUN:   --profile-trace %t/trace.json > /dev/null
// RUN: FileCheck %s --check-prefix=TRACE < %t/trace.rank0.json
// RUN: FileCheck %s --check-prefix=TRACE < %t/trace.rank1.json
// RUN: test ! -e %t/trace.json
// TRACE: "name":"call @step"
// A path without an extension gets the suffix at its end.
// RUN: %mpirun -n 2 kiln-run %t/profiled.kmod --function step \
// RUN:   --input %t/in/out0.npy --shard-input 0=0 --all-ranks-write \
// RUN:   --profile-trace %t/trace > /dev/null
// RUN: FileCheck %s --check-prefix=TRACE < %t/trace.rank1
//
//--- prog.mlir
// x[i][j] = 3i + j.
func.func @whole() -> tensor<8x3xf32> {
  %i = kiln.iota dim = 0 : tensor<8x3xi64>
  %j = kiln.iota dim = 1 : tensor<8x3xi64>
  %three = kiln.constant dense<3> : tensor<8x3xi64>
  %a = kiln.mul %i, %three : tensor<8x3xi64>
  %b = kiln.add %a, %j : tensor<8x3xi64>
  %x = kiln.cast %b : tensor<8x3xi64> to tensor<8x3xf32>
  return %x : tensor<8x3xf32>
}

func.func @ones() -> tensor<4x3xf32> {
  %x = kiln.constant dense<1.0> : tensor<4x3xf32>
  return %x : tensor<4x3xf32>
}

func.func @step(%x: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<8x3xf32>, tensor<4x3xf32>, tensor<i64>) {
  %p = kiln.all_reduce_start %x, kind = sum, groups = [[0, 1]] : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %ten = kiln.constant dense<10.0> : tensor<4x3xf32>
  %m = kiln.max %x, %ten : tensor<4x3xf32>
  %s = kiln.collective_wait %p, %x : tensor<4x3xf32>, tensor<4x3xf32>
  %g = kiln.all_gather %m, dim = 0, groups = [[0, 1]] : (tensor<4x3xf32>) -> tensor<8x3xf32>
  %q = kiln.collective_permute %x, pairs = [0, 1, 1, 0] : tensor<4x3xf32>
  %r = kiln.rank : tensor<i64>
  return %s, %g, %q, %r : tensor<4x3xf32>, tensor<8x3xf32>, tensor<4x3xf32>, tensor<i64>
}
