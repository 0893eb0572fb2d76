#include "stages/flow_table.hpp"

#include <arpa/inet.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_mbuf.h>
#include <rte_mbuf_ptype.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>

#include "descriptors/wire_format.hpp"
#include "descriptors/wire_length.hpp"
#include "framework/output/output_path.hpp"
#include "framework/output/shared_output_file.hpp"
#include "framework/stage/registry.hpp"

namespace tp {

namespace {

using namespace wire;

constexpr uint32_t kFragmentSlots = 1024;  // power of two
constexpr size_t kExportBufferBytes = 64 * 1024;
constexpr size_t kExportLineMax = 256;
std::atomic<uint32_t> g_table_serial{0};


// Transport header bytes needed to read a flow's ports (TCP: the whole fixed header, for flags).
uint32_t ported_header_bytes(uint8_t proto) {
    switch (proto) {
        case kProtoTcp: return 20;
        case kProtoUdp: return 8;
        case kProtoSctp: return 12;
        default: return 0;  // no ports
    }
}

// What an IPv6 extension-header chain says, walked within the `limit` bytes that may be read
// from the IPv6 header on. `parse` stops at kMaxIpv6ExtHeaders (its l3_len has 9 bits); tshark
// does not, so neither does this walk: it is bounded by the bytes alone (each header takes at
// least 8).
struct Ipv6Chain {
    uint8_t proto = 0;       // the upper-layer protocol (of the fragmented datagram, for fragments)
    uint32_t length = kIpv6Header;  // fixed header and extension headers
    int fragment_at = -1;    // offset of a fragment header that makes this a real fragment
    bool first = true;       // no fragment, or the first one
    bool whole = true;       // false: a header crosses `limit`
};

Ipv6Chain walk_ipv6(const uint8_t* ip, uint32_t limit) {
    Ipv6Chain c;
    c.proto = ip[6];
    uint32_t& off = c.length;
    for (;;) {
        const uint8_t next = c.proto;
        const bool option = next == kProtoHopByHop || next == kProtoRouting || next == kProtoDestOpts || next == kProtoAh;
        if (next != kProtoFragment && !option) break;
        if (off + 8 > limit) {  // every extension header is at least 8 bytes
            c.whole = false;
            break;
        }
        uint32_t len = 8;
        if (next == kProtoFragment) {
            const uint16_t offset_flags = be16(ip + off + 2);
            if ((offset_flags & 0xfff9) != 0) {  // not an atomic fragment
                c.fragment_at = static_cast<int>(off);
                c.first = (offset_flags & 0xfff8) == 0;
            }
        } else {
            len = next == kProtoAh ? (ip[off + 1] + 2u) * 4 : (ip[off + 1] + 1u) * 8;
            if (off + len > limit) {
                c.whole = false;
                break;
            }
        }
        c.proto = ip[off];
        off += len;
        if (!c.first) break;  // the rest is the middle of someone's payload
    }
    return c;
}

// Orders the two endpoints: the lower (address, port) becomes "a".
void make_key(FlowKey& k, uint8_t version, uint8_t proto, const uint8_t* src, const uint8_t* dst,
              size_t addr_len, uint16_t sport, uint16_t dport) {
    std::memset(&k, 0, sizeof k);
    k.ip_version = version;
    k.proto = proto;
    int order = std::memcmp(src, dst, addr_len);
    if (order == 0) order = sport < dport ? -1 : (sport > dport ? 1 : 0);
    if (order > 0) {
        std::swap(src, dst);
        std::swap(sport, dport);
    }
    std::memcpy(k.addr_a, src, addr_len);
    std::memcpy(k.addr_b, dst, addr_len);
    k.port_a = sport;
    k.port_b = dport;
}

std::string address_text(const FlowKey& k, const uint8_t* addr) {
    char buf[INET6_ADDRSTRLEN] = {};
    inet_ntop(k.ip_version == 4 ? AF_INET : AF_INET6, addr, buf, sizeof buf);
    return buf;
}

}  // namespace

// Ports of a fragmented datagram, learned from its first fragment, by direction.
struct FlowTable::FragmentEntry {
    uint8_t src[16];
    uint8_t dst[16];
    uint32_t id;
    uint16_t sport;
    uint16_t dport;
    uint8_t proto;
    uint8_t version;
    bool used;

    bool same(uint8_t v, uint8_t p, const uint8_t* s, const uint8_t* d, size_t len, uint32_t i) const {
        return used && version == v && proto == p && id == i && std::memcmp(src, s, len) == 0 &&
               std::memcmp(dst, d, len) == 0;
    }
};

namespace {
template <typename Entry>
Entry& fragment_slot(std::vector<Entry>& slots, uint8_t version, uint8_t proto, const uint8_t* src,
                     const uint8_t* dst, size_t len, uint32_t id) {
    // rte_hash_crc reads whole words: hash an aligned copy, not the packet bytes in place.
    alignas(8) uint8_t addresses[32];
    std::memcpy(addresses, src, len);
    std::memcpy(addresses + len, dst, len);
    const uint32_t h = rte_hash_crc(addresses, static_cast<uint32_t>(2 * len), id ^ (uint32_t(proto) << 8 | version));
    return slots[h & (kFragmentSlots - 1)];
}
}  // namespace

void FlowTable::check_params(const ParamValues& p) { check_output_path(p, "export"); }

FlowTable::FlowTable(const ParamValues& p)
    : Stage(kKind), params_(p), json_(p.get_string("format") == "json") {
    new_flow_ = declare_event("new_flow");
    expired_ = declare_event("expired");
    non_ip_ = declare_event("non_ip");
    bad_l4_ = declare_event("bad_l4");
    fragment_unmatched_ = declare_event("fragment_unmatched");
    table_full_ = declare_event("table_full");

    capacity_ = static_cast<uint32_t>(p.get_uint("capacity"));
}

FlowTable::~FlowTable() {
    if (table_ != nullptr) rte_hash_free(table_);
}

uint64_t FlowTable::memory_hint(const ParamValues& p) {
    // rte_hash: key store (key + 8-byte data pointer per entry), main and extendable buckets
    // (8 entries of 128 bytes each per 8 entries), free-slot rings; plus slack for the
    // allocator.
    const uint64_t entries = std::bit_ceil(std::max<uint64_t>(p.get_uint("capacity"), 8));
    return entries * (sizeof(FlowKey) + 8 + 2 * 128 / 8 + 2 * 8) + (2u << 20);
}

void FlowTable::open(StageEnv& env) {
    wire_offset_ = wire_length_offset();
    capture_time_ = capture_time_field();
    const std::string name = "tp_flows_" + std::to_string(g_table_serial.fetch_add(1));
    rte_hash_parameters hp{};
    hp.name = name.c_str();
    hp.entries = std::max<uint32_t>(capacity_, 8);  // rte_hash's minimum: one bucket
    hp.key_len = sizeof(FlowKey);
    hp.hash_func = rte_hash_crc;
    hp.hash_func_init_val = 0;
    hp.socket_id = env.socket;
    // One writer, no readers elsewhere: no concurrency flags. The extendable table lets the
    // table hold `capacity` keys whatever their bucket collisions.
    hp.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE;
    table_ = rte_hash_create(&hp);
    if (table_ == nullptr)
        params_.fail("capacity", "cannot create a flow table of " + std::to_string(capacity_) +
                                     " flows: " + rte_strerror(rte_errno));
    records_.assign(hp.entries + 1, Record{});
    fragments_.assign(kFragmentSlots, FragmentEntry{});
    count_ = 0;
    sweep_cursor_ = 0;

    const double hz = double(rte_get_tsc_hz());
    ns_per_cycle_ = 1e9 / hz;
    idle_cycles_ = static_cast<uint64_t>(params_.get_double("idle_timeout") * hz);
    period_cycles_ = static_cast<uint64_t>(params_.get_double("period") * hz);
    open_tsc_ = rte_rdtsc();
    open_ns_ = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                         std::chrono::system_clock::now().time_since_epoch())
                                         .count());
    next_period_tsc_ = open_tsc_ + period_cycles_;

    const std::string& path = params_.get_string("export");
    if (!path.empty()) {
        try {
            export_ = SharedOutputFile::open(
                path, env.outputs, json_ ? "json" : "csv",
                json_ ? "" : "reason,ip_version,proto,addr_a,port_a,addr_b,port_b,packets,wire_bytes,first_ns,last_ns,tcp_flags\n");
        } catch (const SharedOutputFile::FormatConflict& e) {
            params_.fail("format", std::string(e.what()) + " (another flow_table exports it)");
        } catch (const std::runtime_error& e) {
            params_.fail("export", std::string("cannot write flow export: ") + e.what());
        }
        export_buffer_.reserve(kExportBufferBytes);
    }
}

FlowTable::Verdict FlowTable::extract(const PacketDesc& d, FlowKey& key, uint8_t& tcp_flags) {
    const rte_mbuf* m = d.mbuf;
    const uint32_t ptype = m->packet_type;
    const uint32_t data_len = rte_pktmbuf_data_len(m);
    const uint8_t* ip = rte_pktmbuf_mtod_offset(m, const uint8_t*, m->l2_len);
    const bool v4 = RTE_ETH_IS_IPV4_HDR(ptype);
    // `parse` types L3 only for a whole IP header inside the first segment; an IPv6 packet it
    // left untyped (an extension chain longer than it follows) is walked here, within bounds.
    const bool v6 = RTE_ETH_IS_IPV6_HDR(ptype) ||
                    ((d.type & ptype::kL3Mask) == ptype::kL3Ipv6 && data_len >= m->l2_len + kIpv6Header &&
                     (ip[0] >> 4) == 6);
    if (!v4 && !v6) return Verdict::NonIp;

    uint32_t l3_len;
    uint8_t proto, version;
    const uint8_t* src;
    const uint8_t* dst;
    size_t addr_len;
    bool fragment, first;
    uint32_t id = 0;
    uint32_t ip_end;  // end of the datagram, from the frame start
    if (v4) {
        version = 4;
        l3_len = m->l3_len;
        proto = ip[9];
        src = ip + 12;
        dst = ip + 16;
        addr_len = 4;
        const uint16_t flags_offset = be16(ip + 6);
        fragment = (flags_offset & 0x3fff) != 0;
        first = (flags_offset & 0x1fff) == 0;
        id = be16(ip + 4);
        ip_end = m->l2_len + uint32_t(be16(ip + 2));
    } else {
        version = 6;
        const uint32_t payload = be16(ip + 4);
        ip_end = payload == 0 ? rte_pktmbuf_pkt_len(m) : m->l2_len + kIpv6Header + payload;  // 0: jumbogram
        const Ipv6Chain c = walk_ipv6(ip, std::min(data_len, ip_end) - m->l2_len);
        if (!c.whole) return Verdict::BadL4;
        l3_len = c.length;
        proto = c.proto;
        src = ip + 8;
        dst = ip + 24;
        addr_len = 16;
        fragment = c.fragment_at >= 0;
        first = c.first;
        if (fragment) id = be32(ip + c.fragment_at + 4);
    }

    uint16_t sport = 0, dport = 0;
    tcp_flags = 0;
    const uint32_t need = ported_header_bytes(proto);
    if (need != 0) {
        if (fragment && !first) {
            const FragmentEntry& e = fragment_slot(fragments_, version, proto, src, dst, addr_len, id);
            if (!e.same(version, proto, src, dst, addr_len, id)) return Verdict::FragmentUnmatched;
            sport = e.sport;
            dport = e.dport;
        } else {
            const uint32_t l4 = m->l2_len + l3_len;
            if (l4 + need > std::min(data_len, ip_end)) return Verdict::BadL4;
            const uint8_t* h = ip + l3_len;
            if (proto == kProtoTcp) {
                if ((h[12] >> 4) < 5) return Verdict::BadL4;
                tcp_flags = h[13];
            }
            sport = be16(h);
            dport = be16(h + 2);
            if (fragment) {
                FragmentEntry& e = fragment_slot(fragments_, version, proto, src, dst, addr_len, id);
                std::memcpy(e.src, src, addr_len);
                std::memcpy(e.dst, dst, addr_len);
                e.id = id;
                e.sport = sport;
                e.dport = dport;
                e.proto = proto;
                e.version = version;
                e.used = true;
            }
        }
    }
    make_key(key, version, proto, src, dst, addr_len, sport, dport);
    return Verdict::Flow;
}

int32_t FlowTable::insert(const FlowKey& key, uint64_t now) {
    // Adding a key already there (a new flow's second packet in the same burst) returns its
    // position; a live record says which case this is.
    int32_t pos = -ENOSPC;
    if (count_ < capacity_) pos = rte_hash_add_key(table_, &key);
    else pos = rte_hash_lookup(table_, &key);
    if (pos < 0) {
        count_event(table_full_);
        return -1;
    }
    Record& r = records_[pos];
    if (!r.live) {
        r.key = key;
        r.stats = FlowStats{};
        r.stats.first_tsc = now;
        r.live = true;
        ++count_;
        count_event(new_flow_);
    }
    return pos;
}

void FlowTable::process(Burst& b) {
    const uint64_t now = rte_rdtsc();
    FlowKey keys[kBurstMax];
    const void* key_ptrs[kBurstMax];
    uint32_t lengths[kBurstMax];
    uint8_t flags[kBurstMax];
    uint64_t captured[kBurstMax];  // capture time, UINT64_MAX for none
    uint32_t n = 0;
    uint64_t non_ip = 0, bad_l4 = 0, unmatched = 0;
    for (const PacketDesc& d : b) {
        switch (extract(d, keys[n], flags[n])) {
            case Verdict::Flow:
                lengths[n] = wire_length(d.mbuf, wire_offset_);  // as tshark's frame.len
                if (!capture_ns(d.mbuf, capture_time_, captured[n])) captured[n] = UINT64_MAX;
                key_ptrs[n] = &keys[n];
                ++n;
                break;
            case Verdict::NonIp: ++non_ip; break;
            case Verdict::BadL4: ++bad_l4; break;
            case Verdict::FragmentUnmatched: ++unmatched; break;
        }
    }
    if (non_ip != 0) count_event(non_ip_, non_ip);
    if (bad_l4 != 0) count_event(bad_l4_, bad_l4);
    if (unmatched != 0) count_event(fragment_unmatched_, unmatched);

    if (n != 0) {
        int32_t positions[kBurstMax];
        rte_hash_lookup_bulk(table_, key_ptrs, n, positions);
        for (uint32_t k = 0; k < n; ++k) {
            int32_t pos = positions[k];
            if (pos < 0 && (pos = insert(keys[k], now)) < 0) continue;
            FlowStats& s = records_[pos].stats;
            ++s.packets;
            s.bytes += lengths[k];
            s.last_tsc = now;
            s.tcp_flags |= flags[k];
            if (captured[k] != UINT64_MAX) {
                s.capture_time = true;
                s.first_capture_ns = std::min(s.first_capture_ns, captured[k]);
                s.last_capture_ns = std::max(s.last_capture_ns, captured[k]);
            }
        }
    }
    if (idle_cycles_ != 0) sweep(now);
    if (period_cycles_ != 0 && export_ && now >= next_period_tsc_) [[unlikely]] {
        for (const Record& r : records_)
            if (r.live) export_flow(r, "period");
        flush_export();
        next_period_tsc_ = now + period_cycles_;
    }
}

void FlowTable::sweep(uint64_t now) {
    const uint32_t slots = static_cast<uint32_t>(records_.size());
    for (uint32_t i = 0; i < kSweepSlotsPerBurst && i < slots; ++i) {
        const uint32_t pos = sweep_cursor_;
        sweep_cursor_ = sweep_cursor_ + 1 == slots ? 0 : sweep_cursor_ + 1;
        const Record& r = records_[pos];
        if (r.live && now - r.stats.last_tsc > idle_cycles_) expire(pos);
    }
}

void FlowTable::expire(uint32_t position) {
    Record& r = records_[position];
    export_flow(r, "idle");
    rte_hash_del_key(table_, &r.key);
    r.live = false;
    --count_;
    count_event(expired_);
}

uint64_t FlowTable::tsc_to_ns(uint64_t tsc) const {
    const int64_t since_open = static_cast<int64_t>(tsc - open_tsc_);
    return open_ns_ + static_cast<uint64_t>(static_cast<int64_t>(double(since_open) * ns_per_cycle_));
}

void FlowTable::export_flow(const Record& r, const char* reason) {
    if (!export_) return;
    if (export_buffer_.size() + kExportLineMax > export_buffer_.capacity()) flush_export();
    const FlowKey& k = r.key;
    const FlowStats& s = r.stats;
    char a[INET6_ADDRSTRLEN] = {}, b[INET6_ADDRSTRLEN] = {};
    inet_ntop(k.ip_version == 4 ? AF_INET : AF_INET6, k.addr_a, a, sizeof a);
    inet_ntop(k.ip_version == 4 ? AF_INET : AF_INET6, k.addr_b, b, sizeof b);
    const uint64_t first_ns = s.capture_time ? s.first_capture_ns : tsc_to_ns(s.first_tsc);
    const uint64_t last_ns = s.capture_time ? s.last_capture_ns : tsc_to_ns(s.last_tsc);
    char line[kExportLineMax];
    int len;
    if (json_)
        len = std::snprintf(line, sizeof line,
                            "{\"reason\":\"%s\",\"ip_version\":%u,\"proto\":%u,\"addr_a\":\"%s\",\"port_a\":%u,"
                            "\"addr_b\":\"%s\",\"port_b\":%u,\"packets\":%" PRIu64 ",\"wire_bytes\":%" PRIu64
                            ",\"first_ns\":%" PRIu64 ",\"last_ns\":%" PRIu64 ",\"tcp_flags\":%u}\n",
                            reason, k.ip_version, k.proto, a, k.port_a, b, k.port_b, s.packets, s.bytes,
                            first_ns, last_ns, s.tcp_flags);
    else
        len = std::snprintf(line, sizeof line,
                            "%s,%u,%u,%s,%u,%s,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%u\n", reason,
                            k.ip_version, k.proto, a, k.port_a, b, k.port_b, s.packets, s.bytes,
                            first_ns, last_ns, s.tcp_flags);
    export_buffer_.append(line, static_cast<size_t>(std::min<int>(len, sizeof line - 1)));
}

void FlowTable::flush_export() {
    if (!export_ || export_buffer_.empty()) return;
    export_->write(export_buffer_);
    export_buffer_.clear();
}

void FlowTable::close() {
    if (table_ != nullptr && export_) {
        for (const Record& r : records_)
            if (r.live) export_flow(r, "end");
        flush_export();
    }
    export_.reset();  // the last instance on a path closes the file
}

std::vector<Flow> FlowTable::flows() const {
    std::vector<Flow> out;
    out.reserve(count_);
    for (const Record& r : records_)
        if (r.live) out.push_back(Flow{r.key, r.stats});
    return out;
}

std::string FlowTable::key_text(const FlowKey& k) {
    return std::to_string(k.ip_version) + "," + std::to_string(k.proto) + "," + address_text(k, k.addr_a) + "," +
           std::to_string(k.port_a) + "," + address_text(k, k.addr_b) + "," + std::to_string(k.port_b);
}

TILEPIPE_STAGE(FlowTable, "flow_table",
               "processor: per-flow packets, wire bytes (original lengths, as tshark counts them), first/last seen and TCP flags in a DPDK "
               "rte_hash, keyed by the direction-free 5-tuple; idle timeout; CSV/JSON export",
               param<uint64_t>("capacity", 65536,
                               "flows the table holds at most; a new flow beyond counts event "
                               "\"table_full\" (the packet still passes)")
                   .between(1, 1u << 30),
               param<double>("idle_timeout", 0,
                             "seconds without a packet after which a flow is exported (reason "
                             "\"idle\") and removed; checked a few slots per burst; 0 = never")
                   .between(0, 1e9),
               param<std::string>("export", "",
                                  "file the flows are written to at close (reason \"end\"), on "
                                  "expiry and on each period; empty = no export"),
               param<std::string>("format", "csv",
                                  "csv: a header line, then reason,ip_version,proto,addr_a,port_a,"
                                  "addr_b,port_b,packets,wire_bytes,first_ns,last_ns,tcp_flags (wire_bytes: "
                                  "lengths on the wire, not captured bytes; first_ns/last_ns: the packets' capture "
                                  "times when their pcap source replays capture time, else when they arrived); json: "
                                  "one object per line with those keys",
                                  {"csv", "json"}),
               param<double>("period", 0,
                             "seconds between snapshots of every live flow in the export (reason "
                             "\"period\"); 0 = only at the end")
                   .between(0, 1e9));

}  // namespace tp
