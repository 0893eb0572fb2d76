// Test support: tshark as an oracle for flow counts (installed on first use when it can be).
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <climits>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/eal_fixture.hpp"
#include "tests/support/process.hpp"

namespace tp::test {

// Tunnel dissectors: with them off tshark sees only the outer headers, as `parse` does.
inline const char* const kTunnelDissectors[] = {"vxlan", "geneve", "gre", "mpls", "pppoes", "erspan", "nsh"};

inline bool tshark_available() {
    static const bool available = [] {
        if (run_command("tshark --version").status == 0) return true;
        // The test set-up installs it when it can (root or sudo, apt).
        run_command("bash '" + source_root() + "/scripts/bootstrap.sh' tshark");
        return run_command("tshark --version").status == 0;
    }();
    return available;
}

// tshark's `-z conv,tcp -z conv,udp` on `file` (`tunnels` false disables the tunnel
// dissectors), run once per process for the same file as it is now: a capture's tables are read
// for both their counts and their rows, and tshark takes seconds to start. A file written again
// (a test's output) differs in size or modification time. Tests run on one thread
// (GoogleTest's), so the cache needs no lock.
inline const CommandResult& tshark_conversation_run(const std::string& file, bool tunnels) {
    std::string cmd = "tshark -n -q -z conv,tcp -z conv,udp";
    if (!tunnels)
        for (const char* d : kTunnelDissectors) cmd += std::string(" --disable-protocol ") + d;
    cmd += " -r '" + file + "'";
    struct stat st {};
    const std::string key = stat(file.c_str(), &st) == 0 ? cmd + " " + std::to_string(st.st_size) + " " +
                                                               std::to_string(st.st_mtim.tv_sec) + "." +
                                                               std::to_string(st.st_mtim.tv_nsec)
                                                         : std::string();
    static std::map<std::string, CommandResult> done;
    if (key.empty()) return done[""] = run_command(cmd);  // not cached: no such file
    auto it = done.find(key);
    if (it == done.end()) it = done.emplace(key, run_command(cmd)).first;
    return it->second;
}

struct FlowCounts {
    long tcp = 0;
    long udp = 0;
};

// Conversations in tshark's `-z conv,tcp` and `-z conv,udp` tables, from one run; `tunnels`
// false disables the tunnel dissectors.
inline FlowCounts tshark_conversations(const std::string& file, bool tunnels) {
    const CommandResult& r = tshark_conversation_run(file, tunnels);
    FlowCounts c;
    long* table = nullptr;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
        if (line.find("TCP Conversations") != std::string::npos) table = &c.tcp;
        if (line.find("UDP Conversations") != std::string::npos) table = &c.udp;
        if (table != nullptr && line.find("<->") != std::string::npos) ++*table;
    }
    return c;
}

// One row of a conversation table: frames and bytes both ways. tshark prints bytes exactly up
// to 9999 and from there in kB, MB, ... truncated to whole units; `unit` says which.
struct Conversation {
    long frames = 0;
    long bytes = 0;
    long unit = 1;
};
// "tcp 10.0.0.1:80 10.0.0.2:1234": the protocol and both endpoints (address:port), in
// lexicographic order so that either direction names the same conversation.
using Conversations = std::map<std::string, Conversation>;

inline std::string conversation_key(const std::string& proto, const std::string& a, const std::string& b) {
    return proto + " " + std::min(a, b) + " " + std::max(a, b);
}

// tshark's `-z conv,tcp` and `-z conv,udp` tables, row by row; `tunnels` false disables the
// tunnel dissectors.
inline Conversations tshark_conversation_table(const std::string& file, bool tunnels) {
    const CommandResult& r = tshark_conversation_run(file, tunnels);
    EXPECT_EQ(r.status, 0) << r.err;
    Conversations table;
    std::string proto;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
        if (line.find("TCP Conversations") != std::string::npos) proto = "tcp";
        if (line.find("UDP Conversations") != std::string::npos) proto = "udp";
        if (proto.empty() || line.find("<->") == std::string::npos) continue;
        // A <-> B  frames bytes unit (<-)  frames bytes unit (->)  frames bytes unit (total) ...
        std::istringstream cells(line);
        std::string a, arrow, b, unit;
        long f[3] = {}, n[3] = {};
        cells >> a >> arrow >> b;
        for (int k = 0; k < 3; ++k) cells >> f[k] >> n[k] >> unit;
        Conversation c{f[2], n[2], 1};
        if (unit == "kB") c.unit = 1000;
        else if (unit == "MB") c.unit = 1000 * 1000;
        else if (unit != "bytes") ADD_FAILURE() << "unknown unit '" << unit << "' in: " << line;
        c.bytes *= c.unit;
        const std::string key = conversation_key(proto, a, b);
        EXPECT_EQ(table.count(key), 0u) << "two rows for " << key;
        table[key] = c;
    }
    return table;
}

// Conversations as flow_table counts them where IP fragments are involved: every fragment of a
// datagram tshark reassembled is a frame of its conversation, a repeated fragment included
// (tshark's table credits the datagram once, on the frame that completes it). Built from
// tshark's per-frame fields (outer headers, tunnels not dissected).
inline Conversations tshark_conversations_counting_fragments(const std::string& file) {
    std::string cmd =
        "tshark -n -T fields -E occurrence=f -e frame.number -e frame.len -e ip.src -e ip.dst -e ipv6.src"
        " -e ipv6.dst -e tcp.srcport -e tcp.dstport -e udp.srcport -e udp.dstport -e ip.fragment.count"
        " -e ipv6.fragment.count -e ip.id -e ip.flags.mf -e ip.frag_offset -e ipv6.fraghdr.ident";
    for (const char* d : kTunnelDissectors) cmd += std::string(" --disable-protocol ") + d;
    const CommandResult r = run_command(cmd + " -r '" + file + "'");
    EXPECT_EQ(r.status, 0) << r.err;
    enum { kNumber, kLen, kSrc4, kDst4, kSrc6, kDst6, kTcpS, kTcpD, kUdpS, kUdpD, kFrag4, kFrag6, kId4, kMf4, kOff4, kId6, kFields };
    std::vector<std::vector<std::string>> rows;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
        std::vector<std::string> f;
        std::istringstream cells(line);
        for (std::string x; std::getline(cells, x, '\t');) f.push_back(x);
        f.resize(kFields);
        rows.push_back(f);
    }
    // A fragment's datagram: addresses and IP ID (IPv4) or fragment header ident (IPv6).
    const auto datagram = [](const std::vector<std::string>& f) -> std::string {
        if (!f[kId6].empty()) return f[kSrc6] + " " + f[kDst6] + " " + f[kId6];
        if (f[kMf4] == "1" || (!f[kOff4].empty() && f[kOff4] != "0")) return f[kSrc4] + " " + f[kDst4] + " " + f[kId4];
        return "";
    };
    Conversations table;
    std::map<std::string, std::string> conversation_of;  // datagram -> conversation
    for (const auto& f : rows) {
        const bool tcp = !f[kTcpS].empty();
        if (!tcp && f[kUdpS].empty()) continue;  // neither TCP nor UDP, or a fragment
        const bool v4 = !f[kSrc4].empty();
        const std::string key = conversation_key(tcp ? "tcp" : "udp", f[v4 ? kSrc4 : kSrc6] + ":" + f[tcp ? kTcpS : kUdpS],
                                                 f[v4 ? kDst4 : kDst6] + ":" + f[tcp ? kTcpD : kUdpD]);
        Conversation& c = table[key];
        if (!f[kFrag4].empty() || !f[kFrag6].empty()) {
            conversation_of[datagram(f)] = key;  // its fragments are counted below
        } else {
            c.frames += 1;
            c.bytes += std::stol(f[kLen]);
        }
    }
    for (const auto& f : rows) {
        const std::string d = datagram(f);
        const auto it = d.empty() ? conversation_of.end() : conversation_of.find(d);
        if (it == conversation_of.end()) continue;
        table[it->second].frames += 1;
        table[it->second].bytes += std::stol(f[kLen]);
    }
    return table;
}

// What tilepipe's frames have more than tshark's per frame of a capture of link type `dlt`: the
// pcap source replaces a capture's link header with a 14-byte Ethernet header (capture_file.hpp).
// Per-frame difference that varies from frame to frame (802.11 headers, radiotap, several
// interfaces): conversations then compare by frames only.
constexpr long kBytesVaryPerFrame = LONG_MIN;

inline long normalised_bytes_per_frame(int dlt) {
    switch (dlt) {
        case 9: return 14 - 4;                // PPP: ff 03 and a two-byte protocol
        case 105: case 127: case 192: return kBytesVaryPerFrame;  // 802.11, radiotap, PPI
        case 1: return 0;                     // EN10MB
        case 113: return 14 - 16;             // LINUX_SLL
        case 276: return 14 - 20;             // LINUX_SLL2
        case 0: case 108: return 14 - 4;      // NULL, LOOP
        default: return 14;                   // RAW, IPV4, IPV6: no link header
    }
}

// Every conversation of `expected` (tshark's) in `got` (exact byte counts) and no other, with
// the same frames and bytes (bytes within the unit tshark printed them in), once `got` loses
// `extra_per_frame` bytes per frame.
inline void expect_same_conversations(const Conversations& got, const Conversations& expected,
                                      long extra_per_frame = 0) {
    for (const auto& [key, want] : expected) {
        const auto it = got.find(key);
        if (it == got.end()) {
            ADD_FAILURE() << "missing conversation " << key;
            continue;
        }
        if (extra_per_frame == kBytesVaryPerFrame) {
            EXPECT_EQ(it->second.frames, want.frames) << key << ": frames";
            continue;
        }
        const long bytes = it->second.bytes - it->second.frames * extra_per_frame;
        if (want.unit == 1) {
            EXPECT_EQ(it->second.frames, want.frames) << key << ": frames";
            EXPECT_EQ(bytes, want.bytes) << key << ": bytes";
        } else {
            EXPECT_EQ(it->second.frames, want.frames) << key << ": frames";
            EXPECT_TRUE(bytes >= want.bytes && bytes < want.bytes + want.unit)
                << key << ": " << bytes << " bytes, tshark says " << want.bytes / want.unit << " x " << want.unit;
        }
    }
    for (const auto& [key, c] : got)
        if (expected.count(key) == 0) ADD_FAILURE() << "conversation " << key << " (" << c.frames << " frames) not in tshark's table";
}

// Each frame's timestamp in nanoseconds since the epoch (tshark's frame.time_epoch), in file
// order, of the frames the display filter `filter` keeps (all when empty), with their numbers.
struct FrameTime {
    long number = 0;
    int64_t ns = 0;
};
inline std::vector<FrameTime> tshark_frame_times(const std::string& file, const std::string& filter = "") {
    const CommandResult r = run_command("tshark -n -r '" + file + "'" + (filter.empty() ? "" : " -Y '" + filter + "'") +
                                        " -T fields -e frame.number -e frame.time_epoch 2>/dev/null");
    std::vector<FrameTime> out;
    std::istringstream lines(r.out);
    for (std::string number, epoch; lines >> number >> epoch;) {
        const size_t dot = epoch.find('.');
        std::string frac = dot == std::string::npos ? "" : epoch.substr(dot + 1);
        frac.resize(9, '0');
        out.push_back(FrameTime{std::stol(number), std::stoll(epoch.substr(0, dot)) * 1000000000 + std::stoll(frac)});
    }
    return out;
}

}  // namespace tp::test
