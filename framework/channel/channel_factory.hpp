// make_channel: builds the transport a link names in the config (`transport:`).
//
// Transports (see the transport_*.hpp headers): `ring` (default, SPSC ring with cached
// indices), `sm` (the paper's K-slot ready/ack interface, split lines), `sm_shared` (same, one
// line per slot), `dpdk` (rte_ring SP/SC, needs EAL), `lock` (mutex + condition variables),
// `udn` / `udn_eventdev` (credit interfaces on a messaging network: built here, a private
// two-tile network; in an app, the app's one network) and `udn_pair` (always private).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "descriptors/packet_desc.hpp"
#include "framework/channel/channel.hpp"

namespace tp {

struct ChannelSpec {
    std::string transport = "ring";
    uint32_t capacity = 1024;  // slots (K for the slot-based transports)
    int socket = -1;           // NUMA node of the receiver: where the memory is placed
};

// Names accepted in `transport:`.
const std::vector<std::string>& transport_names();

// Throws std::invalid_argument naming the problem (unknown transport, K of zero, capacity not
// a power of two for ring/sm/sm_shared, capacity over the limit, dpdk without EAL).
// Defined for T = PacketDesc and T = uint64_t.
template <typename T>
std::unique_ptr<Channel<T>> make_channel(const ChannelSpec& spec);

std::unique_ptr<Channel<PacketDesc>> make_desc_channel(const ChannelSpec& spec);
std::unique_ptr<Channel<uint64_t>> make_word_channel(const ChannelSpec& spec);

}  // namespace tp
