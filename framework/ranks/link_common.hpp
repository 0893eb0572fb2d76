// What both kinds of link between ranks (rank_link.hpp, shared_rank_link.hpp) share: the mbuf
// dynamic fields a packet carries across, how long an idle link end naps, the receiving end's
// burst in hand, and MPI's errors as exceptions.
#pragma once

#include <mpi.h>

#include <stdexcept>
#include <string>

#include "descriptors/burst.hpp"
#include "descriptors/capture_time.hpp"
#include "descriptors/wire_length.hpp"
#include "framework/metrics/packet_timestamp.hpp"
#include "framework/channel/channel.hpp"
#include "framework/runtime/sequence_field.hpp"

namespace tp {

// The fields, registered once per task (after EAL is up).
struct RankLinkFields {
    int wire = wire_length_offset();
    int seq = sequence_field_offset();
    int entry = entry_tsc_offset();
    int handoff = handoff_tsc_offset();  // when the last node handed the packet on (latency: all)
    CaptureTimeField capture = capture_time_field();
};

// Nothing rings a link end's doorbell when its peer rank sends, so an idle end has its thread
// nap (Task::waits_unrung: 50 us) instead of parking for the park timeout (1 ms) while the peer
// may answer soon: a sender while what it sent is out, a receiver until its link has been
// quiet this long (then a first message waits a park timeout at most, once).
inline constexpr double kQuietLinkSeconds = 0.01;

// A receiving end's burst for the next node, and how much of it the next node took.
struct HeldBurst {
    Burst b;
    uint16_t at = 0;

    bool pending() const { return at < b.n; }
    // Offers the rest downstream; true once all of it went.
    bool hand_on(Channel<PacketDesc>* out) {
        at = static_cast<uint16_t>(at + out->try_send_burst(b.d + at, b.n - at));
        if (at < b.n) return false;
        b.n = at = 0;
        return true;
    }
    // Gives `give_back` (a failed task's drop_after_failure) what the next node did not take.
    template <class F>
    void drop(F&& give_back) {
        for (uint16_t i = at; i < b.n; ++i) give_back(b.d[i]);
        b.n = at = 0;
    }
};

// A failed sending end's input, given back (`give_back`: its drop_after_failure) as it comes:
// Moved (some came), Waiting (nothing, still open) or Ended (closed and empty).
enum class InputDrain { Moved, Waiting, Ended };
template <class F>
InputDrain drain_input(Channel<PacketDesc>* in, F&& give_back) {
    PacketDesc d[kBurstMax];
    const uint32_t n = in->try_recv_burst(d, kBurstMax);
    for (uint32_t i = 0; i < n; ++i) give_back(d[i]);
    if (n != 0) return InputDrain::Moved;
    if (!in->closed()) return InputDrain::Waiting;
    if (in->try_recv_burst(d, 1) != 0) {  // sent just before the close
        give_back(d[0]);
        return InputDrain::Moved;
    }
    return InputDrain::Ended;
}

// MPI's message for error code `rc`.
inline std::string mpi_error_text(int rc) {
    char text[MPI_MAX_ERROR_STRING];
    int n = 0;
    MPI_Error_string(rc, text, &n);
    return std::string(text, static_cast<size_t>(n));
}

// Throws std::runtime_error "WHERE: WHAT: MPI's message" unless `rc` is MPI_SUCCESS.
inline void throw_on_mpi_error(int rc, const char* where, const char* what) {
    if (rc != MPI_SUCCESS) throw std::runtime_error(std::string(where) + ": " + what + ": " + mpi_error_text(rc));
}

}  // namespace tp
