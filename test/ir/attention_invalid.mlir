// RUN: kiln-opt %s -split-input-file -verify-diagnostics

func.func @element_types(%q: tensor<4x8xf32>, %k: tensor<4x8xf64>,
                         %v: tensor<4x8xf32>) {
  // expected-error @+1 {{query, key and value must have one element type, got 'f32', 'f64' and 'f32'}}
  %o, %l = kiln.attention %q, %k, %v {scale = 1.0 : f64}
      : tensor<4x8xf32>, tensor<4x8xf64>, tensor<4x8xf32>
  return
}

// -----

func.func @rank_one(%q: tensor<8xf32>, %k: tensor<8xf32>, %v: tensor<8xf32>) {
  // expected-error @+1 {{query, key and value must have one rank of at least 2 ([leading..., rows, features]), got query [8], key [8] and value [8]}}
  %o, %l = kiln.attention %q, %k, %v {scale = 1.0 : f64}
      : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  return
}

// -----

func.func @leading(%q: tensor<2x4x8xf32>, %k: tensor<3x4x8xf32>,
                   %v: tensor<3x4x8xf32>) {
  // expected-error @+1 {{leading dims differ: query [2,4,8], key [3,4,8], value [3,4,8]}}
  %o, %l = kiln.attention %q, %k, %v {scale = 1.0 : f64}
      : tensor<2x4x8xf32>, tensor<3x4x8xf32>, tensor<3x4x8xf32>
  return
}

// -----

func.func @features(%q: tensor<4x8xf32>, %k: tensor<6x7xf32>,
                    %v: tensor<6x8xf32>) {
  // expected-error @+1 {{key [6,7] must have the feature size of query [4,8] (8)}}
  %o, %l = kiln.attention %q, %k, %v {scale = 1.0 : f64}
      : tensor<4x8xf32>, tensor<6x7xf32>, tensor<6x8xf32>
  return
}

// -----

func.func @value_rows(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>,
                      %v: tensor<5x8xf32>) {
  // expected-error @+1 {{value [5,8] must have as many rows as key [6,8] (6)}}
  %o, %l = kiln.attention %q, %k, %v {scale = 1.0 : f64}
      : tensor<4x8xf32>, tensor<6x8xf32>, tensor<5x8xf32>
  return
}

// -----

func.func @mask_shape(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>,
                      %v: tensor<2x6x8xf32>, %m: tensor<2x4x5xf32>) {
  // expected-error @+1 {{mask [2,4,5] must have the scores' shape [2,4,6] with any dim possibly 1}}
  %o, %l = kiln.attention %q, %k, %v mask %m {scale = 1.0 : f64}
      : tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>,
        tensor<2x4x5xf32>
  return
}

// -----

func.func @mask_rank(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>,
                     %v: tensor<2x6x8xf32>, %m: tensor<4x6xf32>) {
  // expected-error @+1 {{mask [4,6] must have the scores' shape [2,4,6] with any dim possibly 1}}
  %o, %l = kiln.attention %q, %k, %v mask %m {scale = 1.0 : f64}
      : tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32>, tensor<4x6xf32>
  return
}

// -----

func.func @mask_type(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>,
                     %v: tensor<6x8xf32>, %m: tensor<4x6xf16>) {
  // expected-error @+1 {{mask element type 'f16' differs from query's 'f32'}}
  %o, %l = kiln.attention %q, %k, %v mask %m {scale = 1.0 : f64}
      : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>, tensor<4x6xf16>
  return
}

// -----

func.func @scale(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>,
                 %v: tensor<6x8xf32>) {
  // expected-error @+1 {{scale must be finite, got INF}}
  %o, %l = kiln.attention %q, %k, %v {scale = 0x7FF0000000000000 : f64}
      : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>
  return
}

// -----

func.func @grad_lse(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>,
                    %v: tensor<6x8xf32>, %o: tensor<4x8xf32>,
                    %l: tensor<4xf16>, %do: tensor<4x8xf32>) {
  // expected-error @+1 {{lse must have type 'tensor<4xf32>' (the attention's), got 'tensor<4xf16>'}}
  %dq, %dk, %dv = kiln.attention_grad %q, %k, %v, %o, %l, %do {scale = 1.0 : f64}
      : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>, tensor<4x8xf32>,
        tensor<4xf16>
  return
}

// -----

func.func @grad_result(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>,
                       %v: tensor<6x8xf32>, %o: tensor<4x7xf32>,
                       %l: tensor<4xf32>, %do: tensor<4x7xf32>) {
  // expected-error @+1 {{result must have type 'tensor<4x8xf32>' (the attention's), got 'tensor<4x7xf32>'}}
  %dq, %dk, %dv = kiln.attention_grad %q, %k, %v, %o, %l, %do {scale = 1.0 : f64}
      : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>, tensor<4x7xf32>,
        tensor<4xf32>
  return
}
