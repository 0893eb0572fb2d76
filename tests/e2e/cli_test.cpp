// The `tilepipe` command as a user drives it: the shipped configs run, every shared capture
// replays with tcpdump's packet count or is refused with a clear error, and bad input gets a
// located message and a non-zero exit before anything starts.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>

#include "tests/support/eal_fixture.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/process.hpp"

namespace tp::test {
namespace {

namespace fs = std::filesystem;

TEST(Cli, DefaultAppReportsThroughputAndAccountsForEveryPacket) {
    CommandResult r;
    const nlohmann::json j = run_json("run conf/default.yaml --set synth.count=200k", &r);
    ASSERT_FALSE(j.is_discarded());
    EXPECT_EQ(j["app"], "default");
    EXPECT_EQ(j["packets"], 200000);
    EXPECT_EQ(j["bytes"], 200000 * 64);
    EXPECT_GT(j["mpps"].get<double>(), 0.0);
    EXPECT_GT(j["gbps_l1"].get<double>(), j["gbps_l2"].get<double>());
    EXPECT_EQ(j["drops"], 0);
    EXPECT_EQ(j["unaccounted"], 0);
    EXPECT_TRUE(j["pools_full"].get<bool>());
    ASSERT_EQ(j["stages"].size(), 3u);
    EXPECT_EQ(j["stages"][2]["name"], "drop");
    EXPECT_EQ(j["stages"][2]["out"], 200000);
    EXPECT_NE(r.out.find("b/s L2"), std::string::npos);  // the human table (Gb/s, or Mb/s on a busy machine)
}

// Link types the pcap source reads (normalising them to Ethernet), as tcpdump names them.
const std::set<std::string> kReplayedLinkTypes = {"EN10MB", "LINUX_SLL", "LINUX_SLL2", "RAW",  "IPV4",
                                                  "IPV6",   "NULL",      "LOOP",       "PPP", "IEEE802_11",
                                                  "IEEE802_11_RADIO", "PPI"};

// tshark's frame count, where tcpdump stops at a pcapng interface libpcap cannot take.
long tshark_frames(const std::string& file) {
    return std::stol("0" + run_command("tshark -n -r '" + file + "' -T fields -e frame.number 2>/dev/null | wc -l").out);
}

uint64_t capture_field(const nlohmann::json& j, const char* key) { return j["capture"][key].get<uint64_t>(); }

// Every shared capture replays what tcpdump counts (tshark's count where tcpdump stops early
// at a pcapng interface): replayed + skipped = that count, nothing unaccounted, pools full.
// A damaged record ends the replay (capture.errors), and --strict refuses the file naming the
// record. Only files whose header is not a capture's are refused, on one line naming the file.
// A port replaying a capture cut inside a record (net_pcap stops there, counting ierrors and
// saying nothing of where): the run names the file and the record.
TEST(Cli, APortReplayingACutCaptureNamesWhereItWasCut) {
    const std::string whole = read_file(pcaps_dir() + "/pcpp__DnsPackets.pcap");
    const std::string cut = tmp_path("cut.pcap");
    std::ofstream(cut, std::ios::binary) << whole.substr(0, 1000);
    const CommandResult r = tilepipe("run conf/rss.yaml --quiet --set rx.port.file=" + cut);
    fs::remove(cut);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(std::regex_search(r.err, std::regex(cut + ": record [0-9]+: truncated dump file; .*; the port replayed the "
                                                          "records before it, the rest counted as ierrors\n")))
        << r.err;
}

TEST(Cli, EverySharedCaptureReplaysWithTcpdumpsCountOrIsRefusedClearly) {
    int replayed = 0;
    std::set<std::string> replayed_links;
    for (const auto& entry : fs::directory_iterator(pcaps_dir())) {
        const std::string file = entry.path().string();
        if (entry.path().extension() != ".pcap" && entry.path().extension() != ".pcapng") continue;
        SCOPED_TRACE(file);
        const TcpdumpView td = tcpdump_view(file);
        const CommandResult tdc = run_command("tcpdump -r '" + file + "' -w /dev/null");
        const bool new_interface = tdc.err.find("different from the type of the first interface") != std::string::npos;
        const bool cut_short = tdc.err.find("truncated dump file") != std::string::npos;
        const bool damaged = td.status != 0 && !td.link_type.empty() && !new_interface && !cut_short;
        const long reference = new_interface ? tshark_frames(file) : td.packets;
        const std::string json = tmp_path("cap.json");
        const CommandResult r = tilepipe("run conf/forward.yaml --pcap '" + file + "' --loop 2 --quiet --json " + json);
        ASSERT_LT(r.status, 128) << "crashed: " << r.err;
        if (td.link_type.empty()) {
            // Not a capture libpcap (or the pcapng reader) opens: a mistake in the command line,
            // found before anything starts.
            EXPECT_EQ(r.status, 2) << r.err;
            EXPECT_NE(r.err.find(file), std::string::npos) << "error does not name the file: " << r.err;
            EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
            continue;
        }
        ASSERT_EQ(r.status, 0) << "tcpdump reads it (" << td.packets << " packets) but tilepipe refused: " << r.err;
        const nlohmann::json j = nlohmann::json::parse(read_file(json));
        EXPECT_EQ(j["packets"].get<long>() / 2 + long(capture_field(j, "skipped_records")), reference)
            << j["capture"].dump();
        EXPECT_EQ(j["packets"].get<long>() % 2, 0);
        EXPECT_EQ(j["unaccounted"], 0);
        EXPECT_TRUE(j["pools_full"].get<bool>());
        EXPECT_EQ(capture_field(j, "errors"), damaged ? 1u : 0u);
        EXPECT_EQ(kReplayedLinkTypes.count(td.link_type), 1u) << "replayed link type " << td.link_type;
        replayed_links.insert(td.link_type);
        ++replayed;
        if (damaged) {
            const CommandResult strict = tilepipe("run conf/forward.yaml --pcap '" + file + "' --strict --quiet");
            EXPECT_EQ(strict.status, 1) << strict.err;
            EXPECT_NE(strict.err.find(file + ": record " + std::to_string(td.packets + 1) + ": "), std::string::npos)
                << strict.err;
            // validate --strict refuses what run --strict refuses, with the same record.
            const CommandResult checked = tilepipe("validate conf/forward.yaml --pcap '" + file + "' --strict");
            EXPECT_EQ(checked.status, 2) << checked.out;
            EXPECT_NE(checked.err.find(file + ": record " + std::to_string(td.packets + 1) + ": "), std::string::npos)
                << checked.err;
        } else {
            EXPECT_EQ(tilepipe("validate conf/forward.yaml --pcap '" + file + "' --strict").status, 0) << file;
        }
        fs::remove(json);
    }
    EXPECT_GE(replayed, 35);
    // The shared captures hold these link types; LOOP and IPV6 are written by hand below.
    EXPECT_EQ(replayed_links, (std::set<std::string>{"EN10MB", "LINUX_SLL", "LINUX_SLL2", "RAW", "IPV4", "NULL",
                                                      "IEEE802_11_RADIO", "PPP"}));
}

// A one-record capture of link type `dlt` holding `frame`, written byte by byte (pcap 2.4,
// little-endian, microseconds).
std::string hand_written_capture(const std::string& name, uint32_t dlt, const std::vector<uint8_t>& frame) {
    std::vector<uint8_t> b;
    const auto le32 = [&](uint32_t v) {
        for (int i = 0; i < 4; ++i) b.push_back(uint8_t(v >> (8 * i)));
    };
    le32(0xa1b2c3d4);
    b.push_back(2), b.push_back(0), b.push_back(4), b.push_back(0);  // version 2.4
    le32(0), le32(0), le32(65535), le32(dlt);
    le32(1), le32(0), le32(uint32_t(frame.size())), le32(uint32_t(frame.size()));
    b.insert(b.end(), frame.begin(), frame.end());
    const std::string path = tmp_path(name);
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
    return path;
}

TEST(Cli, LoopbackAndIpv6OnlyCapturesReplayAsEthernetFrames) {
    // IPv4/UDP, 28 bytes, no payload (checksums are not looked at by a replay).
    const std::vector<uint8_t> v4 = {0x45, 0, 0, 28, 0, 1, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
                                     0x30, 0x39, 0, 53, 0, 8, 0, 0};
    // IPv6/UDP, 48 bytes.
    std::vector<uint8_t> v6 = {0x60, 0, 0, 0, 0, 8, 17, 64};
    for (int i = 0; i < 32; ++i) v6.push_back(i == 15 || i == 31 ? 1 : (i % 16 == 0 ? 0xfe : (i % 16 == 1 ? 0x80 : 0)));
    v6.insert(v6.end(), {0x30, 0x39, 0, 53, 0, 8, 0, 0});
    std::vector<uint8_t> loop = {0, 0, 0, 2};  // LOOP: the address family in network order
    loop.insert(loop.end(), v4.begin(), v4.end());
    const struct {
        const char* name;
        uint32_t dlt;
        std::vector<uint8_t> frame;
        long ip_bytes;
    } cases[] = {{"loop.pcap", 108, loop, 28}, {"ipv6.pcap", 229, v6, 48}};
    for (const auto& c : cases) {
        SCOPED_TRACE(c.name);
        const std::string cap = hand_written_capture(c.name, c.dlt, c.frame);
        const TcpdumpView td = tcpdump_view(cap);
        EXPECT_EQ(td.status, 0);
        EXPECT_EQ(td.packets, 1);
        const std::string json = tmp_path("hand.json");
        const CommandResult r = tilepipe("run conf/forward.yaml --pcap '" + cap + "' --loop 3 --quiet --json " + json);
        ASSERT_EQ(r.status, 0) << r.err;
        const nlohmann::json j = nlohmann::json::parse(read_file(json));
        EXPECT_EQ(j["packets"], 3);
        EXPECT_EQ(j["bytes"].get<long>(), 3 * (14 + c.ip_bytes)) << "a 14-byte Ethernet header in place of the link header";
        fs::remove(cap);
        fs::remove(json);
    }
}

TEST(Cli, GeneratedTrafficWrittenToPcapReadsBackInTcpdump) {
    const std::string out = tmp_path("gen.pcap");
    const nlohmann::json j = run_json("run conf/gen.yaml --set synth.count=5000 --set synth.size=imix --set out.file=" + out);
    EXPECT_EQ(j["packets"], 5000);
    const TcpdumpView td = tcpdump_view(out);
    EXPECT_EQ(td.status, 0);
    EXPECT_EQ(td.packets, 5000);
    EXPECT_EQ(td.link_type, "EN10MB");
    // And it replays through the capture source with the same count.
    const nlohmann::json back = run_json("run conf/forward.yaml --pcap " + out + " --loop 1");
    EXPECT_EQ(back["packets"], 5000);
    EXPECT_EQ(back["bytes"], j["bytes"]);
    fs::remove(out);
}

TEST(Cli, ConfigErrorsAreLocatedAndStopBeforeEal) {
    const std::string conf = tmp_path("bad.yaml");
    std::ofstream(conf) << "pipeline:\n  - stage: synth\n  - stage: frobnicate\n  - stage: drop\n";
    const CommandResult r = tilepipe("run " + conf);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err.rfind("tilepipe: " + conf + ":3:12: unknown stage 'frobnicate'", 0), 0u) << r.err;
    EXPECT_EQ(r.err.find("EAL"), std::string::npos) << "EAL started for a bad config";
    fs::remove(conf);
}

TEST(Cli, BadOverridesAndArgumentsExitNonZeroWithAMessage) {
    CommandResult r = tilepipe("run conf/default.yaml --set synth.count=many");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("--set synth.count=many: parameter 'count' expects an unsigned integer"), std::string::npos) << r.err;
    r = tilepipe("run conf/default.yaml --frobnicate");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("--frobnicate"), std::string::npos) << r.err;
    r = tilepipe("run /nonexistent.yaml");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("/nonexistent.yaml: cannot read app config"), std::string::npos) << r.err;
    r = tilepipe("run conf/forward.yaml --pcap /nonexistent.pcap");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("/nonexistent.pcap"), std::string::npos) << r.err;
    r = tilepipe("run conf/default.yaml --loop 3");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("--loop"), std::string::npos) << r.err;
}

TEST(Cli, LatencyOptionSetsTheRuleAndRefusesValuesThatDoNotParse) {
    for (const char* bad : {"sometimes", "'sample 0'", "'sample x'", "sample"}) {
        const CommandResult r = tilepipe(std::string("run conf/default.yaml --latency ") + bad);
        EXPECT_EQ(r.status, 2) << bad;
        std::string value = bad;
        value.erase(std::remove(value.begin(), value.end(), '\''), value.end());
        EXPECT_NE(r.err.find("--latency " + value + ": latency must be off, all or sample N"), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("got '" + value + "'"), std::string::npos) << r.err;
        EXPECT_EQ(r.err.find("EAL"), std::string::npos) << "EAL started for a bad --latency";
    }
    nlohmann::json j = run_json("run conf/default.yaml --set synth.count=6400 --latency all");
    EXPECT_EQ(j["latency_us"]["mode"], "all");
    EXPECT_EQ(j["latency_us"]["samples"], j["delivered"]);
    j = run_json("run conf/default.yaml --set synth.count=6400 --latency 'sample 100'");
    EXPECT_EQ(j["latency_us"]["samples"], 64);
    j = run_json("run conf/default.yaml --set synth.count=6400 --latency off");
    EXPECT_EQ(j["latency_us"]["samples"], 0);
    j = run_json("run conf/default.yaml --set synth.count=6400");  // the default: 1 in 64
    EXPECT_EQ(j["latency_us"]["samples"], 100);
}

TEST(Cli, ProgressLineAppearsOnLongRunsUnlessQuiet) {
    CommandResult r = tilepipe("run conf/default.yaml --set synth.count=0 --set synth.duration=2.6");
    EXPECT_EQ(r.status, 0) << r.err;
    // The rate's unit fits its size (Mpps, or kpps on a busy machine).
    EXPECT_NE(r.err.find("progress "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("pps"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("b/s"), std::string::npos) << r.err;
    r = tilepipe("run conf/default.yaml --set synth.count=0 --set synth.duration=2.6 --quiet");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err.find("pps"), std::string::npos) << r.err;
}

TEST(Cli, StagesListsEveryStageWithItsParameters) {
    const CommandResult r = tilepipe("stages");
    EXPECT_EQ(r.status, 0);
    for (const char* s : {"synth (source)", "pcap (source)", "parse (processor)", "pass (processor)",
                          "drop (sink)", "pcap_out (sink)"})
        EXPECT_NE(r.out.find(s), std::string::npos) << s;
    EXPECT_TRUE(std::regex_search(r.out, std::regex("\n    loop +uint 0-4294967295 +default 1 "))) << r.out;
    EXPECT_TRUE(std::regex_search(r.out, std::regex("\n    file +string +required ")));
}

TEST(Cli, EverySubcommandHasHelpAndValidateChecksWithoutRunning) {
    for (const char* sub : {"", "run ", "validate ", "stages "}) {
        const CommandResult r = tilepipe(std::string(sub) + "--help");
        EXPECT_EQ(r.status, 0) << sub;
        EXPECT_NE(r.out.find("Usage"), std::string::npos) << sub;
    }
    const CommandResult v = tilepipe("validate conf/default.yaml");
    EXPECT_EQ(v.status, 0) << v.err;
    EXPECT_EQ(v.out, "conf/default.yaml: ok: synth -> parse -> drop\n");
    // Farms and maps show as what they are: their workers and the chain each runs.
    const std::pair<const char*, const char*> shown[] = {
        {"conf/firewall.yaml", "src(pcap) -> parse -> fw=farm(4){acl -> flow_table} -> pcap_out"},
        {"conf/farm.yaml",
         "synth -> parse -> rtc=farm(4){pass -> pass_2(pass)} -> piped=farm(2){pipeline: pass_3(pass) -> pass_4(pass)} -> drop"},
        {"conf/map.yaml", "synth -> map(8){parse} -> drop"},
    };
    for (const auto& [conf, summary] : shown)
        EXPECT_EQ(tilepipe(std::string("validate ") + conf).out, std::string(conf) + ": ok: " + summary + "\n");
}

// Mistakes a first command line makes get a line that says what to do.
TEST(Cli, CommonMistakesSayWhatToDo) {
    // An unquoted --set value with spaces: the shell split it.
    CommandResult r = tilepipe("validate conf/filter.yaml --set filter.expr=tcp port 80");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("\nA --set value with spaces is one argument: quote it, --set 'filter.expr=tcp port 80'\n"),
              std::string::npos)
        << r.err;
    // A run report given as the config.
    const std::string report = tmp_path("report.json");
    ASSERT_EQ(tilepipe("run conf/default.yaml --set synth.count=10 --quiet --json " + report).status, 0);
    r = tilepipe("validate " + report);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "tilepipe: " + report + ": is a run report (tilepipe run --json), not an app config: the run was of "
                     "conf/default.yaml\n");
    fs::remove(report);
    // A file that is no shared library, given as a plugin: named as given, not by a descriptor.
    const std::string dir = tmp_path("plugins");
    fs::create_directories(dir);
    fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                             fs::perms::others_exec);
    std::ofstream(dir + "/notacap.pcap") << "not a library\n";
    r = tilepipe("validate conf/default.yaml --plugin " + dir + "/notacap.pcap");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("cannot be loaded as a shared library: " + dir + "/notacap.pcap"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("/proc/self/fd"), std::string::npos) << r.err;
    fs::remove_all(dir);
}

TEST(Cli, EveryShippedConfigValidatesAndRunsOnACapture) {
    const std::string cap = pcaps_dir() + "/pcpp__example.pcap";
    const long expected = tcpdump_view(cap).packets;
    int configs = 0;
    for (const std::string dir : {"conf", "conf/bench"}) {
        for (const auto& entry : fs::directory_iterator(source_root() + "/" + dir)) {
            if (entry.path().extension() != ".yaml") continue;
            const std::string conf = dir + "/" + entry.path().filename().string();
            SCOPED_TRACE(conf);
            // A half of a two-process pair waits for its peer: Apps.TheMemifPair... runs both.
            // An app across ranks runs under mpirun: Ranks.* (ranks_test.cpp) runs it.
            if (entry.path().stem().string().rfind("memif_", 0) == 0 || entry.path().stem().string().rfind("ranks_", 0) == 0) {
                EXPECT_EQ(tilepipe("validate " + conf).status, 0);
                continue;
            }
            if (read_file(entry.path().string()).find("\nbench: ") != std::string::npos) {
                // A benchmark's options (conf/mapvec.yaml): `run` points to `bench --config`.
                const CommandResult b = tilepipe("validate " + conf);
                EXPECT_EQ(b.status, 2);
                EXPECT_NE(b.err.find(conf + ":"), std::string::npos) << b.err;
                EXPECT_NE(b.err.find("--config " + conf), std::string::npos) << b.err;
                continue;
            }
            const CommandResult v = tilepipe("validate " + conf);
            EXPECT_EQ(v.status, 0) << v.err;
            // conf/rss.yaml has no single source: each of its 2 workers replays the capture
            // through its own queue of one port.
            const bool rss = conf == "conf/rss.yaml";
            const nlohmann::json j =
                run_json(rss ? "run " + conf + " --set port.file=" + cap : "run " + conf + " --pcap " + cap + " --loop 1");
            if (j.is_discarded()) continue;
            EXPECT_EQ(j["packets"].get<long>(), rss ? 2 * expected : expected);
            EXPECT_EQ(j["unaccounted"], 0);
            EXPECT_TRUE(j["pools_full"].get<bool>());
            ++configs;
        }
    }
    EXPECT_GE(configs, 6);
}

TEST(Cli, IdsAppWritesEachAlertToTheCaptureAndAsOneJsonLine) {
    const std::string cap = pcaps_dir() + "/zeek__vxlan-encapsulated-http.pcap";
    const std::string pcap = tmp_path("alerts.pcap"), jsonl = tmp_path("alerts.jsonl");
    const nlohmann::json j = run_json("run conf/ids.yaml --pcap " + cap + " --set pcap_out.file=" + pcap +
                                      " --set payload_match.alerts=" + jsonl);
    ASSERT_FALSE(j.is_discarded());
    long matched = -1;
    for (const auto& st : j["stages"])
        if (st["name"] == "payload_match") matched = st["out"].get<long>();
    EXPECT_GT(matched, 0);
    EXPECT_EQ(tcpdump_view(pcap).packets, matched);
    std::istringstream lines(read_file(jsonl));
    long n = 0;
    for (std::string line; std::getline(lines, line); ++n) {
        const nlohmann::json a = nlohmann::json::parse(line, nullptr, false);
        ASSERT_FALSE(a.is_discarded()) << line;
        EXPECT_GE(a["pattern"].get<int>(), 1) << line;
        EXPECT_FALSE(a["text"].get<std::string>().empty()) << line;
        EXPECT_EQ(a["ip"], 4) << line;  // the outer IPv4/UDP of the VXLAN tunnel
        EXPECT_EQ(a["dport"], 4789) << line;
    }
    EXPECT_EQ(n, matched);
    fs::remove(pcap);
    fs::remove(jsonl);
}

TEST(Cli, FilterAppCountsWhatTcpdumpMatches) {
    const std::string cap = pcaps_dir() + "/pcpp__example.pcap";
    for (const std::string expr : {"tcp port 80", "udp", "ip6", "greater 1000", "tcp[tcpflags] & tcp-syn != 0"}) {
        SCOPED_TRACE(expr);
        const nlohmann::json j = run_json("run conf/filter.yaml --pcap " + cap + " --set 'filter.expr=" + expr + "'");
        long out = -1;
        for (const auto& st : j["stages"])
            if (st["name"] == "filter") out = st["out"].get<long>();
        EXPECT_EQ(out, tcpdump_view(cap + "' '" + expr).packets);
    }
}

TEST(Cli, TopoShowsEveryTileAndChannelHop) {
    const std::string json = tmp_path("topo.json");
    const CommandResult r = tilepipe("topo conf/farm.yaml --topology tilepro64 --json " + json);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("tilepro64"), std::string::npos);
    EXPECT_NE(r.out.find("##"), std::string::npos);  // the reserved OS tiles
    const nlohmann::json j = nlohmann::json::parse(read_file(json));
    EXPECT_EQ(j["width"], 8);
    EXPECT_EQ(j["usable"], 58);
    EXPECT_EQ(j["reserved"].size(), 6u);
    std::set<std::pair<int, int>> tiles;
    for (const auto& n : j["nodes"]) {
        const int x = n["tile"][0], y = n["tile"][1];
        EXPECT_FALSE(y == 7 && x >= 1 && x <= 6) << "a node on a reserved tile";
        EXPECT_TRUE(tiles.insert({x, y}).second) << "two nodes on one tile";
    }
    for (const auto& c : j["channels"]) EXPECT_GE(c["hops"].get<int>(), 1);
    fs::remove(json);
    const CommandResult bad = tilepipe("topo conf/farm.yaml --topology cray1");
    EXPECT_EQ(bad.status, 2);
    EXPECT_NE(bad.err.find("unknown topology 'cray1'"), std::string::npos) << bad.err;
}

// README's table of `topo --json` fields: every top-level field it lists is emitted and every
// emitted one is listed; every field of a node, a channel and a pool is named in its row.
TEST(Cli, TopoJsonCarriesEveryFieldReadmeDocumentsAndNoOther) {
    const std::string readme = read_file(source_root() + "/README.md");
    const size_t begin = readme.find("`tilepipe topo CONF --json OUT` writes the plan");
    ASSERT_NE(begin, std::string::npos);
    const size_t end = readme.find("\n\n", readme.find("| field | meaning |", begin));
    std::istringstream table(readme.substr(begin, end - begin));
    std::map<std::string, std::string> rows;  // field -> its row
    for (std::string line; std::getline(table, line);) {
        if (line.rfind("| `", 0) != 0) continue;
        const std::string first = line.substr(0, line.find(" |", 2));
        const std::regex name("`([a-z_]+)`");
        for (auto it = std::sregex_iterator(first.begin(), first.end(), name); it != std::sregex_iterator(); ++it)
            rows[(*it)[1]] = line;
    }
    ASSERT_GE(rows.size(), 12u);
    const std::string json = tmp_path("topo-fields.json");
    const CommandResult r = tilepipe("topo conf/compose.yaml --set memory=interleave --json " + json);
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(read_file(json));
    fs::remove(json);
    for (const auto& [field, row] : rows) EXPECT_TRUE(j.contains(field)) << "README lists `" << field << "`, topo --json has none";
    for (const auto& [k, v] : j.items()) {
        ASSERT_TRUE(rows.count(k) == 1) << "topo --json writes `" << k << "`, README's table does not list it";
        if (!v.is_array() || k == "networks") continue;
        for (const auto& o : v)
            if (o.is_object())
                for (const auto& [sub, _] : o.items())
                    EXPECT_NE(rows[k].find("`" + sub + "`"), std::string::npos) << k << " objects carry `" << sub << "`, README's row does not name it";
    }
}

// `tilepipe topo` shows each node's NUMA node and placement, and the pool's.
TEST(Cli, TopoShowsTheMemoryPlacementOfNodesAndThePool) {
    const std::string json = tmp_path("topo-memory.json");
    const CommandResult r = tilepipe("topo conf/farm.yaml --set memory=interleave --set parse.memory=local --json " + json);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("memory: interleave app-wide"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("pool packets: interleave on "), std::string::npos) << r.out;
    EXPECT_TRUE(std::regex_search(r.out, std::regex("\n  parse +[0-9]+ +[0-9]+  local on [0-9]+\n"))) << r.out;
    const nlohmann::json j = nlohmann::json::parse(read_file(json));
    fs::remove(json);
    EXPECT_EQ(j["memory"], "interleave");
    EXPECT_EQ(j["pools"][0]["memory"], "interleave");
    EXPECT_EQ(j["pools"][0]["follows"], "synth");
    for (const auto& n : j["nodes"]) {
        EXPECT_GE(n["numa"].get<int>(), 0);
        EXPECT_EQ(n["memory"], n["name"] == "parse" ? "local" : "interleave") << n;
        if (n["name"] == "parse") EXPECT_EQ(n["memory_nodes"], nlohmann::json::array({n["numa"]}));
        else EXPECT_EQ(n["memory_nodes"], j["numa_nodes"]);
    }
    const CommandResult bad = tilepipe("validate conf/farm.yaml --set memory=near");
    EXPECT_EQ(bad.status, 2);
    EXPECT_NE(bad.err.find("--set memory=near: unknown memory placement 'near' (known: local, interleave, first_touch)"), std::string::npos)
        << bad.err;
}

// Sources with different placements fill a pool each: topo lists both and who fills them,
// and the run ends with both full.
TEST(Cli, TopoAndRunShowAPoolPerSourcePlacement) {
    const std::string json = tmp_path("topo-pools.json");
    const CommandResult r = tilepipe("topo conf/rss.yaml --set rx.1/port.memory=interleave --json " + json);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("  pool packets.0: first_touch (filled by rx.0)\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("  pool packets.1: interleave on "), std::string::npos) << r.out;
    const nlohmann::json j = nlohmann::json::parse(read_file(json));
    fs::remove(json);
    ASSERT_EQ(j["pools"].size(), 2u) << j["pools"];
    EXPECT_EQ(j["pools"][0]["sources"], nlohmann::json::array({"rx.0"}));
    EXPECT_EQ(j["pools"][1]["memory"], "interleave");
    EXPECT_EQ(j["pools"][1]["follows"], "rx.1");
    const CommandResult run = tilepipe("run conf/rss.yaml --set rx.1/port.memory=interleave");
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_NE(run.out.find("unaccounted 0; pools full"), std::string::npos) << run.out;
    const CommandResult one = tilepipe("topo conf/rss.yaml --set rx.memory=interleave");
    EXPECT_NE(one.out.find("  pool packets: interleave on "), std::string::npos) << one.out;
    EXPECT_EQ(one.out.find("pool packets.1"), std::string::npos) << one.out;
}

TEST(Cli, MapvecConfigRunsTheMapBenchmarkWithCheckedResults) {
    // conf/mapvec.yaml as shipped, shortened from the command line (flags win over the file).
    const std::string json = tmp_path("mapvec.json");
    const CommandResult r = tilepipe("bench mapvec --config conf/mapvec.yaml --tasks 200 --reps 1 --workers 1,3 --json " + json);
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(read_file(json));
    fs::remove(json);
    EXPECT_EQ(j["bench"], "mapvec");
    std::set<std::string> variants, best;
    size_t measured = 0;
    for (const auto& row : j["rows"]) {
        if (row.contains("best_over_w")) {  // Table IV's summary row: one per variant
            EXPECT_TRUE(best.insert(row["variant"].get<std::string>()).second) << row.dump();
            continue;
        }
        ++measured;
        variants.insert(row["variant"].get<std::string>());
        EXPECT_EQ(row["m"], 56);  // from the file
        EXPECT_TRUE(row["workers"] == 1 || row["workers"] == 3);  // from the command line
        EXPECT_GT(row["ts_us"].get<double>(), 0.0);
        EXPECT_GT(row["bw_gbps"].get<double>(), 0.0);
    }
    EXPECT_EQ(variants, (std::set<std::string>{"udn_tree", "sm_tree", "sm_linear", "ring_tree", "lck_queue"}));
    EXPECT_EQ(best, variants);
    EXPECT_EQ(measured, 10u);
}

// bench asym measures, in one run, the floor (raw), each transport's symmetric ping-pong and
// its asymmetric interface, and reports delta = asym - sym; --like-pingpong switches to bench
// pingpong's K and call path (no figure is judged here, only what the report holds).
TEST(Cli, BenchAsymReportsTheFloorTheSymmetricRowAndTheDelta) {
    const std::string json = tmp_path("asym.json");
    for (const bool like : {true, false}) {
        SCOPED_TRACE(like);
        const CommandResult r = tilepipe(std::string("bench asym --reps 1 --iters 2000 --senders 1,3 --transports sm,udn ") +
                                         (like ? "--like-pingpong " : "") + "--json " + json);
        ASSERT_EQ(r.status, 0) << r.err;
        const nlohmann::json j = nlohmann::json::parse(read_file(json));
        fs::remove(json);
        const auto& rows = j["rows"];
        ASSERT_EQ(rows.size(), 7u);  // raw, then per transport: sym and N = 1, 3
        EXPECT_EQ(rows[0]["transport"], "raw");
        EXPECT_EQ(rows[0]["interface"], "raw");
        for (size_t t = 0; t < 2; ++t) {
            const auto& sym = rows[1 + 3 * t];
            EXPECT_EQ(sym["transport"], t == 0 ? "sm" : "udn");
            EXPECT_EQ(sym["interface"], "sym");
            for (size_t k = 1; k <= 2; ++k) {
                const auto& a = rows[1 + 3 * t + k];
                EXPECT_EQ(a["transport"], sym["transport"]);
                EXPECT_EQ(a["interface"], "asym");
                EXPECT_EQ(a["senders"], k == 1 ? 1 : 3);
                // One repetition: the delta is this row's latency less the sym row's.
                EXPECT_NEAR(a["delta_ns"].get<double>(),
                            a["one_way_ns"].get<double>() - sym["one_way_ns"].get<double>(), 1e-6);
            }
        }
        for (const auto& row : rows) {
            EXPECT_GT(row["one_way_ns"].get<double>(), 0.0) << row.dump();
            EXPECT_EQ(row["capacity"], like ? 1 : 64) << row.dump();
            EXPECT_EQ(row["call_path"], like ? "direct" : "channel") << row.dump();
        }
    }
}

TEST(Cli, BenchConfigMistakesAreLocated) {
    const std::string conf = tmp_path("bad-mapvec.yaml");
    std::ofstream(conf) << "bench: mapvec\nm: [56]\nworkrs: 4\n";
    CommandResult r = tilepipe("bench mapvec --config " + conf);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find(conf + ":3:1: unknown option 'workrs'"), std::string::npos) << r.err;
    std::ofstream(conf) << "bench: mapvec\ntasks: many\n";
    r = tilepipe("bench mapvec --config " + conf);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find(conf + ":2:8: tasks needs a number"), std::string::npos) << r.err;
    std::ofstream(conf) << "bench: pingpong\n";
    r = tilepipe("bench mapvec --config " + conf);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("not 'mapvec'"), std::string::npos) << r.err;
    fs::remove(conf);
}

// FastFlow's buffer is a stream peer only in tilepipe-bench; `tilepipe bench stream` names
// where to find it instead of measuring something else, and measures its own peers otherwise.
TEST(Cli, StreamBenchSaysWhereFastFlowsBufferIsMeasured) {
    CommandResult r = tilepipe("bench stream --items 1000 --reps 1 --transports ring --peers fastflow");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("peer 'fastflow' needs tilepipe-bench built beside FastFlow's headers"), std::string::npos) << r.err;
    const std::string json = tmp_path("stream.json");
    r = tilepipe("bench stream --items 1000 --reps 1 --bursts 1,8 --transports ring --json " + json);
    ASSERT_EQ(r.status, 0) << r.err;  // 1 when an item arrived out of order
    const nlohmann::json j = nlohmann::json::parse(read_file(json));
    fs::remove(json);
    std::set<std::string> queues;
    for (const auto& row : j["rows"]) {
        queues.insert(row["transport"].get<std::string>());
        EXPECT_GT(row["mmsgs_per_s"].get<double>(), 0.0) << row.dump();
    }
    EXPECT_EQ(queues, (std::set<std::string>{"ring", "boost_spsc", "moodycamel"}));
    EXPECT_EQ(j["rows"].size(), 6u);
}

TEST(Cli, AccelBenchChecksEveryResultAndSaysWhyFastFlowIsSkipped) {
    const std::string json = tmp_path("accel.json");
    const CommandResult r = tilepipe("bench accel --reps 1 --tasks 3000 --one-by-one 500 --task-ns 5,200 --json " + json);
    ASSERT_EQ(r.status, 0) << r.err;  // 1 when a task was lost or its result changed
    const nlohmann::json j = nlohmann::json::parse(read_file(json));
    fs::remove(json);
    EXPECT_EQ(j["bench"], "accel");
    ASSERT_EQ(j["rows"].size(), 4u);  // streamed and one by one, per size; no FastFlow in this command
    for (const auto& row : j["rows"]) {
        EXPECT_EQ(row["impl"], "tilepipe");
        EXPECT_EQ(row["tasks"], row["mode"] == "stream" ? 3000 : 500) << row.dump();
        EXPECT_GT(row["mtasks_per_s"].get<double>(), 0.0);
    }
    EXPECT_NE(r.err.find("skipping fastflow_blocking: run tilepipe-bench"), std::string::npos) << r.err;
    const CommandResult bad = tilepipe("bench accel --dispatch sideways");
    EXPECT_EQ(bad.status, 2);
    EXPECT_NE(bad.err.find("--dispatch is round_robin or on_demand, got 'sideways'"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace tp::test
