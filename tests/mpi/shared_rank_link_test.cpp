// A link between ranks of one host lending packets, with its two ends, the node before it and
// the node after it each on a thread of its own, as tiles run them. The two ranks are threads
// of one process here, each with its own mapping of the sending rank's segment (one memfd
// mapped twice, as two processes map Open MPI's window; once under ThreadSanitizer, below), so
// every address the receiver uses is translated: the link's protocol lives in that memory (no MPI call on the way), and
// ThreadSanitizer sees every access the memory orders in shared_rank_link.hpp order: records
// published and taken, packets freed on the next node's thread (DPDK's free callback) and
// reused by the source once the sender took them back. Every packet arrives in order with its
// bytes (chains of two segments, hole markers and packets of a pool outside the segment, which
// the sender copies, among them), the pools end full, and the whole run ends within a bound.
#include <gtest/gtest.h>
#include <rte_mbuf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <span>
#include <string>
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
bool hole(uint32_t i) { return i % 7 == 3; }
bool chained(uint32_t i) { return i % 5 == 1 && !hole(i); }
bool foreign(uint32_t i) { return i % 11 == 5 && !hole(i) && !chained(i); }

// ThreadSanitizer tells memory apart by address: one word under two mappings is two words to
// it, so the atomics that order the two ends would order nothing it sees. Under TSan both ends
// share one mapping (the orders are what it checks); elsewhere each has its own (the
// translation of every address is what the test checks).
#if defined(__SANITIZE_THREAD__)
constexpr bool kOneMapping = true;
#else
constexpr bool kOneMapping = false;
#endif

// What RankMemory gives a lending rank, without MPI: one segment, the link's area first, then
// the pool's mbufs; mapped once for the sender and once, elsewhere, for the receiver.
class Segment {
public:
    explicit Segment(MbufPoolSpec& spec) {
        spec.priv_size = shared_link_mbuf_priv();
        const size_t area = page_up(shared_link_area_bytes());
        bytes_ = area + page_up(MbufPool::objects_bytes(spec));
        fd_ = memfd_create("shared_rank_link_test", 0);
        EXPECT_GE(fd_, 0);
        EXPECT_EQ(ftruncate(fd_, static_cast<off_t>(bytes_)), 0);
        sender_ = map();
        receiver_ = kOneMapping ? sender_ : map();
        init_shared_link_area(sender_);
        spec.objects = std::span<std::byte>(sender_ + area, bytes_ - area);
    }
    ~Segment() {
        munmap(sender_, bytes_);
        if (receiver_ != sender_) munmap(receiver_, bytes_);
        close(fd_);
    }
    Segment(const Segment&) = delete;
    Segment& operator=(const Segment&) = delete;

    std::byte* sender() const { return sender_; }
    std::byte* receiver() const { return receiver_; }
    std::span<std::byte> sender_all() const { return {sender_, bytes_}; }
    bool receives(const void* p) const {
        const auto* b = static_cast<const std::byte*>(p);
        return b >= receiver_ && b < receiver_ + bytes_;
    }

private:
    std::byte* map() const {
        void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
        EXPECT_NE(p, MAP_FAILED);
        return static_cast<std::byte*>(p);
    }
    int fd_ = -1;
    size_t bytes_ = 0;
    std::byte* sender_ = nullptr;
    std::byte* receiver_ = nullptr;
};

MbufPoolSpec named(const char* name, uint32_t mbufs) {
    MbufPoolSpec s;
    s.name = name;
    s.mbufs = mbufs;
    s.cache = 0;
    return s;
}

TEST(SharedRankLink, PacketsLentAcrossThreadsArriveInOrderAndComeBackWithinABound) {
    MbufPoolSpec spec = named("srl_src", 4095);  // more than the slots, fewer than the packets: mbufs must come back
    Segment segment(spec);
    MbufPoolSpec headers_spec = rank_link_header_spec();
    headers_spec.name = "srl_hdr";
    {
        MbufPool pool(spec), other(named("srl_other", 1023)), headers(headers_spec);
        RingChannel<PacketDesc> in(1024), out(1024);
        std::unique_ptr<Task> send = make_shared_send(segment.sender(), segment.sender_all(), &in, pool);
        std::unique_ptr<Task> receive = make_shared_receive(segment.receiver(), segment.receiver(),
                                                            reinterpret_cast<uintptr_t>(segment.sender()), &out, headers);

        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        const auto late = [&] { return std::chrono::steady_clock::now() > deadline; };
        // Packet i's bytes, in one mbuf of `mp` or (chained) two; nullptr while the pool is out.
        const auto make = [&](uint32_t i, rte_mempool* mp) -> rte_mbuf* {
            rte_mbuf* m[2] = {nullptr, nullptr};
            const unsigned segs = chained(i) ? 2 : 1;
            if (!alloc_packets(mp, m, segs)) return nullptr;
            const uint32_t first = segs == 2 ? 24 : kFrameBytes;
            auto* p = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m[0], first));
            for (uint32_t b = 0; b < first; ++b) p[b] = pattern(i, b);
            if (segs == 2) {
                auto* q = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m[1], kFrameBytes - first));
                for (uint32_t b = first; b < kFrameBytes; ++b) q[b - first] = pattern(i, b);
                rte_pktmbuf_chain(m[0], m[1]);
            }
            return m[0];
        };
        // The node before the link: numbered packets from the lending pool (and some others).
        std::thread source([&] {
            for (uint32_t i = 0; i < kPackets && !late();) {
                PacketDesc d{nullptr, i, 0, 0, 0};  // a hole marker
                if (!hole(i)) {
                    rte_mbuf* m = make(i, (foreign(i) ? other : pool).get());
                    if (m == nullptr) {  // the link has them all lent: wait
                        std::this_thread::yield();
                        continue;
                    }
                    d = PacketDesc(m, i, descriptor_length(m, pool.get()), 0, 0);
                }
                while (!in.try_send(d) && !late()) std::this_thread::yield();
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
                bool ok = d[k].flow_hash == i && (d[k].mbuf == nullptr) == hole(i);
                if (ok && d[k].mbuf != nullptr) {
                    uint8_t bytes[kFrameBytes];
                    const auto* p = static_cast<const uint8_t*>(rte_pktmbuf_read(d[k].mbuf, 0, kFrameBytes, bytes));
                    ok = rte_pktmbuf_pkt_len(d[k].mbuf) == kFrameBytes && d[k].mbuf->nb_segs == (chained(i) ? 2 : 1);
                    // Every segment's bytes through the receiver's own mapping: in two processes
                    // the sender's addresses would mean nothing here.
                    for (const rte_mbuf* g = d[k].mbuf; ok && g != nullptr; g = g->next)
                        ok = segment.receives(g->buf_addr);
                    for (uint32_t b = 0; ok && b < kFrameBytes; ++b) ok = p[b] == pattern(i, b);
                    free_packet(d[k].mbuf);
                }
                wrong += ok ? 0 : 1;
            }
        }
        source.join();
        sender.join();
        receiver.join();
        ASSERT_FALSE(late()) << "not done within 60 s: " << delivered << " of " << kPackets << " delivered, send finished "
                             << send->finished() << ", receive finished " << receive->finished();
        EXPECT_EQ(delivered, kPackets);
        EXPECT_EQ(wrong, 0u) << "packets out of order, with other bytes or segments (or not in the receiver's mapping), or "
                                "holes that were not";
        EXPECT_EQ(pool.available(), pool.capacity()) << "the sender ended before every lent packet came back";
        EXPECT_EQ(other.available(), other.capacity());
        EXPECT_EQ(headers.available(), headers.capacity());
    }
}

// The two ends of one link, each polled by hand on this thread, with the node before them fed
// and the node after them drained here: for when the sender publishes, which needs no timing.
class PolledLink {
public:
    static constexpr uint32_t kFew = 5;

    explicit PolledLink(const std::string& name)
        : spec_(named(name.c_str(), 1023)), segment_(spec_), headers_spec_(header_spec(name + "_hdr")), pool_(spec_),
          headers_(headers_spec_), in_(1024), out_(1024),
          send_(make_shared_send(segment_.sender(), segment_.sender_all(), &in_, pool_)),
          receive_(make_shared_receive(segment_.receiver(), segment_.receiver(),
                                       reinterpret_cast<uintptr_t>(segment_.sender()), &out_, headers_)) {}

    Task& send() { return *send_; }
    // kFew packets numbered from `first` into the sender's input, which stays open.
    void offer(uint32_t first) {
        for (uint32_t k = 0; k < kFew; ++k) {
            rte_mbuf* m = rte_pktmbuf_alloc(pool_.get());
            ASSERT_NE(m, nullptr);
            ASSERT_NE(rte_pktmbuf_append(m, kFrameBytes), nullptr);
            ASSERT_TRUE(in_.try_send(PacketDesc(m, first + k, descriptor_length(m, pool_.get()), 0, 0)));
        }
    }
    // Polls both ends up to 50 times or until kFew packets came out, checking their numbers
    // (from `first`, in order) and freeing them; returns how many came.
    uint32_t deliver(uint32_t first) {
        PacketDesc d[kBurstMax];
        uint32_t got = 0;
        for (int polls = 0; polls < 50 && got < kFew; ++polls) {
            poll_both();
            const uint32_t n = out_.try_recv_burst(d, kBurstMax);
            for (uint32_t k = 0; k < n; ++k) {
                EXPECT_EQ(d[k].flow_hash, first + got + k);
                free_packet(d[k].mbuf);
            }
            got += n;
        }
        return got;
    }
    // Closes the input and polls both ends to their end: both finish, nothing more comes out,
    // and both pools are full.
    void end() {
        in_.close();
        for (int polls = 0; polls < 1000 && !(send_->finished() && receive_->finished()); ++polls) poll_both();
        EXPECT_TRUE(send_->finished() && receive_->finished());
        PacketDesc d;
        EXPECT_EQ(out_.try_recv_burst(&d, 1), 0u);
        EXPECT_EQ(pool_.available(), pool_.capacity());
        EXPECT_EQ(headers_.available(), headers_.capacity());
    }

private:
    static MbufPoolSpec header_spec(const std::string& name) {
        MbufPoolSpec s = rank_link_header_spec();
        s.name = name;
        return s;
    }
    void poll_both() {
        if (send_->failed()) send_->poll_failed();
        else send_->poll();
        receive_->poll();
    }

    MbufPoolSpec spec_;
    Segment segment_;
    MbufPoolSpec headers_spec_;
    MbufPool pool_, headers_;
    RingChannel<PacketDesc> in_, out_;
    std::unique_ptr<Task> send_, receive_;
};

// The sender publishes a burst's records when it lends the next burst, or as soon as its input
// has nothing more (shared_rank_link.cpp, poll and lend): a few packets sent while the input
// stays open reach the receiving end's output within a few polls, not at the end of the stream.
TEST(SharedRankLink, PacketsSentWhileTheInputStaysOpenArriveWithoutWaitingForMore) {
    PolledLink link("srl_open");
    for (uint32_t round = 0; round < 3; ++round) {
        link.offer(round * PolledLink::kFew);
        EXPECT_EQ(link.deliver(round * PolledLink::kFew), PolledLink::kFew)
            << "round " << round << ": packets lent stayed unpublished while the input was open";
    }
    link.end();
}

// A sending end that fails (its input's node threw, say) publishes the burst its last lend wrote
// before anything else, so the receiving rank gets those packets while the input is still open,
// rather than at its end: the failure path drains what is in flight, it does not hold it back.
TEST(SharedRankLink, AFailingSenderPublishesWhatItLastWrote) {
    PolledLink link("srl_fail");
    link.offer(0);
    link.send().poll();  // lends the five: written, not yet published
    link.send().record_failure("the node before the link threw");
    EXPECT_EQ(link.deliver(0), PolledLink::kFew) << "the failing sender kept what it had lent unpublished while its input was open";
    link.end();
}

}  // namespace
}  // namespace tp::test
