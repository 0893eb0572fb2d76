// rate_limit: polices traffic to a rate with a DPDK rte_meter token bucket, dropping (or
// marking) what exceeds it.
//
// Synopsis
//   - { stage: rate_limit, rate: 100e6, burst: 125000 }            # 100 Mb/s, 125 kB bucket
//   - { stage: rate_limit, pps: 10000, burst: 64, mode: mark }     # 10 kpps, color only
//   - { stage: rate_limit, meter: trtcm, rate: 1e9, peak_rate: 2e9, burst: 1e6 }
//
// Parameters
//   rate         committed rate in bits per second of frame bytes       } exactly one
//   pps          committed rate in packets per second                   } of the two
//   burst        committed bucket size: bytes (rate) or packets (pps)   required
//   meter        srtcm (RFC 2697) | trtcm (RFC 2698)                    default srtcm
//   excess_burst srtcm: excess bucket size, same unit as burst; packets
//                that fit it are yellow (0 = no yellow band)             default 0
//   peak_rate    trtcm: peak rate, same unit as rate/pps (0 = the
//                committed rate)                                        default 0
//   peak_burst   trtcm: peak bucket size (0 = burst)                    default 0
//   mode         drop: red packets are dropped (reason "over_rate");
//                mark: every packet passes, its color written           default drop
//
// Color: each packet gets its meter color (0 green, 1 yellow, 2 red; enum rte_color) in the
// mbuf dynamic field "tilepipe_meter_color" (one byte), read with meter_color(). Colors are
// written in both modes, so a later stage (a scheduler, a pcap sink filtering on it) can use
// them. Events count "yellow" and "red" packets (red ones are also the "over_rate" drops in
// drop mode).
//
// The meter is color-blind and one per stage instance: in a farm each worker polices its own
// share, so W workers admit up to W times the rate. Time is the TSC, read once per burst; in
// packet mode every packet weighs one "byte" of the meter.
#pragma once

#include <rte_meter.h>

#include <cstdint>

#include "framework/stage/param.hpp"
#include "framework/stage/stage.hpp"

struct rte_mbuf;

namespace tp {

// The color rate_limit gave `m` (RTE_COLOR_GREEN/YELLOW/RED); only meaningful after a
// rate_limit stage handled it. The dynamic field is registered on first use (any
// rate_limit construction registers it).
uint8_t meter_color(const rte_mbuf* m);

class RateLimit final : public Stage {
public:
    static constexpr StageKind kKind = StageKind::Processor;

    explicit RateLimit(const ParamValues& p);
    static void check_params(const ParamValues& p);
    void open(StageEnv& env) override;
    void process(Burst& b) override;

private:
    bool trtcm_ = false;
    bool packets_ = false;  // pps mode: every packet weighs 1
    bool mark_ = false;
    int color_offset_ = -1;  // dynamic field offset
    rte_meter_srtcm_params sr_params_{};
    rte_meter_trtcm_params tr_params_{};
    rte_meter_srtcm_profile sr_profile_{};
    rte_meter_trtcm_profile tr_profile_{};
    rte_meter_srtcm sr_{};
    rte_meter_trtcm tr_{};
    uint16_t over_rate_;
    uint16_t yellow_event_;
    uint16_t red_event_;
};

}  // namespace tp
