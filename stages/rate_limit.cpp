#include "stages/rate_limit.hpp"

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "framework/stage/registry.hpp"

namespace tp {

namespace {

constexpr const char* kColorField = "tilepipe_meter_color";
constexpr double kRateMax = 1e18;  // rates and bursts stay exact as 64-bit counts

int color_field_offset() {
    static const int offset = [] {
        rte_mbuf_dynfield desc{};
        snprintf(desc.name, sizeof desc.name, "%s", kColorField);
        desc.size = sizeof(uint8_t);
        desc.align = alignof(uint8_t);
        const int off = rte_mbuf_dynfield_register(&desc);
        if (off < 0)
            throw std::runtime_error(std::string("cannot register mbuf field ") + kColorField +
                                     ": " + rte_strerror(rte_errno));
        return off;
    }();
    return offset;
}

// A rate or size parameter as a whole, positive count; 0 where the parameter allows "off".
// The declarations bound every value to 0..1e18; a value that rounds to 0 is "off".
uint64_t whole(const ParamValues& p, const char* name, double v, bool zero_ok) {
    if (std::llround(v) == 0 && !zero_ok)
        p.fail(name, std::string("'") + name + "' must be at least 1 (it rounds to a whole count)");
    return static_cast<uint64_t>(std::llround(v));
}

}  // namespace

uint8_t meter_color(const rte_mbuf* m) {
    return *RTE_MBUF_DYNFIELD(m, color_field_offset(), const uint8_t*);
}

void RateLimit::check_params(const ParamValues& p) {
    const double rate = p.get_double("rate");
    const double pps = p.get_double("pps");
    if ((rate > 0) == (pps > 0))
        p.fail(rate > 0 ? "pps" : "rate",
               "set exactly one of 'rate' (bits per second) and 'pps' (packets per second)");
    const bool packets = pps > 0;
    const uint64_t committed = packets ? whole(p, "pps", pps, false) : whole(p, "rate", rate / 8, false);
    whole(p, "burst", p.get_double("burst"), false);
    if (p.get_string("meter") == "trtcm") {
        const double peak = p.get_double("peak_rate");
        const uint64_t peak_rate = whole(p, "peak_rate", packets ? peak : peak / 8, true);
        if (peak_rate != 0 && peak_rate < committed)
            p.fail("peak_rate", std::string("'peak_rate' must be at least '") + (packets ? "pps" : "rate") + "'");
        whole(p, "peak_burst", p.get_double("peak_burst"), true);
    } else {
        whole(p, "excess_burst", p.get_double("excess_burst"), true);
    }
}

RateLimit::RateLimit(const ParamValues& p) : Stage(kKind) {
    check_params(p);
    over_rate_ = declare_drop("over_rate");
    yellow_event_ = declare_event("yellow");
    red_event_ = declare_event("red");

    const double rate = p.get_double("rate");
    const double pps = p.get_double("pps");
    packets_ = pps > 0;
    const char* rate_name = packets_ ? "pps" : "rate";
    // The meter counts bytes per second; in packet mode a packet is one "byte".
    const uint64_t committed = packets_ ? whole(p, "pps", pps, false) : whole(p, "rate", rate / 8, false);
    const uint64_t burst = whole(p, "burst", p.get_double("burst"), false);
    trtcm_ = p.get_string("meter") == "trtcm";
    mark_ = p.get_string("mode") == "mark";

    int rc = 0;
    if (trtcm_) {
        const double peak = p.get_double("peak_rate");
        uint64_t peak_rate = whole(p, "peak_rate", packets_ ? peak : peak / 8, true);
        if (peak_rate == 0) peak_rate = committed;
        uint64_t peak_burst = whole(p, "peak_burst", p.get_double("peak_burst"), true);
        if (peak_burst == 0) peak_burst = burst;
        tr_params_ = rte_meter_trtcm_params{committed, peak_rate, burst, peak_burst};
        rc = rte_meter_trtcm_profile_config(&tr_profile_, &tr_params_);
    } else {
        const uint64_t excess = whole(p, "excess_burst", p.get_double("excess_burst"), true);
        sr_params_ = rte_meter_srtcm_params{committed, burst, excess};
        rc = rte_meter_srtcm_profile_config(&sr_profile_, &sr_params_);
    }
    if (rc != 0) p.fail(rate_name, "the meter refuses these rates and bursts (" + std::to_string(rc) + ")");
    color_offset_ = color_field_offset();
}

void RateLimit::open(StageEnv&) {
    // Buckets start full, at the time traffic may start.
    if (trtcm_) rte_meter_trtcm_config(&tr_, &tr_profile_);
    else rte_meter_srtcm_config(&sr_, &sr_profile_);
}

void RateLimit::process(Burst& b) {
    const uint64_t now = rte_rdtsc();
    uint16_t kept = 0;
    uint64_t yellow = 0, red = 0;
    for (uint16_t i = 0; i < b.n; ++i) {
        const PacketDesc d = b.d[i];
        const uint32_t weight = packets_ ? 1 : frame_length(d);
        const rte_color c = trtcm_ ? rte_meter_trtcm_color_blind_check(&tr_, &tr_profile_, now, weight)
                                   : rte_meter_srtcm_color_blind_check(&sr_, &sr_profile_, now, weight);
        *RTE_MBUF_DYNFIELD(d.mbuf, color_offset_, uint8_t*) = static_cast<uint8_t>(c);
        yellow += c == RTE_COLOR_YELLOW;
        if (c == RTE_COLOR_RED) {
            ++red;
            if (!mark_) {
                drop(d, over_rate_);
                continue;
            }
        }
        b.d[kept++] = d;
    }
    b.n = kept;
    if (yellow != 0) count_event(yellow_event_, yellow);
    if (red != 0) count_event(red_event_, red);
}

TILEPIPE_STAGE(RateLimit, "rate_limit",
               "processor: police to a rate with a DPDK rte_meter token bucket (srTCM/trTCM); "
               "red packets dropped (\"over_rate\") or only marked",
               param<double>("rate", 0, "committed rate in bits per second of frame bytes (0 = use pps)").between(0, kRateMax),
               param<double>("pps", 0, "committed rate in packets per second (0 = use rate)").between(0, kRateMax),
               param<double>("burst", required,
                             "committed bucket size: bytes with `rate`, packets with `pps`")
                   .between(0, kRateMax),
               param<std::string>("meter", "srtcm",
                                  "srtcm: single rate three color (RFC 2697); trtcm: two rate "
                                  "three color (RFC 2698)",
                                  {"srtcm", "trtcm"}),
               param<double>("excess_burst", 0,
                             "srtcm: excess bucket size (same unit as burst); packets it admits "
                             "are yellow and pass; 0 = none")
                   .between(0, kRateMax),
               param<double>("peak_rate", 0,
                             "trtcm: peak rate, same unit as rate/pps; 0 = the committed rate")
                   .between(0, kRateMax),
               param<double>("peak_burst", 0, "trtcm: peak bucket size; 0 = burst").between(0, kRateMax),
               param<std::string>("mode", "drop",
                                  "drop: red packets are dropped (reason \"over_rate\"); mark: "
                                  "all pass, each with its color (0 green, 1 yellow, 2 red) in "
                                  "the mbuf field \"tilepipe_meter_color\"",
                                  {"drop", "mark"}));

}  // namespace tp
