#include "framework/patterns/tree_multicast.hpp"

namespace tp {

Multicast parse_multicast(std::string_view name) {
    if (name == "linear") return Multicast::linear;
    if (name == "tree") return Multicast::tree;
    throw std::invalid_argument("unknown multicast '" + std::string(name) + "' (known: linear, tree)");
}

const char* multicast_name(Multicast mode) { return mode == Multicast::linear ? "linear" : "tree"; }

MulticastNetwork::MulticastNetwork(const ChannelSpec& spec, uint32_t workers, Multicast mode) : mode_(mode) {
    if (workers == 0) throw std::invalid_argument("multicast: the worker count must be at least 1");
    inputs_.reserve(workers);
    for (uint32_t j = 0; j < workers; ++j) inputs_.push_back(make_channel<uint64_t>(spec));
}

MulticastNetwork::MulticastNetwork(std::vector<std::unique_ptr<Channel<uint64_t>>> inputs, Multicast mode)
    : mode_(mode), inputs_(std::move(inputs)) {
    if (inputs_.empty()) throw std::invalid_argument("multicast: the worker count must be at least 1");
}

void MulticastNetwork::set_doorbells(Doorbell* emitter, std::span<Doorbell* const> workers) {
    const uint32_t w = this->workers();
    if (workers.size() != w)
        throw std::invalid_argument("multicast: " + std::to_string(workers.size()) + " doorbells for " +
                                    std::to_string(w) + " workers");
    for (uint32_t j = 0; j < w; ++j) {
        const uint32_t parent = parent_of(j, w, mode_);
        inputs_[j]->set_bells(parent == kFromEmitter ? emitter : workers[parent], workers[j]);
    }
}

MulticastPort MulticastNetwork::emitter_port() {
    std::vector<Channel<uint64_t>*> out;
    if (mode_ == Multicast::linear) {
        for (auto& c : inputs_) out.push_back(c.get());
    } else {
        out.push_back(inputs_[0].get());
    }
    return MulticastPort(nullptr, std::move(out));
}

MulticastPort MulticastNetwork::worker_port(uint32_t j) {
    std::vector<Channel<uint64_t>*> out;
    for (uint32_t child : children_of(j, workers(), mode_)) out.push_back(inputs_[child].get());
    return MulticastPort(inputs_.at(j).get(), std::move(out));
}

}  // namespace tp
