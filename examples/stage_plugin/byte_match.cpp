// byte_match: an example stage built outside tilepipe's tree and loaded as a plugin.
//
// Synopsis
//   - { stage: byte_match, offset: 23, value: 6 }                  # IPv4 TCP only
//   - { stage: byte_match, offset: 23, value: 17, action: count }  # count UDP, pass all
//
// Parameters
//   offset  byte offset in the frame (Ethernet header included)           default 23
//   value   the byte to look for, after `mask`                            required
//   mask    bits of the frame's byte that are compared                    default 0xff
//   action  drop: keep matching packets, drop the rest as "no_match";
//           count: pass every packet, count matches as event "match"     default drop
//
// A frame shorter than offset + 1 never matches. The byte is read with rte_pktmbuf_read, so a
// chained mbuf is read across segments; the stage works on bursts, keeps the packets that go
// on at the front of the burst in order, and gives the ones it drops to Stage::drop, which
// frees and counts them.
#include <rte_mbuf.h>

#include <tilepipe/registration.hpp>
#include <tilepipe/stage.hpp>

namespace {

class ByteMatch final : public tp::Stage {
public:
    static constexpr tp::StageKind kKind = tp::StageKind::Processor;

    explicit ByteMatch(const tp::ParamValues& p)
        : Stage(kKind),
          offset_(static_cast<uint32_t>(p.get_uint("offset"))),
          mask_(static_cast<uint8_t>(p.get_uint("mask"))),
          value_(static_cast<uint8_t>(p.get_uint("value"))),
          drop_others_(p.get_string("action") == "drop") {
        if ((value_ & mask_) != value_) p.fail("value", "has bits outside `mask`: no byte can match it");
        no_match_ = declare_drop("no_match");
        match_ = declare_event("match");
    }

    // Checked by `tilepipe validate` too, before anything runs.
    static void check_params(const tp::ParamValues& p) {
        if ((p.get_uint("value") & p.get_uint("mask")) != p.get_uint("value"))
            p.fail("value", "has bits outside `mask`: no byte can match it");
    }

    // The share that goes on, for placement's weights: unknown, so an even guess.
    static double expected_pass(const tp::ParamValues& p) { return p.get_string("action") == "drop" ? 0.5 : 1.0; }

    void process(tp::Burst& b) override {
        uint16_t kept = 0;
        uint64_t matches = 0;
        for (uint16_t i = 0; i < b.n; ++i) {
            const bool match = matches_byte(b.d[i].mbuf);
            matches += match;
            if (match || !drop_others_) b.d[kept++] = b.d[i];
            else drop(b.d[i], no_match_);
        }
        b.n = kept;
        if (matches != 0) count_event(match_, matches);
    }

private:
    bool matches_byte(const rte_mbuf* m) const {
        uint8_t copy;
        const auto* p = static_cast<const uint8_t*>(rte_pktmbuf_read(m, offset_, 1, &copy));
        return p != nullptr && (*p & mask_) == value_;
    }

    uint32_t offset_;
    uint8_t mask_;
    uint8_t value_;
    bool drop_others_;
    uint16_t no_match_ = 0;
    uint16_t match_ = 0;
};

}  // namespace

TILEPIPE_STAGE(ByteMatch, "byte_match",
               "processor: keep (or count) packets whose byte at an offset matches a value (example plugin)",
               tp::param<uint16_t>("offset", 23, "byte offset in the frame, Ethernet header included (23: IPv4 protocol)"),
               tp::param<uint8_t>("value", tp::required, "the byte to look for (after `mask`), e.g. 6 for TCP"),
               tp::param<uint8_t>("mask", 0xff, "bits of the frame's byte that are compared"),
               tp::param<std::string>("action", "drop", "drop: drop non-matching packets as \"no_match\"; "
                                                       "count: pass all, count matches as event \"match\"",
                                      {"drop", "count"}));

TILEPIPE_PLUGIN();
