#include "framework/graph/app_network.hpp"

#include <spdlog/spdlog.h>

#include <map>
#include <stdexcept>
#include <string>

#include "framework/channel/transport_udn_shared.hpp"
#include "framework/graph/app_plan.hpp"
#include "framework/noc/credit_receiver.hpp"
#include "framework/noc/credit_sender.hpp"
#include "framework/noc/detail/credit_setup.hpp"
#include "framework/noc/eventdev_network.hpp"
#include "framework/noc/inbox.hpp"
#include "framework/noc/message_network.hpp"
#include "framework/noc/queue_demux.hpp"

namespace tp {

struct AppNetworks::Net {
    virtual ~Net() = default;
    virtual std::unique_ptr<Channel<PacketDesc>> desc_channel(size_t edge) = 0;
    virtual std::unique_ptr<Channel<uint64_t>> word_channel(size_t edge) = 0;
    virtual uint64_t strays() = 0;
    virtual noc::MessageNetwork* message_network() = 0;
    virtual noc::QueueCounters counters(uint32_t tile, uint32_t queue) const = 0;
    virtual void note_bound(const AppGraph& graph, const std::vector<MemoryPlace>& node_places, std::vector<BoundArea>& out) = 0;
};

namespace {

using noc::TileId;

// An event device's queues are DPDK's (its memory, its layout): there is no area to bind.
constexpr const char* kEventdevStays = "an udn_eventdev network's queues are the event device's own DPDK memory, never bound";

// The network of `plan`; a shared-memory one with each tile's queues bound to the place of
// the node it hosts when `node_places` is given.
template <typename N>
std::unique_ptr<N> make_network(const NetworkPlan& plan, const std::vector<MemoryPlace>* node_places) {
    if constexpr (std::is_same_v<N, noc::MessageNetwork>) {
        std::vector<MemoryPlace> tile_places;
        if (node_places != nullptr)
            for (const NetworkTilePlan& t : plan.tiles) tile_places.push_back((*node_places)[t.node]);
        return std::make_unique<N>(plan.config, tile_places);
    } else {
        return std::make_unique<N>(plan.config);
    }
}

template <typename N>
class NetworkOf final : public AppNetworks::Net {
public:
    NetworkOf(const NetworkPlan& plan, const AppGraph& graph, const std::vector<MemoryPlace>* node_places)
        : plan_(plan), name_(plan.transport == "udn" ? "udn" : "udn_eventdev"), net_(make_network<N>(plan, node_places)) {
        receivers_.resize(plan_.groups.size());
        senders_.resize(plan_.links.size());
        desc_sides_.resize(plan_.groups.size());
        word_sides_.resize(plan_.groups.size());
        for (size_t g = 0; g < plan_.groups.size(); ++g) build_group(g, graph);
    }

    std::unique_ptr<Channel<PacketDesc>> desc_channel(size_t edge) override { return channel<PacketDesc>(edge, desc_sides_); }
    std::unique_ptr<Channel<uint64_t>> word_channel(size_t edge) override { return channel<uint64_t>(edge, word_sides_); }

    uint64_t strays() override {
        noc::MessageHeader h;
        uint64_t scratch[noc::kMaxPayload];
        for (TileId t = 0; t < net_->tiles(); ++t) {
            if (auto it = demux_.find(key(t, net_->catch_all())); it != demux_.end()) {
                while (it->second->try_pop_unclaimed(h, scratch)) ++strays_;
            } else {
                while (net_->try_pop(t, net_->catch_all(), h, scratch)) ++strays_;
            }
        }
        return strays_;
    }

    noc::MessageNetwork* message_network() override {
        if constexpr (std::is_same_v<N, noc::MessageNetwork>) return net_.get();
        else return nullptr;
    }

    noc::QueueCounters counters(uint32_t tile, uint32_t queue) const override { return net_->counters(tile, queue); }

    // Per tile, its queues as bound, or why they are not (an eventdev tile whose node asked
    // for a placement: warned here, once per network, whatever else the runner warns of).
    void note_bound(const AppGraph& graph, const std::vector<MemoryPlace>& node_places, std::vector<BoundArea>& out) override {
        const size_t before = out.size();
        for (TileId t = 0; t < net_->tiles(); ++t) {
            const size_t node = plan_.tiles[t].node;
            const std::string of = " of tile " + std::to_string(t) + " (node " + graph.nodes[node].name + ")";
            if constexpr (std::is_same_v<N, noc::MessageNetwork>) {
                const auto& areas = net_->bound_slots(t);
                for (uint32_t q = 0; q < areas.size(); ++q)
                    out.push_back({(q == net_->catch_all() ? std::string("network catch-all") : "network queue " + std::to_string(q)) + of,
                                   areas[q].addr, areas[q].bytes, node_places[node], areas[q].error});
            } else if (node_places[node].policy != MemoryPolicy::FirstTouch) {  // asked for, not done
                out.push_back({"every network queue" + of, nullptr, 0, node_places[node], kEventdevStays, true});
            }
        }
        if constexpr (!std::is_same_v<N, noc::MessageNetwork>)
            if (const size_t n = out.size() - before; n > 0)
                spdlog::warn("memory: {} is not placed ({}){}: {}", out[before].what, describe(out[before].place),
                             n > 1 ? ", nor are those of " + std::to_string(n - 1) + " other tile(s)" : std::string(), kEventdevStays);
    }

private:
    TileId tile(size_t node) const { return static_cast<TileId>(plan_.tile_of_node[node]); }
    size_t key(TileId t, uint32_t q) const { return size_t{t} * (plan_.config.queues + 1) + q; }

    noc::QueueDemux<N>& demux(TileId t, uint32_t q) {
        auto& d = demux_[key(t, q)];
        if (!d) d = std::make_unique<noc::QueueDemux<N>>(*net_, t, q);
        return *d;
    }

    // Where `t` pops what arrives in `q` under `tag`: the queue itself, or the tag's share of
    // it when logical channels multiplex it.
    noc::Inbox<N> inbox(TileId t, uint32_t q, bool shared, noc::Tag tag, uint32_t messages, uint32_t words) {
        if (!shared) return noc::Inbox<N>(*net_, t, q);
        noc::QueueDemux<N>& d = demux(t, q);
        return noc::Inbox<N>(*net_, t, q, &d, d.attach(tag, messages, words));
    }

    template <typename T, typename... A>
    void hold(A&&... args) {
        setup_.push_back(std::make_shared<T>(std::forward<A>(args)...));
    }

    void build_group(size_t g, const AppGraph& graph) {
        const NetworkGroupPlan& gr = plan_.groups[g];
        const TileId rx = tile(gr.receiver);
        const auto n = static_cast<uint32_t>(gr.edges.size());
        const uint32_t k = gr.credits, w = gr.payload_words;
        const std::string who = name_ + std::string(" link into '") + graph.nodes[gr.receiver].name + "'";
        noc::Inbox<N> data = inbox(rx, gr.data_queue, gr.data_shared, gr.data_tag, n * k, w);
        hold<noc::detail::TagBinding<N>>(*net_, rx, gr.data_tag, gr.data_queue);
        hold<noc::detail::RoomReservation<N>>(*net_, rx, gr.data_queue, uint64_t{n} * k * (1 + w), who, "");
        // A queue of its own: claimed by its one sender, or by its senders' credits (only they
        // push there, so each push reserves with one fetch_add: many workers into a collector).
        const bool own_data = !gr.data_shared;
        if (own_data)
            hold<noc::detail::QueueClaim<N>>(*net_, rx, gr.data_queue,
                                             n == 1 ? tile(graph.edges[gr.edges[0]].from) : noc::detail::kCreditedSenders);
        bool own_acks = true;
        std::vector<noc::Inbox<N>> acks;
        for (size_t e : gr.edges) {
            const NetworkLinkPlan& l = plan_.links[static_cast<size_t>(plan_.link_of_edge[e])];
            const TileId tx = tile(graph.edges[e].from);
            acks.push_back(inbox(tx, l.ack_queue, l.ack_shared, gr.ack_tag, k, 1));  // a credit message: its count
            hold<noc::detail::TagBinding<N>>(*net_, tx, gr.ack_tag, l.ack_queue);
            hold<noc::detail::RoomReservation<N>>(*net_, tx, l.ack_queue, uint64_t{noc::kCreditWords} * k, who + " (credits)", "");
            if (!l.ack_shared) hold<noc::detail::QueueClaim<N>>(*net_, tx, l.ack_queue, rx);
            own_acks = own_acks && !l.ack_shared;
        }
        // The ack tags are bound: the receiver resolves its credit routes now.
        receivers_[g] = std::make_unique<noc::CreditReceiver<N>>(*net_, rx, gr.data_tag, gr.ack_tag, data, w, own_acks);
        if (w == 2) desc_sides_[g] = std::make_unique<UdnReceiveSide<PacketDesc, N>>(*receivers_[g]);
        else word_sides_[g] = std::make_unique<UdnReceiveSide<uint64_t, N>>(*receivers_[g]);
        for (size_t i = 0; i < gr.edges.size(); ++i) {
            const size_t e = gr.edges[i];
            const TileId tx = tile(graph.edges[e].from);
            senders_[static_cast<size_t>(plan_.link_of_edge[e])] = std::make_unique<noc::CreditSender<N>>(
                *net_, tx, rx, gr.data_tag, gr.ack_tag, acks[i], w, own_data);
            receivers_[g]->grant(tx, k);
        }
    }

    template <typename T, typename Side>
    std::unique_ptr<Channel<T>> channel(size_t edge, Side& sides) {
        if (edge >= plan_.link_of_edge.size() || plan_.link_of_edge[edge] < 0) return nullptr;
        const auto li = static_cast<size_t>(plan_.link_of_edge[edge]);
        const NetworkGroupPlan& gr = plan_.groups[plan_.links[li].group];
        if (!sides[plan_.links[li].group])
            throw std::logic_error(std::string(name_) + " link: edge " + std::to_string(edge) +
                                   " carries other items than asked for");
        return std::make_unique<SharedUdnChannel<T, N>>(*senders_[li], *sides[plan_.links[li].group], gr.credits, name_);
    }

    const NetworkPlan plan_;
    const char* name_;
    // Destroyed last to first: the channels' ends, then the set-up, then the network.
    std::unique_ptr<N> net_;
    std::map<size_t, std::unique_ptr<noc::QueueDemux<N>>> demux_;  // by tile and queue
    std::vector<std::shared_ptr<void>> setup_;  // tag bindings, room set aside, claims
    std::vector<std::unique_ptr<noc::CreditReceiver<N>>> receivers_;  // per group
    std::vector<std::unique_ptr<noc::CreditSender<N>>> senders_;      // per link
    std::vector<std::unique_ptr<UdnReceiveSide<PacketDesc, N>>> desc_sides_;  // per group carrying descriptors
    std::vector<std::unique_ptr<UdnReceiveSide<uint64_t, N>>> word_sides_;    // per group carrying words
    uint64_t strays_ = 0;
};

}  // namespace

AppNetworks::AppNetworks(const AppPlan& plan, const std::vector<MemoryPlace>* node_places) {
    for (const NetworkPlan& np : plan.networks) {
        if (np.transport == "udn") nets_.push_back(std::make_unique<NetworkOf<noc::MessageNetwork>>(np, plan.graph, node_places));
        else nets_.push_back(std::make_unique<NetworkOf<noc::EventdevNetwork>>(np, plan.graph, node_places));
        if (node_places != nullptr) nets_.back()->note_bound(plan.graph, *node_places, bound_);
        if (!np.notes.empty())
            spdlog::info("{} network: K lowered to fit {}-word queues on {} receive interface(s) (tilepipe topo shows them)",
                         np.transport, np.config.queue_words, np.notes.size());
        for (const std::string& note : np.notes) spdlog::debug("{} network: {}", np.transport, note);
    }
}

AppNetworks::~AppNetworks() {
    const uint64_t n = strays();
    if (n != 0) spdlog::warn("{} message(s) with a tag no link is bound to reached a catch-all queue", n);
}

std::unique_ptr<Channel<PacketDesc>> AppNetworks::desc_channel(size_t edge) {
    for (auto& n : nets_)
        if (auto c = n->desc_channel(edge)) return c;
    return nullptr;
}

std::unique_ptr<Channel<uint64_t>> AppNetworks::word_channel(size_t edge) {
    for (auto& n : nets_)
        if (auto c = n->word_channel(edge)) return c;
    return nullptr;
}

uint64_t AppNetworks::strays() {
    uint64_t n = 0;
    for (auto& net : nets_) n += net->strays();
    return n;
}

noc::QueueCounters AppNetworks::counters(size_t network, uint32_t tile, uint32_t queue) const {
    return nets_.at(network)->counters(tile, queue);
}

noc::MessageNetwork* AppNetworks::message_network() {
    for (auto& n : nets_)
        if (noc::MessageNetwork* m = n->message_network()) return m;
    return nullptr;
}

}  // namespace tp
