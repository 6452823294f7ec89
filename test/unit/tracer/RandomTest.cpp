//===- RandomTest.cpp - kiln::random, bitwise ops, shifts, ui32 -----------===//
//
// The random functions against values printed by JAX 0.10 (jax.random with
// its default partitionable Threefry; the f64 draws with jax_enable_x64) for
// the same keys, bit for bit where JAX's algorithm is the same integer
// arithmetic, and statistically (moments, a chi-square test) on larger
// draws. The bitwise ops and shifts against plain C++ on the same bits.
//
//===----------------------------------------------------------------------===//

#include "TracerTestSupport.h"

#include <cmath>
#include <cstdint>
#include <limits>

using kiln::DType;
using kiln::Tensor;
using kiln::Tensors;
using namespace tracertest;

namespace {

/// A function of no inputs and its outputs, which live in its context.
struct Drawn {
  kiln::TracedFunction function;
  std::vector<kiln::HostTensor> out;
};

/// Traces `body` with no inputs and evaluates it.
Drawn draw(std::function<Tensors()> body) {
  Drawn drawn{kiln::trace("draw", {},
                          [&](const Tensors &) { return body(); }),
              {}};
  drawn.out = run(drawn.function, {});
  return drawn;
}

TEST(Random, KeysSplitAndFoldInAreJax) {
  auto [function, out] = draw([] {
    Tensor key = kiln::random::key(0);
    return Tensors{key,
                   kiln::random::key(-1),
                   kiln::random::key(int64_t{1} << 40 | 5),
                   kiln::random::split(key, 3),
                   kiln::random::fold_in(key, 7),
                   kiln::random::fold_in(key, -1),
                   kiln::random::key(kiln::constant(kiln::Scalar(-1), DType::I32))};
  });
  ASSERT_EQ(out.size(), 7u);
  expectTensor(out[0], DType::UI32, {2}, {0, 0});
  expectTensor(out[1], DType::UI32, {2}, {0, 4294967295.0});
  expectTensor(out[2], DType::UI32, {2}, {256, 5});
  expectTensor(out[3], DType::UI32, {3, 2},
               {1797259609, 2579123966, 928981903, 3453687069, 4146024105,
                2718843009});
  expectTensor(out[4], DType::UI32, {2}, {2716826189, 292468403});
  expectTensor(out[5], DType::UI32, {2}, {743310391, 3789761811});
  expectTensor(out[6], DType::UI32, {2}, {0, 4294967295.0});
}

TEST(Random, BitsIntegersAndPermutationsAreJax) {
  auto [function, out] = draw([] {
    Tensor key = kiln::random::key(0);
    return Tensors{kiln::random::bits(key, {2, 3}),
                   kiln::random::bits(key, {}),
                   kiln::random::randint(key, {4}, 0, 10),
                   kiln::random::randint(kiln::random::key(3), {6}, -5, 1000),
                   kiln::random::permutation(key, 10),
                   kiln::slice(kiln::random::permutation(kiln::random::key(1), 2000), {0},
                               {8}),
                   kiln::random::bernoulli(key, 0.3, kiln::Shape{8})};
  });
  ASSERT_EQ(out.size(), 7u);
  expectTensor(out[0], DType::UI32, {2, 3},
               {4070199207, 4202968722, 1427181096, 2012915765, 2447653815,
                710830403});
  expectTensor(out[1], DType::UI32, {}, {4070199207});
  expectTensor(out[2], DType::I32, {4}, {9, 0, 2, 3});
  expectTensor(out[3], DType::I32, {6}, {580, 284, 305, 99, 296, 477});
  expectTensor(out[4], DType::I32, {10}, {0, 1, 8, 5, 6, 4, 3, 2, 7, 9});
  // 2000 elements take two rounds of sorting.
  expectTensor(out[5], DType::I32, {8},
               {1308, 942, 1831, 539, 868, 726, 59, 1314});
  expectTensor(out[6], DType::I1, {8}, {0, 0, 0, 0, 0, 1, 0, 0});
}

/// int64 randint, JAX's values with x64 enabled: 64-bit draws, a span of
/// the whole i64 range (2^64 - 1, read as unsigned), and one above 2^63.
TEST(Random, Int64IntegersAreJax) {
  auto [function, out] = draw([] {
    return Tensors{
        kiln::random::randint(kiln::random::key(3), {6}, -5, 1000, DType::I64),
        kiln::random::randint(kiln::random::key(0), {4},
                              std::numeric_limits<int64_t>::min(),
                              std::numeric_limits<int64_t>::max(), DType::I64),
        kiln::random::randint(kiln::random::key(1), {3},
                              -(int64_t{1} << 62),
                              (int64_t{1} << 62) + 12345, DType::I64)};
  });
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].i, (std::vector<int64_t>{611, 231, 238, 114, 50, 88}));
  EXPECT_EQ(out[1].i,
            (std::vector<int64_t>{-7736114978893213937, 7820475669948582015,
                                  4315659036180353743, 1465598322582991829}));
  EXPECT_EQ(out[2].i, (std::vector<int64_t>{239230230894773283, -4320634561583237580,
                                  212942640189682842}));
}

TEST(Random, FloatsAreJax) {
  auto [function, out] = draw([] {
    Tensor key = kiln::random::key(0);
    return Tensors{kiln::random::uniform(key, {3}),
                   kiln::random::uniform(kiln::random::key(42), {2, 2}, DType::F32, -2.0,
                                   3.0),
                   kiln::random::normal(key, {3}),
                   kiln::random::gumbel(key, {3}),
                   kiln::random::uniform(key, {3}, DType::F64),
                   kiln::random::normal(key, {3}, DType::F64),
                   kiln::random::categorical(
                       kiln::random::key(5),
                       kiln::constant(std::vector<float>{0, 1, 2, 3, 0, -1}, {2, 3}),
                       -1, kiln::Shape{4, 2})};
  });
  ASSERT_EQ(out.size(), 7u);
  // Uniform floats are integer arithmetic on the bits: exact.
  expectTensor(out[0], DType::F32, {3},
               {0.9476670026779175, 0.9785798788070679, 0.33229148387908936},
               0);
  // Scaled to [-2, 3): XLA contracts u * 5 - 2 into one fused multiply-add
  // where kiln rounds twice, so the last bit may differ.
  expectTensor(out[1], DType::F32, {2, 2},
               {0.4435478448867798, 1.3989858627319336, 1.081357479095459,
                0.8050804138183594},
               3e-7);
  // erf_inv and log round differently from XLA's in the last bits.
  expectTensor(out[2], DType::F32, {3},
               {1.622642159461975, 2.0252647399902344, -0.4335944354534149},
               1e-6);
  expectTensor(out[3], DType::F32, {3},
               {2.923372507095337, 3.83261775970459, -0.09689324349164963},
               1e-6);
  expectTensor(out[4], DType::F64, {3},
               {0.41845711171638644, 0.21629545460551136, 0.9653214611189975},
               0);
  expectTensor(out[5], DType::F64, {3},
               {-0.2058421394796434, -0.7847657764467411, 1.8160866726679836},
               1e-12);
  expectTensor(out[6], DType::I32, {4, 2}, {1, 1, 2, 0, 2, 0, 2, 0});
}

TEST(Random, TruncatedNormalIsJaxAndStaysInside) {
  auto [function, out] = draw([] {
    return Tensors{
        kiln::random::truncated_normal(kiln::random::key(0), -1.5, 2.0,
                                       kiln::Shape{6}),
        kiln::random::truncated_normal(
            kiln::random::key(7),
            kiln::constant(std::vector<float>{-1, 0, 1}, {3}), 3.0,
            kiln::Shape{2, 3}),
        kiln::random::truncated_normal(
            kiln::random::key(3), -std::numeric_limits<double>::infinity(),
            0.5, kiln::Shape{4}),
        // Bounds one float apart: the only value strictly inside does not
        // exist, so the clamp returns a bound's neighbour, never the bound.
        kiln::random::truncated_normal(kiln::random::key(4), 1.0,
                                       1.0000002384185791, kiln::Shape{3}),
        // Half types compute in their own precision; their neighbours of
        // the bounds are the half type's.
        kiln::random::truncated_normal(kiln::random::key(0), -1.5, 2.0,
                                       kiln::Shape{6}, DType::F16),
        kiln::random::truncated_normal(
            kiln::random::key(3), -std::numeric_limits<double>::infinity(),
            0.5, kiln::Shape{4}, DType::BF16),
        kiln::random::truncated_normal(kiln::random::key(4), 1.0, 1.001953125,
                                       kiln::Shape{3}, DType::F16),
        kiln::random::truncated_normal(kiln::random::key(4), 0.0, 1e-30,
                                       kiln::Shape{3}, DType::BF16)};
  });
  ASSERT_EQ(out.size(), 8u);
  // Printed by JAX 0.10; erf and erf_inv round differently from XLA's in
  // the last bits.
  expectTensor(out[0], DType::F32, {6},
               {1.4728459119796753, 1.7251307964324951, -0.33360305428504944,
                -0.016286367550492287, 0.2163902223110199,
                -0.7807042002677917},
               2e-6);
  expectTensor(out[1], DType::F32, {2, 3},
               {0.5974224805831909, 2.197085380554199, 1.22114098072052,
                0.07923746109008789, 1.100563406944275, 1.5597740411758423},
               2e-6);
  expectTensor(out[2], DType::F32, {4},
               {-1.633284568786621, 0.3817904591560364, -0.1288721263408661,
                0.452665776014328},
               2e-6);
  for (int64_t i = 0; i < 3; ++i) {
    double v = out[3].getAsDouble(i);
    EXPECT_TRUE(v == 1.0000001192092896) << v;
  }
  // JAX's values, exactly.
  expectTensor(out[4], DType::F16, {6},
               {-0.38623046875, -0.6416015625, -1.19140625, 0.423583984375,
                -0.58740234375, -0.1480712890625},
               0.0);
  expectTensor(out[5], DType::BF16, {4},
               {-0.412109375, 0.078125, 0.2470703125, -1.1328125}, 0.0);
  for (int64_t i = 0; i < 3; ++i) {
    // The f16 value between 1 and 1 + 2 ulps.
    EXPECT_EQ(out[6].getAsDouble(i), 1.0009765625);
    // Above 0: at least bf16's smallest subnormal, 2^-133.
    EXPECT_GE(out[7].getAsDouble(i), std::ldexp(1.0, -133));
    EXPECT_LT(out[7].getAsDouble(i), 1e-30);
  }
}

/// The gamma family against JAX 0.10's values for the same keys: each
/// element's rejection loop walks through JAX's keys and draws.
TEST(Random, GammaFamilyIsJax) {
  auto [function, out] = draw([] {
    return Tensors{
        kiln::random::gamma(kiln::random::key(0),
                            kiln::constant(std::vector<float>{0.3f, 1.0f,
                                                              2.5f, 10.0f},
                                           {4})),
        kiln::random::beta(kiln::random::key(1), 2.0, 3.0, kiln::Shape{3}),
        kiln::random::exponential(kiln::random::key(2), {3}),
        kiln::random::dirichlet(
            kiln::random::key(4),
            kiln::constant(std::vector<float>{1, 2, 3}, {3})),
        kiln::random::gamma(kiln::random::key(0), 2.0, kiln::Shape{0, 2})};
  });
  ASSERT_EQ(out.size(), 5u);
  expectTensor(out[0], DType::F32, {4},
               {0.6292697191238403, 0.726284921169281, 1.5440423488616943,
                14.303314208984375},
               2e-6);
  expectTensor(out[1], DType::F32, {3},
               {0.09734995663166046, 0.18644392490386963, 0.7683220505714417},
               2e-6);
  expectTensor(out[2], DType::F32, {3},
               {1.0238510370254517, 2.3086230754852295, 0.26140907406806946},
               2e-6);
  expectTensor(out[3], DType::F32, {3},
               {0.17179706692695618, 0.5750225782394409, 0.2531803548336029},
               2e-6);
  expectTensor(out[4], DType::F32, {0, 2}, {}, 0.0);
}

/// The mean and variance of `xs`.
std::pair<double, double> moments(const std::vector<double> &xs) {
  double mean = 0, var = 0;
  for (double x : xs)
    mean += x;
  mean /= xs.size();
  for (double x : xs)
    var += (x - mean) * (x - mean);
  return {mean, var / xs.size()};
}

TEST(Random, Statistics) {
  constexpr int64_t n = 40000;
  auto [function, out] = draw([] {
    Tensor key = kiln::random::key(2024);
    Tensor keys = kiln::random::split(key, 4);
    auto row = [&](int64_t i) {
      return kiln::reshape(kiln::slice(keys, {i, 0}, {i + 1, 2}), {2});
    };
    return Tensors{kiln::random::uniform(row(0), {n}), kiln::random::normal(row(1), {n}),
                   kiln::random::randint(row(2), {n}, 0, 10),
                   kiln::random::bernoulli(row(3), 0.25, kiln::Shape{n})};
  });
  ASSERT_EQ(out.size(), 4u);
  // Standard errors: sqrt(var / n) is 0.0014 for uniform, 0.005 for normal;
  // the bounds are about 5 of them.
  auto [uMean, uVar] = moments(values(out[0]));
  EXPECT_NEAR(uMean, 0.5, 0.007);
  EXPECT_NEAR(uVar, 1.0 / 12, 0.003);
  auto [zMean, zVar] = moments(values(out[1]));
  EXPECT_NEAR(zMean, 0.0, 0.025);
  EXPECT_NEAR(zVar, 1.0, 0.04);
  // Chi-square of the ten integers' counts: 9 degrees of freedom, 27.9 is
  // the 0.999 quantile.
  std::vector<double> counts(10, 0);
  for (double v : values(out[2])) {
    ASSERT_GE(v, 0);
    ASSERT_LT(v, 10);
    counts[static_cast<int>(v)] += 1;
  }
  double chi2 = 0;
  for (double c : counts)
    chi2 += (c - n / 10.0) * (c - n / 10.0) / (n / 10.0);
  EXPECT_LT(chi2, 27.9);
  auto [bMean, bVar] = moments(values(out[3]));
  EXPECT_NEAR(bMean, 0.25, 0.011);
}

TEST(Random, ErfInvInvertsErf) {
  std::vector<double> xs = {-0.999, -0.9, -0.5, -1e-3, 0.0,
                            0.25,   0.7,  0.99, 0.99999};
  auto f = kiln::trace("erf_inv", {kiln::f64({9}, "x"), kiln::f32({9}, "y")},
                       [](const Tensor &x, const Tensor &y) {
                         return Tensors{kiln::erf_inv(x), kiln::erf_inv(y)};
                       });
  // The f64 inverse at the f32 inputs: near +-1 erf_inv magnifies the
  // rounding of its input 10^4-fold.
  std::vector<double> rounded;
  for (double x : xs)
    rounded.push_back(static_cast<float>(x));
  auto out = run(f, {f64Data({9}, rounded), f32Data({9}, xs)});
  ASSERT_EQ(out.size(), 2u);
  std::vector<double> wide = values(out[0]), narrow = values(out[1]);
  for (size_t i = 0; i < xs.size(); ++i) {
    EXPECT_NEAR(std::erf(wide[i]), rounded[i], 1e-15) << "f64 at " << xs[i];
    EXPECT_NEAR(narrow[i], wide[i], 4e-7 * std::abs(wide[i]) + 1e-7)
        << "f32 at " << xs[i];
  }
  auto edges = kiln::trace("edges", {kiln::f32({4}, "x")}, [](const Tensor &x) {
    return Tensors{kiln::erf_inv(x)};
  });
  auto edgeOut = run(edges, {f32Data({4}, {1.0, -1.0, 1.5, 0.0})});
  ASSERT_EQ(edgeOut.size(), 1u);
  std::vector<double> edge = values(edgeOut[0]);
  EXPECT_EQ(edge[0], INFINITY);
  EXPECT_EQ(edge[1], -INFINITY);
  EXPECT_TRUE(std::isnan(edge[2]));
  EXPECT_EQ(edge[3], 0.0);
}

TEST(Random, BadKeysAndShapesAreErrors) {
  auto expectError = [](const std::string &message, auto body) {
    try {
      (void)kiln::trace("bad", {kiln::f32({3}, "x")},
                        [&](const Tensor &x) { return Tensors{body(x)}; });
      ADD_FAILURE() << "no error for: " << message;
    } catch (const kiln::TraceError &error) {
      EXPECT_NE(std::string(error.what()).find(message), std::string::npos)
          << error.what();
    }
  };
  expectError("kiln::random::uniform needs a key: a ui32[2] tensor from "
              "kiln::random::key, split or fold_in; got f32[3]",
              [](const Tensor &x) { return kiln::random::uniform(x, {2}); });
  expectError("kiln::random::normal draws floats (f16, bf16, f32 or f64), got "
              "dtype i32",
              [](const Tensor &) {
                return kiln::random::normal(kiln::random::key(0), {2}, DType::I32);
              });
  expectError("kiln::random::bits: shape [2,-1] has a negative dimension",
              [](const Tensor &) {
                return kiln::random::bits(kiln::random::key(0), {2, -1});
              });
  expectError("kiln::random::bits: shape [4294967296,4294967296] has more "
              "than 2^63 elements",
              [](const Tensor &) {
                return kiln::random::bits(kiln::random::key(0),
                                          {int64_t{1} << 32, int64_t{1} << 32});
              });
  expectError("kiln::random::uniform: cannot broadcast shapes [3] and [2]",
              [](const Tensor &x) {
    return kiln::random::uniform(kiln::random::key(0), {2}, DType::F32, x, 1.0);
  });
  expectError("kiln::random::uniform: minval and maxval of shapes [1,2] and "
              "[] do not broadcast to the shape [2]",
              [](const Tensor &) {
                return kiln::random::uniform(kiln::random::key(0), {2},
                                             DType::F32, kiln::zeros({1, 2}),
                                             1.0);
              });
  expectError("kiln::random::randint draws i32 or i64, got dtype ui32",
              [](const Tensor &) {
                return kiln::random::randint(kiln::random::key(0), {2}, 0, 5,
                                             DType::UI32);
              });
  expectError("kiln::random::fold_in needs an integer scalar, got f32[3]",
              [](const Tensor &x) { return kiln::random::fold_in(kiln::random::key(0), x); });
}

TEST(Bitwise, IntegersShiftsAndBitcasts) {
  std::vector<double> as = {0x0F0F0F0F, 4294967295.0, 0, 2147483648.0};
  std::vector<double> ns = {0, 4, 31, 32};
  auto f = kiln::trace(
      "bits", {kiln::ui32({4}, "a"), kiln::ui32({4}, "n"), kiln::i32({4}, "s")},
      [](const Tensor &a, const Tensor &n, const Tensor &s) {
        Tensor sn = kiln::cast(n, DType::I32);
        return Tensors{a & 0xFF00FF00,
                       a | n,
                       a ^ 0xFFFFFFFF,
                       ~a,
                       kiln::shift_left(a, n),
                       kiln::shift_right_logical(a, n),
                       kiln::shift_right_arithmetic(a, n),
                       kiln::shift_right_logical(s, sn),
                       kiln::shift_right_arithmetic(s, sn),
                       kiln::bitcast_convert_type(
                           kiln::bitcast_convert_type(a, DType::F32),
                           DType::UI32),
                       a + a,
                       a - 1,
                       kiln::rem(a, 7)};
      });
  std::vector<double> ss = {-256, -1, 1000, -7};
  auto out = run(f, {{DType::UI32, {4}, as}, {DType::UI32, {4}, ns},
                     i32Data({4}, ss)});
  ASSERT_EQ(out.size(), 13u);
  std::vector<double> expected[13];
  for (int i = 0; i < 4; ++i) {
    uint32_t a = static_cast<uint32_t>(as[i]);
    unsigned n = static_cast<unsigned>(ns[i]);
    int32_t s = static_cast<int32_t>(ss[i]);
    expected[0].push_back(a & 0xFF00FF00u);
    expected[1].push_back(a | n);
    expected[2].push_back(a ^ 0xFFFFFFFFu);
    expected[3].push_back(static_cast<uint32_t>(~a));
    expected[4].push_back(n >= 32 ? 0 : static_cast<uint32_t>(a << n));
    expected[5].push_back(n >= 32 ? 0 : a >> n);
    int32_t sa = static_cast<int32_t>(a);
    expected[6].push_back(static_cast<uint32_t>(n >= 32 ? (sa < 0 ? -1 : 0)
                                                        : sa >> n));
    expected[7].push_back(
        n >= 32 ? 0 : static_cast<int32_t>(static_cast<uint32_t>(s) >> n));
    expected[8].push_back(n >= 32 ? (s < 0 ? -1 : 0) : s >> n);
    expected[9].push_back(a);
    expected[10].push_back(static_cast<uint32_t>(a + a));
    expected[11].push_back(static_cast<uint32_t>(a - 1));
    expected[12].push_back(a % 7);
  }
  for (int k = 0; k < 13; ++k)
    expectTensor(out[k], k == 7 || k == 8 ? DType::I32 : DType::UI32, {4},
                 expected[k], 0);
}

TEST(Bitwise, Ui32Promotes) {
  auto f = kiln::trace(
      "promote",
      {kiln::ui32({2}, "a"), kiln::i32({2}, "b"), kiln::i1({2}, "c")},
      [](const Tensor &a, const Tensor &b, const Tensor &c) {
        return Tensors{a + b, a + c, a * 0.5, a + 1,
                       kiln::gather(kiln::constant(std::vector<float>{10, 20, 30}), a)};
      });
  auto out = run(f, {{DType::UI32, {2}, {4000000000.0, 2}},
                     i32Data({2}, {-1, 5}), i1Data({2}, {1, 0})});
  ASSERT_EQ(out.size(), 5u);
  // ui32 with i32 gives i64, which holds both.
  expectTensor(out[0], DType::I64, {2}, {3999999999.0, 7}, 0);
  expectTensor(out[1], DType::UI32, {2}, {4000000001.0, 2}, 0);
  expectTensor(out[2], DType::F32, {2}, {2e9, 1}, 0);
  expectTensor(out[3], DType::UI32, {2}, {4000000001.0, 3}, 0);
  // ui32 indices index as their values: 4e9 clamps to the last row.
  expectTensor(out[4], DType::F32, {2}, {30, 30}, 0);
}

} // namespace
