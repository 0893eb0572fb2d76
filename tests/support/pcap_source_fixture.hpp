// The `pcap` source's tests share these: parameters as a config gives them, app pools, a replay
// drained to the end, captures read with libpcap and tcpdump, classic pcap files written byte
// by byte, and the fixture (a scratch folder; refusal() and replay_whole()). In a named namespace,
// its functions inline: one fixture type for every file that includes it, however they are built.
#pragma once

#include <pcap/pcap.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <tuple>
#include <fstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <vector>

#include "descriptors/mbuf_pool.hpp"
#include "descriptors/wire_length.hpp"
#include "framework/stage/registry.hpp"
#include "framework/runtime/doorbell.hpp"
#include "framework/runtime/stop_request.hpp"
#include "framework/capture/capture_file.hpp"
#include "framework/capture/capture_stream.hpp"
#include "stages/parse.hpp"
#include "stages/pcap_source.hpp"
#include "tests/support/eal_fixture.hpp"
#include "tests/support/stage_params.hpp"
#include "tests/support/scratch_dir.hpp"
#include "tests/support/test_pool.hpp"

namespace tp::pcap_test {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using Given = test::Given;

// ---- helpers -------------------------------------------------------------------------------

// Parameters as a config gives them: the node on line 1 of app.yaml, each given key on its own
// line after it, in order.
inline ParamValues pcap_params(const Given& given) { return test::stage_params("pcap", given); }

inline MbufPool app_pool(uint32_t mbufs = 8191, uint16_t data_room = 2048) {
    return test::named_pool("src_test_", {.mbufs = mbufs, .data_room = data_room});
}

inline std::string frame_bytes(const rte_mbuf* m) {
    std::string s(rte_pktmbuf_pkt_len(m), '\0');
    const void* p = rte_pktmbuf_read(m, 0, rte_pktmbuf_pkt_len(m), s.data());
    if (p != s.data()) std::memcpy(s.data(), p, s.size());
    return s;
}

struct Replay {
    uint64_t packets = 0;
    uint64_t bytes = 0;
    uint64_t idle = 0;
    std::vector<std::string> frames;
    double seconds = 0;
};

// Runs the source to Done, freeing every packet; gives up after `limit` (a hung replay fails).
inline Replay drain(PcapSource& src, bool keep_frames = false, std::chrono::seconds limit = std::chrono::seconds(60)) {
    Replay r;
    Burst b;
    const auto t0 = Clock::now();
    for (;;) {
        b.n = 0;
        const SourceStatus st = src.produce(b);
        if (st == SourceStatus::Done) break;
        if (st == SourceStatus::Idle) {
            ++r.idle;
            if (Clock::now() - t0 > limit) {
                ADD_FAILURE() << "replay still idle after " << limit.count() << " s";
                break;
            }
            continue;
        }
        EXPECT_GT(b.n, 0);
        EXPECT_LE(b.n, kBurstMax);
        for (const PacketDesc& d : b) {
            ++r.packets;
            r.bytes += frame_length(d);
            if (keep_frames) r.frames.push_back(frame_bytes(d.mbuf));
            rte_pktmbuf_free(d.mbuf);
        }
    }
    r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return r;
}

inline std::string pcap_path(const std::string& name) { return test::pcaps_dir() + "/" + name; }

struct CaptureContents {
    std::vector<std::string> frames;
    std::vector<double> seconds;  // timestamps
    uint64_t bytes = 0;
};

// The frames libpcap reads from `path` (used on files tcpdump wrote and on valid captures).
inline CaptureContents read_with_libpcap(const std::string& path) {
    CaptureContents c;
    char err[PCAP_ERRBUF_SIZE];
    pcap_t* p = pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, err);
    if (p == nullptr) return c;
    pcap_pkthdr* h;
    const u_char* data;
    while (pcap_next_ex(p, &h, &data) == 1) {
        c.frames.emplace_back(reinterpret_cast<const char*>(data), h->caplen);
        c.seconds.push_back(double(h->ts.tv_sec) + double(h->ts.tv_usec) * 1e-9);
        c.bytes += h->caplen;
    }
    pcap_close(p);
    return c;
}

struct Command {
    int exit_code = -1;
    std::string out;
};

inline Command run(const std::string& cmd) {
    Command c;
    FILE* f = popen(cmd.c_str(), "r");
    if (f == nullptr) return c;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) c.out.append(buf, n);
    const int status = pclose(f);
    c.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return c;
}

inline std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

// What tcpdump makes of a capture: exit code, stderr, the link type it announced, the packet
// count (--count) and the frames it would write (-w, read back), whose sizes give the bytes.
struct TcpdumpVerdict {
    int exit_code = -1;
    std::string stderr_text;
    std::string link_type;  // empty when tcpdump rejected the file header
    uint64_t packets = 0;
    uint64_t bytes = 0;
    std::vector<std::string> frames;

    // tcpdump's own reason for failing, without its "tcpdump: " and "pcap_loop: " prefixes.
    std::string reason() const {
        std::string r = stderr_text;
        const auto at = r.rfind("tcpdump: ");
        if (at != std::string::npos) r = r.substr(at + 9);
        if (r.rfind("pcap_loop: ", 0) == 0) r = r.substr(11);
        while (!r.empty() && r.back() == '\n') r.pop_back();
        return r;
    }
};

inline TcpdumpVerdict tcpdump_reads(const std::string& path, const std::string& scratch_dir) {
    TcpdumpVerdict v;
    const std::string err = scratch_dir + "/tcpdump.err";
    const std::string out = scratch_dir + "/tcpdump.pcap";
    const Command count = run("tcpdump --count -r '" + path + "' 2>'" + err + "'");
    v.exit_code = count.exit_code;
    v.packets = std::strtoull(count.out.c_str(), nullptr, 10);
    v.stderr_text = read_file(err);
    const auto lt = v.stderr_text.find("link-type ");
    if (lt != std::string::npos) {
        const auto end = v.stderr_text.find(' ', lt + 10);
        v.link_type = v.stderr_text.substr(lt + 10, end - (lt + 10));
    }
    fs::remove(out);
    run("tcpdump -r '" + path + "' -w '" + out + "' 2>/dev/null");
    if (fs::exists(out)) {
        // A pcap file is a 24-byte header and a 16-byte header per record before its bytes.
        const uint64_t size = fs::file_size(out);
        v.bytes = size >= 24 + 16 * v.packets ? size - 24 - 16 * v.packets : 0;
        v.frames = read_with_libpcap(out).frames;
    }
    return v;
}

// Classic pcap files written byte by byte, so a test can break them exactly where it wants.
struct RawRecord {
    uint32_t sec = 0;
    uint32_t frac = 0;  // microseconds, or nanoseconds in a nano file
    std::string data;
    int64_t caplen = -1;  // header field; -1 = data.size()
    uint32_t wire = 0;    // original length; 0 = data.size()
};

inline void put32(std::string& s, uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); }
inline void put16(std::string& s, uint16_t v) { s.append(reinterpret_cast<const char*>(&v), 2); }

inline std::string pcap_bytes(const std::vector<RawRecord>& records, uint32_t linktype = 1, bool nano = false,
                       uint32_t snaplen = 65535) {
    std::string s;
    put32(s, nano ? 0xa1b23c4d : 0xa1b2c3d4);
    put16(s, 2);
    put16(s, 4);
    put32(s, 0);
    put32(s, 0);
    put32(s, snaplen);
    put32(s, linktype);
    for (const RawRecord& r : records) {
        put32(s, r.sec);
        put32(s, r.frac);
        put32(s, r.caplen < 0 ? uint32_t(r.data.size()) : uint32_t(r.caplen));
        put32(s, r.wire != 0 ? r.wire : uint32_t(r.data.size()));
        s += r.data;
    }
    return s;
}

inline std::string frame(size_t len, char fill) { return std::string(len, fill); }

// Every event a stage counted, by name.
inline std::map<std::string, uint64_t> events_of(const Stage& st) {
    std::map<std::string, uint64_t> m;
    for (size_t i = 0; i < st.events().size(); ++i) m[st.events()[i]] = st.stats().event[i].get();
    return m;
}

// A whole replay and what the source reported about the records it did not replay.
struct Outcome {
    Replay replay;
    std::map<std::string, uint64_t> events;
    uint64_t skipped = 0;
    uint64_t errors = 0;
    std::vector<uint32_t> wire;  // each replayed packet's wire length
};

// ---- fixture -------------------------------------------------------------------------------

class PcapSourceTest : public testing::Test {
protected:
    test::ScratchDir scratch_{"tp_pcap_source"};
    const std::string dir_ = scratch_.path();

    std::string write(const std::string& name, const std::string& bytes) {
        const std::string path = dir_ + "/" + name;
        std::ofstream(path, std::ios::binary) << bytes;
        return path;
    }

    // Opens a source on `given` and expects it to refuse: at open() (a preloaded capture, or a
    // stream's header), or from produce() once a stream reaches the damaged record, having
    // replayed every record before it (their count in `replayed`). Returns the error.
    LocatedError refusal(const Given& given, uint64_t* replayed = nullptr) {
        PcapSource src(pcap_params(given));
        MbufPool pool = app_pool(511);
        StageEnv env{&pool, "src", 0};
        uint64_t packets = 0;
        try {
            src.open(env);
            Burst b;
            for (SourceStatus st = SourceStatus::Idle; st != SourceStatus::Done;) {
                b.n = 0;
                st = src.produce(b);
                packets += b.n;
                for (const PacketDesc& d : b) rte_pktmbuf_free(d.mbuf);
            }
        } catch (const LocatedError& e) {
            if (replayed != nullptr) *replayed = packets;
            src.close();
            EXPECT_EQ(src.template_pool_available(), src.template_pool_capacity());
            EXPECT_EQ(pool.available(), pool.capacity());
            return e;
        }
        ADD_FAILURE() << "the source accepted " << given.front().second;
        return LocatedError(Location{}, "accepted");
    }

    // Replays `given` to the end (frames kept) and collects the source's events.
    Outcome replay_whole(const Given& given) {
        Outcome o;
        PcapSource src(pcap_params(given));
        MbufPool pool = app_pool(511);
        StageEnv env{&pool, "src", 0};
        src.open(env);
        const int wire = wire_length_offset();
        Burst b;
        for (;;) {
            b.n = 0;
            const SourceStatus st = src.produce(b);
            if (st == SourceStatus::Done) break;
            for (const PacketDesc& d : b) {
                ++o.replay.packets;
                o.replay.bytes += frame_length(d);
                o.replay.frames.push_back(frame_bytes(d.mbuf));
                o.wire.push_back(wire_length(d.mbuf, wire));
                rte_pktmbuf_free(d.mbuf);
            }
        }
        o.events = events_of(src);
        o.skipped = o.events.at("capture.skipped_records");
        o.errors = o.events.at("capture.errors");
        src.close();
        EXPECT_EQ(pool.available(), pool.capacity());
        EXPECT_EQ(src.template_pool_available(), src.template_pool_capacity());
        return o;
    }

};

}  // namespace tp::pcap_test
