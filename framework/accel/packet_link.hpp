// PacketLink: what joins a tp::PacketAccelerator (include/tilepipe/packet_accelerator.hpp) to
// the `offload` source and the `results` sink of the app it runs.
//
// Two bounded single-producer single-consumer channels (the `ring` transport): `to_app` from
// the caller's thread into the offload source, `to_caller` from the results sink back to the
// caller. Each is made by its stage's open(), with the capacity its `capacity` parameter says.
// The caller's side of each belongs to one thread at a time (the accelerator's contract).
//
// Binding: the accelerator binds its link while it validates and builds the app (on its own
// thread, under bind_mutex()); the two stages look it up then (check_params, open). With no
// link bound (`tilepipe run`, `tilepipe validate`) the stages refuse at validation.
//
// Memory orders: open() runs on the thread that builds the app, the same one that then uses
// the link's channels from the caller's side, so `pool` and the channels are set before they
// are read. Items cross the channels with the channels' own release/acquire pairs; the end of
// stream of each is the channel's close() (release after the last send).
#pragma once

#include <memory>
#include <mutex>

#include "descriptors/packet_desc.hpp"
#include "framework/channel/channel.hpp"

struct rte_mempool;

namespace tp {

struct PacketLink {
    std::unique_ptr<Channel<PacketDesc>> to_app;     // caller -> offload source
    std::unique_ptr<Channel<PacketDesc>> to_caller;  // results sink -> caller
    rte_mempool* pool = nullptr;                     // the app's packet pool (set by offload's open)
};

// Held while a link is bound, so two accelerators never build their apps at once.
std::mutex& bind_mutex();
// The link bound now (nullptr: none); set_bound_link is called with bind_mutex() held.
PacketLink* bound_link();
void set_bound_link(PacketLink* link);

}  // namespace tp
