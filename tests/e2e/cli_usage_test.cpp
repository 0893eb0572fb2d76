// The command line as a user types it: overrides reach every setting under the names the
// report prints, a setting is given once, options go anywhere after the command, and a
// mistake (a directory, a capture, an unknown command) gets one readable line and exit 2.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <nlohmann/json.hpp>

#include "tests/support/cli.hpp"
#include "tests/support/eal_fixture.hpp"
#include "tests/support/process.hpp"

namespace tp::test {
namespace {

namespace fs = std::filesystem;

bool printable(const std::string& s) {
    for (const char c : s)
        if ((static_cast<unsigned char>(c) < 0x20 && c != '\n') || static_cast<unsigned char>(c) >= 0x7f) return false;
    return true;
}

// Farm and map settings are overridable, and each name the report prints for a stage is a name
// --set takes: a worker's name sets that worker only.
TEST(CliOverrides, FarmSettingsAndTheReportsStageNamesAreSettable) {
    const nlohmann::json j = run_json(
        "run conf/compose.yaml --set synth.count=20000 --set flows.workers=3 --set parse4.workers=2 "
        "--set flows.1.sample.every=1 --set queue=256");
    ASSERT_FALSE(j.is_discarded());
    ASSERT_NE(stage_named(j, "flows.2.sample"), nullptr) << "three workers";
    EXPECT_EQ(stage_named(j, "flows.3.sample"), nullptr);
    EXPECT_EQ(stage_named(j, "parse4.2/parse"), nullptr) << "two map workers";
    const nlohmann::json& one = *stage_named(j, "flows.1.sample");
    EXPECT_EQ(one["out"], one["in"]) << "worker 1 keeps every packet";
    const nlohmann::json& zero = *stage_named(j, "flows.0.sample");
    EXPECT_LT(zero["out"].get<long>(), zero["in"].get<long>()) << "worker 0 keeps its configured 1 in 4";
    for (const auto& c : j["channels"]) EXPECT_EQ(c["capacity"], 256) << c.dump();

    // Every printed name, with a parameter of its stage, is accepted.
    const std::map<std::string, std::string> param_of = {
        {"synth", "count=10"}, {"parse", "drop_malformed=true"}, {"flow_table", "capacity=1024"},
        {"sample", "every=3"}, {"drop", "queue=64"}};
    for (const auto& s : j["stages"]) {
        const std::string set = s["name"].get<std::string>() + "." + param_of.at(s["stage"].get<std::string>());
        const CommandResult v = tilepipe("validate conf/compose.yaml --set flows.workers=3 --set parse4.workers=2 --set " + set);
        EXPECT_EQ(v.status, 0) << set << ": " << v.err;
    }
    const CommandResult fw = tilepipe("validate conf/firewall.yaml --set fw.0/acl.default=deny --set fw.acl.default=permit");
    EXPECT_EQ(fw.status, 0) << fw.err;
}

TEST(CliOverrides, AnOverridesMistakeNamesTheOverride) {
    CommandResult r = tilepipe("validate conf/firewall.yaml --set fw.workers=x");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "tilepipe: --set fw.workers=x: parameter 'workers' expects an unsigned integer, got 'x'\n");
    r = tilepipe("validate conf/firewall.yaml --set fw.9/acl.default=deny");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "tilepipe: --set fw.9/acl.default=deny: farm 'fw' has 4 worker(s), numbered from 0\n");
    // A worker chain runs as one node, placed by its first stage's memory.
    for (const char* cmd : {"validate", "run"}) {
        r = tilepipe(std::string(cmd) + " conf/farm.yaml --set rtc.1/pass_2.memory=local");
        EXPECT_EQ(r.status, 2) << cmd;
        EXPECT_EQ(r.err, "tilepipe: --set rtc.1/pass_2.memory=local: 'pass_2' is not the first stage of worker rtc.1's chain, "
                         "which runs as one node placed by its first stage's memory: use --set rtc.1/pass.memory=...\n")
            << cmd;
    }
    r = tilepipe("validate conf/farm.yaml --set rtc.pass_2.memory=local");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "tilepipe: --set rtc.pass_2.memory=local: 'pass_2' is not the first stage of the worker chain of farm 'rtc', "
                     "which runs as one node placed by its first stage's memory: give it on 'pass' or on the farm\n");
    EXPECT_EQ(tilepipe("validate conf/farm.yaml --set rtc.1/pass.memory=local --set piped.1/pass_4.memory=local "
                       "--set piped.pass_4.memory=interleave").status, 0);
    r = tilepipe("validate conf/default.yaml --set runtime.threads=all");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "tilepipe: --set runtime.threads=all: runtime.threads must be auto or per_tile, got 'all'\n");
}

// `--pcap` swaps the file and keeps the source's loop and pacing: the same replay as setting
// the file.
TEST(CliOverrides, PcapKeepsTheSourcesLoopAndPacing) {
    const std::string conf = tmp_path("paced.yaml");
    std::ofstream(conf) << "pipeline:\n  - stage: pcap\n    name: src\n    file: " << pcaps_dir()
                        << "/pcpp__DnsPackets.pcap\n    loop: 2\n    pps: 100000\n  - drop\n";
    const std::string cap = pcaps_dir() + "/pcpp__example.pcap";
    const nlohmann::json by_set = run_json("run " + conf + " --set src.file=" + cap);
    const nlohmann::json by_pcap = run_json("run " + conf + " --pcap " + cap);
    const nlohmann::json once = run_json("run " + conf + " --pcap " + cap + " --loop 1");
    EXPECT_EQ(by_pcap["packets"], by_set["packets"]);
    EXPECT_EQ(by_pcap["packets"].get<long>(), 2 * once["packets"].get<long>());
    // Paced at 100k packets/s: a replay of N packets lasts about N / 100k seconds, not less.
    EXPECT_GE(by_pcap["seconds"].get<double>(), 0.9 * by_pcap["packets"].get<double>() / 100000.0);
    fs::remove(conf);
}

TEST(CliOverrides, ASettingIsGivenOnceAndLoopIsACount) {
    CommandResult r = tilepipe("validate conf/forward.yaml --loop 2 --set src.loop=3");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "tilepipe: --set src.loop=3: sets what --loop 2 already set; give each setting once\n");
    r = tilepipe("validate conf/default.yaml --set synth.count=1 --set synth.count=2");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("sets what --set synth.count=1 already set"), std::string::npos) << r.err;
    r = tilepipe("validate conf/forward.yaml --loop -1");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "tilepipe: --loop -1: parameter 'loop' expects an unsigned integer, got '-1'\n");
    r = tilepipe("validate conf/forward.yaml --loop 4294967296");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "tilepipe: --loop 4294967296: parameter 'loop' must be from 0 to 4294967295, got '4294967296'\n");
}

// An empty value (a shell variable that was not set) is a mistake, not "not given": no report
// written, no server started, the capture kept would all be silent otherwise.
TEST(CliUsage, EmptyOrMalformedOptionValuesAreUsageErrorsNamingTheOption) {
    const std::pair<std::string, std::string> cases[] = {
        {"run conf/default.yaml --json ''", "tilepipe: --json: needs a value, got ''"},
        {"run conf/default.yaml --metrics ''", "tilepipe: --metrics: needs a value, got ''"},
        {"run conf/default.yaml --stats-interval 1 --stats-out ''", "tilepipe: --stats-out: needs a value, got ''"},
        {"run conf/default.yaml --set synth.count=10 --pcap ''", "tilepipe: --pcap: needs a value, got ''"},
        {"validate conf/default.yaml --limit ''", "tilepipe: --limit: needs a value, got ''"},
        {"topo conf/default.yaml --dot ''", "tilepipe: --dot: needs a value, got ''"},
        {"run conf/default.yaml --eal \"--vdev 'x\"", "tilepipe: --eal: unterminated quote in EAL arguments: --vdev 'x"},
        {"watch x --interval nan", "tilepipe: --interval: must be 0.1 to 3600 seconds, got 'nan'"},
        {"watch x --frames 0", "tilepipe: --frames: Value 0 not in range 1 to 1073741824"},
        {"validate conf/default.yaml --set plugins=x",
         "tilepipe: --set plugins=x: 'plugins' is not one value: name each library with --plugin FILE (or list them in the file)"},
    };
    for (const auto& [args, says] : cases) {
        const CommandResult r = tilepipe(args);
        EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
        EXPECT_EQ(r.err.substr(0, r.err.find('\n')), says) << args;
    }
}

TEST(CliUsage, UnknownCommandsListTheCommandsBenchIncluded) {
    CommandResult r = tilepipe("bogus");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "tilepipe: unknown command 'bogus' (commands: run, validate, topo, stages, plot, watch, bench; tilepipe --help for usage)\n");
    r = tilepipe("");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("a command is required (commands: run, validate, topo, stages, plot, watch, bench)"), std::string::npos) << r.err;
    r = tilepipe("--help");
    EXPECT_EQ(r.status, 0);
    EXPECT_TRUE(std::regex_search(r.out, std::regex("\n  bench +channel, network and map benchmarks"))) << r.out;
    r = tilepipe("--log-level warn bench --help");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("pingpong"), std::string::npos) << r.out;
}

TEST(CliUsage, OptionsMayFollowTheConfigAndLogLevelWorksOnEveryCommand) {
    CommandResult r = tilepipe("validate conf/default.yaml --log-level debug");
    EXPECT_EQ(r.status, 0) << r.err;
    r = tilepipe("run conf/default.yaml --quiet --set synth.count=1000 --log-level debug");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("tilepipe: debug: EAL started"), std::string::npos) << r.err;
    r = tilepipe("topo conf/default.yaml --log-level error");
    EXPECT_EQ(r.status, 0) << r.err;
}

TEST(CliUsage, ADirectoryOrACaptureAsTheConfigGetsOneReadableLine) {
    CommandResult r = tilepipe("run conf");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "tilepipe: conf: is a directory, not an app config (a YAML file such as conf/default.yaml)\n");
    const std::string cap = pcaps_dir() + "/pcpp__example.pcap";
    r = tilepipe("run " + cap);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err, "tilepipe: " + cap + ": is a capture, not an app config: replay it with `tilepipe run CONF --pcap " +
                         cap + "`\n");
    const std::string bin = tmp_path("binary.yaml");
    std::ofstream(bin, std::ios::binary) << std::string("pipeline:\x01\x02\xff\xfe", 13);
    r = tilepipe("validate " + bin);
    EXPECT_EQ(r.status, 2);
    EXPECT_TRUE(printable(r.err)) << r.err;
    EXPECT_NE(r.err.find("holds binary data"), std::string::npos) << r.err;
    fs::remove(bin);
}

// Files a config reads are found beside it: every shipped app validates from any directory.
TEST(CliUsage, ShippedAppsWorkFromAnyWorkingDirectory) {
    for (const auto& entry : fs::directory_iterator(source_root() + "/conf")) {
        if (entry.path().extension() != ".yaml" || entry.path().stem() == "mapvec") continue;
        const std::string conf = fs::absolute(entry.path()).string();
        const CommandResult r = run_command("cd / && '" + tilepipe_bin() + "' validate '" + conf + "'");
        EXPECT_EQ(r.status, 0) << conf << ": " << r.err;
    }
}

// Each command line README's usage shows names options that command takes.
TEST(CliUsage, ReadmeUsageMatchesEachCommandsHelp) {
    const std::string readme = read_file(source_root() + "/README.md");
    const auto start = readme.find("## Usage\n\n```\n");
    ASSERT_NE(start, std::string::npos);
    const auto end = readme.find("```", start + 14);
    std::istringstream usage(readme.substr(start + 14, end - start - 14));
    int commands = 0;
    for (std::string line; std::getline(usage, line);) {
        std::smatch m;
        if (!std::regex_search(line, m, std::regex("^tilepipe (run|validate|topo|stages|plot|watch|bench pingpong|bench stream|bench asym|bench latency|bench mapvec|"
                                                   "bench accel|bench mp-sgemm|bench mp-pingpong|bench mp-shift)\\b")))
            continue;
        ++commands;
        const CommandResult help = tilepipe(m[1].str() + " --help");
        EXPECT_EQ(help.status, 0) << line;
        const std::string text = help.out + help.err;
        const std::regex option("--[a-z][a-z-]*");
        for (std::sregex_iterator it(line.begin(), line.end(), option), e; it != e; ++it)
            EXPECT_NE(text.find(it->str()), std::string::npos) << "README: `" << line << "` names " << it->str()
                                                             << ", which `" << m[1] << " --help` does not list";
    }
    EXPECT_EQ(commands, 15) << "run, validate, topo, stages, plot, watch and the nine benches each have a usage line";
    EXPECT_NE(readme.find("\ntilepipe --version\n"), std::string::npos);
    EXPECT_NE(tilepipe("--help").out.find("--version"), std::string::npos);
}

// Ctrl-C ends every bench after the measurement in progress: it reports the repetitions it
// completed and exits 130. A long bench says how long it will take before it gets far.
TEST(CliBench, EveryBenchStopsOnCtrlCReportsWhatItMeasuredAndExits130) {
    const std::string cases[] = {
        "pingpong --iters 20000 --transports sm --reps 100000",
        "stream --items 200000 --transports ring --peers none --bursts 8 --reps 100000",
        "asym --iters 20000 --transports sm --senders 1,2 --reps 100000",
        "mapvec --variants sm_tree --m 56 --workers 1 --tasks 500 --reps 1000000",
    };
    for (const std::string& bench : cases) {
        SCOPED_TRACE(bench);
        const std::string err = tmp_path("bench.err");
        // Signal once two repetitions have completed (the second blank on the line of dots; the
        // estimate's line has blanks too), so the outcome depends on no timing.
        const CommandResult r = run_command(
            "'" + tilepipe_bin() + "' bench " + bench + " 2>'" + err + "' & p=$!; "
            "until [ \"$(grep -sE '^[. ]+$' '" + err + "' | tr -cd ' ' | wc -c)\" -ge 2 ]; do sleep 0.05; done; "
            "kill -INT $p; wait $p; echo \"status=$?\"");
        const std::string said = read_file(err);
        fs::remove(err);
        EXPECT_NE(r.out.find("status=130"), std::string::npos) << r.out << said;
        EXPECT_TRUE(std::regex_search(said, std::regex("interrupted: the figures are from [0-9]+ of [0-9]+ repetitions"))) << said;
        EXPECT_TRUE(std::regex_search(r.out, std::regex(" x [0-9]+ reps|, [0-9]+ reps"))) << r.out;
        EXPECT_NE(said.find("about "), std::string::npos) << "says how long it would take: " << said;
    }
}

TEST(CliBench, OptionsAreCheckedNotBent) {
    const struct {
        const char* args;
        const char* error;
    } cases[] = {
        {"pingpong --cpus 0,4095", "bench pingpong: --cpus: CPU 4095 is not one this process may run on (allowed: "},
        {"pingpong --iters 0", "bench pingpong: --iters must be at least 1, got 0"},
        {"stream --items -5", "bench stream: --items needs a number (0 or more), got '-5'"},
        {"asym --reps 0", "bench asym: --reps must be at least 1, got 0"},
        {"mp-sgemm --size 0", "bench mp-sgemm: --size must be at least 1, got 0"},
        {"mp-stencil --runs 0", "bench mp-stencil: --runs must be at least 1, got 0"},
        {"mp-shift --replace-buffer 1", "bench mp-shift: --replace-buffer must be at least 256, got 1"},
        {"mapvec --cpus 4095", "bench mapvec: --cpus: CPU 4095 is not one this process may run on (allowed: "},
        // A placement that would measure nothing is refused, saying why.
        {"pingpong --hops 99", "bench pingpong: --hops 99: no two usable tiles of host are 99 hops apart"},
    };
    for (const auto& c : cases) {
        const CommandResult r = tilepipe(std::string("bench ") + c.args);
        EXPECT_EQ(r.status, 2) << c.args;
        EXPECT_EQ(r.err.rfind(c.error, 0), 0u) << c.args << ": " << r.err;
        EXPECT_EQ(r.out, "") << c.args;
    }
}

// The benches' example apps (bench latency's default conf/default.yaml, mapvec's
// --config conf/mapvec.yaml) are found from any folder: here the option checked after the
// config was read is what fails. A file found nowhere names where it was looked for.
TEST(CliBench, TheExampleAppsAreFoundFromAnyFolder) {
    CommandResult r = run_command("cd / && '" + tilepipe_bin() + "' bench latency --seconds 0");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err.rfind("bench latency: --seconds", 0), 0u) << r.err;
    r = run_command("cd / && '" + tilepipe_bin() + "' bench mapvec --config conf/mapvec.yaml --cpus 4095");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err.rfind("bench mapvec: --cpus: CPU 4095 is not one", 0), 0u) << r.err;
    r = run_command("cd / && '" + tilepipe_bin() + "' bench latency --app conf/nothing.yaml");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err.rfind("bench latency: conf/nothing.yaml: no such file here (/, ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("): pass --app FILE\n"), std::string::npos) << r.err;
}

// `--json -` means standard output for every command that writes JSON: the JSON alone on
// stdout (parseable), the human output on stderr, and no file named `-`.
TEST(CliUsage, JsonDashIsStandardOutputForEveryCommand) {
    const std::string dir = tmp_path("json-dash");
    fs::create_directories(dir);
    const std::string cases[] = {
        "topo " + source_root() + "/conf/default.yaml --json -",
        "bench pingpong --iters 200 --reps 1 --transports ring --json -",
        "run " + source_root() + "/conf/default.yaml --set synth.count=1000 --quiet --json -",
    };
    for (const std::string& args : cases) {
        const CommandResult r = run_command("cd '" + dir + "' && '" + tilepipe_bin() + "' " + args);
        EXPECT_EQ(r.status, 0) << args << ": " << r.err;
        const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
        EXPECT_FALSE(j.is_discarded()) << args << ": stdout is not JSON: " << r.out;
        EXPECT_FALSE(r.err.empty()) << args << ": the human output goes to stderr";
        EXPECT_FALSE(fs::exists(dir + "/-")) << args;
    }
    fs::remove_all(dir);
}

// Outputs take their names only once the whole app has started: a start that fails (here at
// the last stage's device) leaves what an earlier run wrote whole and no temporary file behind.
TEST(CliOutputs, AFailedStartLeavesEarlierOutputsWhole) {
    const std::string dir = tmp_path("outputs");
    fs::create_directories(dir);
    std::ofstream(dir + "/app.yaml") << "pipeline:\n  - { stage: synth, count: 1000 }\n  - parse\n"
                                        "  - { stage: flow_table, export: flows.csv }\n"
                                        "  - { stage: payload_match, patterns: " << source_root()
                                     << "/conf/data/ids.patterns, alerts: alerts.jsonl }\n"
                                        "  - { stage: port_out, device: net_null0 }\n";
    auto run = [&](const std::string& device) {
        return run_command("cd '" + dir + "' && '" + tilepipe_bin() + "' run app.yaml --quiet --set port_out.device=" + device);
    };
    for (const char* f : {"flows.csv", "alerts.jsonl"}) std::ofstream(dir + "/" + f) << "earlier run\n";
    const CommandResult failed = run("net_bogus0");
    EXPECT_EQ(failed.status, 1) << failed.err;
    EXPECT_NE(failed.err.find("net_bogus0"), std::string::npos) << failed.err;
    for (const char* f : {"flows.csv", "alerts.jsonl"}) EXPECT_EQ(read_file(dir + "/" + f), "earlier run\n") << f;
    for (const auto& entry : fs::directory_iterator(dir))
        EXPECT_EQ(entry.path().filename().string().find(".part"), std::string::npos) << entry.path();
    // A run that starts replaces them.
    const CommandResult ok = run("net_null0");
    EXPECT_EQ(ok.status, 0) << ok.err;
    EXPECT_EQ(read_file(dir + "/flows.csv").rfind("reason,ip_version", 0), 0u);
    fs::remove_all(dir);
}

TEST(CliUsage, AnEmptyCaptureRunsWithAWarning) {
    const CommandResult r = tilepipe("run conf/forward.yaml --quiet --pcap " + pcaps_dir() + "/tcpdump__empty.pcap");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("tcpdump__empty.pcap: the capture holds no packets; nothing to replay"), std::string::npos) << r.err;
}

// Only a regular file is replaced by a rename: a link keeps pointing at its file (now the new
// capture, with the old file's permissions) and a device stays a device.
TEST(CliOutputs, ALinkOrADeviceIsWrittenInPlace) {
    const std::string dir = tmp_path("links");
    fs::create_directories(dir);
    std::ofstream(dir + "/real.pcap") << "earlier run\n";
    fs::permissions(dir + "/real.pcap", fs::perms::owner_read | fs::perms::owner_write);
    fs::create_symlink(dir + "/real.pcap", dir + "/link.pcap");
    const CommandResult r = tilepipe("run conf/gen.yaml --quiet --set synth.count=10 --set out.file=" + dir + "/link.pcap");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(fs::is_symlink(dir + "/link.pcap"));
    EXPECT_EQ(tcpdump_view(dir + "/real.pcap").packets, 10);
    EXPECT_EQ(fs::status(dir + "/real.pcap").permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
    const CommandResult full = tilepipe("run conf/gen.yaml --quiet --set synth.count=10 --set out.file=/dev/full");
    EXPECT_EQ(full.status, 1) << full.err;
    EXPECT_TRUE(fs::is_character_file("/dev/full"));
    fs::remove_all(dir);
}

}  // namespace
}  // namespace tp::test
