// sample: forwards a sample of the packets and drops the rest under "sampled_out".
//
// Synopsis
//   - { stage: sample, every: 100 }                   # packets 1, 101, 201, ... go on
//   - { stage: sample, probability: 0.01, seed: 7 }   # each packet goes on with p = 0.01
//
// Parameters
//   every        keep one packet out of this many, counting from the first (kept)  default 16
//   probability  keep each packet independently with this probability, 0 < p <= 1;
//                when set (> 0) it replaces `every`, and setting both is an error   default 0
//   seed         seed of the random sequence; the same seed keeps the same packets  default 1
//
// Both modes are deterministic for a given input order: `every` counts packets, and
// `probability` draws from a seeded xoshiro256** generator, one draw per packet, compared with
// a precomputed 64-bit threshold (no division, no floating point per packet). In a farm each
// worker samples its own share.
#pragma once

#include <array>
#include <cstdint>

#include "framework/stage/param.hpp"
#include "framework/stage/stage.hpp"

namespace tp {

class Sample final : public Stage {
public:
    static constexpr StageKind kKind = StageKind::Processor;
    static double expected_pass(const ParamValues& p);
    static void check_params(const ParamValues& p);

    explicit Sample(const ParamValues& p);
    void process(Burst& b) override;

private:
    uint64_t next_random();

    bool random_ = false;
    uint64_t every_ = 16;
    uint64_t countdown_ = 0;  // packets to drop before the next kept one (`every` mode)
    uint64_t threshold_ = 0;  // keep when a draw is below this (`probability` mode)
    bool keep_all_ = false;   // probability 1
    std::array<uint64_t, 4> rng_{};
    uint16_t sampled_out_;
};

}  // namespace tp
