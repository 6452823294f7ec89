// kiln-compile: every --emit kind, optimization levels, default output
// names, reading stdin, and the errors for bad options and bad input (their
// exit statuses are checked in exit-status.test).
//
// RUN: rm -rf %t && split-file %s %t && cd %t
//
// --help lists kiln-compile's own options, not those of the LLVM targets
// and passes linked into it; those options are still accepted.
// RUN: kiln-compile --help | FileCheck %s --check-prefix=HELP
// HELP: kiln-compile options:
// HELP: --cuda-deterministic
// HELP: --cuda-tf32
// HELP: --emit=<value>
// HELP: --input-shape=<NAME=DIMS>
// HELP: --no-cublas
// HELP: --no-cuda-cudnn-attention
// HELP: --no-cuda-graphs
// HELP: --no-cudnn
// HELP: --outline-loop-nests=<N>
// HELP: --profile
// HELP: --target-cpu=<string>
// HELP: --verify-each
// HELP-NOT: aarch64
// HELP-NOT: --x86-
// RUN: kiln-compile %t/ramp.mlir --emit=mlir --mlir-print-debuginfo \
// RUN:   | FileCheck %s --check-prefix=HIDDEN
// HIDDEN: loc(
//
// --emit=mlir: the whole module in the LLVM dialect, on stdout by default.
// RUN: kiln-compile %t/ramp.mlir --emit=mlir | FileCheck %s --check-prefix=MLIR
// MLIR: module {
// MLIR-DAG: llvm.func internal @kiln_impl_ramp(
// MLIR-DAG: llvm.func @kiln_entry_ramp(%{{.+}}: !llvm.ptr)
// MLIR-DAG: llvm.func internal @kiln_impl_negate(
// MLIR-NOT: kiln.
// MLIR-NOT: linalg.
// MLIR-NOT: @kiln_entry_negate
//
// --emit=llvm: optimized LLVM IR, here into a file.
// RUN: kiln-compile %t/ramp.mlir --emit=llvm -o %t/ramp.ll
// RUN: FileCheck %s --check-prefix=LLVM < %t/ramp.ll
// LLVM: target triple = "x86_64
// LLVM-DAG: define void @kiln_entry_ramp(ptr {{.*}}%0)
// LLVM-NOT: define void @kiln_entry_negate
//
// --emit=obj: a relocatable ELF object that defines the entry point.
// RUN: kiln-compile %t/ramp.mlir --emit=obj -o %t/ramp.o
// RUN: llvm-readelf -h %t/ramp.o | FileCheck %s --check-prefix=ELF
// ELF: Class: ELF64
// ELF: Type: REL (Relocatable file)
// ELF: Machine: Advanced Micro Devices X86-64
// RUN: llvm-nm %t/ramp.o | FileCheck %s --check-prefix=OBJ
// Only the entry wrappers are exported; the functions themselves are
// internal (or inlined), so a function named like a libm routine is safe.
// OBJ-NOT: {{ T }}
// OBJ: T kiln_entry_ramp
// OBJ-NOT: {{ T }}
//
// --emit=kmod (the default): a module kiln-run loads; only public functions
// are listed.
// RUN: kiln-compile %t/ramp.mlir -o %t/ramp.kmod
// RUN: kiln-run %t/ramp.kmod --list | FileCheck %s --check-prefix=KMOD
// KMOD: target: cpu-x86_64
// KMOD-NEXT: ramp(arg0: f32[], arg1: f32[]) -> (out0: f32[3], out1: i64[])
// KMOD-NOT: negate
//
// --verify-each verifies the IR after every pass of the lowering (by
// default only its result is): the module is the same.
// RUN: kiln-compile %t/ramp.mlir --verify-each -o %t/verified.kmod
// RUN: cmp %t/ramp.kmod %t/verified.kmod
//
// --mlir-timing: the time of each phase, the lowering's passes among them,
// on stderr; the module is written all the same.
// RUN: kiln-compile %t/ramp.mlir --mlir-timing -o %t/timed.kmod 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TIMING
// RUN: kiln-run %t/timed.kmod --list | FileCheck %s --check-prefix=KMOD
// TIMING: Execution time report
// TIMING: reading the input
// TIMING-NEXT: lowering
// TIMING: KilnCpuPoolConstants
// TIMING-NEXT: constant pool
// TIMING-NEXT: LLVM translation and optimization
// TIMING-NEXT: code generation
// TIMING-NEXT: linking
// TIMING-NEXT: packing the module
// TIMING-NEXT: writing the output
// TIMING-NEXT: Rest
// TIMING-NEXT: Total
//
// Default output names: <stem>.kmod and <stem>.o in the working directory.
// --mlir-print-ir-after names kiln's passes: the IR after the memory plan.
// RUN: kiln-compile %t/ramp.mlir --emit=mlir -o /dev/null \
// RUN:   --mlir-print-ir-after=kiln-cpu-plan-memory --mlir-disable-threading \
// RUN:   2>&1 | FileCheck %s --check-prefix=PRINT-IR
// PRINT-IR: IR Dump After KilnCpuPlanMemory (kiln-cpu-plan-memory)
// PRINT-IR: func.func

// RUN: kiln-compile %t/ramp.mlir
// RUN: kiln-compile %t/ramp.mlir --emit=obj
// RUN: ls %t | FileCheck %s --check-prefix=DEFAULT
// DEFAULT-DAG: ramp.kmod
// DEFAULT-DAG: ramp.o
//
// Reading stdin ('-'): text kinds go to stdout; a binary kind needs -o (no
// file named after the '-' is written), and -o - writes it to stdout.
// RUN: kiln-compile - --emit=llvm < %t/ramp.mlir | FileCheck %s --check-prefix=LLVM
// RUN: not kiln-compile - < %t/ramp.mlir 2>&1 | FileCheck %s --check-prefix=STDIN
// RUN: not kiln-compile - --emit=obj < %t/ramp.mlir 2>&1 | FileCheck %s --check-prefix=STDIN
// STDIN: kiln-compile: error: the input is read from stdin, so the output file of a binary --emit kind needs -o (-o - for stdout)
// RUN: ls %t | FileCheck %s --check-prefix=NO-DASH
// NO-DASH-NOT: -.
// RUN: kiln-compile - -o %t/stdin.kmod < %t/ramp.mlir
// RUN: kiln-run %t/stdin.kmod --list | FileCheck %s --check-prefix=KMOD
// RUN: kiln-compile - -o - < %t/ramp.mlir > %t/piped.kmod
// RUN: kiln-run %t/piped.kmod --list | FileCheck %s --check-prefix=KMOD
//
// -O0 and -O3 both give working code with the same results:
// ramp(2, 0.5) = 2 * [0, 1, 2] + 0.5 and sum_{i<5} i = 10.
// RUN: kiln-compile %t/ramp.mlir -O0 -o %t/o0.kmod
// RUN: kiln-compile %t/ramp.mlir -O3 -o %t/o3.kmod
// RUN: kiln-run %t/o0.kmod --input 2 --input 0.5 | FileCheck %s --check-prefix=VALUES
// RUN: kiln-run %t/o3.kmod --input 2 --input 0.5 | FileCheck %s --check-prefix=VALUES
// VALUES: out0: f32[3] = [0.5, 2.5, 4.5]
// VALUES-NEXT: out1: i64[] = 10
//
// --outline-loop-nests=1 moves every loop nest (here the kiln.for's loop)
// into a function of its own, with the same results; by default (128
// nests) ramp's stay inline.
// RUN: kiln-compile %t/ramp.mlir --outline-loop-nests=1 -o %t/outlined.kmod
// RUN: kiln-run %t/outlined.kmod --input 2 --input 0.5 | FileCheck %s --check-prefix=VALUES
// RUN: kiln-compile %t/ramp.mlir --outline-loop-nests=1 --emit=mlir | FileCheck %s --check-prefix=OUTLINED
// RUN: kiln-compile %t/ramp.mlir --emit=mlir | FileCheck %s --check-prefix=INLINE
// OUTLINED: llvm.call @kiln_impl_ramp_nest(
// OUTLINED: llvm.func {{.*}}@kiln_impl_ramp_nest(
// INLINE-NOT: _nest
//
// -O0 skips LLVM's optimizations; -O3 runs them (attributes are inferred).
// RUN: kiln-compile %t/ramp.mlir --emit=llvm -O0 | FileCheck %s --check-prefix=O0
// RUN: kiln-compile %t/ramp.mlir --emit=llvm -O3 | FileCheck %s --check-prefix=O3
// O0: define void @kiln_entry_ramp(ptr %0) {
// O3: define void @kiln_entry_ramp(ptr nocapture readonly %0) local_unnamed_addr
// RUN: kiln-compile %t/ramp.mlir --target-cpu=x86-64 -o %t/generic.kmod
// RUN: kiln-run %t/generic.kmod --input 2 --input 0.5 | FileCheck %s --check-prefix=VALUES
//
// Bad options.
// RUN: not kiln-compile %t/ramp.mlir --target=tpu 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: kiln-compile: error: unknown target 'tpu' (supported: cpu, cuda, cuda-on-cpu)
// RUN: not kiln-compile %t/ramp.mlir --emit=exe 2>&1 | FileCheck %s --check-prefix=EMIT
// EMIT: for the --emit option: Cannot find option named 'exe'!
// RUN: not kiln-compile %t/ramp.mlir -O4 2>&1 | FileCheck %s --check-prefix=OPT
// OPT: kiln-compile: error: -O4 is not a level (0-3)
// RUN: not kiln-compile %t/ramp.mlir --autocast=fp8 2>&1 | FileCheck %s --check-prefix=AUTOCAST
// AUTOCAST: kiln-compile: error: unknown --autocast dtype 'fp8' (supported: bf16, f16)
// RUN: not kiln-compile %t/ramp.mlir --autocast=bf16 --emit=kfb -o %t/x.kfb 2>&1 | FileCheck %s --check-prefix=AUTOCAST-KFB
// AUTOCAST-KFB: kiln-compile: error: --autocast applies to compiled code; --emit=kfb stores the program as it is
// --autocast=bf16 for a CPU without bf16 dot products (oneDNN would emulate
// them, slower than f32) warns and compiles; one with AVX512-BF16 or AMX
// does not warn.
// RUN: kiln-compile %t/ramp.mlir --autocast=bf16 --target-cpu=skylake-avx512 --emit=mlir -o %t/slow.mlir 2>&1 | FileCheck %s --check-prefix=BF16-SLOW
// BF16-SLOW: warning: --autocast=bf16: the target CPU ('skylake-avx512') has no bf16 dot-product instructions (AVX512-BF16 or AMX-BF16); oneDNN emulates them (below AVX-512 they run as f32 on widened copies), and bf16 products and convolutions run slower than f32 there
// RUN: kiln-compile %t/ramp.mlir --autocast=bf16 --target-cpu=sapphirerapids --emit=mlir -o %t/fast.mlir 2>&1 | count 0
// RUN: kiln-compile %t/ramp.mlir --autocast=bf16 --target-cpu=cooperlake --emit=mlir -o %t/fast.mlir 2>&1 | count 0
// RUN: not kiln-compile %t/ramp.mlir --conv-layouts=sideways 2>&1 | FileCheck %s --check-prefix=LAYOUTS
// LAYOUTS: kiln-compile: error: unknown --conv-layouts 'sideways' (expected query, channels-last, channels-last-direct, blocked-8, blocked-16 or plain)
// RUN: not kiln-compile %t/ramp.mlir --packed-matmuls=sometimes 2>&1 | FileCheck %s --check-prefix=PACKED
// PACKED: kiln-compile: error: unknown --packed-matmuls 'sometimes' (expected query, always or never)
// RUN: not kiln-compile %t/ramp.mlir --conv-algorithm=fft 2>&1 | FileCheck %s --check-prefix=ALGORITHM
// ALGORITHM: kiln-compile: error: unknown --conv-algorithm 'fft' (expected auto, winograd, own-winograd or direct)
// RUN: not kiln-compile %t/ramp.mlir --concurrent-threads=-1 2>&1 | FileCheck %s --check-prefix=CONCURRENT
// CONCURRENT: kiln-compile: error: --concurrent-threads=-1 is not a thread count (0-1024)
// RUN: not kiln-compile %t/ramp.mlir --outline-loop-nests=0 2>&1 | FileCheck %s --check-prefix=OUTLINE-COUNT
// OUTLINE-COUNT: kiln-compile: error: --outline-loop-nests=0 is not a count of loop nests (at least 1)
// RUN: not kiln-compile 2>&1 | FileCheck %s --check-prefix=NOARGS
// NOARGS: Not enough positional command line arguments specified!
//
// Bad files.
// RUN: not kiln-compile %t/does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: kiln-compile: error: cannot open input file '{{.*}}does-not-exist.mlir': No such file or directory
// RUN: not kiln-compile %t/ramp.mlir -o %t/no/such/dir/out.kmod 2>&1 | FileCheck %s --check-prefix=NOOUT
// NOOUT: kiln-compile: error: cannot open output file '{{.*}}out.kmod': No such file or directory
//
// A parse error is reported at its line and column, and nothing is written.
// RUN: not kiln-compile %t/parse_error.mlir -o %t/parse_error.kmod 2>&1 | FileCheck %s --check-prefix=PARSE
// PARSE: parse_error.mlir:3:20: error: expected SSA operand
// PARSE-NEXT: %1 = kiln.add %0, : tensor<3xf32>
// RUN: not ls %t/parse_error.kmod
//
// A verifier error names the op and its location.
// RUN: not kiln-compile %t/verify_error.mlir 2>&1 | FileCheck %s --check-prefix=VERIFY
// VERIFY: verify_error.mlir:2:8: error: 'kiln.add' op
//
// Signatures must be statically shaped tensors of supported dtypes; the
// message names the function and the argument or result.
// RUN: not kiln-compile %t/scalar_arg.mlir 2>&1 | FileCheck %s --check-prefix=SCALAR
// SCALAR: kiln-compile: error: function 'takes_scalar' argument #1 has type i32; compiled functions take and return statically shaped tensors
// RUN: not kiln-compile %t/scalar_result.mlir --emit=llvm 2>&1 | FileCheck %s --check-prefix=RESULT
// RESULT: kiln-compile: error: function 'gives_scalar' result #1 has type i1; compiled functions take and return statically shaped tensors
// RUN: not kiln-compile %t/dynamic.mlir 2>&1 | FileCheck %s --check-prefix=DYN
// DYN: kiln-compile: error: function 'dynamic' argument #0 has type tensor<?xf32>
// RUN: not kiln-compile %t/i4_arg.mlir 2>&1 | FileCheck %s --check-prefix=I4
// I4: kiln-compile: error: function 'nibbles' argument #0 has element type i4, which the CPU backend does not support yet (f32, f64, i1, i32, i64, f16, bf16, i8, i16, ui8, ui16, ui32, ui64)
//
// f16 elementwise code, casts and reductions (in f32) compile.
// RUN: kiln-compile %t/f16_arg.mlir -o %t/f16_arg.kmod
// RUN: kiln-compile %t/f16_inside.mlir -o %t/f16_inside.kmod
//
// A module without a public function has nothing to compile.
// RUN: not kiln-compile %t/private_only.mlir 2>&1 | FileCheck %s --check-prefix=PRIVATE
// PRIVATE: kiln-compile: error: the module has no public function to compile
//
// A function annotated with a device mesh is partitioned (kiln-partition)
// and compiled as the program of one rank: its signature has the local
// shapes. A bad annotation is an error naming it.
// RUN: kiln-compile %t/mesh.mlir -o %t/mesh.kmod
// RUN: kiln-run %t/mesh.kmod --list | FileCheck %s --check-prefix=MESH
// MESH: scale(arg0: f32[4,3]) -> (out0: f32[4,3])
// RUN: not kiln-compile %t/bad_mesh.mlir 2>&1 | FileCheck %s --check-prefix=BAD-MESH
// BAD-MESH: error: kiln-partition: argument #0 of @scale splits dimension 0 of size 8 over the axis "tp" of 3 ranks, which do not divide it
// BAD-MESH: kiln-compile: error: partitioning over the kiln.mesh annotation failed

//--- ramp.mlir
// a * [0, 1, 2] + b, and the sum of the loop index over 5 iterations.
func.func @ramp(%a: tensor<f32>, %b: tensor<f32>) -> (tensor<3xf32>, tensor<i64>) {
  %i = kiln.iota dim = 0 : tensor<3xf32>
  %ab = kiln.broadcast_in_dim %a, dims = [] : (tensor<f32>) -> tensor<3xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [] : (tensor<f32>) -> tensor<3xf32>
  %ai = kiln.mul %ab, %i : tensor<3xf32>
  %r = kiln.add %ai, %bb : tensor<3xf32>
  %zero = kiln.constant dense<0> : tensor<i64>
  %s = kiln.for 5 iterations (%zero) : (tensor<i64>) {
  ^bb0(%k: tensor<i64>, %acc: tensor<i64>):
    %next = kiln.add %acc, %k : tensor<i64>
    kiln.yield %next : tensor<i64>
  }
  return %r, %s : tensor<3xf32>, tensor<i64>
}

func.func private @negate(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = kiln.neg %x : tensor<3xf32>
  return %0 : tensor<3xf32>
}

//--- parse_error.mlir
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = kiln.neg %x : tensor<3xf32>
  %1 = kiln.add %0, : tensor<3xf32>
  return %1 : tensor<3xf32>
}

//--- verify_error.mlir
func.func @f(%x: tensor<3xf32>, %y: tensor<4xf32>) -> tensor<3xf32> {
  %0 = "kiln.add"(%x, %y) : (tensor<3xf32>, tensor<4xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

//--- scalar_arg.mlir
func.func @takes_scalar(%x: tensor<3xf32>, %n: i32) -> tensor<3xf32> {
  %0 = kiln.neg %x : tensor<3xf32>
  return %0 : tensor<3xf32>
}

//--- scalar_result.mlir
func.func @gives_scalar(%x: tensor<3xf32>) -> (tensor<3xf32>, i1) {
  %0 = kiln.neg %x : tensor<3xf32>
  %t = arith.constant true
  return %0, %t : tensor<3xf32>, i1
}

//--- dynamic.mlir
func.func @dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
  return %x : tensor<?xf32>
}

//--- f16_arg.mlir
func.func @half(%x: tensor<3xf16>) -> tensor<3xf16> {
  %0 = kiln.neg %x : tensor<3xf16>
  return %0 : tensor<3xf16>
}

//--- i4_arg.mlir
func.func @nibbles(%x: tensor<3xi4>) -> tensor<3xi4> {
  return %x : tensor<3xi4>
}

//--- f16_inside.mlir
func.func @half_inside(%x: tensor<3xf32>) -> tensor<f32> {
  %0 = kiln.cast %x : tensor<3xf32> to tensor<3xf16>
  %1 = kiln.reduce_sum %0, dims = [0] : tensor<3xf16>
  %2 = kiln.cast %1 : tensor<f16> to tensor<f32>
  return %2 : tensor<f32>
}

//--- private_only.mlir
func.func private @hidden(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = kiln.neg %x : tensor<3xf32>
  return %0 : tensor<3xf32>
}

//--- mesh.mlir
func.func @scale(%x: tensor<8x3xf32> {kiln.sharding = ["tp", ""]})
    -> (tensor<8x3xf32> {kiln.sharding = ["tp", ""]})
    attributes {kiln.mesh = {axes = ["tp"], shape = array<i64: 2>}} {
  %0 = kiln.add %x, %x : tensor<8x3xf32>
  return %0 : tensor<8x3xf32>
}

//--- bad_mesh.mlir
func.func @scale(%x: tensor<8x3xf32> {kiln.sharding = ["tp", ""]}) -> tensor<8x3xf32>
    attributes {kiln.mesh = {axes = ["tp"], shape = array<i64: 3>}} {
  return %x : tensor<8x3xf32>
}
