#include "tests/fuzz/fuzz_support.hpp"

#include <rte_mbuf.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <system_error>

#include "descriptors/burst.hpp"
#include "descriptors/mbuf_pool.hpp"
#include "framework/config/location.hpp"
#include "framework/eal/eal_session.hpp"
#include "framework/stage/registry.hpp"

namespace tp::fuzz {

namespace {

using Bytes = std::vector<uint8_t>;

void put16(Bytes& b, uint16_t v) {
    b.push_back(uint8_t(v >> 8));
    b.push_back(uint8_t(v));
}

// Ethernet + IPv4 or IPv6 + a TCP or UDP header, addresses from the ranges the shipped rule
// files and the seeds use, so fuzzed rules match some of them.
Bytes ip_frame(bool ipv6, uint8_t proto, uint8_t host, uint16_t sport, uint16_t dport) {
    Bytes l4;
    put16(l4, sport);
    put16(l4, dport);
    if (proto == 6) {
        const Bytes rest = {0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0xff, 0xff, 0, 0, 0, 0};
        l4.insert(l4.end(), rest.begin(), rest.end());
    } else {
        put16(l4, 8);
        put16(l4, 0);
    }
    l4.insert(l4.end(), {'G', 'E', 'T', ' ', '/', 'a', 'd', 'm', 'i', 'n'});
    Bytes f = {0x02, 0, 0, 0, 0, 0x0b, 0x02, 0, 0, 0, 0, 0x0a};
    put16(f, ipv6 ? 0x86dd : 0x0800);
    if (ipv6) {
        f.insert(f.end(), {0x60, 0, 0, 0});
        put16(f, uint16_t(l4.size()));
        f.insert(f.end(), {proto, 64, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, host,
                           0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2});
    } else {
        f.insert(f.end(), {0x45, 0});
        put16(f, uint16_t(20 + l4.size()));
        f.insert(f.end(), {0, 1, 0, 0, 64, proto, 0, 0, 10, 0, 0, host, 192, 168, 1, 1});
    }
    f.insert(f.end(), l4.begin(), l4.end());
    return f;
}

const std::vector<Bytes>& probe_frames() {
    static const std::vector<Bytes> frames = [] {
        std::vector<Bytes> v;
        for (bool ipv6 : {false, true})
            for (uint8_t proto : {uint8_t(6), uint8_t(17)}) {
                v.push_back(ip_frame(ipv6, proto, 1, 40000, 80));
                v.push_back(ip_frame(ipv6, proto, 5, 53, 22));
            }
        Bytes arp = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 0x0a, 0x08, 0x06};
        arp.resize(60, 0);
        v.push_back(arp);
        return v;
    }();
    return frames;
}

MbufPool& probe_pool() {
    static MbufPool pool(MbufPoolSpec{"fuzz_probe", 63, 0, 2048, -1, "stack"});
    return pool;
}

}  // namespace

const std::string& scratch_dir() {
    // Removed at exit by its destructor; abort() (a finding) skips that and leaves it.
    struct Folder {
        std::string path;
        ~Folder() {
            std::error_code ignored;
            std::filesystem::remove_all(path, ignored);  // removes links, never what they point to
        }
    };
    static const Folder dir = [] {
        const char* tmp = std::getenv("TMPDIR");
        Folder f{std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/tp_fuzz_" + std::to_string(getpid())};
        std::error_code ec;
        std::filesystem::create_directories(f.path, ec);
        if (ec) finding("cannot create " + f.path + ": " + ec.message());
        return f;
    }();
    return dir.path;
}

void finding(const std::string& what) {
    std::fprintf(stderr, "fuzz finding: %s\n", what.c_str());
    std::abort();
}

void start_eal() {
    if (eal_started()) return;
    spdlog::set_level(spdlog::level::off);
    EalOptions o;
    o.memory_bytes = 1024ull << 20;  // lpm_route's tables take 64 MiB per family
    o.user_args = "--no-huge --no-telemetry --log-level=lib.*:crit";
    eal_start(o);
}

std::string scratch_file(const std::string& name, const uint8_t* data, size_t size) {
    const std::string path = scratch_dir() + "/" + name;
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr || (size > 0 && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0)
        finding("cannot write " + path);
    return path;
}

void exercise_stage_file(const std::string& stage, const std::string& key, const Given& given,
                         const uint8_t* data, size_t size) {
    start_eal();
    const std::string path = scratch_file(stage + ".txt", data, size);
    const StageInfo* info = StageRegistry::instance().find(stage);
    const StageInfo* parse = StageRegistry::instance().find("parse");
    if (info == nullptr || parse == nullptr) finding("stage '" + stage + "' or 'parse' is not registered");
    ParamValues p;
    p.set_node_location(Location{"app.yaml", 1, 3});
    int line = 2;
    p.set(*info->find_param(key), path, Location{"app.yaml", line++, 5});
    for (const auto& [k, v] : given) p.set(*info->find_param(k), v, Location{"app.yaml", line++, 5});
    for (const ParamSpec& spec : info->params) p.set_default(spec);
    ParamValues parse_params;
    for (const ParamSpec& spec : parse->params) parse_params.set_default(spec);

    MbufPool& pool = probe_pool();
    try {
        if (info->check_params) info->check_params(p);  // what `validate` runs
        if (info->memory_hint) (void)info->memory_hint(p);
        std::unique_ptr<Stage> parser = parse->create(parse_params);
        std::unique_ptr<Stage> s = info->create(p);
        StageEnv env;
        env.pool = &pool;
        env.node_name = stage;
        s->open(env);  // what a run does before traffic
        Burst b;
        for (const Bytes& f : probe_frames()) {
            rte_mbuf* m = rte_pktmbuf_alloc(pool.get());
            if (m == nullptr) finding("probe pool is empty: a previous input leaked mbufs");
            std::memcpy(rte_pktmbuf_append(m, uint16_t(f.size())), f.data(), f.size());
            b.d[b.n++] = PacketDesc{m, 0, saturate_length(uint32_t(f.size())), 0, 0};
        }
        parser->process(b);
        s->process(b);
        for (uint16_t i = 0; i < b.n; ++i) rte_pktmbuf_free(b.d[i].mbuf);
        s->close();
    } catch (const LocatedError&) {
        // refused with a located message: what a user sees for a bad file
    }
    if (pool.available() != pool.capacity())
        finding(std::to_string(pool.capacity() - pool.available()) + " mbufs not returned to the pool");
}

}  // namespace tp::fuzz
