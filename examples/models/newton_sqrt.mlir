// Square roots by Newton's method: g <- (g + x/g) / 2 until every |g*g - x|
// is below a relative tolerance. How many iterations run depends on the
// data, so this is a kiln.while with a data-dependent trip count; the loop
// also counts its iterations and stops after 100 whatever happens.
func.func @newton_sqrt(%x: tensor<4xf32> {kiln.name = "x"})
    -> (tensor<4xf32> {kiln.name = "root"}, tensor<i64> {kiln.name = "iterations"}) {
  %zero = kiln.constant dense<0> : tensor<i64>
  %r:3 = kiln.while (%x, %x, %zero) : (tensor<4xf32>, tensor<4xf32>, tensor<i64>) cond {
  ^bb0(%g: tensor<4xf32>, %t: tensor<4xf32>, %n: tensor<i64>):
    %sq = kiln.mul %g, %g : tensor<4xf32>
    %d = kiln.sub %sq, %t : tensor<4xf32>
    %ad = kiln.abs %d : tensor<4xf32>
    %tol = kiln.constant dense<1.0e-6> : tensor<4xf32>
    %scaled = kiln.mul %t, %tol : tensor<4xf32>
    %rel = kiln.div %ad, %scaled : tensor<4xf32>
    %worst = kiln.reduce_max %rel, dims = [0] : tensor<4xf32>
    %one = kiln.constant dense<1.0> : tensor<f32>
    %far = kiln.compare gt, %worst, %one : tensor<f32>
    %cap = kiln.constant dense<100> : tensor<i64>
    %more = kiln.compare lt, %n, %cap : tensor<i64>
    %go = kiln.select %far, %more, %far : tensor<i1>, tensor<i1>
    kiln.yield %go : tensor<i1>
  } do {
  ^bb0(%g: tensor<4xf32>, %t: tensor<4xf32>, %n: tensor<i64>):
    %q = kiln.div %t, %g : tensor<4xf32>
    %s = kiln.add %g, %q : tensor<4xf32>
    %half = kiln.constant dense<0.5> : tensor<4xf32>
    %next = kiln.mul %s, %half : tensor<4xf32>
    %one = kiln.constant dense<1> : tensor<i64>
    %n1 = kiln.add %n, %one : tensor<i64>
    kiln.yield %next, %t, %n1 : tensor<4xf32>, tensor<4xf32>, tensor<i64>
  }
  return %r#0, %r#2 : tensor<4xf32>, tensor<i64>
}
