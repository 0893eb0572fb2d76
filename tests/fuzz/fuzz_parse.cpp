// `parse` on arbitrary frames. parse_headers() reads an exact-size heap copy, so a read past
// the frame is an AddressSanitizer report; the header lengths it returns must lie within the
// bytes it was given; the stage itself runs on an mbuf holding the frame and must agree.
// Also parsed with the frame split as a first segment and the rest (the `len` < `frame_len`
// case of chained mbufs).
#include <rte_mbuf.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "descriptors/burst.hpp"
#include "descriptors/mbuf_pool.hpp"
#include "framework/stage/registry.hpp"
#include "stages/parse.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

tp::ParseResult parse_copy(const uint8_t* data, uint32_t len, uint32_t frame_len) {
    auto copy = std::make_unique<uint8_t[]>(len);
    if (len > 0) std::memcpy(copy.get(), data, len);
    const tp::ParseResult r = tp::parse_headers(copy.get(), len, frame_len);
    if (uint32_t(r.l2_len) + r.l3_len + r.l4_len > len)
        tp::fuzz::finding("headers of " + std::to_string(r.l2_len) + "+" + std::to_string(r.l3_len) + "+" +
                          std::to_string(r.l4_len) + " bytes in " + std::to_string(len) + " readable bytes");
    if (r.l2_len > 127 || r.l3_len > 511 || r.l4_len > 255) tp::fuzz::finding("header length overflows its mbuf field");
    if (r.malformed() && (r.type & tp::ptype::kMalformed) == 0) tp::fuzz::finding("malformed without kMalformed");
    return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace tp;
    const uint32_t len = uint32_t(std::min<size_t>(size, 65535));
    const ParseResult whole = parse_copy(data, len, len);
    if (len > 1) (void)parse_copy(data, len / 2, len);

    fuzz::start_eal();
    static MbufPool pool(MbufPoolSpec{"fuzz_parse", 7, 0, 2048, -1, "stack"});
    static const std::unique_ptr<Stage> stage = [] {
        const StageInfo* info = StageRegistry::instance().find("parse");
        ParamValues p;
        for (const ParamSpec& spec : info->params) p.set_default(spec);
        return info->create(p);
    }();
    const uint16_t in_mbuf = uint16_t(std::min<uint32_t>(len, 2048));
    rte_mbuf* m = rte_pktmbuf_alloc(pool.get());
    if (m == nullptr) fuzz::finding("parse pool is empty: an mbuf leaked");
    if (in_mbuf > 0) std::memcpy(rte_pktmbuf_append(m, in_mbuf), data, in_mbuf);
    Burst b;
    b.d[b.n++] = PacketDesc{m, 0, saturate_length(in_mbuf), 0, 0};
    stage->process(b);
    if (b.n != 1) fuzz::finding("parse (drop_malformed false) dropped a packet");
    if (in_mbuf == len && (m->l2_len != whole.l2_len || m->l3_len != whole.l3_len || m->l4_len != whole.l4_len ||
                           m->packet_type != whole.packet_type || b.d[0].type != whole.type))
        fuzz::finding("the stage and parse_headers disagree");
    rte_pktmbuf_free(m);
    return 0;
}
