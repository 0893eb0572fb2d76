// The links between ranks on Open MPI: the tasks of a rank part's RankSend and RankReceive
// nodes (rank_plan.hpp).
//
// A link carries messages: what the sending end found waiting (up to kRankLinkMessagePackets
// packets), a record per packet (its length, wire length, input port, flow hash, type bits,
// sampled bit and entry timestamp, capture time, ordered-farm number, header offsets; a hole
// marker of an ordered farm as a record without bytes) and then the packets' bytes. The sender
// frees each mbuf once its bytes are in the message; the receiver copies them into mbufs of its
// own pool, a burst at a time. At most kRankLinkCredits messages are in flight per link: the
// receiver returns credits (a message on the link's credit tag) as it empties messages. End of
// stream is a message of its own, sent after the last one. Every tile of a link end calls MPI,
// so the library must provide MPI_THREAD_MULTIPLE (RankWorld checks).
//
// Given a RankMemory, a link between two ranks of one host lends packets through it instead
// (shared_rank_link.hpp), and this rank's pools go where that needs them.
#pragma once

#include <mpi.h>

#include <memory>
#include <vector>

#include "framework/graph/app_runner.hpp"
#include "framework/ranks/rank_memory.hpp"

namespace tp {

class MpiRankLinks final : public RankLinkTasks {
public:
    // Links exchange their messages on `comm` (a communicator of their own).
    explicit MpiRankLinks(MPI_Comm comm) : comm_(comm) {}
    // Links between ranks of one host lend through `memory` (outlives the tasks); nullptr:
    // every link goes by messages.
    void share(const RankMemory* memory) { memory_ = memory; }
    std::unique_ptr<Task> make_send(const GraphNode& node, Channel<PacketDesc>* in, MbufPool& pool) override;
    std::unique_ptr<Task> make_receive(const GraphNode& node, Channel<PacketDesc>* out, MbufPool& pool) override;
    void place_pool(size_t index, MbufPoolSpec& spec) override;
    std::string kind(const GraphNode& node) const override;

private:
    MPI_Comm comm_;
    const RankMemory* memory_ = nullptr;
    // The lending links' header mbufs, one pool per receiving end: here, not in the task, so
    // they outlive every stage that may still hold one when the runner goes.
    std::vector<std::unique_ptr<MbufPool>> header_pools_;
};

}  // namespace tp
