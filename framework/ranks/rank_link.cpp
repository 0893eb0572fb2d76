#include "framework/ranks/rank_link.hpp"

#include <rte_cycles.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "descriptors/mbuf_pool.hpp"
#include "framework/ranks/link_common.hpp"
#include "framework/ranks/shared_rank_link.hpp"
#include "framework/ranks/stamp_clock.hpp"

namespace tp {

namespace {

// Tags 0..99 are the run's own (rank_world.cpp); each link has a data and a credit tag.
int data_tag(int link) { return 100 + 2 * link; }
int credit_tag(int link) { return 101 + 2 * link; }
constexpr size_t kMessageBytes = 32 * 1024;  // a sender stops adding bursts to a message past this
// Credits cover 8 messages (2048 small packets, about 100 us of a fast link): a receiver parked
// for the park timeout would starve its sender (hence kQuietLinkSeconds' naps).
struct WireHeader {
    uint32_t count;  // records that follow
    uint32_t end;    // 1: end of stream (no records)
};
struct WireRecord {
    uint32_t bytes;        // the packet's bytes that follow (after every record); 0 for a hole
    uint32_t wire_length;  // its length on the wire (wire_length.hpp)
    uint32_t flow_hash;    // a hole's: the number it stands for
    uint32_t sequence;     // an ordered farm's number (sequence_field.hpp)
    int64_t entry_ns;      // a latency sample's entry stamp, on the system clock (see StampClock)
    uint64_t tx_offload;   // the header lengths parse set (l2_len, l3_len, l4_len)
    uint64_t capture_ns;   // the capture time a pcap source replays (kCaptureTime)
    uint32_t packet_type;  // parse's RTE_PTYPE_* value
    uint8_t port, sampled, type, flags;
};
static_assert(sizeof(WireRecord) == 48, "records pack without padding");
static_assert(sizeof(WireHeader) % alignof(WireRecord) == 0, "records are built in place after the header");
constexpr uint8_t kHole = 1;         // an ordered farm's hole marker: no packet
constexpr uint8_t kCaptureTime = 2;  // capture_ns holds the packet's capture time

void check(int rc, const char* what) { throw_on_mpi_error(rc, "link between ranks", what); }

class RankSendTask final : public Task {
public:
    RankSendTask(MPI_Comm comm, int peer, int link, Channel<PacketDesc>* in)
        : comm_(comm), peer_(peer), link_(link), in_(in), slots_(kRankLinkCredits + 1) {
        post_credit();
    }
    ~RankSendTask() override { cancel_credit(); }

    bool poll() override {
        bool moved = reap();
        set_waits_unrung(credits_ != kRankLinkCredits || !all_sent());
        if (end_sent_) {
            // Done once the end left and every credit came back (no message left unmatched).
            if (credits_ == kRankLinkCredits && all_sent()) {
                cancel_credit();
                done_ = true;
            }
            return moved || done_;
        }
        Slot* s = free_slot();
        // Credits and completions ring no doorbell: an idle poll lets the thread spin, yield
        // (the peer rank may share the CPU) and at last nap (waits_unrung above).
        if (credits_ == 0 || s == nullptr) return moved;
        // One message carries what waits, up to kRankLinkMessagePackets packets or about
        // kMessageBytes: MPI's cost is per message (matching, a fragment, progress), so a
        // backlog of small packets goes in few of them; large ones fill a message in a burst
        // or two, and a message past the caches costs both ends more in copies than it saves.
        uint32_t n = 0;
        size_t bytes = 0;
        for (uint32_t got = 1; got != 0 && n + kBurstMax <= kRankLinkMessagePackets && bytes < kMessageBytes; n += got) {
            got = in_->try_recv_burst(pending_ + n, kBurstMax);
            for (uint32_t i = n; i < n + got; ++i)
                if (pending_[i].mbuf != nullptr) bytes += rte_pktmbuf_pkt_len(pending_[i].mbuf);
        }
        if (n == 0) {
            if (!in_->closed()) return moved;
            n = in_->try_recv_burst(pending_, kBurstMax);  // sent before the close
            if (n == 0) {
                send_end(*s);
                return true;
            }
            for (uint32_t i = 0; i < n; ++i)
                if (pending_[i].mbuf != nullptr) bytes += rte_pktmbuf_pkt_len(pending_[i].mbuf);
        }
        pending_n_ = n;  // until their bytes are in the message (poll_failed frees them)
        send_message(*s, n, bytes);
        return true;
    }
    bool done() const override { return done_; }
    // Frees and counts what it held and what still arrives; once its input has ended, sends
    // the link's end as poll() does and waits for every credit, so the receiving rank ends
    // too instead of waiting for an end that never comes. If MPI itself failed, or the run is
    // cut short, it just ends.
    bool poll_failed() override {
        for (uint32_t i = 0; i < pending_n_; ++i) drop_after_failure(pending_[i]);  // not packed
        pending_n_ = 0;
        count_failure_drops(unsent_);  // freed into a message MPI never took
        unsent_ = 0;
        const InputDrain input = drain_input(in_, [this](const PacketDesc& d) { drop_after_failure(d); });
        if (input != InputDrain::Ended) return input == InputDrain::Moved;
        // Cut short (poll_cut), the run ends now: no end message, no waiting for credits.
        if (cut()) {
            end_after_failure();
            return true;
        }
        try {
            const bool moved = reap();
            set_waits_unrung(true);  // credits and completions ring nothing (see poll)
            if (!end_sent_) {
                Slot* s = free_slot();
                if (credits_ == 0 || s == nullptr) return moved;
                send_end(*s);
            }
            if (credits_ != kRankLinkCredits || !all_sent()) return moved;
            cancel_credit();
        } catch (const std::exception&) {
        }
        end_after_failure();
        return true;
    }

private:
    struct Slot {
        std::vector<unsigned char> buf;
        MPI_Request req = MPI_REQUEST_NULL;
    };

    void post_credit() {
        check(MPI_Irecv(&credit_in_, 1, MPI_UINT32_T, peer_, credit_tag(link_), comm_, &credit_req_), "post a credit receive");
    }
    void cancel_credit() {
        if (credit_req_ == MPI_REQUEST_NULL) return;
        MPI_Cancel(&credit_req_);
        MPI_Wait(&credit_req_, MPI_STATUS_IGNORE);
    }
    // Credits returned and sends completed since the last poll. (One MPI_Testsome over them
    // all measured no faster than these tests on 2 CPUs.)
    bool reap() {
        bool moved = false;
        for (int flag = 1; flag != 0 && credit_req_ != MPI_REQUEST_NULL;) {
            check(MPI_Test(&credit_req_, &flag, MPI_STATUS_IGNORE), "test for credits");
            if (flag != 0) {
                credits_ += credit_in_;
                moved = true;
                post_credit();
            }
        }
        for (Slot& s : slots_)
            if (s.req != MPI_REQUEST_NULL) {
                int flag = 0;
                check(MPI_Test(&s.req, &flag, MPI_STATUS_IGNORE), "test a send");
            }
        return moved;
    }
    Slot* free_slot() {
        for (Slot& s : slots_)
            if (s.req == MPI_REQUEST_NULL) return &s;
        return nullptr;
    }
    bool all_sent() const {
        return std::all_of(slots_.begin(), slots_.end(), [](const Slot& s) { return s.req == MPI_REQUEST_NULL; });
    }
    void send_end(Slot& s) {
        s.buf.assign(sizeof(WireHeader), 0);
        const WireHeader h{0, 1};
        std::memcpy(s.buf.data(), &h, sizeof h);
        check(MPI_Isend(s.buf.data(), static_cast<int>(s.buf.size()), MPI_BYTE, peer_, data_tag(link_), comm_, &s.req), "send the end");
        end_sent_ = true;
    }
    // The message of the first `n` pending packets, whose frames hold `frame_bytes` in all.
    void send_message(Slot& s, uint32_t n, size_t frame_bytes) {
        const PacketDesc* const end = pending_ + n;
        const size_t size = sizeof(WireHeader) + n * sizeof(WireRecord) + frame_bytes;
        s.buf.resize(size);
        pending_n_ = 0;  // nothing below throws: each packet is freed once its bytes are in
        const WireHeader h{n, 0};
        std::memcpy(s.buf.data(), &h, sizeof h);
        unsigned char* rec_at = s.buf.data() + sizeof h;
        unsigned char* data = rec_at + n * sizeof(WireRecord);
        rte_mbuf* sent[kBurstMax];
        unsigned k = 0;
        uint64_t bytes = 0, packets = 0;
        const StampClock clock;
        for (const PacketDesc* d = pending_; d != end; ++d) {
            // Built in place: a record assembled on the stack from narrow stores and then
            // copied out in 16-byte loads stalled on store forwarding (most of this loop).
            WireRecord& r = *new (rec_at) WireRecord{};
            r.flow_hash = d->flow_hash;
            r.port = d->port;
            r.sampled = d->sampled;
            r.type = d->type;
            r.flags = d->mbuf == nullptr ? kHole : 0;
            if (rte_mbuf* m = d->mbuf; m != nullptr) {
                r.bytes = rte_pktmbuf_pkt_len(m);
                r.wire_length = wire_length(m, fields_.wire);
                r.sequence = packet_sequence(m, fields_.seq);
                r.entry_ns = d->sampled ? clock.to_system_ns(packet_tsc(m, fields_.entry)) : 0;
                r.tx_offload = m->tx_offload;
                r.packet_type = m->packet_type;
                if (capture_ns(m, fields_.capture, r.capture_ns)) r.flags |= kCaptureTime;
                const void* p = rte_pktmbuf_read(m, 0, r.bytes, data);
                if (p != data && r.bytes != 0) std::memcpy(data, p, r.bytes);
                data += r.bytes;
                bytes += r.bytes;
                sent[k++] = m;
                if (k == kBurstMax) {  // their bytes are in the message
                    free_packets(sent, k);
                    packets += k;
                    k = 0;
                }
            }
            rec_at += sizeof r;
        }
        free_packets(sent, k);
        packets += k;
        unsent_ = packets;  // until MPI has the message
        check(MPI_Isend(s.buf.data(), static_cast<int>(size), MPI_BYTE, peer_, data_tag(link_), comm_, &s.req), "send a message");
        unsent_ = 0;
        --credits_;
        count_passed(packets, bytes);
    }

    MPI_Comm comm_;
    int peer_, link_;
    Channel<PacketDesc>* in_;
    RankLinkFields fields_;
    std::vector<Slot> slots_;  // one message each; one more than the credits, for the end
    PacketDesc pending_[kRankLinkMessagePackets];  // the next message's packets
    uint32_t pending_n_ = 0;  // of them, taken from the input and not yet in a message
    uint64_t unsent_ = 0;     // packets of a message whose send failed
    uint32_t credits_ = kRankLinkCredits;
    uint32_t credit_in_ = 0;
    MPI_Request credit_req_ = MPI_REQUEST_NULL;
    bool end_sent_ = false;
    bool done_ = false;
};

class RankReceiveTask final : public Task {
public:
    RankReceiveTask(MPI_Comm comm, int peer, int link, Channel<PacketDesc>* out, MbufPool& pool)
        : comm_(comm), peer_(peer), link_(link), out_(out), pool_(pool.get()),
          room_(rte_pktmbuf_data_room_size(pool.get()) - RTE_PKTMBUF_HEADROOM),
          quiet_tsc_(static_cast<uint64_t>(kQuietLinkSeconds * static_cast<double>(rte_get_tsc_hz()))),
          last_msg_tsc_(rte_rdtsc()) {}
    ~RankReceiveTask() override {
        for (Credit& c : credits_out_) MPI_Wait(&c.req, MPI_STATUS_IGNORE);
    }

    bool poll() override {
        bool moved = reap_credits();
        if (held_.pending()) {  // what the next node had no room for last time
            if (!held_.hand_on(out_)) return moved || held_.at > 0;
            moved = true;
        }
        if (!have_msg_) {
            if (!take_message()) {
                set_waits_unrung(rte_rdtsc() - last_msg_tsc_ < quiet_tsc_);
                return moved;
            }
            if (ended_link_) {
                out_->close();
                done_ = true;
                return true;
            }
            moved = true;
        }
        // A burst's worth of the message at a time: what the next node takes per offer.
        if (!unpack(std::min<uint32_t>(records_ - next_, kBurstMax))) return moved;  // mbufs come back
        if (next_ == records_) {
            have_msg_ = false;  // the message's buffer is free: its credit goes back
            if (++owed_ >= kRankLinkCredits / 2) return_credits();  // in batches: a message per few
        }
        held_.hand_on(out_);
        return true;
    }
    bool done() const override { return done_; }
    // Frees the burst in hand and ends the output, so the nodes after it drain. The sending
    // rank goes on until its input ends (its sources stop once it hears of the failure): each
    // message it still sends is taken, its packets counted as this failure's drops, and its
    // credit returned, so the sender never waits for credits and the link ends with its end
    // message. If MPI itself failed, or the run is cut short, the task just ends.
    bool poll_failed() override {
        held_.drop([this](const PacketDesc& d) { drop_after_failure(d); });
        if (have_msg_) {
            count_failure_drops(packets_left());
            have_msg_ = false;
            ++owed_;
        }
        if (!out_->closed()) out_->close();
        if (cut()) {  // the run ends now: no draining the link
            end_after_failure();
            return true;
        }
        try {
            bool moved = reap_credits();
            set_waits_unrung(true);
            if (take_message()) {
                moved = true;
                if (ended_link_) {
                    end_after_failure();
                    return true;
                }
                count_failure_drops(packets_left());
                have_msg_ = false;
                ++owed_;
            }
            if (owed_ != 0) return_credits();
            return moved;
        } catch (const std::exception&) {
        }
        end_after_failure();
        return true;
    }

private:
    struct Credit {
        uint32_t value = 0;
        MPI_Request req = MPI_REQUEST_NULL;
    };

    // The next message, if one came: its records in hand (have_msg_), or, the link's end,
    // ended_link_ set with every credit owed returned and delivered.
    bool take_message() {
        int flag = 0;
        MPI_Message msg;
        MPI_Status st;
        check(MPI_Improbe(peer_, data_tag(link_), comm_, &flag, &msg, &st), "probe for a message");
        if (flag == 0) return false;
        last_msg_tsc_ = rte_rdtsc();
        int count = 0;
        MPI_Get_count(&st, MPI_BYTE, &count);
        buf_.resize(static_cast<size_t>(count));
        check(MPI_Mrecv(buf_.data(), count, MPI_BYTE, &msg, MPI_STATUS_IGNORE), "receive a message");
        WireHeader h;
        std::memcpy(&h, buf_.data(), sizeof h);
        if (h.end != 0) {
            if (owed_ != 0) return_credits();
            for (Credit& c : credits_out_) MPI_Wait(&c.req, MPI_STATUS_IGNORE);
            credits_out_.clear();
            ended_link_ = true;
            return true;
        }
        have_msg_ = true;
        records_ = h.count;
        next_ = 0;
        data_at_ = sizeof(WireHeader) + size_t{records_} * sizeof(WireRecord);
        return true;
    }
    // Packets (not holes) of the message in hand not yet unpacked.
    uint64_t packets_left() const {
        uint64_t left = 0;
        for (uint32_t i = next_; i < records_; ++i) left += (record(i).flags & kHole) == 0;
        return left;
    }
    void return_credits() {
        credits_out_.push_back(Credit{owed_, MPI_REQUEST_NULL});
        Credit& c = credits_out_.back();  // a deque: its address stays while the send lasts
        check(MPI_Isend(&c.value, 1, MPI_UINT32_T, peer_, credit_tag(link_), comm_, &c.req), "return credits");
        owed_ = 0;
    }
    bool reap_credits() {
        while (!credits_out_.empty()) {
            int flag = 0;
            check(MPI_Test(&credits_out_.front().req, &flag, MPI_STATUS_IGNORE), "test a credit return");
            if (flag == 0) break;
            credits_out_.pop_front();
        }
        return false;
    }
    WireRecord record(uint32_t i) const {
        WireRecord r;
        std::memcpy(&r, buf_.data() + sizeof(WireHeader) + size_t{i} * sizeof r, sizeof r);
        return r;
    }
    // The message's next `count` packets into mbufs of this rank's pool (a packet longer than
    // an mbuf's room takes a chain), held for the next node; false, taking nothing, when the
    // pool cannot give them now.
    bool unpack(uint32_t count) {
        unsigned segs = 0;
        for (uint32_t i = next_; i < next_ + count; ++i) {
            const WireRecord r = record(i);
            if ((r.flags & kHole) == 0) segs += std::max(1u, (r.bytes + room_ - 1) / room_);
        }
        if (seg_.size() < segs) seg_.resize(segs);
        if (segs != 0 && !alloc_packets(pool_, seg_.data(), segs)) return false;
        const unsigned char* data = buf_.data() + data_at_;
        unsigned k = 0;
        uint64_t bytes = 0, packets = 0;
        held_.b.n = 0;
        const StampClock clock;
        const uint64_t now = rte_rdtsc();
        for (uint32_t i = next_; i < next_ + count; ++i) {
            const WireRecord r = record(i);
            if ((r.flags & kHole) != 0) {
                held_.b.d[held_.b.n++] = PacketDesc{nullptr, r.flow_hash, 0, 0, 0};
                continue;
            }
            rte_mbuf* head = seg_[k++];
            rte_mbuf* cur = head;
            uint32_t left = r.bytes;
            for (bool first = true; first || left != 0; first = false) {
                if (!first) {
                    rte_mbuf* next = seg_[k++];
                    cur->next = next;
                    cur = next;
                    ++head->nb_segs;
                }
                const uint32_t n = std::min(left, room_);
                std::memcpy(rte_pktmbuf_mtod(cur, void*), data, n);
                cur->data_len = static_cast<uint16_t>(n);
                data += n;
                left -= n;
            }
            head->pkt_len = r.bytes;
            head->tx_offload = r.tx_offload;
            head->packet_type = r.packet_type;
            wire_length(head, fields_.wire) = r.wire_length;
            packet_sequence(head, fields_.seq) = r.sequence;
            if (r.sampled != 0) packet_tsc(head, fields_.entry) = clock.to_tsc(r.entry_ns);
            // The next node's queue wait starts here, not at a stamp of this mbuf's last trip.
            packet_tsc(head, fields_.handoff) = now;
            if ((r.flags & kCaptureTime) != 0) set_capture_ns(head, fields_.capture, r.capture_ns);
            PacketDesc d(head, r.flow_hash, descriptor_length(head, pool_), r.port, r.type);
            d.sampled = r.sampled;
            held_.b.d[held_.b.n++] = d;
            bytes += r.bytes;
            ++packets;
        }
        data_at_ = static_cast<size_t>(data - buf_.data());
        next_ += count;
        held_.at = 0;
        count_passed(packets, bytes);
        return true;
    }

    MPI_Comm comm_;
    int peer_, link_;
    Channel<PacketDesc>* out_;
    rte_mempool* pool_;
    uint32_t room_;
    const uint64_t quiet_tsc_;  // kQuietLinkSeconds in TSC cycles
    uint64_t last_msg_tsc_;     // when the last message came
    RankLinkFields fields_;
    std::vector<unsigned char> buf_;
    bool have_msg_ = false;
    uint32_t records_ = 0;  // in the message in hand
    uint32_t next_ = 0;     // its next record to unpack
    size_t data_at_ = 0;    // where that record's bytes start in buf_
    std::vector<rte_mbuf*> seg_;  // grows to the largest burst's mbufs once
    HeldBurst held_;
    uint32_t owed_ = 0;  // messages emptied whose credit has not gone back
    std::deque<Credit> credits_out_;
    bool ended_link_ = false;  // the end message came
    bool done_ = false;
};

}  // namespace

std::unique_ptr<Task> MpiRankLinks::make_send(const GraphNode& node, Channel<PacketDesc>* in, MbufPool& pool) {
    if (memory_ != nullptr)
        if (void* area = memory_->send_area(node.rank_link)) return make_shared_send(area, memory_->segment(), in, pool);
    return std::make_unique<RankSendTask>(comm_, node.peer_rank, node.rank_link, in);
}

std::unique_ptr<Task> MpiRankLinks::make_receive(const GraphNode& node, Channel<PacketDesc>* out, MbufPool& pool) {
    if (memory_ != nullptr)
        if (const auto l = memory_->lender(node.rank_link, node.peer_rank)) {
            MbufPoolSpec spec = rank_link_header_spec();
            spec.name = "tp_rlh" + std::to_string(node.rank_link) + "_" + std::to_string(header_pools_.size());
            header_pools_.push_back(std::make_unique<MbufPool>(spec));
            return make_shared_receive(l->area, l->segment, l->base, out, *header_pools_.back());
        }
    return std::make_unique<RankReceiveTask>(comm_, node.peer_rank, node.rank_link, out, pool);
}

std::string MpiRankLinks::kind(const GraphNode& node) const {
    const bool lent = memory_ != nullptr && (node.role == NodeRole::RankSend ? memory_->send_area(node.rank_link) != nullptr
                                                                             : memory_->lender(node.rank_link, node.peer_rank).has_value());
    return lent ? "lent" : "messages";
}

void MpiRankLinks::place_pool(size_t index, MbufPoolSpec& spec) {
    if (memory_ != nullptr) memory_->place_pool(index, spec);
}

}  // namespace tp
