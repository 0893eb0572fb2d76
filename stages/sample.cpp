#include "stages/sample.hpp"

#include <algorithm>
#include <cmath>

#include "framework/stage/registry.hpp"

namespace tp {

namespace {

// splitmix64: spreads a small seed over the generator's 256-bit state.
uint64_t splitmix64(uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

void Sample::check_params(const ParamValues& p) {
    if (p.get_double("probability") > 0 && p.given("every"))
        p.fail("every", "'every' and 'probability' both choose the sample: set only one");
}

Sample::Sample(const ParamValues& p) : Stage(kKind) {
    check_params(p);
    sampled_out_ = declare_drop("sampled_out");
    const double probability = p.get_double("probability");
    if (probability > 0) {
        random_ = true;
        keep_all_ = probability >= 1;
        // p * 2^64, computed in long double so that small probabilities keep their digits.
        threshold_ = keep_all_ ? UINT64_MAX : static_cast<uint64_t>(std::ldexp((long double)probability, 64));
        uint64_t s = p.get_uint("seed");
        for (uint64_t& w : rng_) w = splitmix64(s);
    } else {
        every_ = p.get_uint("every");
    }
}

double Sample::expected_pass(const ParamValues& p) {
    const double probability = p.get_double("probability");
    if (probability > 0) return std::min(probability, 1.0);
    return 1.0 / double(std::max<uint64_t>(1, p.get_uint("every")));
}

// xoshiro256** (Blackman & Vigna): fast, and good enough for sampling decisions.
uint64_t Sample::next_random() {
    const uint64_t result = rotl(rng_[1] * 5, 7) * 9;
    const uint64_t t = rng_[1] << 17;
    rng_[2] ^= rng_[0];
    rng_[3] ^= rng_[1];
    rng_[1] ^= rng_[2];
    rng_[0] ^= rng_[3];
    rng_[2] ^= t;
    rng_[3] = rotl(rng_[3], 45);
    return result;
}

void Sample::process(Burst& b) {
    uint16_t kept = 0;
    if (!random_) {
        for (uint16_t i = 0; i < b.n; ++i) {
            if (countdown_ == 0) {
                countdown_ = every_ - 1;
                b.d[kept++] = b.d[i];
            } else {
                --countdown_;
                drop(b.d[i], sampled_out_);
            }
        }
    } else {
        for (uint16_t i = 0; i < b.n; ++i) {
            if (keep_all_ || next_random() < threshold_) b.d[kept++] = b.d[i];
            else drop(b.d[i], sampled_out_);
        }
    }
    b.n = kept;
}

TILEPIPE_STAGE(Sample, "sample",
               "processor: keep 1 packet in N, or each with a probability; drop the rest "
               "(reason \"sampled_out\")",
               param<uint64_t>("every", 16,
                               "keep one packet out of this many, the first one included")
                   .at_least(1),
               param<double>("probability", 0,
                             "keep each packet with this probability (0 < p <= 1) instead of "
                             "1 in `every`; 0 = off")
                   .between(0, 1),
               param<uint64_t>("seed", 1,
                               "seed of the random sequence for `probability`: the same seed "
                               "keeps the same packets of the same input"));

}  // namespace tp
