// A link between two ranks on one host, through memory they share (rank_memory.hpp): the
// sending rank's pools have their mbufs in its shared segment, so it lends each packet instead
// of copying it.
//
// Per packet the sender writes a 32-byte record (what a message record carries, and where the mbuf
// is in its segment; header offsets, entry stamp and capture time in a slot beside it only when the
// packet has them) into a ring of kRankLinkSlots slots in its segment, with streaming stores (the
// receiver read the slot's line last), and publishes them with one release store per burst, made
// when it lends the next burst or finds its input empty (so the fence before it rarely waits for
// the streaming stores to drain). The receiver attaches each segment's buffer to a header mbuf of
// its own (an external buffer, rte_pktmbuf_attach_extbuf) and hands the packet on: no byte is
// copied. When the receiving rank frees the header, DPDK calls the buffer's free callback (on
// whichever thread freed it), which marks the slot's segment returned; the receiving end counts,
// once per poll, the records whose packets all came back, oldest first, and the sender puts those
// mbufs back into its pool (a packet the receiving rank keeps holds back the reuse of the slots
// after it: at most kRankLinkSlots packets are out, so a stage that kept one for the whole run
// would stop the link; none does). A packet not wholly in the sender's shared pools (an mbuf
// another rank lent, a clone) is first copied into the node's pool. End of stream is a record of
// its own.
//
// Memory orders: the sender's SFENCE then release store of `published` after writing records
// (the fence orders the weakly-ordered streaming stores before it) pairs with the receiver's
// acquire load before reading them; the receiver's release store of `taken` after reading
// records, with the sender's acquire load before writing over them; a free callback's
// release increment of `returned` after the last use of the packet, with the receiving end's
// acquire load before it counts the record given back, whose release store of `given_back`
// pairs with the sender's acquire load before it puts the mbuf back and lends through the slot
// again (so the receiver's next write of the slot's reference count follows the last one's
// use); past `given_back` (at the end, or nearly out of slots) the sender acquires the slot's
// `returned` itself. The areas are std::atomic words in memory both processes map; lock-free
// atomics are address-free, so they work across processes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "framework/graph/app_runner.hpp"

namespace tp {

// Bytes of a link's area in the sending rank's segment (a multiple of the cache line).
size_t shared_link_area_bytes();
// Private bytes each mbuf of a lending pool has (MbufPoolSpec::priv_size): the receiver keeps
// the external buffer's reference count there while it is lent as a chain's later segment (a
// head's is in the link's area, per slot).
uint16_t shared_link_mbuf_priv();
// Makes `area` (shared_link_area_bytes(), cache-aligned) an empty link, before the receiver
// may look at it.
void init_shared_link_area(void* area);

// The sending end: `area` in its own segment `segment` (records give offsets into it); packets
// that cannot be lent are copied into `pool` (a lending pool of the node).
std::unique_ptr<Task> make_shared_send(void* area, std::span<std::byte> segment, Channel<PacketDesc>* in, MbufPool& pool);
// The receiving end: `area` and `segment` as this process maps them; `sender_base`: the
// segment's address in the sender's process (the links of its mbuf chains). It attaches the
// lent buffers to mbufs of `headers` (rank_link_header_spec(): data-less), which must outlive
// whatever holds the packets it hands on.
std::unique_ptr<Task> make_shared_receive(void* area, std::byte* segment, uintptr_t sender_base, Channel<PacketDesc>* out,
                                          MbufPool& headers);

}  // namespace tp
