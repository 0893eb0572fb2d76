// TreeMulticast: how a map's emitter hands one task reference (a 64-bit word) to each of its W
// workers (Buono & Mencagli, the TILEPro64 map), and the piece of a worker loop that passes it on.
//
// Two modes:
//  - `linear`: the emitter sends the reference W times, once to each worker.
//  - `tree`: the emitter sends it once, to worker 0, the root of a binary tree laid depth-first
//    on the workers; every worker forwards what it receives to its (at most two) children
//    before doing its own part. Each worker has one input (its parent, or the emitter for the
//    root) and at most three outputs: two children and the collector.
//
// The tree rule. Let L = bit_width(W) = floor(log2 W) + 1 levels, numbered from the bottom: the
// root is at level L, leaves of a full tree at level 1, and a child is one level below its
// parent. Worker j at level i > 1 forwards to j + 1 and to j + 2^(i-1), each only if it is < W.
// Equivalently: take the complete binary tree of L levels (2^L - 1 >= W nodes), number it in
// depth-first preorder (left subtree first), and keep the first W nodes. A preorder prefix
// holds every kept node's parent, so for every W >= 1 (powers of two or not) the kept nodes
// form one tree over exactly the workers 0..W-1, each reached once. W = 10, L = 4:
//
//                 0                    level 4     children of j at level i:
//             /       \                            j + 1 and j + 2^(i-1), if < W
//           1           8              level 3      8 = 0 + 2^3
//         /   \       /
//        2     5     9                 level 2      5 = 1 + 2^2
//       / \   / \                                   9's children 10 and 11 are >= W
//      3   4 6   7                     level 1      leaves
//
// Depth: worker j is depth_of(j) steps below the root, so a reference reaches it after
// depth_of(j) + 1 sends in sequence (emitter -> root -> ... -> j). The left spine 0, 1, ...,
// L - 1 is always present, so the last worker reached is L sends away: multicast_hops(W) =
// bit_width(W) = ceil(log2(W + 1)) (1 for `linear`, at the price of W sends by the emitter).
// Left subtrees are filled first, so the root's right child may be missing (W = 8: 0 -> 1 ->
// {2, 5}, four levels).
//
// Thread-safety: the topology functions are pure. A MulticastPort belongs to one thread (its
// node's); MulticastNetwork is built and wired before the threads start.
// Ordering: every worker receives the references in the emitter's order, exactly once.
#pragma once

#include <bit>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "framework/channel/blocking.hpp"
#include "framework/channel/channel.hpp"
#include "framework/channel/channel_factory.hpp"
#include "framework/runtime/doorbell.hpp"
#include "framework/runtime/wait_policy.hpp"

namespace tp {

enum class Multicast : uint8_t { linear, tree };

// "linear" / "tree"; throws std::invalid_argument naming the accepted values.
Multicast parse_multicast(std::string_view name);
const char* multicast_name(Multicast mode);

// The parent of a worker that receives straight from the emitter.
inline constexpr uint32_t kFromEmitter = UINT32_MAX;

// The workers a node forwards to: zero, one or two (tree), or all W (the linear emitter).
struct TreeChildren {
    uint32_t count = 0;
    uint32_t id[2] = {0, 0};
    const uint32_t* begin() const { return id; }
    const uint32_t* end() const { return id + count; }
};

// Levels of the tree over `workers` (>= 1): bit_width(W).
constexpr uint32_t tree_levels(uint32_t workers) { return static_cast<uint32_t>(std::bit_width(workers)); }

// Level of worker j (< W) in the tree: L for the root, one less per step down.
constexpr uint32_t level_of(uint32_t j, uint32_t workers) {
    uint32_t node = 0, level = tree_levels(workers);
    while (node != j) {  // j is below `node`: in the left subtree (node + 1 ..) or the right
        const uint32_t right = node + (1u << (level - 1));
        node = j < right ? node + 1 : right;
        --level;
    }
    return level;
}

// Children of worker j: in a tree, j + 1 and j + 2^(level-1) where they are < W; in linear
// mode, none (the emitter sends to every worker itself).
constexpr TreeChildren children_of(uint32_t j, uint32_t workers, Multicast mode = Multicast::tree) {
    TreeChildren c;
    if (mode == Multicast::linear) return c;
    const uint32_t level = level_of(j, workers);
    if (level <= 1) return c;
    if (j + 1 < workers) c.id[c.count++] = j + 1;
    const uint32_t right = j + (1u << (level - 1));
    if (right < workers) c.id[c.count++] = right;
    return c;
}

// The worker that forwards to j, or kFromEmitter (the root, and every worker in linear mode).
constexpr uint32_t parent_of(uint32_t j, uint32_t workers, Multicast mode = Multicast::tree) {
    if (mode == Multicast::linear || j == 0) return kFromEmitter;
    uint32_t node = 0, level = tree_levels(workers);
    for (;;) {
        const uint32_t right = node + (1u << (level - 1));
        const uint32_t next = j < right ? node + 1 : right;
        if (next == j) return node;
        node = next;
        --level;
    }
}

// Hops from the root to worker j (0 for the root; 0 for every worker in linear mode).
constexpr uint32_t depth_of(uint32_t j, uint32_t workers, Multicast mode = Multicast::tree) {
    return mode == Multicast::linear ? 0 : tree_levels(workers) - level_of(j, workers);
}

// Sends in sequence from the emitter to the last worker reached: 1 (linear) or bit_width(W).
constexpr uint32_t multicast_hops(uint32_t workers, Multicast mode) {
    return mode == Multicast::linear ? 1 : tree_levels(workers);
}

// One node's end of the multicast: where references come in (a worker's input; none for the
// emitter) and the channels it forwards them on (children, or every worker for a linear
// emitter). Owned by the node's thread.
class MulticastPort {
public:
    MulticastPort() = default;
    MulticastPort(Channel<uint64_t>* input, std::vector<Channel<uint64_t>*> outputs)
        : input_(input), outputs_(std::move(outputs)) {}

    uint32_t outputs() const { return static_cast<uint32_t>(outputs_.size()); }

    // Non-blocking forward: offers `ref` to the outputs in order, resuming after the last one
    // that took it. Returns true once every output has it (then the next call starts a new
    // reference); false when one is full: call again later with the same `ref`.
    bool try_forward(uint64_t ref) {
        while (next_ < outputs_.size()) {
            if (!outputs_[next_]->try_send(ref)) return false;
            ++next_;
        }
        next_ = 0;
        return true;
    }

    // Sends `ref` to every output, in order, waiting for room through `policy`.
    void forward(uint64_t ref, const WaitPolicy& policy = {}) {
        if (try_forward(ref)) return;
        policy.wait([&] { return try_forward(ref); },
                    [&](auto& attempt) { return outputs_[next_]->park_sender(policy, attempt); });
    }

    // Sends refs[0..n) to every output, in order, each output taking the whole burst before
    // the next gets it, waiting for room through `policy`.
    void forward_burst(const uint64_t* refs, uint32_t n, const WaitPolicy& policy = {}) {
        for (Channel<uint64_t>* c : outputs_) send_burst(*c, refs, n, policy);
    }

    // A worker's step: receives the next reference and forwards it to the children before
    // returning it, so the subtree starts while this worker does its own part. At end of
    // stream (input closed and drained) closes the outputs and returns false.
    bool recv_and_forward(uint64_t& ref, const WaitPolicy& policy = {}) {
        if (!recv(*input_, ref, policy)) {
            close();
            return false;
        }
        forward(ref, policy);
        return true;
    }

    // The same for bursts: receives between 1 and n references (as many as are waiting),
    // forwards them all, returns how many; 0 at end of stream, after closing the outputs.
    // One wake-up and one doorbell per burst and output instead of per reference.
    uint32_t recv_and_forward_burst(uint64_t* refs, uint32_t n, const WaitPolicy& policy = {}) {
        const uint32_t got = recv_burst(*input_, refs, n, policy);
        if (got == 0) {
            close();
            return 0;
        }
        forward_burst(refs, got, policy);
        return got;
    }

    // End of stream for everything downstream of this node (call after the last forward).
    void close() {
        for (Channel<uint64_t>* c : outputs_) c->close();
    }

private:
    Channel<uint64_t>* input_ = nullptr;
    std::vector<Channel<uint64_t>*> outputs_;
    size_t next_ = 0;  // first output that does not have the current reference yet
};

// The channels of one multicast: one input channel per worker, each of the spec's transport,
// sent to by the worker's parent (or the emitter). Build, wire doorbells, hand out the ports,
// then start the threads.
class MulticastNetwork {
public:
    // Throws std::invalid_argument for W = 0 or whatever make_channel rejects in `spec`.
    MulticastNetwork(const ChannelSpec& spec, uint32_t workers, Multicast mode);
    // Over channels built elsewhere (one per worker, its input: on a messaging network, say).
    MulticastNetwork(std::vector<std::unique_ptr<Channel<uint64_t>>> inputs, Multicast mode);

    uint32_t workers() const { return static_cast<uint32_t>(inputs_.size()); }
    Multicast mode() const { return mode_; }
    Channel<uint64_t>& input(uint32_t j) { return *inputs_[j]; }

    // Doorbells: worker j's input rings workers[j] after a send and its sender's bell (the
    // emitter's or its parent's) after a receive frees room. Either may be null.
    void set_doorbells(Doorbell* emitter, std::span<Doorbell* const> workers);

    MulticastPort emitter_port();
    MulticastPort worker_port(uint32_t j);

private:
    Multicast mode_;
    std::vector<std::unique_ptr<Channel<uint64_t>>> inputs_;
};

}  // namespace tp
