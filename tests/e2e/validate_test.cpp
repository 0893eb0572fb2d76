// One check for `validate` and `run`: every documented constraint of every stage, violated
// once, is reported by `tilepipe validate` with its place and exit 2, and `tilepipe run` refuses
// the same config with the same message and exit 2 before DPDK's EAL starts.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cli.hpp"
#include "tests/support/process.hpp"

namespace tp::test {
namespace {

namespace fs = std::filesystem;

// A config whose one mistake is `param` (written as `param: value` on its own line) or a
// file it names; `where` then gives the expected place ("{dir}" is the test's folder).
struct Case {
    std::string name;
    std::string pipeline;  // the entries under `pipeline:`, "{dir}" substituted
    std::string param;     // the key the error points at, or "" when `where` says
    std::string message;   // part of the message a user reads
    std::string where = {};
    std::vector<std::pair<std::string, std::string>> files = {};  // written into {dir} first
};

// A classic pcap of one good 60-byte record, then one whose captured length (300000) is beyond
// any libpcap reads (262144): a damaged record 2.
std::string pcap_with_bad_second_record() {
    const auto u32 = [](uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); };
    const auto u16 = [](uint16_t v) { return std::string(reinterpret_cast<const char*>(&v), 2); };
    std::string s = u32(0xa1b2c3d4) + u16(2) + u16(4) + u32(0) + u32(0) + u32(65535) + u32(1);
    s += u32(1) + u32(0) + u32(60) + u32(60) + std::string(60, 'a');
    s += u32(2) + u32(0) + u32(300000) + u32(300000) + std::string(60, 'b');
    return s;
}

std::string substitute(std::string s, const std::string& dir) {
    for (size_t at; (at = s.find("{dir}")) != std::string::npos;) s.replace(at, 5, dir);
    return s;
}

// "LINE:COL" of the value of the first `param:` key in `yaml`.
std::string place_of(const std::string& yaml, const std::string& param) {
    std::istringstream in(yaml);
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
        const size_t key = line.find(param + ":");
        if (key == std::string::npos || line.find_first_not_of(" -") != key) continue;
        const size_t value = line.find_first_not_of(' ', key + param.size() + 1);
        return std::to_string(number) + ":" + std::to_string(value + 1);
    }
    ADD_FAILURE() << "no key '" << param << "' in\n" << yaml;
    return "?";
}

const char* kSynth = "  - { stage: synth, count: 1 }\n";
const char* kDrop = "  - drop\n";

std::vector<Case> cases() {
    const std::string src = kSynth, sink = kDrop;
    auto mid = [&](const std::string& node) { return src + node + sink; };
    return {
        // generic: types, unknown keys, choices, decimal numbers
        {"UnknownParameter", mid("  - stage: pass\n    colour: red\n"), "", "unknown parameter 'colour'",
         "{conf}:5:5"},
        {"NotABool", mid("  - stage: parse\n    drop_malformed: maybe\n"), "drop_malformed", "expects true or false"},
        {"LeadingZeroIsDecimal", mid("  - stage: sample\n    every: 0100\n    probability: 0.5\n"), "every",
         "'every' and 'probability' both choose"},
        {"OctalLookingUintOutOfRange", mid("  - stage: dedup\n    window: 016777217\n"), "window",
         "must be from 1 to 16777216"},
        {"HexFloatRefused", mid("  - stage: sample\n    probability: 0x1p-1\n"), "probability", "expects a number"},
        // synth
        {"SynthSizeTooSmall", "  - stage: synth\n    size: 10\n" + sink, "size", "from 60 to 9000 bytes"},
        {"SynthSizeNotANumber", "  - stage: synth\n    size: big\n" + sink, "size", "got 'big'"},
        {"SynthFlowsZero", "  - stage: synth\n    flows: 0\n" + sink, "flows", "must be from 1 to 65536"},
        {"SynthFlowsBeyond32Bits", "  - stage: synth\n    flows: 4294967297\n" + sink, "flows", "must be from 1 to 65536"},
        {"SynthUnknownProto", "  - stage: synth\n    proto: icmp\n" + sink, "proto", "one of: udp, tcp, mix"},
        {"SynthFrameBeyondThePoolsDataRoom", "  - stage: synth\n    size: 9000\n" + sink, "size",
         "frame size 9000 exceeds the pool's data room 2048"},
        {"SynthNegativeDuration", "  - stage: synth\n    duration: -1\n" + sink, "duration", "must be at least 0"},
        // sample
        {"SampleEveryZero", mid("  - stage: sample\n    every: 0\n"), "every", "must be at least 1"},
        {"SampleProbabilityAboveOne", mid("  - stage: sample\n    probability: 1.5\n"), "probability",
         "must be from 0 to 1"},
        {"SampleEveryAndProbability", mid("  - stage: sample\n    probability: 0.5\n    every: 4\n"), "every",
         "both choose the sample"},
        // dedup
        {"DedupWindowZero", mid("  - stage: dedup\n    window: 0\n"), "window", "must be from 1 to 16777216"},
        {"DedupCopyBytesTooSmall", mid("  - stage: dedup\n    copy_bytes: 10\n"), "copy_bytes", "at least 64 bytes"},
        {"DedupCopyBytesTooLarge", mid("  - stage: dedup\n    copy_bytes: 20G\n"), "copy_bytes", "must be from 0 to 17179869184"},
        // memory: the node's placement on every stage, never a stage's parameter
        {"DedupMemoryIsPlacement", mid("  - stage: dedup\n    memory: 4096\n"), "memory", "unknown memory placement '4096'"},
        // rate_limit
        {"RateLimitRateAndPps", mid("  - stage: rate_limit\n    burst: 10\n    rate: 1000\n    pps: 10\n"), "pps",
         "set exactly one of 'rate'"},
        {"RateLimitNeitherRateNorPps", mid("  - stage: rate_limit\n    burst: 10\n"), "", "set exactly one of 'rate'",
         "{conf}:4:12"},
        {"RateLimitBurstMissing", mid("  - stage: rate_limit\n    pps: 10\n"), "", "missing required parameter 'burst'",
         "{conf}:4:12"},
        {"RateLimitBurstRoundsToZero", mid("  - stage: rate_limit\n    pps: 10\n    burst: 0.2\n"), "burst",
         "'burst' must be at least 1"},
        {"RateLimitNegativeRate", mid("  - stage: rate_limit\n    burst: 10\n    rate: -5\n"), "rate",
         "must be from 0 to 1000000000000000000"},
        {"RateLimitPeakBelowCommitted",
         mid("  - stage: rate_limit\n    meter: trtcm\n    pps: 100\n    burst: 10\n    peak_rate: 50\n"), "peak_rate",
         "'peak_rate' must be at least 'pps'"},
        {"RateLimitUnknownMeter", mid("  - stage: rate_limit\n    pps: 100\n    burst: 10\n    meter: fancy\n"), "meter",
         "one of: srtcm, trtcm"},
        // bpf_filter
        {"BpfFilterSyntaxError", mid("  - stage: bpf_filter\n    expr: udpp or\n"), "expr", "bad filter expression"},
        {"BpfFilterBackwardJump", mid("  - stage: bpf_filter\n    expr: ip protochain 6\n"), "expr",
         "cannot run on DPDK: it jumps backwards"},
        // acl
        {"AclRulesMissing", mid("  - stage: acl\n    rules: {dir}/none.rules\n"), "rules", "none.rules"},
        {"AclRulesADevice", mid("  - stage: acl\n    rules: /dev/zero\n"), "", "holds binary data (a NUL byte)", "/dev/zero:1"},
        {"AclBadRule", mid("  - stage: acl\n    rules: {dir}/bad.rules\n"), "",
         "unknown protocol 'tcpp'", "{dir}/bad.rules:2", {{"bad.rules", "permit proto tcp\ndeny proto tcpp\n"}}},
        {"AclUnknownDefault", mid("  - stage: acl\n    rules: " + source_root() + "/conf/data/firewall.rules\n    default: maybe\n"), "default",
         "one of: permit, deny"},
        // lpm_route
        {"LpmRoutesMissing", mid("  - stage: lpm_route\n    routes: {dir}/none.routes\n"), "routes", "none.routes"},
        {"LpmBadPrefix", mid("  - stage: lpm_route\n    routes: {dir}/bad.routes\n"), "", "bad prefix",
         "{dir}/bad.routes:3", {{"bad.routes", "# two routes\n10.0.0.0/8 1\n10.0.0.0/33 2\n"}}},
        {"LpmDuplicatePrefix", mid("  - stage: lpm_route\n    routes: {dir}/dup.routes\n"), "",
         "already routed at line 1", "{dir}/dup.routes:2", {{"dup.routes", "10.0.0.0/8 1\n10.0.0.0/8 2\n"}}},
        {"LpmBadPort", mid("  - stage: lpm_route\n    routes: {dir}/port.routes\n"), "", "bad port '256'",
         "{dir}/port.routes:1", {{"port.routes", "10.0.0.0/8 256\n"}}},
        {"LpmDefaultPortOutOfRange",
         mid("  - stage: lpm_route\n    routes: " + source_root() + "/conf/data/routes.txt\n    default_port: 256\n"), "default_port",
         "must be from -1 to 127"},
        // payload_match
        {"PayloadPatternsMissing", mid("  - stage: payload_match\n    patterns: {dir}/none.patterns\n"), "patterns",
         "none.patterns"},
        {"PayloadBadHex", mid("  - stage: payload_match\n    patterns: {dir}/bad.patterns\n"), "",
         "is not a hex digit", "{dir}/bad.patterns:2", {{"bad.patterns", "GET /\n|zz|\n"}}},
        {"PayloadAlertsIntoMissingFolder",
         mid("  - stage: payload_match\n    patterns: " + source_root() + "/conf/data/ids.patterns\n    alerts: {dir}/no/a.jsonl\n"),
         "alerts", "folder '{dir}/no'"},
        {"PayloadNoPatterns", mid("  - stage: payload_match\n    patterns: {dir}/empty.patterns\n"), "",
         "no patterns", "{dir}/empty.patterns", {{"empty.patterns", "# nothing\n\n"}}},
        // flow_table
        {"FlowTableCapacityZero", mid("  - stage: flow_table\n    capacity: 0\n"), "capacity", "must be from 1 to 1073741824"},
        {"FlowTableNegativeTimeout", mid("  - stage: flow_table\n    idle_timeout: -1\n"), "idle_timeout",
         "must be from 0 to 1000000000"},
        {"FlowTableExportIntoMissingFolder", mid("  - stage: flow_table\n    export: {dir}/no/such/flows.csv\n"),
         "export", "folder '{dir}/no/such'"},
        {"FlowTableUnknownFormat", mid("  - stage: flow_table\n    format: xml\n"), "format", "one of: csv, json"},
        // pcap (source)
        {"PcapFileMissing", "  - stage: pcap\n    file: {dir}/none.pcap\n" + sink, "file", "cannot open capture"},
        {"PcapNotACapture", "  - stage: pcap\n    file: {dir}/text.pcap\n" + sink, "", "{dir}/text.pcap",
         "{dir}/text.pcap", {{"text.pcap", "these are words, not packets\n"}}},
        {"PcapTwoPaces",
         "  - stage: pcap\n    file: " + pcaps_dir() + "/pcpp__example.pcap\n    pps: 10\n    mbps: 5\n" + sink, "mbps",
         "set at most one of pps, mbps, speed"},
        {"PcapNegativePace", "  - stage: pcap\n    file: " + pcaps_dir() + "/pcpp__example.pcap\n    pps: -10\n" + sink,
         "pps", "must be at least 0"},
        // pcap_out
        {"PcapOutSnaplenZero", src + "  - stage: pcap_out\n    file: {dir}/out.pcap\n    snaplen: 0\n", "snaplen",
         "must be from 1 to 262144"},
        {"PcapOutIntoMissingFolder", src + "  - stage: pcap_out\n    file: {dir}/no/out.pcap\n", "file",
         "folder '{dir}/no'"},
        {"PcapOutIsAFolder", src + "  - stage: pcap_out\n    file: {dir}\n", "file", "it is a directory"},
        {"PcapOutEmptyName", src + "  - stage: pcap_out\n    file: ''\n", "file", "'file' is empty"},
        {"PcapOutNameTooLong", src + "  - stage: pcap_out\n    file: {dir}/" + std::string(256, 'n') + ".pcap\n", "file",
         "its file name is 261 bytes, more than the 255"},
        // port (source)
        {"PortDeviceAndFile", "  - stage: port\n    device: net_null0\n    file: x.pcap\n" + sink, "file",
         "'device' and 'file' both name the port"},
        {"PortNeitherDeviceNorFile", "  - stage: port\n    promisc: true\n" + sink, "", "needs 'device'", "{conf}:3:12"},
        {"PortQueueBeyondQueues", "  - stage: port\n    device: net_null0\n    queues: 2\n    rx_queue: 2\n" + sink,
         "rx_queue", "does not exist: the port gets 2 queue(s)"},
        {"PortQueuesZero", "  - stage: port\n    device: net_null0\n    queues: 0\n" + sink, "queues", "must be from 1 to 64"},
        {"PortFileMissing", "  - stage: port\n    file: {dir}/none.pcap\n" + sink, "file", "cannot open capture"},
        {"PortFileDamagedStrict", "  - stage: port\n    file: {dir}/bad.pcap\n    strict: true\n" + sink, "", "record 2: ",
         "{dir}/bad.pcap", {{"bad.pcap", pcap_with_bad_second_record()}}},
        // port_out
        {"PortOutQueueBeyondQueues", src + "  - stage: port_out\n    queues: 2\n    tx_queue: 5\n", "tx_queue",
         "does not exist: the port gets 2 queue(s)"},
        {"PortOutTxdZero", src + "  - stage: port_out\n    txd: 0\n", "txd", "must be at least 1"},
        {"PortOutDeviceAndDevices", src + "  - stage: port_out\n    device: net_null0\n    devices: net_null1\n",
         "devices", "'device' and 'devices' both name"},
        {"PortOutEmptyDevice", src + "  - stage: port_out\n    devices: net_null0,,net_null1\n", "devices",
         "word 2 is empty"},
        // rewrite
        {"RewriteBadMac", mid("  - stage: rewrite\n    src_mac: 02:00:00:00:00\n"), "src_mac", "'src_mac'"},
        {"RewritePortOutOfRange", mid("  - stage: rewrite\n    dst_port: 70000\n"), "dst_port", "0-65535"},
        {"RewriteSrcMacAndPortMacs",
         mid("  - stage: rewrite\n    src_mac: 02:00:00:00:00:01\n    port_macs: 02:00:00:00:00:02\n"), "port_macs",
         "both set the source MAC"},
        {"RewriteBadRule", mid("  - stage: rewrite\n    rules: {dir}/nat.rules\n"), "", "no 'set'",
         "{dir}/nat.rules:1", {{"nat.rules", "src 10.0.0.0/8\n"}}},
    };
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class ValidateAndRun : public ::testing::TestWithParam<Case> {
protected:
    void SetUp() override {
        dir_ = tmp_path(GetParam().name);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string dir_;
};

TEST_P(ValidateAndRun, ValidateLocatesTheMistakeAndRunRefusesItBeforeEal) {
    const Case& c = GetParam();
    for (const auto& [name, text] : c.files) std::ofstream(dir_ + "/" + name) << text;
    const std::string yaml = "app: t\npipeline:\n" + substitute(c.pipeline, dir_);
    const std::string conf = dir_ + "/app.yaml";
    std::ofstream(conf) << yaml;

    std::string where = c.param.empty() ? substitute(c.where, dir_) : conf + ":" + place_of(yaml, c.param);
    for (size_t at; (at = where.find("{conf}")) != std::string::npos;) where.replace(at, 6, conf);
    const std::string message = substitute(c.message, dir_);

    const CommandResult v = tilepipe("validate '" + conf + "'");
    EXPECT_EQ(v.status, 2) << v.out << v.err;
    EXPECT_EQ(v.err.rfind("tilepipe: " + where + ":", 0), 0u) << "expected the place " << where << " in: " << v.err;
    EXPECT_NE(v.err.find(message), std::string::npos) << "expected '" << message << "' in: " << v.err;
    EXPECT_EQ(std::count(v.err.begin(), v.err.end(), '\n'), 1) << "one line: " << v.err;

    const CommandResult r = tilepipe("--log-level debug run '" + conf + "' --quiet");
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("EAL"), std::string::npos) << "EAL started before the refusal: " << r.err;
}

INSTANTIATE_TEST_SUITE_P(EveryStage, ValidateAndRun, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& i) { return i.param.name; });

// The same checks reach overrides: the place is the `--set` that made the mistake.
TEST(ValidateOverrides, ASetThatBreaksAConstraintIsLocatedAtTheSet) {
    const struct {
        std::string args, where, message;
    } overrides[] = {
        {"conf/filter.yaml --set 'filter.expr=udpp or'", "--set filter.expr=udpp or", "bad filter expression"},
        {"conf/default.yaml --set synth.flows=4294967297", "--set synth.flows=4294967297", "'flows'"},
        {"conf/l3fwd.yaml --set lpm_route.default_port=300", "--set lpm_route.default_port=300", "from -1 to 127"},
        {"conf/firewall.yaml --set acl.rules=conf/data/routes.txt", "conf/data/routes.txt:", "unknown action"},
    };
    for (const auto& o : overrides) {
        SCOPED_TRACE(o.args);
        for (const char* cmd : {"validate ", "--log-level debug run "}) {
            const CommandResult r = tilepipe(std::string(cmd) + o.args + (cmd[0] == '-' ? " --quiet" : ""));
            EXPECT_EQ(r.status, 2) << r.err;
            EXPECT_EQ(r.err.rfind("tilepipe: " + o.where, 0), 0u) << r.err;
            EXPECT_NE(r.err.find(o.message), std::string::npos) << r.err;
            EXPECT_EQ(r.err.find("EAL"), std::string::npos) << r.err;
        }
    }
}

// `tilepipe stages` shows each declared range next to the type, so the user reads the bound
// the check enforces.
TEST(ValidateCatalog, StagesListsTheDeclaredRanges) {
    const CommandResult r = tilepipe("stages dedup");
    EXPECT_EQ(r.status, 0);
    EXPECT_NE(r.out.find("uint 1-16777216"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tp::test

namespace tp::test {
namespace {

// What the run accepts, validate accepts: a per-port folder exists only per port, and "keep"
// is the number -1 however it is written.
TEST(ValidateAccepts, PerPortFoldersAndKeepWrittenAnyWay) {
    const std::string dir = tmp_path("accepts");
    fs::create_directories(dir);
    const std::string conf = dir + "/app.yaml";
    std::ofstream(conf) << "pipeline:\n  - { stage: synth, count: 1 }\n  - stage: rewrite\n    rules: " << source_root() << "/conf/data/nat.rules\n"
                           "    src_port: -01\n  - stage: pcap_out\n    file: " << dir << "/cap%p/out.pcap\n";
    const CommandResult v = tilepipe("validate '" + conf + "'");
    EXPECT_EQ(v.status, 0) << v.err;
    fs::remove_all(dir);
}

}  // namespace
}  // namespace tp::test
