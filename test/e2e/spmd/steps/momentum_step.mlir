// A single-device training step (a linear layer, squared error, SGD with
// momentum) that test/e2e/spmd/CMakeLists.txt rewrites with
// kiln-data-parallel, and with kiln-zero at stages 1, 2 and 3, then runs
// through MPI on 2 and 4 ranks against the evaluator (spmd.step_*).
// w's 35 elements and b's 7 need padding into blocks on 2 and 4 ranks.
// RUN: kiln-opt %s --kiln-data-parallel="ranks=4 batch-args=0,1" --kiln-zero="stage=3 sharded-args=2,3,4,5 sharded-results=1,2,3,4" | kiln-compile - -o %t.kmod
func.func @step(%x: tensor<8x5xf32>, %t: tensor<8x7xf32>, %w: tensor<5x7xf32>, %b: tensor<7xf32>, %mw: tensor<5x7xf32>, %mb: tensor<7xf32>) -> (tensor<f32>, tensor<5x7xf32>, tensor<7xf32>, tensor<5x7xf32>, tensor<7xf32>) {
  %y0 = kiln.matmul %x, %w : tensor<8x5xf32>, tensor<5x7xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [1] : (tensor<7xf32>) -> tensor<8x7xf32>
  %y1 = kiln.add %y0, %bb : tensor<8x7xf32>
  %y = kiln.tanh %y1 : tensor<8x7xf32>
  %d = kiln.sub %y, %t : tensor<8x7xf32>
  %sq = kiln.mul %d, %d : tensor<8x7xf32>
  %s = kiln.reduce_mean %sq, dims = [0, 1] : tensor<8x7xf32>
  %one = kiln.constant dense<1.000000e+00> : tensor<8x7xf32>
  %yy = kiln.mul %y, %y : tensor<8x7xf32>
  %dt = kiln.sub %one, %yy : tensor<8x7xf32>
  %scale = kiln.constant dense<0.0357142873> : tensor<8x7xf32>
  %g0 = kiln.mul %d, %scale : tensor<8x7xf32>
  %g = kiln.mul %g0, %dt : tensor<8x7xf32>
  %xt = kiln.transpose %x, permutation = [1, 0] : tensor<8x5xf32>
  %gw = kiln.matmul %xt, %g : tensor<5x8xf32>, tensor<8x7xf32>
  %gb = kiln.reduce_sum %g, dims = [0] : tensor<8x7xf32>
  %muw = kiln.constant dense<9.000000e-01> : tensor<5x7xf32>
  %mub = kiln.constant dense<9.000000e-01> : tensor<7xf32>
  %lrw = kiln.constant dense<1.000000e-01> : tensor<5x7xf32>
  %lrb = kiln.constant dense<1.000000e-01> : tensor<7xf32>
  %mw1 = kiln.mul %mw, %muw : tensor<5x7xf32>
  %mw2 = kiln.add %mw1, %gw : tensor<5x7xf32>
  %mb1 = kiln.mul %mb, %mub : tensor<7xf32>
  %mb2 = kiln.add %mb1, %gb : tensor<7xf32>
  %dw = kiln.mul %lrw, %mw2 : tensor<5x7xf32>
  %w1 = kiln.sub %w, %dw : tensor<5x7xf32>
  %db = kiln.mul %lrb, %mb2 : tensor<7xf32>
  %b1 = kiln.sub %b, %db : tensor<7xf32>
  return %s, %w1, %b1, %mw2, %mb2 : tensor<f32>, tensor<5x7xf32>, tensor<7xf32>, tensor<5x7xf32>, tensor<7xf32>
}
