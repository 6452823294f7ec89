// kiln.cond, kiln.while and kiln.for: data-dependent branches and trip
// counts, nesting, large loop-carried tensors, loops that run zero times,
// and an RNN over a sequence. Every data-dependent loop is also bounded by
// an iteration counter, and every branch decision is taken on integers or
// on values computed with correctly rounded operations only, so native code
// and the reference evaluator take the same path.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// A cond with several inputs and results; the predicate is "x > y in at
// least 9 of the 17 positions".
// CHECK: cond_multi(arg0: f32[17], arg1: f32[17], arg2: i32[]) -> (out0: f32[17], out1: i32[], out2: f32[])
func.func @cond_multi(%x: tensor<17xf32>, %y: tensor<17xf32>, %k: tensor<i32>) -> (tensor<17xf32>, tensor<i32>, tensor<f32>) {
  %gt = kiln.compare gt, %x, %y : tensor<17xf32>
  %gti = kiln.cast %gt : tensor<17xi1> to tensor<17xi32>
  %count = kiln.reduce_sum %gti, dims = [0] : tensor<17xi32>
  %nine = kiln.constant dense<9> : tensor<i32>
  %p = kiln.compare ge, %count, %nine : tensor<i32>
  %r:3 = kiln.cond %p, (%x, %y, %k) : tensor<i1>, (tensor<17xf32>, tensor<17xf32>, tensor<i32>) -> (tensor<17xf32>, tensor<i32>, tensor<f32>) {
  ^bb0(%a: tensor<17xf32>, %b: tensor<17xf32>, %n: tensor<i32>):
    %prod = kiln.mul %a, %b : tensor<17xf32>
    %one = kiln.constant dense<1> : tensor<i32>
    %n1 = kiln.add %n, %one : tensor<i32>
    %s = kiln.reduce_sum %a, dims = [0] : tensor<17xf32>
    kiln.yield %prod, %n1, %s : tensor<17xf32>, tensor<i32>, tensor<f32>
  } else {
  ^bb0(%a: tensor<17xf32>, %b: tensor<17xf32>, %n: tensor<i32>):
    %diff = kiln.sub %a, %b : tensor<17xf32>
    %two = kiln.constant dense<2> : tensor<i32>
    %n2 = kiln.mul %n, %two : tensor<i32>
    %m = kiln.reduce_max %b, dims = [0] : tensor<17xf32>
    kiln.yield %diff, %n2, %m : tensor<17xf32>, tensor<i32>, tensor<f32>
  }
  return %r#0, %r#1, %r#2 : tensor<17xf32>, tensor<i32>, tensor<f32>
}

// The predicate is an input; the regions use different ops on i64 and f64.
// CHECK: cond_input_pred(arg0: i1[], arg1: i64[3], arg2: f64[1]) -> (out0: i64[3], out1: f64[1])
func.func @cond_input_pred(%p: tensor<i1>, %n: tensor<3xi64>, %x: tensor<1xf64>) -> (tensor<3xi64>, tensor<1xf64>) {
  %r:2 = kiln.cond %p, (%n, %x) : tensor<i1>, (tensor<3xi64>, tensor<1xf64>) -> (tensor<3xi64>, tensor<1xf64>) {
  ^bb0(%a: tensor<3xi64>, %b: tensor<1xf64>):
    %sq = kiln.mul %a, %a : tensor<3xi64>
    %e = kiln.exp %b : tensor<1xf64>
    kiln.yield %sq, %e : tensor<3xi64>, tensor<1xf64>
  } else {
  ^bb0(%a: tensor<3xi64>, %b: tensor<1xf64>):
    %neg = kiln.neg %a : tensor<3xi64>
    %c = kiln.cos %b : tensor<1xf64>
    kiln.yield %neg, %c : tensor<3xi64>, tensor<1xf64>
  }
  return %r#0, %r#1 : tensor<3xi64>, tensor<1xf64>
}

// Newton's iteration y <- (y + a / y) / 2 for sqrt(a), a = |x| + 1, until
// max |y^2 - a| <= 1e-5 or 50 iterations.
// CHECK: newton_sqrt_f32(arg0: f32[17]) -> (out0: f32[17], out1: i32[])
func.func @newton_sqrt_f32(%x: tensor<17xf32>) -> (tensor<17xf32>, tensor<i32>) {
  %one = kiln.constant dense<1.0> : tensor<17xf32>
  %ax = kiln.abs %x : tensor<17xf32>
  %a = kiln.add %ax, %one : tensor<17xf32>
  %zero = kiln.constant dense<0> : tensor<i32>
  %r:3 = kiln.while (%a, %a, %zero) : (tensor<17xf32>, tensor<17xf32>, tensor<i32>) cond {
  ^bb0(%target: tensor<17xf32>, %y: tensor<17xf32>, %it: tensor<i32>):
    %y2 = kiln.mul %y, %y : tensor<17xf32>
    %d = kiln.sub %y2, %target : tensor<17xf32>
    %ad = kiln.abs %d : tensor<17xf32>
    %err = kiln.reduce_max %ad, dims = [0] : tensor<17xf32>
    %tol = kiln.constant dense<1.0e-5> : tensor<f32>
    %far = kiln.compare gt, %err, %tol : tensor<f32>
    %cap = kiln.constant dense<50> : tensor<i32>
    %more = kiln.compare lt, %it, %cap : tensor<i32>
    %go = kiln.select %far, %more, %far : tensor<i1>, tensor<i1>
    kiln.yield %go : tensor<i1>
  } do {
  ^bb0(%target: tensor<17xf32>, %y: tensor<17xf32>, %it: tensor<i32>):
    %q = kiln.div %target, %y : tensor<17xf32>
    %s = kiln.add %y, %q : tensor<17xf32>
    %half = kiln.constant dense<0.5> : tensor<17xf32>
    %next = kiln.mul %s, %half : tensor<17xf32>
    %one_i = kiln.constant dense<1> : tensor<i32>
    %it1 = kiln.add %it, %one_i : tensor<i32>
    kiln.yield %target, %next, %it1 : tensor<17xf32>, tensor<17xf32>, tensor<i32>
  }
  return %r#1, %r#2 : tensor<17xf32>, tensor<i32>
}

// The same in f64 on a scalar, to a tighter tolerance.
// CHECK: newton_sqrt_f64(arg0: f64[]) -> (out0: f64[], out1: i64[])
func.func @newton_sqrt_f64(%x: tensor<f64>) -> (tensor<f64>, tensor<i64>) {
  %one = kiln.constant dense<1.0> : tensor<f64>
  %ax = kiln.abs %x : tensor<f64>
  %a = kiln.add %ax, %one : tensor<f64>
  // Start far from the root so that the loop runs a few times.
  %ten = kiln.constant dense<10.0> : tensor<f64>
  %y0 = kiln.mul %a, %ten : tensor<f64>
  %zero = kiln.constant dense<0> : tensor<i64>
  %r:3 = kiln.while (%a, %y0, %zero) : (tensor<f64>, tensor<f64>, tensor<i64>) cond {
  ^bb0(%target: tensor<f64>, %y: tensor<f64>, %it: tensor<i64>):
    %y2 = kiln.mul %y, %y : tensor<f64>
    %d = kiln.sub %y2, %target : tensor<f64>
    %ad = kiln.abs %d : tensor<f64>
    %tol = kiln.constant dense<1.0e-12> : tensor<f64>
    %far = kiln.compare gt, %ad, %tol : tensor<f64>
    %cap = kiln.constant dense<100> : tensor<i64>
    %more = kiln.compare lt, %it, %cap : tensor<i64>
    %go = kiln.select %far, %more, %far : tensor<i1>, tensor<i1>
    kiln.yield %go : tensor<i1>
  } do {
  ^bb0(%target: tensor<f64>, %y: tensor<f64>, %it: tensor<i64>):
    %q = kiln.div %target, %y : tensor<f64>
    %s = kiln.add %y, %q : tensor<f64>
    %half = kiln.constant dense<0.5> : tensor<f64>
    %next = kiln.mul %s, %half : tensor<f64>
    %one_i = kiln.constant dense<1> : tensor<i64>
    %it1 = kiln.add %it, %one_i : tensor<i64>
    kiln.yield %target, %next, %it1 : tensor<f64>, tensor<f64>, tensor<i64>
  }
  return %r#1, %r#2 : tensor<f64>, tensor<i64>
}

// Collatz: the number of steps from m = 7 (|n| + 1) + 20 (27 ... 83) down to
// 1, capped at 1000. Parity is m - (m / 2) * 2.
// CHECK: collatz_i64(arg0: i64[]) -> (out0: i64[], out1: i64[])
func.func @collatz_i64(%n: tensor<i64>) -> (tensor<i64>, tensor<i64>) {
  %one = kiln.constant dense<1> : tensor<i64>
  %seven = kiln.constant dense<7> : tensor<i64>
  %twenty = kiln.constant dense<20> : tensor<i64>
  %an = kiln.abs %n : tensor<i64>
  %an1 = kiln.add %an, %one : tensor<i64>
  %m7 = kiln.mul %an1, %seven : tensor<i64>
  %m0 = kiln.add %m7, %twenty : tensor<i64>
  %zero = kiln.constant dense<0> : tensor<i64>
  %r:3 = kiln.while (%m0, %zero, %m0) : (tensor<i64>, tensor<i64>, tensor<i64>) cond {
  ^bb0(%m: tensor<i64>, %steps: tensor<i64>, %peak: tensor<i64>):
    %c1 = kiln.constant dense<1> : tensor<i64>
    %notone = kiln.compare ne, %m, %c1 : tensor<i64>
    %cap = kiln.constant dense<1000> : tensor<i64>
    %more = kiln.compare lt, %steps, %cap : tensor<i64>
    %go = kiln.select %notone, %more, %notone : tensor<i1>, tensor<i1>
    kiln.yield %go : tensor<i1>
  } do {
  ^bb0(%m: tensor<i64>, %steps: tensor<i64>, %peak: tensor<i64>):
    %c1 = kiln.constant dense<1> : tensor<i64>
    %c2 = kiln.constant dense<2> : tensor<i64>
    %c3 = kiln.constant dense<3> : tensor<i64>
    %half = kiln.div %m, %c2 : tensor<i64>
    %twice = kiln.mul %half, %c2 : tensor<i64>
    %parity = kiln.sub %m, %twice : tensor<i64>
    %odd = kiln.compare eq, %parity, %c1 : tensor<i64>
    %m3 = kiln.mul %m, %c3 : tensor<i64>
    %m31 = kiln.add %m3, %c1 : tensor<i64>
    %next = kiln.select %odd, %m31, %half : tensor<i1>, tensor<i64>
    %steps1 = kiln.add %steps, %c1 : tensor<i64>
    %peak1 = kiln.max %peak, %next : tensor<i64>
    kiln.yield %next, %steps1, %peak1 : tensor<i64>, tensor<i64>, tensor<i64>
  }
  return %r#1, %r#2 : tensor<i64>, tensor<i64>
}

// Collatz on 17 start values at once: each element freezes at 1, and the
// loop runs until all have arrived.
// CHECK: collatz_vector(arg0: i64[17]) -> (out0: i64[17], out1: i32[])
func.func @collatz_vector(%n: tensor<17xi64>) -> (tensor<17xi64>, tensor<i32>) {
  %one = kiln.constant dense<1> : tensor<17xi64>
  %an = kiln.abs %n : tensor<17xi64>
  %m0 = kiln.add %an, %one : tensor<17xi64>
  %zeros = kiln.constant dense<0> : tensor<17xi64>
  %zero = kiln.constant dense<0> : tensor<i32>
  %r:3 = kiln.while (%m0, %zeros, %zero) : (tensor<17xi64>, tensor<17xi64>, tensor<i32>) cond {
  ^bb0(%m: tensor<17xi64>, %steps: tensor<17xi64>, %it: tensor<i32>):
    %top = kiln.reduce_max %m, dims = [0] : tensor<17xi64>
    %c1 = kiln.constant dense<1> : tensor<i64>
    %notdone = kiln.compare gt, %top, %c1 : tensor<i64>
    %cap = kiln.constant dense<1000> : tensor<i32>
    %more = kiln.compare lt, %it, %cap : tensor<i32>
    %go = kiln.select %notdone, %more, %notdone : tensor<i1>, tensor<i1>
    kiln.yield %go : tensor<i1>
  } do {
  ^bb0(%m: tensor<17xi64>, %steps: tensor<17xi64>, %it: tensor<i32>):
    %c1 = kiln.constant dense<1> : tensor<17xi64>
    %c2 = kiln.constant dense<2> : tensor<17xi64>
    %c3 = kiln.constant dense<3> : tensor<17xi64>
    %half = kiln.div %m, %c2 : tensor<17xi64>
    %twice = kiln.mul %half, %c2 : tensor<17xi64>
    %parity = kiln.sub %m, %twice : tensor<17xi64>
    %odd = kiln.compare eq, %parity, %c1 : tensor<17xi64>
    %m3 = kiln.mul %m, %c3 : tensor<17xi64>
    %m31 = kiln.add %m3, %c1 : tensor<17xi64>
    %step = kiln.select %odd, %m31, %half : tensor<17xi1>, tensor<17xi64>
    %done = kiln.compare eq, %m, %c1 : tensor<17xi64>
    %next = kiln.select %done, %m, %step : tensor<17xi1>, tensor<17xi64>
    %moving = kiln.compare ne, %m, %c1 : tensor<17xi64>
    %inc = kiln.cast %moving : tensor<17xi1> to tensor<17xi64>
    %steps1 = kiln.add %steps, %inc : tensor<17xi64>
    %one_i = kiln.constant dense<1> : tensor<i32>
    %it1 = kiln.add %it, %one_i : tensor<i32>
    kiln.yield %next, %steps1, %it1 : tensor<17xi64>, tensor<17xi64>, tensor<i32>
  }
  return %r#1, %r#2 : tensor<17xi64>, tensor<i32>
}

// A static trip count; the body uses the index tensor (as f32 and as i64).
// The carried values include a tensor of 1000 elements.
// CHECK: for_static(arg0: f32[1000]) -> (out0: f32[1000], out1: i64[])
func.func @for_static(%x: tensor<1000xf32>) -> (tensor<1000xf32>, tensor<i64>) {
  %acc0 = kiln.constant dense<0.0> : tensor<1000xf32>
  %s0 = kiln.constant dense<0> : tensor<i64>
  %r:3 = kiln.for 10 iterations (%x, %acc0, %s0) : (tensor<1000xf32>, tensor<1000xf32>, tensor<i64>) {
  ^bb0(%i: tensor<i64>, %v: tensor<1000xf32>, %acc: tensor<1000xf32>, %s: tensor<i64>):
    %half = kiln.constant dense<0.5> : tensor<1000xf32>
    %decay = kiln.mul %acc, %half : tensor<1000xf32>
    %fi = kiln.cast %i : tensor<i64> to tensor<f32>
    %fib = kiln.broadcast_in_dim %fi, dims = [] : (tensor<f32>) -> tensor<1000xf32>
    %term = kiln.mul %v, %fib : tensor<1000xf32>
    %acc1 = kiln.add %decay, %term : tensor<1000xf32>
    %i2 = kiln.mul %i, %i : tensor<i64>
    %s1 = kiln.add %s, %i2 : tensor<i64>
    kiln.yield %v, %acc1, %s1 : tensor<1000xf32>, tensor<1000xf32>, tensor<i64>
  }
  return %r#1, %r#2 : tensor<1000xf32>, tensor<i64>
}

// 1000 iterations: sum of i^2 in i64 (332833500) and the harmonic number
// H(1000) in f64, plus a damped update of an input vector.
// CHECK: for_long(arg0: f32[3]) -> (out0: i64[], out1: f64[], out2: f32[3])
func.func @for_long(%x: tensor<3xf32>) -> (tensor<i64>, tensor<f64>, tensor<3xf32>) {
  %s0 = kiln.constant dense<0> : tensor<i64>
  %h0 = kiln.constant dense<0.0> : tensor<f64>
  %y0 = kiln.constant dense<0.0> : tensor<3xf32>
  %r:4 = kiln.for 1000 iterations (%s0, %h0, %y0, %x) : (tensor<i64>, tensor<f64>, tensor<3xf32>, tensor<3xf32>) {
  ^bb0(%i: tensor<i64>, %s: tensor<i64>, %h: tensor<f64>, %y: tensor<3xf32>, %v: tensor<3xf32>):
    %i2 = kiln.mul %i, %i : tensor<i64>
    %s1 = kiln.add %s, %i2 : tensor<i64>
    %one = kiln.constant dense<1.0> : tensor<f64>
    %fi = kiln.cast %i : tensor<i64> to tensor<f64>
    %fi1 = kiln.add %fi, %one : tensor<f64>
    %inv = kiln.div %one, %fi1 : tensor<f64>
    %h1 = kiln.add %h, %inv : tensor<f64>
    %k = kiln.constant dense<0.99> : tensor<3xf32>
    %yk = kiln.mul %y, %k : tensor<3xf32>
    %y1 = kiln.add %yk, %v : tensor<3xf32>
    kiln.yield %s1, %h1, %y1, %v : tensor<i64>, tensor<f64>, tensor<3xf32>, tensor<3xf32>
  }
  return %r#0, %r#1, %r#2 : tensor<i64>, tensor<f64>, tensor<3xf32>
}

// A while loop carrying 1000 elements: v <- v / 2 + 1 converges to 2; it
// stops once every element is within 1e-3 of 2, at most 100 times.
// CHECK: while_large_carried(arg0: f32[1000]) -> (out0: f32[1000], out1: i32[])
func.func @while_large_carried(%x: tensor<1000xf32>) -> (tensor<1000xf32>, tensor<i32>) {
  %zero = kiln.constant dense<0> : tensor<i32>
  %r:2 = kiln.while (%x, %zero) : (tensor<1000xf32>, tensor<i32>) cond {
  ^bb0(%v: tensor<1000xf32>, %it: tensor<i32>):
    %two = kiln.constant dense<2.0> : tensor<1000xf32>
    %d = kiln.sub %v, %two : tensor<1000xf32>
    %ad = kiln.abs %d : tensor<1000xf32>
    %err = kiln.reduce_max %ad, dims = [0] : tensor<1000xf32>
    %tol = kiln.constant dense<1.0e-3> : tensor<f32>
    %far = kiln.compare gt, %err, %tol : tensor<f32>
    %cap = kiln.constant dense<100> : tensor<i32>
    %more = kiln.compare lt, %it, %cap : tensor<i32>
    %go = kiln.select %far, %more, %far : tensor<i1>, tensor<i1>
    kiln.yield %go : tensor<i1>
  } do {
  ^bb0(%v: tensor<1000xf32>, %it: tensor<i32>):
    %half = kiln.constant dense<0.5> : tensor<1000xf32>
    %one = kiln.constant dense<1.0> : tensor<1000xf32>
    %vh = kiln.mul %v, %half : tensor<1000xf32>
    %v1 = kiln.add %vh, %one : tensor<1000xf32>
    %one_i = kiln.constant dense<1> : tensor<i32>
    %it1 = kiln.add %it, %one_i : tensor<i32>
    kiln.yield %v1, %it1 : tensor<1000xf32>, tensor<i32>
  }
  return %r#0, %r#1 : tensor<1000xf32>, tensor<i32>
}

// A cond inside a while: |n| + 5 iterations, halving x (plus 1) on even
// counts and subtracting 1/4 on odd ones.
// CHECK: cond_in_while(arg0: i32[], arg1: f32[3]) -> (out0: f32[3], out1: i32[])
func.func @cond_in_while(%n: tensor<i32>, %x: tensor<3xf32>) -> (tensor<3xf32>, tensor<i32>) {
  %five = kiln.constant dense<5> : tensor<i32>
  %an = kiln.abs %n : tensor<i32>
  %limit = kiln.add %an, %five : tensor<i32>
  %zero = kiln.constant dense<0> : tensor<i32>
  %r:3 = kiln.while (%x, %zero, %limit) : (tensor<3xf32>, tensor<i32>, tensor<i32>) cond {
  ^bb0(%v: tensor<3xf32>, %c: tensor<i32>, %lim: tensor<i32>):
    %go = kiln.compare lt, %c, %lim : tensor<i32>
    kiln.yield %go : tensor<i1>
  } do {
  ^bb0(%v: tensor<3xf32>, %c: tensor<i32>, %lim: tensor<i32>):
    %two = kiln.constant dense<2> : tensor<i32>
    %h = kiln.div %c, %two : tensor<i32>
    %h2 = kiln.mul %h, %two : tensor<i32>
    %even = kiln.compare eq, %h2, %c : tensor<i32>
    %v1 = kiln.cond %even, (%v) : tensor<i1>, (tensor<3xf32>) -> (tensor<3xf32>) {
    ^bb0(%a: tensor<3xf32>):
      %half = kiln.constant dense<0.5> : tensor<3xf32>
      %one = kiln.constant dense<1.0> : tensor<3xf32>
      %ah = kiln.mul %a, %half : tensor<3xf32>
      %a1 = kiln.add %ah, %one : tensor<3xf32>
      kiln.yield %a1 : tensor<3xf32>
    } else {
    ^bb0(%a: tensor<3xf32>):
      %q = kiln.constant dense<0.25> : tensor<3xf32>
      %a1 = kiln.sub %a, %q : tensor<3xf32>
      kiln.yield %a1 : tensor<3xf32>
    }
    %one_i = kiln.constant dense<1> : tensor<i32>
    %c1 = kiln.add %c, %one_i : tensor<i32>
    kiln.yield %v1, %c1, %lim : tensor<3xf32>, tensor<i32>, tensor<i32>
  }
  return %r#0, %r#1 : tensor<3xf32>, tensor<i32>
}

// A while inside a cond: when p holds, double k = |n| + 1 until it exceeds
// 1000 and count the doublings; otherwise return n^2 and 0 doublings.
// CHECK: while_in_cond(arg0: i1[], arg1: i64[]) -> (out0: i64[], out1: i64[])
func.func @while_in_cond(%p: tensor<i1>, %n: tensor<i64>) -> (tensor<i64>, tensor<i64>) {
  %r:2 = kiln.cond %p, (%n) : tensor<i1>, (tensor<i64>) -> (tensor<i64>, tensor<i64>) {
  ^bb0(%a: tensor<i64>):
    %one = kiln.constant dense<1> : tensor<i64>
    %aa = kiln.abs %a : tensor<i64>
    %k0 = kiln.add %aa, %one : tensor<i64>
    %zero = kiln.constant dense<0> : tensor<i64>
    %w:2 = kiln.while (%k0, %zero) : (tensor<i64>, tensor<i64>) cond {
    ^bb0(%k: tensor<i64>, %c: tensor<i64>):
      %lim = kiln.constant dense<1000> : tensor<i64>
      %go = kiln.compare le, %k, %lim : tensor<i64>
      kiln.yield %go : tensor<i1>
    } do {
    ^bb0(%k: tensor<i64>, %c: tensor<i64>):
      %two = kiln.constant dense<2> : tensor<i64>
      %k2 = kiln.mul %k, %two : tensor<i64>
      %c1 = kiln.constant dense<1> : tensor<i64>
      %cc = kiln.add %c, %c1 : tensor<i64>
      kiln.yield %k2, %cc : tensor<i64>, tensor<i64>
    }
    kiln.yield %w#0, %w#1 : tensor<i64>, tensor<i64>
  } else {
  ^bb0(%a: tensor<i64>):
    %sq = kiln.mul %a, %a : tensor<i64>
    %zero = kiln.constant dense<0> : tensor<i64>
    kiln.yield %sq, %zero : tensor<i64>, tensor<i64>
  }
  return %r#0, %r#1 : tensor<i64>, tensor<i64>
}

// for-in-for: 3 x 17 iterations. The inner loop receives the outer index
// as a carried value (regions are isolated from above).
// CHECK: nested_for(arg0: f32[17]) -> (out0: f32[17], out1: i64[])
func.func @nested_for(%x: tensor<17xf32>) -> (tensor<17xf32>, tensor<i64>) {
  %acc0 = kiln.constant dense<0.0> : tensor<17xf32>
  %t0 = kiln.constant dense<0> : tensor<i64>
  %r:3 = kiln.for 3 iterations (%acc0, %t0, %x) : (tensor<17xf32>, tensor<i64>, tensor<17xf32>) {
  ^bb0(%i: tensor<i64>, %acc: tensor<17xf32>, %t: tensor<i64>, %v: tensor<17xf32>):
    %in:4 = kiln.for 17 iterations (%acc, %t, %v, %i) : (tensor<17xf32>, tensor<i64>, tensor<17xf32>, tensor<i64>) {
    ^bb0(%j: tensor<i64>, %a: tensor<17xf32>, %s: tensor<i64>, %w: tensor<17xf32>, %oi: tensor<i64>):
      // s += 17 * i + j; a = a / 2 + w * (i - j)
      %c17 = kiln.constant dense<17> : tensor<i64>
      %i17 = kiln.mul %oi, %c17 : tensor<i64>
      %lin = kiln.add %i17, %j : tensor<i64>
      %s1 = kiln.add %s, %lin : tensor<i64>
      %diff = kiln.sub %oi, %j : tensor<i64>
      %fd = kiln.cast %diff : tensor<i64> to tensor<f32>
      %fdb = kiln.broadcast_in_dim %fd, dims = [] : (tensor<f32>) -> tensor<17xf32>
      %wd = kiln.mul %w, %fdb : tensor<17xf32>
      %half = kiln.constant dense<0.5> : tensor<17xf32>
      %ah = kiln.mul %a, %half : tensor<17xf32>
      %a1 = kiln.add %ah, %wd : tensor<17xf32>
      kiln.yield %a1, %s1, %w, %oi : tensor<17xf32>, tensor<i64>, tensor<17xf32>, tensor<i64>
    }
    kiln.yield %in#0, %in#1, %v : tensor<17xf32>, tensor<i64>, tensor<17xf32>
  }
  return %r#0, %r#1 : tensor<17xf32>, tensor<i64>
}

// while-in-while: for i in [0, |a| + 2), for j in [0, i + |b| + 1):
// count += i * j + 1, and x accumulates a damped copy of itself.
// CHECK: nested_while(arg0: i32[], arg1: i32[], arg2: f64[3]) -> (out0: i32[], out1: f64[3])
func.func @nested_while(%a: tensor<i32>, %b: tensor<i32>, %x: tensor<3xf64>) -> (tensor<i32>, tensor<3xf64>) {
  %two = kiln.constant dense<2> : tensor<i32>
  %aa = kiln.abs %a : tensor<i32>
  %outer_lim = kiln.add %aa, %two : tensor<i32>
  %ab = kiln.abs %b : tensor<i32>
  %zero = kiln.constant dense<0> : tensor<i32>
  %y0 = kiln.constant dense<0.0> : tensor<3xf64>
  %r:6 = kiln.while (%zero, %zero, %outer_lim, %ab, %x, %y0) : (tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<3xf64>, tensor<3xf64>) cond {
  ^bb0(%i: tensor<i32>, %count: tensor<i32>, %lim: tensor<i32>, %bb: tensor<i32>, %v: tensor<3xf64>, %y: tensor<3xf64>):
    %go = kiln.compare lt, %i, %lim : tensor<i32>
    kiln.yield %go : tensor<i1>
  } do {
  ^bb0(%i: tensor<i32>, %count: tensor<i32>, %lim: tensor<i32>, %bb: tensor<i32>, %v: tensor<3xf64>, %y: tensor<3xf64>):
    %c1 = kiln.constant dense<1> : tensor<i32>
    %ib = kiln.add %i, %bb : tensor<i32>
    %inner_lim = kiln.add %ib, %c1 : tensor<i32>
    %z = kiln.constant dense<0> : tensor<i32>
    %in:5 = kiln.while (%z, %count, %inner_lim, %i, %y) : (tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<3xf64>) cond {
    ^bb0(%j: tensor<i32>, %c: tensor<i32>, %l: tensor<i32>, %ii: tensor<i32>, %w: tensor<3xf64>):
      %go = kiln.compare lt, %j, %l : tensor<i32>
      kiln.yield %go : tensor<i1>
    } do {
    ^bb0(%j: tensor<i32>, %c: tensor<i32>, %l: tensor<i32>, %ii: tensor<i32>, %w: tensor<3xf64>):
      %one = kiln.constant dense<1> : tensor<i32>
      %ij = kiln.mul %ii, %j : tensor<i32>
      %ij1 = kiln.add %ij, %one : tensor<i32>
      %c2 = kiln.add %c, %ij1 : tensor<i32>
      %j1 = kiln.add %j, %one : tensor<i32>
      %k = kiln.constant dense<0.75> : tensor<3xf64>
      %wk = kiln.mul %w, %k : tensor<3xf64>
      kiln.yield %j1, %c2, %l, %ii, %wk : tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<3xf64>
    }
    %y1 = kiln.add %in#4, %v : tensor<3xf64>
    %i1 = kiln.add %i, %c1 : tensor<i32>
    kiln.yield %i1, %in#1, %lim, %bb, %v, %y1 : tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<3xf64>, tensor<3xf64>
  }
  return %r#1, %r#5 : tensor<i32>, tensor<3xf64>
}

// Loops that run zero times return their initial values: a for with trip
// count 0, and a while whose condition (counter < 0, with the counter
// starting at |n|) is false at once. The results are combined with another
// input so that the function returns newly computed values.
// CHECK: zero_trip_loops(arg0: f32[1000], arg1: f32[1000], arg2: i32[], arg3: i64[3]) -> (out0: f32[1000], out1: i64[3], out2: i32[], out3: i64[3])
func.func @zero_trip_loops(%x: tensor<1000xf32>, %y: tensor<1000xf32>, %n: tensor<i32>, %k: tensor<3xi64>) -> (tensor<1000xf32>, tensor<3xi64>, tensor<i32>, tensor<3xi64>) {
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

// An RNN over a sequence of 17 steps: h <- tanh(x_t wx + h wh + b), where
// x_t is row t of the sequence, picked with a gather on the loop index
// (kiln.slice only takes static offsets). Every hidden state is written to
// row t of a 17x5 output with a select on an iota mask. wh is scaled by
// 0.1 so that the recurrence is contracting (not chaotic).
// CHECK: rnn_sequence(arg0: f32[17,3], arg1: f32[1,5], arg2: f32[3,5], arg3: f32[5,5], arg4: f32[5]) -> (out0: f32[1,5], out1: f32[17,5])
func.func @rnn_sequence(%seq: tensor<17x3xf32>, %h0: tensor<1x5xf32>, %wx: tensor<3x5xf32>, %wh: tensor<5x5xf32>, %b: tensor<5xf32>) -> (tensor<1x5xf32>, tensor<17x5xf32>) {
  %tenth = kiln.constant dense<0.1> : tensor<5x5xf32>
  %whs = kiln.mul %wh, %tenth : tensor<5x5xf32>
  %bb = kiln.reshape %b : (tensor<5xf32>) -> tensor<1x5xf32>
  %states0 = kiln.constant dense<0.0> : tensor<17x5xf32>
  %r:6 = kiln.for 17 iterations (%h0, %states0, %seq, %wx, %whs, %bb) : (tensor<1x5xf32>, tensor<17x5xf32>, tensor<17x3xf32>, tensor<3x5xf32>, tensor<5x5xf32>, tensor<1x5xf32>) {
  ^bb0(%t: tensor<i64>, %h: tensor<1x5xf32>, %states: tensor<17x5xf32>, %xs: tensor<17x3xf32>, %u: tensor<3x5xf32>, %w: tensor<5x5xf32>, %bias: tensor<1x5xf32>):
    %tv = kiln.reshape %t : (tensor<i64>) -> tensor<1xi64>
    %xt = kiln.gather %xs, %tv : tensor<17x3xf32>, tensor<1xi64>
    %a = kiln.matmul %xt, %u : tensor<1x3xf32>, tensor<3x5xf32>
    %c = kiln.matmul %h, %w : tensor<1x5xf32>, tensor<5x5xf32>
    %ac = kiln.add %a, %c : tensor<1x5xf32>
    %z = kiln.add %ac, %bias : tensor<1x5xf32>
    %h1 = kiln.tanh %z : tensor<1x5xf32>
    %rows = kiln.iota dim = 0 : tensor<17x5xi64>
    %tb = kiln.broadcast_in_dim %t, dims = [] : (tensor<i64>) -> tensor<17x5xi64>
    %here = kiln.compare eq, %rows, %tb : tensor<17x5xi64>
    %hb = kiln.broadcast_in_dim %h1, dims = [0, 1] : (tensor<1x5xf32>) -> tensor<17x5xf32>
    %states1 = kiln.select %here, %hb, %states : tensor<17x5xi1>, tensor<17x5xf32>
    kiln.yield %h1, %states1, %xs, %u, %w, %bias : tensor<1x5xf32>, tensor<17x5xf32>, tensor<17x3xf32>, tensor<3x5xf32>, tensor<5x5xf32>, tensor<1x5xf32>
  }
  return %r#0, %r#1 : tensor<1x5xf32>, tensor<17x5xf32>
}

// An if / elif / else chain (a cond in a branch of another) inside a
// while loop, the branches taken on the counter: on a GPU the loop runs
// as a CUDA graph with both conds as IF nodes in its iteration.
// CHECK: elif_in_while(arg0: f32[4], arg1: i32[]) -> (out0: f32[4])
func.func @elif_in_while(%x: tensor<4xf32>, %n: tensor<i32>) -> tensor<4xf32> {
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

// A loop inside a cond inside a loop: on odd counts the branch halves the
// value as many times as the count, on even ones it negates it. On a GPU
// the inner loop gets its graph form, then the cond (holding the inner
// loop's WHILE node in an IF node), then the outer loop, and the call is
// one CUDA graph.
// CHECK: while_cond_while(arg0: f32[4], arg1: i32[]) -> (out0: f32[4])
func.func @while_cond_while(%x: tensor<4xf32>, %n: tensor<i32>) -> tensor<4xf32> {
  %w:2 = kiln.while (%x, %n) : (tensor<4xf32>, tensor<i32>) cond {
  ^bb0(%v: tensor<4xf32>, %i: tensor<i32>):
    %none = kiln.constant dense<0> : tensor<i32>
    %more = kiln.compare gt, %i, %none : tensor<i32>
    kiln.yield %more : tensor<i1>
  } do {
  ^bb0(%v: tensor<4xf32>, %i: tensor<i32>):
    %two = kiln.constant dense<2> : tensor<i32>
    %r = kiln.rem %i, %two : tensor<i32>
    %zero = kiln.constant dense<0> : tensor<i32>
    %odd = kiln.compare ne, %r, %zero : tensor<i32>
    %b = kiln.cond %odd, (%v, %i) : tensor<i1>, (tensor<4xf32>, tensor<i32>) -> (tensor<4xf32>) {
    ^bb0(%u: tensor<4xf32>, %k: tensor<i32>):
      %inner:2 = kiln.while (%u, %k) : (tensor<4xf32>, tensor<i32>) cond {
      ^bb0(%a: tensor<4xf32>, %j: tensor<i32>):
        %z = kiln.constant dense<0> : tensor<i32>
        %again = kiln.compare gt, %j, %z : tensor<i32>
        kiln.yield %again : tensor<i1>
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
      %ng = kiln.neg %u : tensor<4xf32>
      kiln.yield %ng : tensor<4xf32>
    }
    %one = kiln.constant dense<1> : tensor<i32>
    %i1 = kiln.sub %i, %one : tensor<i32>
    kiln.yield %b, %i1 : tensor<4xf32>, tensor<i32>
  }
  return %w#0 : tensor<4xf32>
}

// A kiln.for inside a kiln.while (a fixed number of steps per round, for
// as many rounds as the count says): on a GPU the loop runs as a CUDA graph
// whose iteration holds the for loop's three trips, which the capture
// unrolls, and the call is one graph.
// CHECK: while_with_for(arg0: f32[64], arg1: i32[]) -> (out0: f32[64], out1: i32[])
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

// A kiln.for inside a kiln.cond inside a kiln.while: on even counts the
// branch halves the value twice, on odd ones it negates it. On a GPU the
// cond's graph form runs the for loop's trips in its IF node, inside the
// loop's graph, and the call is one graph.
// CHECK: while_cond_for(arg0: f32[64], arg1: i32[]) -> (out0: f32[64])
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

// A kiln.while inside a kiln.for (a fixed number of rounds, each a
// data-dependent loop): every round halves the value and adds the round's
// index as many times as the count says. On a GPU the inner loop runs as a
// WHILE node, and the capture of the call runs the for loop's trips, so the
// call is one graph holding three WHILE nodes.
// CHECK: for_with_while(arg0: f32[64], arg1: i32[]) -> (out0: f32[64])
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

// A kiln.cond inside a kiln.for inside a kiln.while: each round runs four
// steps, halving the value on steps of even count and negating it on odd
// ones. On a GPU the loop's graph holds the for loop's four trips, each an
// IF node, and the call is one graph.
// CHECK: while_for_cond(arg0: f32[64], arg1: i32[]) -> (out0: f32[64], out1: i32[])
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

// A kiln.while inside a kiln.for inside a kiln.cond: on even counts the
// branch runs two rounds of a data-dependent loop, on odd ones it negates
// the value. On a GPU the cond's IF node holds the for loop's two trips,
// each a WHILE node, and the call is one graph.
// CHECK: cond_for_while(arg0: f32[64], arg1: i32[]) -> (out0: f32[64])
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

// A kiln.for carrying two values inside a kiln.cond whose branch yields
// one of them: on a GPU the branch frees the other (a buffer of the for
// loop's last trip) in its IF node, and the call is one graph.
// CHECK: cond_for_pair(arg0: f32[8], arg1: i32[]) -> (out0: f32[8])
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

// A kiln.select and a kiln.cond on the same predicate: on a GPU the
// select's kernel reads the predicate itself, the cond has the host's read
// to itself and takes its graph form, and the call is one graph.
// CHECK: select_and_cond(arg0: f32[64], arg1: f32[64], arg2: i32[]) -> (out0: f32[64], out1: f32[64])
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

// A select on one predicate and a cond on another, whose byte is the
// first's (bufferization reuses it), written before the pick is read
// again: on a GPU the pick is read through a copy of the first predicate.
// CHECK: select_reused_byte(arg0: f32[64], arg1: f32[64], arg2: i32[]) -> (out0: f32[64], out1: f32[64])
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

// A recurrent step over a sequence in a kiln.while whose counter is
// carried (n is at most 8 here): each iteration's product reads the step's
// rows at the counter, a dynamic slice of device memory on a GPU.
// CHECK: rnn_while(arg0: f32[8,4,16], arg1: f32[16,16], arg2: f32[4,16], arg3: i64[]) -> (out0: f32[4,16])
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

// A cond whose first branch yields a reshape of a result it computes.
// CHECK: cond_reshape(arg0: f32[4,16], arg1: f32[64], arg2: i32[]) -> (out0: f32[64])
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

// A cond whose first branch yields one result for both of its results.
// CHECK: cond_same_twice(arg0: f32[16], arg1: i32[]) -> (out0: f32[16], out1: f32[16])
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

// A kiln.while whose init is a strided slice.
// CHECK: while_from_slice(arg0: f32[4,16], arg1: i32[]) -> (out0: f32[4,8])
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

// A kiln.for whose init is a dynamic slice.
// CHECK: for_from_dynamic_slice(arg0: f32[8,4], arg1: i64[]) -> (out0: f32[3,4])
func.func @for_from_dynamic_slice(%xs: tensor<8x4xf32>, %k: tensor<i64>) -> tensor<3x4xf32> {
  %d = kiln.dynamic_slice %xs[%k], size = 3 : tensor<8x4xf32>
  %r = kiln.for 3 iterations (%d) : (tensor<3x4xf32>) {
  ^bb0(%t: tensor<i64>, %v: tensor<3x4xf32>):
    %h = kiln.tanh %v : tensor<3x4xf32>
    kiln.yield %h : tensor<3x4xf32>
  }
  return %r : tensor<3x4xf32>
}

// A kiln.while whose init is a select on a scalar predicate.
// CHECK: while_from_pick(arg0: f32[16], arg1: f32[16], arg2: i32[]) -> (out0: f32[16])
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

// Two conds on one predicate (as a cond and its gradient's cond).
// CHECK: cond_twice(arg0: f32[16], arg1: i32[]) -> (out0: f32[16])
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

// A cond per step on predicates read back from a tensor in reverse (as a
// gradient's backward loop reads the forward loop's predicates).
// CHECK: cond_on_stacked(arg0: i1[4], arg1: f32[16]) -> (out0: f32[16])
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
