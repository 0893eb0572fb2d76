// A link between ranks of one host lending packets, with its two ends, the node before it and
// the node after it each on a thread of its own, as tiles run them. The two ranks are threads
// of one process here: the link's protocol lives in the memory both map (no MPI call on the
// way), so ThreadSanitizer sees every access the memory orders in shared_rank_link.hpp order:
// records published and taken, packets freed on the next node's thread (DPDK's free callback)
// and reused by the source once the sender took them back. Every packet arrives in order with
// its bytes, the pool ends full, and the whole run ends within a bound.
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <span>
#include <thread>

#include "descriptors/mbuf_pool.hpp"
#include "framework/channel/transport_ring.hpp"
#include "framework/ranks/shared_rank_link.hpp"

namespace tp::test {
namespace {

constexpr uint32_t kPackets = 60000;  // the ring of slots many times over
constexpr uint32_t kFrameBytes = 64;
constexpr size_t kPage = 4096;

uint8_t pattern(uint32_t packet, uint32_t byte) { return static_cast<uint8_t>(packet * 13 + byte); }
size_t page_up(size_t n) { return (n + kPage - 1) / kPage * kPage; }

// What RankMemory gives a lending rank, without MPI: one segment, the link's area first, then
// the pool's mbufs.
class Segment {
public:
    explicit Segment(MbufPoolSpec& spec) {
        spec.priv_size = shared_link_mbuf_priv();
        const size_t area = page_up(shared_link_area_bytes());
        bytes_ = area + page_up(MbufPool::objects_bytes(spec));
        base_ = static_cast<std::byte*>(std::aligned_alloc(kPage, bytes_));
        init_shared_link_area(base_);
        spec.objects = std::span<std::byte>(base_ + area, bytes_ - area);
    }
    ~Segment() { std::free(base_); }
    Segment(const Segment&) = delete;
    Segment& operator=(const Segment&) = delete;

    std::byte* base() const { return base_; }
    std::span<std::byte> all() const { return {base_, bytes_}; }

private:
    std::byte* base_ = nullptr;
    size_t bytes_ = 0;
};

MbufPoolSpec lending_spec() {
    MbufPoolSpec s;
    s.name = "srl_src";
    s.mbufs = 4095;  // more than the slots, fewer than the packets: mbufs must come back
    s.cache = 0;
    return s;
}

TEST(SharedRankLink, PacketsLentAcrossThreadsArriveInOrderAndComeBackWithinABound) {
    MbufPoolSpec spec = lending_spec();
    Segment segment(spec);
    {
        MbufPool pool(spec);
        RingChannel<PacketDesc> in(1024), out(1024);
        std::unique_ptr<Task> send = make_shared_send(segment.base(), segment.all(), &in, pool);
        std::unique_ptr<Task> receive =
            make_shared_receive(segment.base(), segment.base(), reinterpret_cast<uintptr_t>(segment.base()), &out, 0);

        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        const auto late = [&] { return std::chrono::steady_clock::now() > deadline; };
        // The node before the link: a source of numbered packets from the lending pool.
        std::thread source([&] {
            for (uint32_t i = 0; i < kPackets && !late();) {
                rte_mbuf* m = nullptr;
                if (!alloc_packets(pool.get(), &m, 1)) {  // the link has them all lent: wait
                    std::this_thread::yield();
                    continue;
                }
                auto* p = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, kFrameBytes));
                for (uint32_t b = 0; b < kFrameBytes; ++b) p[b] = pattern(i, b);
                while (!in.try_send(PacketDesc(m, i, kFrameBytes, 0, 0)) && !late()) std::this_thread::yield();
                ++i;
            }
            in.close();
        });
        const auto tile = [&](Task& t) {
            while (!t.finished() && !late())
                if (!t.poll()) std::this_thread::yield();
        };
        std::thread sender([&] { tile(*send); });
        std::thread receiver([&] { tile(*receive); });
        // The node after the link, on this thread: checks each packet and frees it here.
        uint64_t delivered = 0, wrong = 0;
        PacketDesc d[kBurstMax];
        while (!late()) {
            const uint32_t n = out.try_recv_burst(d, kBurstMax);
            if (n == 0) {
                if (out.closed() && out.try_recv_burst(d, 1) == 0) break;
                std::this_thread::yield();
                continue;
            }
            for (uint32_t k = 0; k < n; ++k, ++delivered) {
                const auto i = static_cast<uint32_t>(delivered);
                bool ok = d[k].flow_hash == i && rte_pktmbuf_pkt_len(d[k].mbuf) == kFrameBytes;
                const auto* p = rte_pktmbuf_mtod(d[k].mbuf, const uint8_t*);
                for (uint32_t b = 0; ok && b < kFrameBytes; ++b) ok = p[b] == pattern(i, b);
                wrong += ok ? 0 : 1;
                free_packet(d[k].mbuf);
            }
        }
        source.join();
        sender.join();
        receiver.join();
        ASSERT_FALSE(late()) << "not done within 60 s: " << delivered << " of " << kPackets << " delivered, send finished "
                             << send->finished() << ", receive finished " << receive->finished();
        EXPECT_EQ(delivered, kPackets);
        EXPECT_EQ(wrong, 0u) << "packets out of order, or with other bytes";
        EXPECT_EQ(send->passed_packets(), kPackets);
        EXPECT_EQ(pool.available(), pool.capacity()) << "the sender ended before every lent packet came back";
    }
}

}  // namespace
}  // namespace tp::test
