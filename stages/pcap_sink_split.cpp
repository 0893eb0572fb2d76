// pcap_out split by port: each port's packets go to a PcapSink of their own, writing
// `file` with %p replaced by the port. See pcap_sink.hpp.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "framework/runtime/stop_request.hpp"
#include "framework/stage/registry.hpp"
#include "stages/pcap_sink.hpp"

namespace tp {

std::string PcapSink::port_file(const std::string& pattern, unsigned port) {
    std::string path = pattern;
    const std::string n = std::to_string(port);
    for (size_t at = path.find("%p"); at != std::string::npos; at = path.find("%p", at + n.size()))
        path.replace(at, 2, n);
    return path;
}

void PcapSink::open_split(StageEnv& env) {
    // Captures are created as their ports' first packets arrive: a directory that cannot take
    // them is refused now, before traffic (unless the directory itself depends on the port).
    const std::string& pattern = params_.get_string("file");
    std::string dir = std::filesystem::path(pattern).parent_path().string();
    if (dir.empty()) dir = ".";
    if (dir.find("%p") == std::string::npos && ::access(dir.c_str(), W_OK | X_OK) != 0)
        params_.fail("file", "cannot write captures '" + pattern + "': directory '" + dir + "': " + std::strerror(errno));
    env_ = env;
    ports_.clear();
    ports_.resize(PortGroups::kPorts);
    written_ = std::make_unique<PortCounter[]>(PortGroups::kPorts);
}

PcapSink* PcapSink::port_sink(uint8_t port) {
    PortFile& pf = ports_[port];
    if (pf.sink != nullptr || !pf.error.empty()) return pf.sink.get();
    const std::string path = port_file(params_.get_string("file"), port);
    try {
        ParamValues p = params_;
        p.set(*StageRegistry::instance().find("pcap_out")->find_param("file"), path, params_.where("file"));
        auto sink = std::make_unique<PcapSink>(p);
        sink->open(env_);
        pf.drops_seen.assign(sink->drop_reasons().size(), 0);
        pf.sink = std::move(sink);
    } catch (const std::exception& e) {
        // Its packets become `write_error` drops, and the run stops and fails as when a write
        // is refused: a capture that cannot be made is not a partial result to trust.
        pf.error = e.what();
        request_stop();
    }
    return pf.sink.get();
}

void PcapSink::take_drops(size_t port) {
    PortFile& pf = ports_[port];
    const StageStats& theirs = pf.sink->stats();
    for (size_t r = 0; r < pf.drops_seen.size(); ++r) {
        const uint64_t now = theirs.reason[r].get(), delta = now - pf.drops_seen[r];
        if (delta == 0) continue;
        pf.drops_seen[r] = now;
        // The port's capture freed those packets; they are this stage's drops, same reason
        // (a port's capture is a PcapSink too, so its reasons are ours, in order).
        stats().reason[r].add(delta);
        stats().drops.add(delta);
    }
}

void PcapSink::process_split(Burst& b) {
    groups_.sort(b);
    for (uint16_t g = 0; g < groups_.groups; ++g) {
        const PortGroups::Group& gr = groups_.group[g];
        Burst share;
        share.n = static_cast<uint16_t>(gr.end - gr.begin);
        std::memcpy(share.d, groups_.d + gr.begin, share.n * sizeof(PacketDesc));
        PcapSink* sink = port_sink(gr.port);
        if (sink == nullptr) {
            for (const PacketDesc& d : share) drop(d, write_error_);
            continue;
        }
        const uint64_t before = sink->stats().drops.get();
        const uint16_t n = share.n;
        sink->process(share);
        written_[gr.port].add(n - (sink->stats().drops.get() - before));
        take_drops(gr.port);
    }
    b.n = 0;
}

void PcapSink::close_split() {
    // Every port's capture is closed; the first failure (a port's file that could not be made
    // or written) then fails the node, naming that file.
    std::string failure;
    for (size_t port = 0; port < ports_.size(); ++port) {
        PortFile& pf = ports_[port];
        if (failure.empty()) failure = pf.error;
        if (pf.sink == nullptr) continue;
        try {
            pf.sink->close();
        } catch (const std::exception& e) {
            if (failure.empty()) failure = e.what();
        }
        take_drops(port);
    }
    if (!failure.empty()) throw std::runtime_error(failure);
}

std::vector<PortTx> PcapSink::tx_by_port() const {
    std::vector<PortTx> out;
    if (!split_) return out;
    for (size_t port = 0; port < ports_.size(); ++port)
        if (ports_[port].sink != nullptr || !ports_[port].error.empty())
            out.push_back(PortTx{static_cast<uint16_t>(port), port_file(params_.get_string("file"), unsigned(port)),
                                 written_[port].get()});
    return out;
}

}  // namespace tp
