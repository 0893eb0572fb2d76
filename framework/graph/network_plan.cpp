#include "framework/graph/network_plan.hpp"

#include <algorithm>
#include <bit>
#include <map>

#include "framework/graph/app_plan.hpp"

namespace tp {

bool on_app_network(const std::string& transport) { return transport == "udn" || transport == "udn_eventdev"; }

namespace {

// event_sw's ports: every (tile, queue) of an eventdev network takes one.
constexpr uint64_t kEventPorts = 64;

// Something that needs a queue of a tile: a receive interface's data, or a link's credits.
struct Endpoint {
    bool data = false;
    size_t index = 0;   // group (data) or link (credits)
    uint64_t unit = 0;  // words one credit stands for there: N x (1 + w), or kCreditWords for a credit
    uint32_t queue = 0;
    bool shared = false;
    uint64_t bound = 0;  // most credits its share of the queue holds
    uint64_t share = 0;  // words of the queue it may use
    uint64_t want = 0;   // words its credits ask for (auto-sized queues)
    uint32_t tile = 0;   // network tile
};

// Smallest queue of an auto-sized network: the UDN's, enough for the catch-all's strays.
constexpr uint32_t kBaseQueueWords = 128;

std::string edge_name(const AppGraph& g, size_t e) {
    return "'" + g.nodes[g.edges[e].from].name + "' -> '" + g.nodes[g.edges[e].to].name + "'";
}

std::string senders_of(const AppGraph& g, const NetworkGroupPlan& gr) {
    std::string s;
    for (size_t e : gr.edges) s += (s.empty() ? "" : ", ") + g.nodes[g.edges[e].from].name;
    return s;
}

class Planner {
public:
    Planner(const AppConfig& app, AppPlan& plan, const char* kind) : app_(app), plan_(plan), g_(plan.graph) {
        np_.transport = kind;
    }

    NetworkPlan run() {
        const NetworkSettings& s = app_.network;
        np_.tile_of_node.assign(g_.nodes.size(), -1);
        np_.link_of_edge.assign(g_.edges.size(), -1);
        std::vector<size_t> edges;
        for (size_t e = 0; e < g_.edges.size(); ++e)
            if (g_.edges[e].transport == np_.transport) edges.push_back(e);
        if (edges.empty()) return std::move(np_);
        // Network tiles in graph order: the nodes any such link touches.
        for (size_t n = 0; n < g_.nodes.size(); ++n)
            for (size_t e : edges)
                if (g_.edges[e].from == n || g_.edges[e].to == n) {
                    np_.tile_of_node[n] = static_cast<int>(np_.tiles.size());
                    np_.tiles.push_back(NetworkTilePlan{n, {}});
                    break;
                }
        np_.config.tiles = static_cast<uint32_t>(np_.tiles.size());
        np_.config.queues = s.queues;
        // auto: each queue of a shared-memory network is sized to the credits it carries (an
        // event device holds a bounded number of events: its queues stay at the UDN's 128).
        auto_ = s.auto_queue_words() && np_.transport == "udn";
        np_.config.queue_words = s.auto_queue_words() ? kBaseQueueWords : s.queue_words;
        np_.config.doorbells = false;  // the channels ring the tiles' own doorbells
        check_ports(edges);
        make_groups(edges);
        assign_queues();
        // A message carries a sender's burst (a run of descriptors or references, see
        // CreditSender::try_send_many), as long as the smallest queue holds it with its header.
        const uint32_t smallest = np_.config.queue_sizes.empty()
                                      ? np_.config.queue_words
                                      : *std::min_element(np_.config.queue_sizes.begin(), np_.config.queue_sizes.end());
        np_.config.max_payload = std::max(2u, std::min(noc::kMaxPayload, smallest - 1));  // 2: a descriptor
        for (size_t gi = 0; gi < np_.groups.size(); ++gi) size_credits(gi);
        describe_queues();
        return std::move(np_);
    }

private:
    const Location& place_of(size_t node) const {
        return g_.nodes[node].where.file.empty() ? app_.network.where : g_.nodes[node].where;
    }
    const Location& network_place(size_t node) const {
        return app_.network.where.file.empty() ? g_.nodes[node].where : app_.network.where;
    }
    std::string who() const { return np_.transport + " network: "; }
    std::string raise_hint() const {
        return "raise network.queue_words (now " +
               (app_.network.auto_queue_words() ? std::string("auto: ") + std::to_string(kBaseQueueWords) + " words on " + np_.transport
                                               : std::to_string(app_.network.queue_words)) +
               ") or network.queues (now " + std::to_string(app_.network.queues) + ")";
    }

    void check_ports(const std::vector<size_t>& edges) {
        if (np_.transport != "udn_eventdev") return;
        const uint64_t ports = uint64_t{np_.config.tiles} * (np_.config.queues + 1);
        // Named where the count is decided: network.queues where it was given, else a node
        // of the app (the tiles), not the place of an unrelated network setting.
        if (ports > kEventPorts)
            throw LocatedError(app_.network.queues_where.file.empty() ? g_.nodes[g_.edges[edges.front()].to].where
                                                                      : app_.network.queues_where,
                               who() + std::to_string(np_.config.tiles) + " tiles x (" +
                                   std::to_string(np_.config.queues) + " queues + catch-all) need " +
                                   std::to_string(ports) + " event ports, event_sw offers " +
                                   std::to_string(kEventPorts) + ": lower network.queues or use transport udn");
    }

    // The links of one kind into one node share a receive interface.
    void make_groups(const std::vector<size_t>& edges) {
        std::map<std::pair<size_t, int>, size_t> group_of;
        for (size_t e : edges) {
            const GraphEdge& ge = g_.edges[e];
            const int kind = ge.freed ? 2 : ge.words ? 1 : 0;
            auto [it, fresh] = group_of.try_emplace({ge.to, kind}, np_.groups.size());
            if (fresh) {
                const size_t gi = np_.groups.size();
                if (2 * gi + 2 > 0xffff)
                    throw LocatedError(place_of(ge.to), who() + "more than " + std::to_string(0xffff / 2) +
                                                            " receive interfaces: the tags run out");
                NetworkGroupPlan gr;
                gr.receiver = ge.to;
                gr.payload_words = ge.words ? 1 : 2;
                gr.data_tag = static_cast<noc::Tag>(2 * gi + 1);
                gr.ack_tag = static_cast<noc::Tag>(2 * gi + 2);
                np_.groups.push_back(gr);
            }
            np_.groups[it->second].edges.push_back(e);
            np_.link_of_edge[e] = static_cast<int>(np_.links.size());
            np_.links.push_back(NetworkLinkPlan{e, it->second, 0, false, ge.capacity});
        }
    }

    // A tile's endpoints take its queues in order (receive interfaces first); when they
    // outnumber the queues, the last one (or the catch-all) carries the rest, split evenly.
    // With auto-sized queues (network.queue_words: auto), each queue gets the words its
    // endpoints' credits ask for, rounded up to a power of two, at least kBaseQueueWords.
    void assign_queues() {
        ends_.assign(np_.tiles.size(), {});
        for (size_t gi = 0; gi < np_.groups.size(); ++gi) {
            const NetworkGroupPlan& gr = np_.groups[gi];
            const uint64_t unit = gr.edges.size() * (1 + uint64_t{gr.payload_words});
            const auto t = static_cast<uint32_t>(np_.tile_of_node[gr.receiver]);
            ends_[t].push_back(Endpoint{.data = true, .index = gi, .unit = unit, .want = unit * asked(gr), .tile = t});
        }
        for (size_t li = 0; li < np_.links.size(); ++li) {
            const auto t = static_cast<uint32_t>(np_.tile_of_node[g_.edges[np_.links[li].edge].from]);
            ends_[t].push_back(Endpoint{.data = false, .index = li, .unit = noc::kCreditWords,
                                        .want = noc::kCreditWords * asked(np_.groups[np_.links[li].group]), .tile = t});
        }
        const uint32_t q = np_.config.queues, words = np_.config.queue_words;
        const bool catch_all = app_.network.catch_all == "shared";
        if (auto_) np_.config.queue_sizes.assign(np_.tiles.size() * (q + 1), kBaseQueueWords);
        for (auto& ends : ends_) {
            const size_t n = ends.size();
            const size_t own = n <= q ? n : catch_all ? q : q - 1;
            const uint32_t shared_queue = catch_all ? q : q - 1;
            const size_t sharing = n - own;
            uint64_t shared_want = 0;
            for (size_t i = own; i < n; ++i) shared_want += ends[i].want;
            for (size_t i = 0; i < n; ++i) {
                Endpoint& ep = ends[i];
                ep.shared = i >= own;
                ep.queue = ep.shared ? shared_queue : static_cast<uint32_t>(i);
                if (auto_) {
                    const uint64_t need = std::max<uint64_t>(kBaseQueueWords, ep.shared ? shared_want : ep.want);
                    const auto size = static_cast<uint32_t>(std::bit_ceil(std::min<uint64_t>(need, noc::kMaxQueueWords)));
                    np_.config.queue_sizes[size_t{ep.tile} * (q + 1) + ep.queue] = size;
                    ep.share = ep.shared ? std::min<uint64_t>(ep.want, size) : size;
                } else {
                    ep.share = ep.shared ? words / sharing : words;
                }
                ep.bound = ep.share / ep.unit;
                if (ep.data) {
                    np_.groups[ep.index].data_queue = ep.queue;
                    np_.groups[ep.index].data_shared = ep.shared;
                } else {
                    np_.links[ep.index].ack_queue = ep.queue;
                    np_.links[ep.index].ack_shared = ep.shared;
                }
            }
        }
    }

    const Endpoint& endpoint(size_t node, bool data, size_t index) const {
        for (const Endpoint& ep : ends_[static_cast<size_t>(np_.tile_of_node[node])])
            if (ep.data == data && ep.index == index) return ep;
        throw std::logic_error("network plan: an endpoint without a queue");
    }

    // K the links of a receive interface ask for: the largest `queue` among them.
    uint64_t asked(const NetworkGroupPlan& gr) const {
        uint32_t a = 0;
        for (size_t e : gr.edges) a = std::max(a, g_.edges[e].capacity);
        return a;
    }

    std::string queue_text(const Endpoint& ep) const {
        std::string s = ep.queue == np_.config.queues ? "the catch-all" : "queue " + std::to_string(ep.queue);
        s += " (" + std::to_string(np_.config.words_of(ep.tile, ep.queue)) + " words";
        if (ep.shared) s += ", shared by logical channels: " + std::to_string(ep.share) + " words each";
        return s + ")";
    }

    // K of a receive interface: what its links asked for, within every queue's bound.
    void size_credits(size_t gi) {
        NetworkGroupPlan& gr = np_.groups[gi];
        const size_t n = gr.edges.size();
        const uint64_t per_message = 1 + uint64_t{gr.payload_words};
        const Endpoint& data = endpoint(gr.receiver, true, gi);
        const uint64_t asked = this->asked(gr);
        uint64_t k = std::min<uint64_t>(asked, data.bound);
        std::string why = "'" + g_.nodes[gr.receiver].name + "' " + queue_text(data) + " holds " +
                          std::to_string(n) + " sender(s) x K x " + std::to_string(per_message) +
                          " words: K <= " + std::to_string(data.bound);
        if (data.bound == 0)
            throw LocatedError(network_place(gr.receiver),
                               who() + "'" + g_.nodes[gr.receiver].name + "' cannot receive from " + senders_of(g_, gr) +
                                   ": " + std::to_string(n) + " sender(s) of (1 + " +
                                   std::to_string(gr.payload_words) + ")-word messages need at least " +
                                   std::to_string(n * per_message) + " words of " + queue_text(data) + "; " +
                                   raise_hint());
        for (size_t e : gr.edges) {
            const size_t li = static_cast<size_t>(np_.link_of_edge[e]);
            const Endpoint& ack = endpoint(g_.edges[e].from, false, li);
            if (ack.bound == 0)
                throw LocatedError(network_place(g_.edges[e].from),
                                   who() + "'" + g_.nodes[g_.edges[e].from].name + "' cannot take the credits of link " +
                                       edge_name(g_, e) + ": " + queue_text(ack) + " has no word left for it; " +
                                       raise_hint());
            if (ack.bound < k) {
                k = ack.bound;
                why = "credits of " + edge_name(g_, e) + " in '" + g_.nodes[g_.edges[e].from].name + "' " +
                      queue_text(ack) + ": K <= " + std::to_string(ack.bound);
            }
        }
        for (size_t e : gr.edges) {
            if (g_.edges[e].capacity <= k) continue;
            if (app_.network.credits == "exact")
                throw LocatedError(place_of(gr.receiver),
                                   who() + "link " + edge_name(g_, e) + " asks for K = " +
                                       std::to_string(g_.edges[e].capacity) + " credits, its queues hold " +
                                       std::to_string(k) + " (" + why + "): lower the link's queue to " +
                                       std::to_string(std::bit_floor(k)) + " (a power of two), " + raise_hint() + ", or set network.credits: fit");
        }
        if (k < asked)
            np_.notes.push_back("'" + g_.nodes[gr.receiver].name + "' receives with K = " + std::to_string(k) +
                                " per sender (asked " + std::to_string(asked) + "): " + why);
        gr.credits = static_cast<uint32_t>(k);
        for (size_t e : gr.edges) {
            plan_.graph.edges[e].capacity = gr.credits;
            plan_.links[e].capacity = gr.credits;
        }
    }

    void describe_queues() {
        for (size_t t = 0; t < np_.tiles.size(); ++t) {
            std::map<uint32_t, NetworkQueuePlan> by_index;
            for (const Endpoint& ep : ends_[t]) {
                NetworkQueuePlan& q = by_index[ep.queue];
                q.index = ep.queue;
                q.words = np_.config.words_of(static_cast<uint32_t>(t), ep.queue);
                q.shared = q.shared || ep.shared;
                if (ep.data) {
                    const NetworkGroupPlan& gr = np_.groups[ep.index];
                    q.reserved_words += gr.edges.size() * uint64_t{gr.credits} * (1 + gr.payload_words);
                    q.carries.push_back("tag " + std::to_string(gr.data_tag) + ": " +
                                        (gr.asymmetric() ? "asymmetric, " : "") + "data from " + senders_of(g_, gr) +
                                        ", K " + std::to_string(gr.credits) + (gr.asymmetric() ? " each" : ""));
                } else {
                    const NetworkLinkPlan& l = np_.links[ep.index];
                    const NetworkGroupPlan& gr = np_.groups[l.group];
                    q.reserved_words += uint64_t{noc::kCreditWords} * gr.credits;
                    q.carries.push_back("tag " + std::to_string(gr.ack_tag) + ": credits from " +
                                        g_.nodes[gr.receiver].name + ", K " + std::to_string(gr.credits));
                }
            }
            for (auto& [i, q] : by_index) np_.tiles[t].queues.push_back(std::move(q));
        }
    }

    const AppConfig& app_;
    AppPlan& plan_;
    const AppGraph& g_;
    NetworkPlan np_;
    bool auto_ = false;  // queues sized to their credits
    std::vector<std::vector<Endpoint>> ends_;  // per network tile
};

}  // namespace

std::vector<NetworkPlan> plan_networks(const AppConfig& app, AppPlan& plan) {
    std::vector<NetworkPlan> out;
    for (const char* kind : {"udn", "udn_eventdev"}) {
        NetworkPlan np = Planner(app, plan, kind).run();
        if (!np.links.empty()) out.push_back(std::move(np));
    }
    return out;
}

}  // namespace tp
