// Link-layer normalisation (link_layer.hpp) of one record, without a file around it: the
// input's first byte picks the link type, the next two an uncaptured tail (wire length beyond
// the captured bytes), the rest is the record, held in an exact-size heap copy so a read past
// it is an AddressSanitizer report. The frame given back must lie within the record or the
// scratch buffer, be at least an Ethernet header when the link header was rewritten, and keep its wire
// length at least its captured length.
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "framework/capture/link_layer.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

constexpr int kLinkTypes[] = {1, 113, 276, 101, 12, 14, 228, 229, 0, 108, 9, 105, 127, 192};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace tp;
    if (size < 3) return 0;
    const int linktype = kLinkTypes[data[0] % std::size(kLinkTypes)];
    const uint32_t tail = uint32_t(data[1]) << 8 | data[2];
    const uint32_t caplen = uint32_t(size - 3);
    auto record = std::make_unique<uint8_t[]>(caplen);
    if (caplen > 0) std::memcpy(record.get(), data + 3, caplen);
    const std::optional<LinkLayer> link = link_layer_of(linktype);
    if (!link) fuzz::finding("link type " + std::to_string(linktype) + " is documented but not supported");
    std::vector<uint8_t> scratch;
    const EthernetFrame f = to_ethernet(*link, record.get(), caplen, caplen + tail, scratch);
    if (f.skip != SkipReason::None) return 0;
    const uint8_t* begin = f.data;
    const bool in_record = begin >= record.get() && begin + f.length <= record.get() + caplen;
    const bool in_scratch = !scratch.empty() && begin >= scratch.data() && begin + f.length <= scratch.data() + scratch.size();
    if (f.length == 0 || !(in_record || in_scratch))
        fuzz::finding("frame of " + std::to_string(f.length) + " bytes outside the record and the scratch buffer");
    // EN10MB, and PPI holding Ethernet, pass the record as it is, however short.
    if (link->kind != LinkKind::Ethernet && link->kind != LinkKind::Ppi && f.length < 14)
        fuzz::finding("rewritten frame shorter than Ethernet");
    if (f.wire_length < f.length)
        fuzz::finding("wire length " + std::to_string(f.wire_length) + " below captured " + std::to_string(f.length));
    uint32_t sum = 0;
    for (uint32_t i = 0; i < f.length; ++i) sum += f.data[i];  // every byte must be readable
    static volatile uint32_t sink;
    sink = sum;
    return 0;
}
