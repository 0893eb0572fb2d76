#include "framework/ranks/shared_rank_link.hpp"

#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <new>
#include <stdexcept>
#include <string>

#include "descriptors/mbuf_pool.hpp"
#include "framework/channel/detail/cache_line.hpp"
#include "framework/ranks/link_common.hpp"

namespace tp {

namespace {

constexpr uint32_t kSlots = kRankLinkSlots;
static_assert((kSlots & (kSlots - 1)) == 0, "slots index by mask");

constexpr uint8_t kLentHole = 1;         // an ordered farm's hole marker: no packet
constexpr uint8_t kLentCaptureTime = 2;  // capture_ns holds the packet's capture time
constexpr uint8_t kLentEnd = 4;          // end of stream: no packet, the last record
constexpr uint8_t kLentExtra = 8;        // the slot's Extra holds the packet's other fields
constexpr unsigned kMaxHeaders = 4 * kBurstMax;  // header mbufs the receiver attaches per take

// One packet, half a cache line: what a forward needs. The rest (header lengths parse set, a
// latency sample's entry stamp, a replayed capture time) goes in the slot's Extra, written only
// when the packet has any (kLentExtra). The entry stamp stays a TSC reading: one host.
struct alignas(32) Record {
    uint32_t mbuf;          // the head mbuf's offset in the sender's segment, in cache lines
    uint32_t bytes;         // pkt_len
    uint32_t wire_length;   // wire_length.hpp
    uint32_t flow_hash;     // a hole's: the number it stands for
    uint32_t sequence;      // an ordered farm's number (sequence_field.hpp)
    uint32_t packet_type;   // parse's RTE_PTYPE_* value
    uint16_t data_off;      // the head segment's
    uint16_t nb_segs;
    uint8_t port, sampled, type, flags;
};
static_assert(sizeof(Record) == 32);
struct alignas(32) Extra {
    uint64_t tx_offload;  // the header lengths parse set
    uint64_t entry_tsc;   // a latency sample's entry stamp (sampled)
    uint64_t capture_ns;  // the capture time a pcap source replays (kLentCaptureTime)
};

// Writes a record into its slot with streaming (non-temporal) stores. The slot's line was last
// read by the receiving rank, so an ordinary store must first take it back from that core's
// cache, and a burst's stores queue up behind those transfers: measured on a 2-CPU VM, the
// sending end took 37-190 cycles per packet, depending on how far apart the two CPUs sat, and
// 29-31 with streaming stores. They are weakly ordered: publish() fences them before the release store
// of `published`. The receiver then reads the lines from memory, a burst ahead (take()).
inline void put_record(Record& slot, const Record& r) {
#if defined(__SSE2__) && !defined(__SANITIZE_THREAD__)  // ThreadSanitizer sees no streaming store: plain ones there
    const auto* src = reinterpret_cast<const __m128i*>(&r);
    auto* dst = reinterpret_cast<__m128i*>(&slot);
    _mm_stream_si128(dst, _mm_load_si128(src));
    _mm_stream_si128(dst + 1, _mm_load_si128(src + 1));
#else
    slot = r;
#endif
}

struct LinkArea {
    alignas(64) std::atomic<uint64_t> published;  // records written (sender)
    alignas(64) std::atomic<uint64_t> taken;      // records read (receiver)
    // Records read whose packets all came back, oldest first (the receiving end, once per poll):
    // what the sender reclaims without reading each slot's `returned`.
    alignas(64) std::atomic<uint64_t> given_back;
    uint16_t buf_len;  // of every mbuf lent (the sender's pools are alike); set before any record
    alignas(64) Record slots[kSlots];
    alignas(64) Extra extra[kSlots];
    // Segments lent through the slot that the receiving rank freed (its free callbacks).
    alignas(64) std::atomic<uint32_t> returned[kSlots];
    // The head segment's reference count and free callback while it is lent through the slot:
    // written by the receiving rank only. Kept here rather than in the lent mbuf, whose
    // private line pairs (as x86 prefetchers fetch lines, by aligned 128 bytes) with its
    // header's second line in many mbufs: a write there pulled the sender's header line over
    // to the receiver with it.
    alignas(64) rte_mbuf_ext_shared_info heads[kSlots];
};
static_assert(std::atomic<uint64_t>::is_always_lock_free && std::atomic<uint32_t>::is_always_lock_free,
              "atomics shared between processes must be lock-free");

// In the private area of every mbuf of a lending pool: a chain's later segments' reference
// count and free callback while lent (the head's are the slot's, LinkArea::heads).
struct LoanTag {
    rte_mbuf_ext_shared_info shinfo;
};
constexpr uint16_t kLoanPriv = RTE_ALIGN(sizeof(LoanTag), RTE_MBUF_PRIV_ALIGN);

// DPDK's free callback of a lent buffer, on whatever thread of the receiving rank frees it:
// `opaque` is the slot's count of returned segments. Release: the sender's acquire of the
// count orders every access to the segment before its reuse.
void loan_returned(void*, void* opaque) { static_cast<std::atomic<uint32_t>*>(opaque)->fetch_add(1, std::memory_order_release); }

class SharedSendTask final : public Task {
public:
    SharedSendTask(LinkArea* area, std::span<std::byte> segment, Channel<PacketDesc>* in, MbufPool& pool)
        : area_(area), segment_(segment), in_(in), pool_(pool.get()),
          buf_len_(static_cast<uint16_t>(rte_pktmbuf_data_room_size(pool.get()))) {
        area_->buf_len = buf_len_;  // published with the first record
    }

    bool poll() override {
        bool moved = reclaim();
        set_waits_unrung(reclaimed_ != written_);  // returns ring no doorbell
        if (end_sent_) {
            done_ = reclaimed_ == written_;  // every lent packet came back: the pool is whole
            return moved || done_;
        }
        if (at_ == held_n_) {
            at_ = 0;
            held_n_ = in_->try_recv_burst(held_, kBurstMax);
            if (held_n_ == 0) {
                moved = flush() || moved;  // nothing more to lend now: the receiver gets what was written
                if (!in_->closed()) return moved;
                held_n_ = in_->try_recv_burst(held_, kBurstMax);  // sent before the close
                if (held_n_ == 0) return publish_end() || moved;
            }
        }
        return lend() || moved;
    }
    bool done() const override { return done_; }
    // Frees and counts what it held and what still arrives; once its input ended, sends the
    // end and waits for what it lent, so the receiving rank ends too and the pool is whole.
    bool poll_failed() override {
        // What the last lend() wrote goes to the receiving rank as it would have: its failure
        // path gives those packets back and counts them, and a cut finds them published.
        const bool flushed = flush();
        for (uint32_t i = at_; i < held_n_; ++i) drop_after_failure(held_[i]);
        at_ = held_n_ = 0;
        const InputDrain input = drain_input(in_, [this](const PacketDesc& d) { drop_after_failure(d); });
        if (input != InputDrain::Ended) return flushed || input == InputDrain::Moved;
        if (cut()) {  // the run ends now, with what has come back so far
            reclaim();
            end_after_failure();
            return true;
        }
        const bool moved = reclaim();
        set_waits_unrung(true);
        if (!end_sent_ && !publish_end()) return moved;
        if (reclaimed_ != written_) return moved;
        end_after_failure();
        return true;
    }

private:
    // An mbuf the receiver can attach: every segment a plain mbuf of this rank's shared pools.
    bool lendable(const rte_mbuf* head) const {
        // More segments than the receiver attaches at once: copied (fewer, fuller segments).
        if (head->nb_segs > kMaxHeaders) return false;
        const std::byte* const lo = segment_.data();
        const std::byte* const hi = lo + segment_.size();
        const bool single = head->nb_segs == 1;  // then `next` is null
        for (const rte_mbuf* m = head; m != nullptr; m = single ? nullptr : m->next) {
            const auto* p = reinterpret_cast<const std::byte*>(m);
            if (p < lo || p >= hi || !RTE_MBUF_DIRECT(m) || rte_mbuf_refcnt_read(m) != 1 || m->buf_len != buf_len_) return false;
        }
        return true;
    }
    bool publish_end() {
        if (written_ - reclaimed_ == kSlots) {
            flush();  // the slots come back only once the receiver has seen what fills them
            return false;
        }
        Record r{};
        r.flags = kLentEnd;
        put_record(area_->slots[written_ & (kSlots - 1)], r);
        publish(written_ + 1);
        end_sent_ = true;
        return true;
    }
    // Makes records up to `p` visible: SFENCE orders the streaming stores of put_record (and
    // the Extras' ordinary stores) before the release store the receiver acquires.
    void publish(uint64_t p) {
#if defined(__SSE2__) && !defined(__SANITIZE_THREAD__)
        _mm_sfence();
#endif
        area_->published.store(p, std::memory_order_release);
        published_ = written_ = p;
    }
    // Publishes the records written since the last publish, if any.
    bool flush() {
        if (written_ == published_) return false;
        publish(written_);
        return true;
    }
    // Writes records for the held packets while slots are free, after publishing the burst
    // before them. A burst's records stay unpublished until the next burst or until the input
    // runs dry (poll), so the SFENCE of publish() finds their streaming stores drained while
    // the thread did other work, rather than waiting for them: measured on a 2-CPU VM with the
    // source on the same CPU, waiting cost the sending rank about a tenth of its packets.
    bool lend() {
        const bool flushed = flush();
        uint64_t p = written_;
        const uint64_t limit = reclaimed_ + kSlots;
        uint64_t packets = 0, bytes = 0;
        for (; at_ < held_n_ && p < limit; ++at_, ++p) {
            PacketDesc& d = held_[at_];
            const uint32_t s = static_cast<uint32_t>(p & (kSlots - 1));
            // Built here, then streamed into the slot whole (put_record).
            Record r{};
            r.flow_hash = d.flow_hash;
            r.port = d.port;
            r.sampled = d.sampled;
            r.type = d.type;
            rte_mbuf* m = d.mbuf;
            owned_[s] = m;
            if (m == nullptr) {
                r.flags = kLentHole;
                put_record(area_->slots[s], r);
                continue;
            }
            if (!lendable(m)) {
                rte_mbuf* c = rte_pktmbuf_copy(m, pool_, 0, UINT32_MAX);
                if (c == nullptr) {  // the pool is out: try again once lent mbufs come back
                    owned_[s] = nullptr;
                    break;
                }
                free_packet(m);
                owned_[s] = d.mbuf = m = c;
            }
            expect_[s] += m->nb_segs;
            r.mbuf = static_cast<uint32_t>((reinterpret_cast<std::byte*>(m) - segment_.data()) / RTE_CACHE_LINE_SIZE);
            r.bytes = rte_pktmbuf_pkt_len(m);
            r.data_off = m->data_off;
            r.nb_segs = m->nb_segs;
            r.wire_length = wire_length(m, fields_.wire);
            r.sequence = packet_sequence(m, fields_.seq);
            r.packet_type = m->packet_type;
            uint64_t capture = 0;
            const bool captured = capture_ns(m, fields_.capture, capture);
            if (m->tx_offload != 0 || d.sampled || captured) {
                Extra& x = area_->extra[s];
                x.tx_offload = m->tx_offload;
                x.entry_tsc = d.sampled ? packet_tsc(m, fields_.entry) : 0;
                x.capture_ns = capture;
                r.flags = kLentExtra | (captured ? kLentCaptureTime : 0);
            }
            put_record(area_->slots[s], r);
            ++packets;
            bytes += r.bytes;
        }
        if (p == written_) return flushed;
        written_ = p;
        count_passed(packets, bytes);
        return true;
    }
    // Frees the mbufs the receiving rank gave back, oldest slot first: up to its count of
    // records given back, and past it by each slot's `returned` once this end waits for its
    // last loans (the receiving end stops counting at the end record) or is nearly out of
    // slots. Reading the slots' counts while packets flow would pull their lines away from the
    // receiving rank's free callbacks, for each packet.
    bool reclaim() {
        const uint64_t counted = area_->given_back.load(std::memory_order_acquire);
        const bool by_slot = end_sent_ || giving_back() || written_ - reclaimed_ + 2 * kBurstMax > kSlots;
        const uint64_t taken = by_slot ? area_->taken.load(std::memory_order_acquire) : counted;
        rte_mbuf* back[kBurstMax];
        unsigned k = 0;
        uint64_t r = reclaimed_;
        for (; r < taken; ++r) {
            const uint32_t s = static_cast<uint32_t>(r & (kSlots - 1));
            rte_mbuf* m = owned_[s];
            if (m != nullptr) {
                if (r >= counted && area_->returned[s].load(std::memory_order_acquire) != expect_[s]) break;
                owned_[s] = nullptr;
                back[k++] = m;
                if (k == kBurstMax) {
                    give_back(back, k);
                    k = 0;
                }
            }
        }
        give_back(back, k);
        const bool moved = r != reclaimed_;
        reclaimed_ = r;
        return moved;
    }

    // Lent mbufs come back as they left (direct, one reference, checked when lent; the
    // receiving rank writes nothing in their headers), so a single segment goes straight into
    // its pool, without rte_pktmbuf_free's per-mbuf checks. Chains take the usual way.
    static void give_back(rte_mbuf** m, unsigned n) {
        for (unsigned i = 0; i < n;) {
            if (m[i]->nb_segs != 1) {
                free_packet(m[i++]);
                continue;
            }
            rte_mempool* mp = m[i]->pool;
            unsigned j = i + 1;
            while (j < n && m[j]->pool == mp && m[j]->nb_segs == 1) ++j;
            release_to_pool(m + i, j - i);  // after the last read of these mbufs
            rte_mempool_put_bulk(mp, reinterpret_cast<void**>(m + i), j - i);
            i = j;
        }
    }

    LinkArea* area_;
    std::span<std::byte> segment_;
    Channel<PacketDesc>* in_;
    rte_mempool* pool_;
    uint16_t buf_len_;  // of the mbufs it lends: its pools'
    RankLinkFields fields_;
    PacketDesc held_[kBurstMax];
    uint32_t at_ = 0, held_n_ = 0;  // held_[at_, held_n_) wait for slots
    uint64_t written_ = 0;          // records written into slots
    uint64_t published_ = 0;        // of them, published (LinkArea::published)
    uint64_t reclaimed_ = 0;        // of them, taken and (packets) given back
    rte_mbuf* owned_[kSlots] = {};  // per slot: the mbuf lent (nullptr: a hole, the end)
    // Per slot: the segments lent through it so far. `returned` counts up to it (never reset,
    // so only the receiving rank writes that line; it wraps as this does).
    uint32_t expect_[kSlots] = {};
    bool end_sent_ = false;
    bool done_ = false;
};

class SharedReceiveTask final : public Task {
public:
    SharedReceiveTask(LinkArea* area, std::byte* segment, uintptr_t sender_base, Channel<PacketDesc>* out, MbufPool& headers)
        : area_(area), segment_(segment), sender_base_(sender_base), out_(out), headers_(headers.get()),
          quiet_tsc_(static_cast<uint64_t>(kQuietLinkSeconds * static_cast<double>(rte_get_tsc_hz()))),
          last_tsc_(rte_rdtsc()) {}

    bool poll() override {
        bool moved = count_given_back();
        if (held_.pending()) {  // what the next node had no room for last time
            if (!held_.hand_on(out_)) return moved || held_.at > 0;
            moved = true;
        }
        if (ended_) {
            out_->close();
            done_ = true;
            return true;
        }
        const uint64_t pub = area_->published.load(std::memory_order_acquire);
        if (pub == next_) {
            set_waits_unrung(rte_rdtsc() - last_tsc_ < quiet_tsc_);
            return moved;
        }
        last_tsc_ = rte_rdtsc();
        if (!take(static_cast<uint32_t>(std::min<uint64_t>(pub - next_, kBurstMax)))) {
            set_waits_unrung(true);  // headers come back as the next nodes free packets: nothing rings
            return moved;
        }
        // The next burst's records, while this one moves on.
        if (pub > next_) prefetch_records(next_, std::min<uint64_t>(pub, next_ + kBurstMax));
        held_.hand_on(out_);
        return true;
    }
    bool done() const override { return done_; }
    // Frees the burst in hand and ends the output; goes on taking what the sender lends, giving
    // each packet straight back (counted as this failure's drops), until the end record, so the
    // sender's pool comes back whole. Cut short, it gives back what was published by then and
    // ends.
    bool poll_failed() override {
        held_.drop([this](const PacketDesc& d) { drop_after_failure(d); });
        if (!out_->closed()) out_->close();
        if (ended_) {
            end_after_failure();
            return true;
        }
        set_waits_unrung(true);
        const uint64_t pub = area_->published.load(std::memory_order_acquire);
        if (pub == next_ && !cut()) return false;
        uint64_t dropped = 0;
        for (; next_ < pub && !ended_; ++next_) {
            const uint32_t s = static_cast<uint32_t>(next_ & (kSlots - 1));
            const Record& r = area_->slots[s];
            if ((r.flags & kLentEnd) != 0) ended_ = true;
            else if ((r.flags & kLentHole) == 0) {
                lent_[s] += r.nb_segs;
                area_->returned[s].fetch_add(r.nb_segs, std::memory_order_release);
                ++dropped;
            }
        }
        area_->taken.store(next_, std::memory_order_release);
        count_given_back();
        count_failure_drops(dropped);
        if (ended_ || cut()) end_after_failure();
        return true;
    }

private:
    // Advances the count of records whose packets all came back (each slot's `returned` at
    // what was lent through it), oldest first, and publishes it in one release store: the
    // free callbacks' releases, acquired here, come before it for the sender's acquire.
    bool count_given_back() {
        uint64_t r = given_;
        while (r < next_ && area_->returned[r & (kSlots - 1)].load(std::memory_order_acquire) == lent_[r & (kSlots - 1)]) ++r;
        if (r == given_) return false;
        given_ = r;
        area_->given_back.store(r, std::memory_order_release);
        return true;
    }
    // The lines holding records [from, to), `to` no further than what is published (a line's
    // other record may still be streamed in: the sender's store then takes the line back).
    void prefetch_records(uint64_t from, uint64_t to) const {
        constexpr uint64_t kPerLine = RTE_CACHE_LINE_SIZE / sizeof(Record);
        for (uint64_t q = from & ~(kPerLine - 1); q < to; q += kPerLine) rte_prefetch0(&area_->slots[q & (kSlots - 1)]);
    }
    // Attaches one lent segment (at `off` in the sender's segment) to header `h`, counted back
    // through `slot` by way of `shinfo` (the slot's for a head, the segment's LoanTag after it).
    void attach(rte_mbuf* h, uint64_t off, uint32_t slot, rte_mbuf_ext_shared_info* shinfo, uint16_t data_off,
                uint16_t data_len, uint16_t buf_len) {
        shinfo->free_cb = loan_returned;
        shinfo->fcb_opaque = &area_->returned[slot];
        rte_mbuf_ext_refcnt_set(shinfo, 1);
        rte_pktmbuf_attach_extbuf(h, segment_ + off + sizeof(rte_mbuf) + kLoanPriv, RTE_BAD_IOVA, buf_len, shinfo);
        h->data_off = data_off;
        h->data_len = data_len;
    }
    rte_mbuf_ext_shared_info* segment_tag(uint64_t off) {
        return &reinterpret_cast<LoanTag*>(segment_ + off + sizeof(rte_mbuf))->shinfo;
    }
    // The next `n` records into the held burst; false, taking nothing, when the header pool
    // cannot give their headers now.
    bool take(uint32_t n) {
        rte_mbuf* hdr[kMaxHeaders];
        unsigned need = 0;
        uint32_t fit = 0;  // records whose segments fit in hdr
        prefetch_records(next_, next_ + n);  // streamed to memory: their misses overlap
        for (; fit < n; ++fit) {
            const Record& r = area_->slots[(next_ + fit) & (kSlots - 1)];
            const unsigned segs = (r.flags & (kLentHole | kLentEnd)) == 0 ? r.nb_segs : 0;
            if (need + segs > kMaxHeaders) break;
            need += segs;
            // attach() writes the line: fetch it for writing.
            tp::detail::prefetch_for_write(&area_->heads[(next_ + fit) & (kSlots - 1)]);
        }
        if (fit == 0) throw std::runtime_error("link between ranks: a packet of more than " + std::to_string(kMaxHeaders) + " segments");
        n = fit;
        unsigned k = 0;
        if (need != 0 && !alloc_packets(headers_, hdr, need)) return false;
        const uint64_t now = rte_rdtsc();
        const uint16_t buf_len = area_->buf_len;
        uint64_t packets = 0, bytes = 0;
        held_.b.n = 0;
        uint32_t i = 0;
        for (; i < n; ++i) {
            const uint32_t s = static_cast<uint32_t>((next_ + i) & (kSlots - 1));
            const Record& r = area_->slots[s];
            if ((r.flags & kLentEnd) != 0) {
                ended_ = true;
                ++i;
                break;
            }
            if ((r.flags & kLentHole) != 0) {
                held_.b.d[held_.b.n++] = PacketDesc{nullptr, r.flow_hash, 0, 0, 0};
                continue;
            }
            rte_mbuf* head = hdr[k++];
            lent_[s] += r.nb_segs;
            const uint64_t off = uint64_t{r.mbuf} * RTE_CACHE_LINE_SIZE;
            attach(head, off, s, &area_->heads[s], r.data_off, static_cast<uint16_t>(r.nb_segs == 1 ? r.bytes : 0), buf_len);
            if (r.nb_segs > 1) chain(head, off, r.nb_segs, s, hdr, k);
            head->pkt_len = r.bytes;
            head->packet_type = r.packet_type;
            wire_length(head, fields_.wire) = r.wire_length;
            packet_sequence(head, fields_.seq) = r.sequence;
            if ((r.flags & kLentExtra) != 0) {
                const Extra& x = area_->extra[s];
                head->tx_offload = x.tx_offload;
                if (r.sampled != 0) packet_tsc(head, fields_.entry) = x.entry_tsc;
                if ((r.flags & kLentCaptureTime) != 0) set_capture_ns(head, fields_.capture, x.capture_ns);
            }
            packet_tsc(head, fields_.handoff) = now;  // the next node's queue wait starts here
            // An attached mbuf is not simple (descriptor_length): stages read its length.
            PacketDesc d(head, r.flow_hash, PacketDesc::kLengthSaturated, r.port, r.type);
            d.sampled = r.sampled;
            held_.b.d[held_.b.n++] = d;
            bytes += r.bytes;
            ++packets;
        }
        next_ += i;
        area_->taken.store(next_, std::memory_order_release);  // the records are read
        held_.at = 0;
        count_passed(packets, bytes);
        return true;
    }
    // A chain's segments after the head, read from the sender's mbufs (their links are the
    // sender's addresses), each attached to one of `hdr` from `k` on.
    void chain(rte_mbuf* head, uint64_t head_off, uint16_t nb_segs, uint32_t slot, rte_mbuf** hdr, unsigned& k) {
        const auto* seg = reinterpret_cast<const rte_mbuf*>(segment_ + head_off);
        head->data_len = seg->data_len;
        rte_mbuf* cur = head;
        for (uint16_t i = 1; i < nb_segs; ++i) {
            const uint64_t off = reinterpret_cast<uintptr_t>(seg->next) - sender_base_;
            seg = reinterpret_cast<const rte_mbuf*>(segment_ + off);
            rte_mbuf* h = hdr[k++];
            attach(h, off, slot, segment_tag(off), seg->data_off, seg->data_len, seg->buf_len);
            cur->next = h;
            cur = h;
        }
        head->nb_segs = nb_segs;
    }

    LinkArea* area_;
    std::byte* segment_;
    uintptr_t sender_base_;
    Channel<PacketDesc>* out_;
    rte_mempool* headers_;      // data-less mbufs the lent buffers are attached to
    const uint64_t quiet_tsc_;  // kQuietLinkSeconds in TSC cycles
    uint64_t last_tsc_;         // when the last record came
    RankLinkFields fields_;
    uint64_t next_ = 0;         // the next record to read
    uint64_t given_ = 0;        // records given back (LinkArea::given_back)
    // Per slot: the segments lent through it so far, as the sender's expect_ counts them.
    uint32_t lent_[kSlots] = {};
    HeldBurst held_;
    bool ended_ = false;        // the end record came
    bool done_ = false;
};

}  // namespace

size_t shared_link_area_bytes() { return sizeof(LinkArea); }

uint16_t shared_link_mbuf_priv() { return kLoanPriv; }

void init_shared_link_area(void* area) {
    auto* a = new (area) LinkArea;
    a->published.store(0, std::memory_order_relaxed);
    a->taken.store(0, std::memory_order_relaxed);
    a->given_back.store(0, std::memory_order_relaxed);
    for (auto& r : a->returned) r.store(0, std::memory_order_relaxed);
}

std::unique_ptr<Task> make_shared_send(void* area, std::span<std::byte> segment, Channel<PacketDesc>* in, MbufPool& pool) {
    return std::make_unique<SharedSendTask>(static_cast<LinkArea*>(area), segment, in, pool);
}

std::unique_ptr<Task> make_shared_receive(void* area, std::byte* segment, uintptr_t sender_base, Channel<PacketDesc>* out,
                                          MbufPool& headers) {
    return std::make_unique<SharedReceiveTask>(static_cast<LinkArea*>(area), segment, sender_base, out, headers);
}

}  // namespace tp
