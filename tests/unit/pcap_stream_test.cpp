// The `pcap` source on captures bigger than its preload budget: streamed by a reader thread and
// replayed exactly, paced across loops, every buffer given back at a close mid-replay, and the
// reader's and the replay's wake-ups each bounded in time.
#include "tests/support/pcap_source_fixture.hpp"

namespace tp {
namespace {

using namespace pcap_test;  // the shared fixture and its helpers

// ---- big captures: preload or stream ---------------------------------------------------------

// A capture of `count` Ethernet frames of varied lengths (60 to 1514 bytes, every 97th a
// 9000-byte jumbo that chains), written with libpcap.
std::string write_generated(const std::string& path, uint32_t count) {
    pcap_t* dead = pcap_open_dead(DLT_EN10MB, 65535);
    pcap_dumper_t* out = pcap_dump_open(dead, path.c_str());
    std::string bytes(9000, '\0');
    for (uint32_t i = 0; i < count; ++i) {
        const uint32_t len = i % 97 == 96 ? 9000 : 60 + (i * 7919u) % 1455;
        for (uint32_t k = 0; k < len; ++k) bytes[k] = static_cast<char>(i + k * 31);
        pcap_pkthdr h{};
        h.ts.tv_sec = 1000 + i / 1000;
        h.ts.tv_usec = static_cast<suseconds_t>(i % 1000 * 1000);
        h.caplen = h.len = len;
        pcap_dump(reinterpret_cast<u_char*>(out), &h, reinterpret_cast<const u_char*>(bytes.data()));
    }
    pcap_dump_close(out);
    pcap_close(dead);
    return path;
}

TEST_F(PcapSourceTest, ACaptureLargerThanItsPreloadBudgetIsStreamedAndReplaysExactly) {
    // 6000 frames, about 5 MB: with a 1 MiB budget the source holds a fraction of it at a time.
    const std::string path = write_generated(dir_ + "/big.pcap", 6000);
    const CaptureContents libpcap = read_with_libpcap(path);
    ASSERT_EQ(libpcap.frames.size(), 6000u);
    PcapSource src(pcap_params({{"file", path}, {"loop", "2"}, {"preload_mb", "1"}}));
    MbufPool pool = app_pool();
    StageEnv env{&pool, "src", 0};
    src.open(env);
    ASSERT_TRUE(src.streaming()) << "auto must stream a capture bigger than its budget";
    EXPECT_LT(uint64_t(src.template_pool_capacity()) * CaptureStream::kSegmentRoom, fs::file_size(path) / 2)
        << "the stream's buffers should hold a fraction of the capture";
    const Replay r = drain(src, true);
    EXPECT_EQ(r.packets, 2 * libpcap.frames.size());
    EXPECT_EQ(r.bytes, 2 * libpcap.bytes);
    ASSERT_EQ(r.frames.size(), 2 * libpcap.frames.size());
    EXPECT_TRUE(std::equal(libpcap.frames.begin(), libpcap.frames.end(), r.frames.begin()))
        << "the first pass differs from the file";
    EXPECT_TRUE(std::equal(libpcap.frames.begin(), libpcap.frames.end(), r.frames.begin() + 6000))
        << "the second pass differs from the file";
    EXPECT_EQ(pool.available(), pool.capacity());
    src.close();
    EXPECT_EQ(src.template_pool_available(), src.template_pool_capacity());
}

TEST_F(PcapSourceTest, AutoPreloadsACaptureThatFitsItsBudgetAndPreloadChoosesEitherWay) {
    const std::string path = pcap_path("pcpp__example.pcap");
    MbufPool pool = app_pool();
    StageEnv env{&pool, "src", 0};
    for (const auto& [preload, budget, streams] :
         {std::tuple{"auto", "64", false}, std::tuple{"auto", "0", false}, std::tuple{"false", "64", true},
          std::tuple{"true", "1", false}}) {
        PcapSource src(pcap_params({{"file", path}, {"preload", preload}, {"preload_mb", budget}}));
        src.open(env);
        EXPECT_EQ(src.streaming(), streams) << "preload " << preload << ", preload_mb " << budget;
        src.close();
    }
}

TEST_F(PcapSourceTest, AStreamPacedByItsTimestampsKeepsTheGapsAcrossLoops) {
    // Two frames 100 ms apart, replayed twice: 200 ms, the loop boundary being a zero gap.
    const std::string path = write("gap.pcap", pcap_bytes({{5, 0, frame(60, 'a')}, {5, 100000, frame(60, 'b')}}));
    PcapSource src(pcap_params({{"file", path}, {"loop", "2"}, {"speed", "1"}, {"preload", "false"}}));
    MbufPool pool = app_pool(511);
    StageEnv env{&pool, "src", 0};
    src.open(env);
    const Replay r = drain(src, false, std::chrono::seconds(5));
    EXPECT_EQ(r.packets, 4u);
    expect_paced(r, 0.2);
    src.close();
}

TEST_F(PcapSourceTest, ClosingAStreamMidReplayGivesEveryBufferBack) {
    const std::string path = write_generated(dir_ + "/mid.pcap", 3000);
    PcapSource src(pcap_params({{"file", path}, {"loop", "0"}, {"preload", "false"}, {"preload_mb", "1"}}));
    MbufPool pool = app_pool();
    StageEnv env{&pool, "src", 0};
    src.open(env);
    uint64_t packets = 0;
    Burst b;
    while (packets < 10000) {
        b.n = 0;
        ASSERT_NE(src.produce(b), SourceStatus::Done) << "a looping stream never ends by itself";
        packets += b.n;
        for (const PacketDesc& d : b) rte_pktmbuf_free(d.mbuf);
    }
    src.close();
    EXPECT_EQ(src.template_pool_available(), src.template_pool_capacity());
    EXPECT_EQ(pool.available(), pool.capacity());
    b.n = 0;
    EXPECT_EQ(src.produce(b), SourceStatus::Done) << "a closed source emits nothing";
}

TEST_F(PcapSourceTest, AStreamsRefillWakesTheReaderAndTheReplayEachTimeWithoutATimeout) {
    // The consumer replays as a tile does (parked on its doorbell while nothing is ready), but
    // takes records only once the reader has used every template and must wait for some back.
    // So each refill has both waits: the reader's for room (a consume() wakes it) and the
    // consumer's for records (the reader rings its doorbell). A lost wake-up in either
    // direction shows as a wait ended by its timeout: the reader's with the room already there
    // (reader_wait_timeouts), the consumer's 20 ms park that nobody rang (park_timeouts). (The
    // consumer may find records ready each time it looks, when the reader runs first.)
    constexpr uint32_t kRecords = 4000;
    const std::string path = write_generated(dir_ + "/refill.pcap", kRecords);
    struct Waits {
        uint64_t reader = 0, reader_timeouts = 0, parks = 0, park_timeouts = 0;
        bool few_timeouts() const { return reader_timeouts * 4 <= reader && park_timeouts * 4 <= parks; }
    };
    const auto replay = [&] {
        Doorbell bell;
        CaptureStreamSpec spec;
        spec.path = path;
        spec.app_segments_max = 8;  // the jumbo frames chain
        spec.consumer_bell = &bell;
        CaptureStream stream(spec);
        const uint32_t most_a_record_takes = 5;  // 9000 bytes in 2048-byte templates
        uint64_t consumed = 0;
        for (;;) {
            const uint32_t ready = stream.ready(stream.pool_capacity());
            const bool all_read = consumed + ready == kRecords;
            if (ready != 0 && (stream.pool_available() < most_a_record_takes || all_read)) {
                // Out of templates: give them back only once the reader waits for them (or has
                // read the whole file).
                for (const uint64_t waits = stream.reader_waits();
                     stream.reader_waits() == waits && consumed + stream.ready(stream.pool_capacity()) < kRecords;)
                    std::this_thread::yield();
                const uint32_t all = stream.ready(stream.pool_capacity());  // the reader waits: nothing comes now
                stream.consume(all);
                consumed += all;
                continue;
            }
            if (stream.drained()) break;
            bell.prepare_park();
            if (stream.ready(stream.pool_capacity()) != ready || stream.drained()) {
                bell.cancel_park();
                continue;
            }
            bell.park(std::chrono::milliseconds(20));
        }
        EXPECT_EQ(consumed, kRecords);
        EXPECT_GE(stream.reader_waits(), 4u) << "a refill per pool of templates (511 of them)";
        stream.stop();
        EXPECT_EQ(stream.pool_available(), stream.pool_capacity());
        return Waits{stream.reader_waits(), stream.reader_wait_timeouts(), bell.parks(), bell.park_timeouts()};
    };
    // Without the wake-ups every wait ends by its timeout, each time; a loaded machine (a
    // sanitizer build beside other tests on 2 CPUs) descheduling a thread past a timeout now
    // and then makes a few. So up to three replays, and the test fails only if none is clean.
    Waits w;
    for (int attempt = 0; attempt < 3; ++attempt) {
        w = replay();
        if (HasFailure() || w.few_timeouts()) break;
    }
    EXPECT_LE(w.reader_timeouts * 4, w.reader)
        << w.reader_timeouts << " of " << w.reader << " reader waits found the room there at their timeout, in each of 3 replays";
    EXPECT_LE(w.park_timeouts * 4, w.parks)
        << w.park_timeouts << " of " << w.parks << " consumer parks timed out, in each of 3 replays: the reader's rings were lost";
}

TEST_F(PcapSourceTest, AStreamsReaderAnnouncesItsRecordsBeforeItWaitsForTemplates) {
    // Records of 200000 bytes take 98 templates each: the pool (511) holds 5, fewer than the
    // reader's announcement every 16 records, so each refill's records are announced only by
    // the ring the reader owes before it waits for templates. The consumer parks for 2 s
    // whenever nothing is ready: without that ring each refill would sleep it out.
    constexpr uint32_t kRecords = 12, kBytes = 200000;
    const std::string path = dir_ + "/huge.pcap";
    {
        pcap_t* dead = pcap_open_dead(DLT_EN10MB, 262144);
        pcap_dumper_t* out = pcap_dump_open(dead, path.c_str());
        const std::string bytes(kBytes, '\x5a');
        for (uint32_t i = 0; i < kRecords; ++i) {
            pcap_pkthdr h{};
            h.ts.tv_sec = 1000 + i;
            h.caplen = h.len = kBytes;
            pcap_dump(reinterpret_cast<u_char*>(out), &h, reinterpret_cast<const u_char*>(bytes.data()));
        }
        pcap_dump_close(out);
        pcap_close(dead);
    }
    Doorbell bell;
    CaptureStreamSpec spec;
    spec.path = path;
    spec.app_segments_max = 128;  // 200000 bytes in 2048-byte mbufs
    spec.consumer_bell = &bell;
    CaptureStream stream(spec);
    ASSERT_LT(stream.pool_capacity() / 98, 16u) << "the pool must fill before the reader's first regular announcement";
    uint32_t consumed = 0;
    const auto t0 = std::chrono::steady_clock::now();
    while (!stream.drained()) {
        if (const uint32_t n = stream.ready(stream.pool_capacity()); n != 0) {
            stream.consume(n);
            consumed += n;
            continue;
        }
        bell.prepare_park();
        if (stream.ready(1) != 0 || stream.drained()) {
            bell.cancel_park();
            continue;
        }
        bell.park(std::chrono::seconds(2));
    }
    const auto took = std::chrono::steady_clock::now() - t0;
    EXPECT_EQ(consumed, kRecords);
    EXPECT_EQ(bell.park_timeouts(), 0u) << "the consumer slept out a 2 s park: a refill's records went unannounced";
    EXPECT_LT(took, std::chrono::milliseconds(1500));
    stream.stop();
    EXPECT_EQ(stream.pool_available(), stream.pool_capacity());
    fs::remove(path);
}

TEST_F(PcapSourceTest, AStopRequestWhileLoadingEndsTheLoadAndTheReplay) {
    // More records than are read between two looks at the stop request.
    const std::string path = write_generated(dir_ + "/stopped.pcap", 9000);
    MbufPool pool = app_pool();
    StageEnv env{&pool, "src", 0};
    for (const char* preload : {"true", "false"}) {
        SCOPED_TRACE(std::string("preload ") + preload);
        PcapSource src(pcap_params({{"file", path}, {"preload", preload}}));
        request_stop();
        src.open(env);
        clear_stop_request();
        EXPECT_EQ(src.template_packets(), 0u) << "the load went on after the request";
        Burst b;
        EXPECT_EQ(src.produce(b), SourceStatus::Done);
        EXPECT_EQ(b.n, 0);
        src.close();
        EXPECT_EQ(src.template_pool_available(), src.template_pool_capacity());
        EXPECT_EQ(pool.available(), pool.capacity());
    }
}

}  // namespace
}  // namespace tp
