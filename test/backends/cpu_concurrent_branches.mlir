// kiln-cpu-concurrent-branches groups runs of independent kernels into
// sections that run side by side, where its estimate says that pays.
// RUN: kiln-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(kiln-cpu-concurrent-branches)' \
// RUN:   | FileCheck %s
// RUN: kiln-opt %s --split-input-file \
// RUN:   --pass-pipeline='builtin.module(kiln-cpu-concurrent-branches{threads=1})' \
// RUN:   | FileCheck %s --check-prefix=ONE

// Two products of one input into buffers of their own (1 million
// multiply-adds each, about 13 us on a thread: too small to use two
// threads well) are independent: one section each. Their allocations move
// before the sections; the sum that reads both stays after them.
// CHECK-LABEL: func.func @two_products(
// CHECK:         %[[P:.*]] = memref.alloc() : memref<64x128xf32>
// CHECK:         %[[Q:.*]] = memref.alloc() : memref<64x128xf32>
// CHECK:         scf.parallel (%[[I:.*]]) = (%c0{{.*}}) to (%c2{{.*}}) step (%c1{{.*}}) {
// CHECK-NEXT:      scf.index_switch %[[I]]
// CHECK-NEXT:      case 0 {
// CHECK-NEXT:        linalg.matmul ins(%{{.*}}, %{{.*}} : memref<64x128xf32>, memref<128x128xf32>) outs(%[[P]] : memref<64x128xf32>)
// CHECK-NEXT:        scf.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      case 1 {
// CHECK-NEXT:        linalg.matmul ins(%{{.*}}, %{{.*}} : memref<64x128xf32>, memref<128x128xf32>) outs(%[[Q]] : memref<64x128xf32>)
// CHECK-NEXT:        scf.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      default {
// CHECK-NEXT:      }
// CHECK:         } {kiln.concurrent = 2 : i64}
// CHECK-NEXT:    linalg.add ins(%[[P]], %[[Q]] : memref<64x128xf32>, memref<64x128xf32>)
// ONE-LABEL: func.func @two_products(
// ONE-NOT:     kiln.concurrent
func.func @two_products(%x: memref<64x128xf32>, %out: memref<64x128xf32>) {
  %w = memref.get_global @w : memref<128x128xf32>
  %v = memref.get_global @v : memref<128x128xf32>
  %p = memref.alloc() : memref<64x128xf32>
  linalg.matmul ins(%x, %w : memref<64x128xf32>, memref<128x128xf32>) outs(%p : memref<64x128xf32>)
  %q = memref.alloc() : memref<64x128xf32>
  linalg.matmul ins(%x, %v : memref<64x128xf32>, memref<128x128xf32>) outs(%q : memref<64x128xf32>)
  linalg.add ins(%p, %q : memref<64x128xf32>, memref<64x128xf32>) outs(%out : memref<64x128xf32>)
  return
}
memref.global "private" constant @w : memref<128x128xf32> = dense<1.0>
memref.global "private" constant @v : memref<128x128xf32> = dense<2.0>

// -----

// A chain: each product reads the one before. Nothing to run side by side.
// CHECK-LABEL: func.func @chain(
// CHECK-NOT:     kiln.concurrent
func.func @chain(%x: memref<128x128xf32>, %out: memref<128x128xf32>) {
  %w = memref.get_global @w : memref<128x128xf32>
  %p = memref.alloc() : memref<128x128xf32>
  linalg.matmul ins(%x, %w : memref<128x128xf32>, memref<128x128xf32>) outs(%p : memref<128x128xf32>)
  %q = memref.alloc() : memref<128x128xf32>
  linalg.matmul ins(%p, %w : memref<128x128xf32>, memref<128x128xf32>) outs(%q : memref<128x128xf32>)
  linalg.matmul ins(%q, %w : memref<128x128xf32>, memref<128x128xf32>) outs(%out : memref<128x128xf32>)
  return
}
memref.global "private" constant @w : memref<128x128xf32> = dense<1.0>

// -----

// Two large independent products (134 million multiply-adds each) use two
// threads well one after the other: the estimate keeps them so. A large
// product beside a tiny one likewise (measured on two cores, four
// independent 64x256x256 products took as long side by side).
// CHECK-LABEL: func.func @large(
// CHECK-NOT:     kiln.concurrent
func.func @large(%x: memref<512x512xf32>, %y: memref<64x64xf32>, %out: memref<512x512xf32>, %out2: memref<64x64xf32>) {
  %w = memref.get_global @w : memref<512x512xf32>
  %u = memref.get_global @u : memref<64x64xf32>
  %p = memref.alloc() : memref<512x512xf32>
  linalg.matmul ins(%x, %w : memref<512x512xf32>, memref<512x512xf32>) outs(%p : memref<512x512xf32>)
  %q = memref.alloc() : memref<512x512xf32>
  linalg.matmul ins(%x, %w : memref<512x512xf32>, memref<512x512xf32>) outs(%q : memref<512x512xf32>)
  %r = memref.alloc() : memref<64x64xf32>
  linalg.matmul ins(%y, %u : memref<64x64xf32>, memref<64x64xf32>) outs(%r : memref<64x64xf32>)
  linalg.add ins(%p, %q : memref<512x512xf32>, memref<512x512xf32>) outs(%out : memref<512x512xf32>)
  linalg.copy ins(%r : memref<64x64xf32>) outs(%out2 : memref<64x64xf32>)
  return
}
memref.global "private" constant @w : memref<512x512xf32> = dense<1.0>
memref.global "private" constant @u : memref<64x64xf32> = dense<1.0>

// -----

// Kernels of a few microseconds (a transpose beside a fill): starting and
// ending the sections would cost more than they save.
// CHECK-LABEL: func.func @tiny(
// CHECK-NOT:     kiln.concurrent
func.func @tiny(%x: memref<64x64xf32>, %out: memref<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<64x64xf32>
  linalg.transpose ins(%x : memref<64x64xf32>) outs(%t : memref<64x64xf32>) permutation = [1, 0]
  %f = memref.alloc() : memref<64x64xf32>
  linalg.fill ins(%zero : f32) outs(%f : memref<64x64xf32>)
  linalg.add ins(%t, %f : memref<64x64xf32>, memref<64x64xf32>) outs(%out : memref<64x64xf32>)
  return
}

// -----

// The function's arguments are one buffer (an output may be a donated
// input's memory): products writing two outputs depend on each other, and
// so do a product writing an output and one reading an input.
// CHECK-LABEL: func.func @arguments(
// CHECK-NOT:     kiln.concurrent
func.func @arguments(%x: memref<128x128xf32>, %out: memref<128x128xf32>, %out2: memref<128x128xf32>) {
  %w = memref.get_global @w : memref<128x128xf32>
  linalg.matmul ins(%x, %w : memref<128x128xf32>, memref<128x128xf32>) outs(%out : memref<128x128xf32>)
  linalg.matmul ins(%x, %w : memref<128x128xf32>, memref<128x128xf32>) outs(%out2 : memref<128x128xf32>)
  return
}
memref.global "private" constant @w : memref<128x128xf32> = dense<1.0>

// -----

// A call of a function the module only declares may touch any buffer: the
// products on its two sides stay apart. A call of a function of the module
// (an outlined convolution) accesses what its body does: its source is
// only read, so two such calls of one source are independent.
// CHECK-LABEL: func.func @calls(
// CHECK:         linalg.matmul
// CHECK-NEXT:    call @opaque()
// CHECK-NEXT:    memref.alloc
// CHECK-NEXT:    linalg.matmul
// CHECK:         scf.parallel
// CHECK:           case 0 {
// CHECK-NEXT:        call @conv(%{{.*}}, %[[A:.*]]) :
// CHECK:           case 1 {
// CHECK-NEXT:        call @conv(%{{.*}}, %[[B:.*]]) :
// CHECK:         } {kiln.concurrent = 2 : i64}
// CHECK-NEXT:    linalg.add ins(%[[A]], %[[B]]
func.func @calls(%x: memref<128x128xf32>, %s: memref<1x10x10x32xf32>, %out: memref<128x128xf32>, %out2: memref<1x8x8x32xf32>) {
  %w = memref.get_global @w : memref<128x128xf32>
  %p = memref.alloc() : memref<128x128xf32>
  linalg.matmul ins(%x, %w : memref<128x128xf32>, memref<128x128xf32>) outs(%p : memref<128x128xf32>)
  call @opaque() : () -> ()
  %q = memref.alloc() : memref<128x128xf32>
  linalg.matmul ins(%x, %w : memref<128x128xf32>, memref<128x128xf32>) outs(%q : memref<128x128xf32>)
  linalg.add ins(%p, %q : memref<128x128xf32>, memref<128x128xf32>) outs(%out : memref<128x128xf32>)
  %a = memref.alloc() : memref<1x8x8x32xf32>
  call @conv(%s, %a) : (memref<1x10x10x32xf32>, memref<1x8x8x32xf32>) -> ()
  %b = memref.alloc() : memref<1x8x8x32xf32>
  call @conv(%s, %b) : (memref<1x10x10x32xf32>, memref<1x8x8x32xf32>) -> ()
  linalg.add ins(%a, %b : memref<1x8x8x32xf32>, memref<1x8x8x32xf32>) outs(%out2 : memref<1x8x8x32xf32>)
  return
}
func.func private @opaque()
func.func private @conv(%src: memref<1x10x10x32xf32>, %dst: memref<1x8x8x32xf32>) attributes {kiln.dnnl_conv} {
  %f = memref.get_global @f : memref<3x3x32x32xf32>
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%dst : memref<1x8x8x32xf32>)
  linalg.conv_2d_nhwc_hwcf ins(%src, %f : memref<1x10x10x32xf32>, memref<3x3x32x32xf32>) outs(%dst : memref<1x8x8x32xf32>)
  return
}
memref.global "private" constant @w : memref<128x128xf32> = dense<1.0>
memref.global "private" constant @f : memref<3x3x32x32xf32> = dense<1.0>

// -----

// Three independent branches (a two-product chain, and two products) on two
// threads: the chain takes one section, the other two the other, each
// section's kernels in their order.
// CHECK-LABEL: func.func @three_branches(
// CHECK:         scf.parallel
// CHECK:           case 0 {
// CHECK-NEXT:        linalg.matmul {{.*}} outs(%[[P:[^ ]*]] :
// CHECK-NEXT:        linalg.matmul ins(%[[P]], {{.*}} outs(%[[P2:[^ ]*]] :
// CHECK-NEXT:        scf.yield
// CHECK:           case 1 {
// CHECK-NEXT:        linalg.matmul {{.*}} outs(%[[Q:[^ ]*]] :
// CHECK-NEXT:        linalg.matmul {{.*}} outs(%[[R:[^ ]*]] :
// CHECK-NEXT:        scf.yield
// CHECK:         } {kiln.concurrent = 2 : i64}
func.func @three_branches(%x: memref<64x128xf32>, %out: memref<64x128xf32>) {
  %w = memref.get_global @w : memref<128x128xf32>
  %p = memref.alloc() : memref<64x128xf32>
  linalg.matmul ins(%x, %w : memref<64x128xf32>, memref<128x128xf32>) outs(%p : memref<64x128xf32>)
  %q = memref.alloc() : memref<64x128xf32>
  linalg.matmul ins(%x, %w : memref<64x128xf32>, memref<128x128xf32>) outs(%q : memref<64x128xf32>)
  %p2 = memref.alloc() : memref<64x128xf32>
  linalg.matmul ins(%p, %w : memref<64x128xf32>, memref<128x128xf32>) outs(%p2 : memref<64x128xf32>)
  %r = memref.alloc() : memref<64x128xf32>
  linalg.matmul ins(%x, %w : memref<64x128xf32>, memref<128x128xf32>) outs(%r : memref<64x128xf32>)
  %s = memref.alloc() : memref<64x128xf32>
  linalg.add ins(%p2, %q : memref<64x128xf32>, memref<64x128xf32>) outs(%s : memref<64x128xf32>)
  linalg.add ins(%s, %r : memref<64x128xf32>, memref<64x128xf32>) outs(%out : memref<64x128xf32>)
  return
}
memref.global "private" constant @w : memref<128x128xf32> = dense<1.0>

// -----

// A placeholder of an outlined op (an attention, replaced by a kernel
// later) does nothing in its body: its accesses are its arguments' marks,
// reads where marked read-only and writes elsewhere (its out-params). Each
// copy reads what one call writes, so it goes in that call's section,
// after it. (Taken for calls that access nothing, the calls would join
// the less loaded section and the larger copy run beside its call.)
// CHECK-LABEL: func.func @placeholder_writes(
// CHECK-SAME:    %[[X:[^:]*]]: memref<64x896xf32>, %[[Y:[^:]*]]: memref<64x512xf32>)
// CHECK:         %[[B1:.*]] = memref.alloc() : memref<64x896xf32>
// CHECK:         %[[B2:.*]] = memref.alloc() : memref<64x512xf32>
// CHECK:         %[[C1:.*]] = memref.alloc() : memref<64x896xf32>
// CHECK:         %[[C2:.*]] = memref.alloc() : memref<64x512xf32>
// CHECK:         scf.index_switch
// CHECK-NEXT:      case 0 {
// CHECK-NEXT:        func.call @kernel(%[[X]], %[[B1]])
// CHECK-NEXT:        linalg.copy ins(%[[B1]] : memref<64x896xf32>) outs(%[[C1]] : memref<64x896xf32>)
// CHECK-NEXT:        scf.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      case 1 {
// CHECK-NEXT:        func.call @kernel_0(%[[Y]], %[[B2]])
// CHECK-NEXT:        linalg.copy ins(%[[B2]] : memref<64x512xf32>) outs(%[[C2]] : memref<64x512xf32>)
// CHECK-NEXT:        scf.yield
// CHECK-NEXT:      }
// CHECK:         } {kiln.concurrent = 2 : i64}
func.func @placeholder_writes(%x: memref<64x896xf32>, %y: memref<64x512xf32>) {
  %b1 = memref.alloc() : memref<64x896xf32>
  call @kernel(%x, %b1) : (memref<64x896xf32>, memref<64x896xf32>) -> ()
  %b2 = memref.alloc() : memref<64x512xf32>
  call @kernel_0(%y, %b2) : (memref<64x512xf32>, memref<64x512xf32>) -> ()
  %c1 = memref.alloc() : memref<64x896xf32>
  linalg.copy ins(%b1 : memref<64x896xf32>) outs(%c1 : memref<64x896xf32>)
  %c2 = memref.alloc() : memref<64x512xf32>
  linalg.copy ins(%b2 : memref<64x512xf32>) outs(%c2 : memref<64x512xf32>)
  return
}
func.func private @kernel(%a: memref<64x896xf32> {bufferization.access = "read"}, %out: memref<64x896xf32>) {
  return
}
func.func private @kernel_0(%a: memref<64x512xf32> {bufferization.access = "read"}, %out: memref<64x512xf32>) {
  return
}
