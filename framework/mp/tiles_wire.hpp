// The tiles backend's wire format: the network tags bound to every rank's queue and what each
// message's words hold, with the sizes that choose a message's protocol (see tiles_comm.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "framework/mp/tiles_comm.hpp"

namespace tp::mp::detail {

// Network tags (bound to queue 0 of every rank's tile).
// w0: tag | rts << 40 | direct << 41 | ctx << 48; w1: bytes | send slot << 32; then eager data,
// or for a direct offer w2: the handoff's address, w3: the buffer's, w4: the generation.
// ctx: the communicator's context (2 x its id: point-to-point, + 1: collectives; the world's
// id is 0), 16 bits, so up to 32767 communicators split from it (kMaxGroupId).
inline constexpr noc::Tag kEnvelope = 0x6d01;
inline constexpr noc::Tag kGrant = 0x6d02;     // w0: send slot | recv slot << 32; w1: bytes granted so far
inline constexpr noc::Tag kData = 0x6d03;      // w0: recv slot | offset << 32; data
inline constexpr noc::Tag kCredit = 0x6d04;    // w0: segments handed back
inline constexpr noc::Tag kMore = 0x6d05;      // w0: send slot | offset << 32; a streamed eager message's data
inline constexpr size_t kStreamSegments = 15;  // a streamed eager message: its envelope and up to 15 segments
inline constexpr size_t kWord = sizeof(uint64_t);
// Handoff phases (TilesShared::Handoff): offered, being copied, copied, withdrawn.
inline constexpr uint64_t kOffered = 0, kCopying = 1, kCopied = 2, kWithdrawn = 3;
inline constexpr uint32_t words_for(size_t bytes) { return static_cast<uint32_t>((bytes + kWord - 1) / kWord); }

inline constexpr uint32_t kMaxGroupId = 32767;
inline constexpr uint64_t envelope_w0(uint32_t tag, int ctx, bool rts, bool direct) {
    return uint64_t{tag} | (uint64_t{rts} << 40) | (uint64_t{direct} << 41) | (uint64_t(ctx) << 48);
}
inline constexpr int ctx_of(uint64_t w0) { return static_cast<int>(w0 >> 48); }

}  // namespace tp::mp::detail
