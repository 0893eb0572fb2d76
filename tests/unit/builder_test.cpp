// The C++ builder (include/tilepipe/app.hpp): the same app as its YAML, the same report counts,
// and errors that name the place in the program as the loader names file:line:col.
#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <map>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

#include "examples/cpp_app/farm_app.hpp"
#include "framework/config/app_config.hpp"
#include "framework/config/overrides.hpp"
#include "framework/graph/app_runner.hpp"
#include "tilepipe/app.hpp"

namespace tp {
namespace {

std::string source_root() {
    const char* root = std::getenv("TILEPIPE_SOURCE_ROOT");
    return root != nullptr ? root : ".";
}

std::string capture() {
    const char* dir = std::getenv("TILEPIPE_PCAPS");
    return std::string(dir != nullptr ? dir : "../shared/pcaps") + "/pcpp__example.pcap";
}

// What must match between two runs of one app: per node (name, in, out, drops, delivered), with
// the workers of an on_demand farm summed per stage, since which worker had room first is the
// run's timing, not the app's.
using Counts = std::map<std::string, std::tuple<uint64_t, uint64_t, uint64_t, uint64_t>>;

std::string key_of(const std::string& name) {
    if (name.rfind("piped.", 0) != 0) return name;
    const size_t tile = name.find('.', 6);  // piped.W.STAGE
    return "piped.*" + name.substr(tile);
}

void add(Counts& c, const std::string& name, uint64_t in, uint64_t out, uint64_t drops, uint64_t delivered) {
    auto& [i, o, d, v] = c[key_of(name)];
    i += in, o += out, d += drops, v += delivered;
}

TEST(Builder, FarmYamlAndCppBuiltRunTheSameCountsNodeByNode) {
    AppConfig yaml = load_app_config(source_root() + "/conf/farm.yaml");
    replace_source_with_pcap(yaml, capture());  // as `tilepipe run conf/farm.yaml --pcap FILE`
    RunReport from_yaml;
    {
        AppRunner runner(yaml);
        from_yaml = runner.run();
    }
    Runtime runtime;
    const Report from_cpp = runtime.run(farm_example::farm_app(capture()));

    ASSERT_GT(from_yaml.packets, 0u);
    EXPECT_EQ(from_cpp.packets, from_yaml.packets);
    EXPECT_EQ(from_cpp.delivered, from_yaml.delivered);
    EXPECT_EQ(from_cpp.exit_status, 0);
    ASSERT_EQ(from_cpp.nodes.size(), from_yaml.stages.size());
    Counts a, b;
    for (size_t i = 0; i < from_yaml.stages.size(); ++i) {
        const StageReport& y = from_yaml.stages[i];
        const NodeCounts& c = from_cpp.nodes[i];
        EXPECT_EQ(c.name, y.name) << "node " << i;
        EXPECT_EQ(c.stage, y.stage) << y.name;
        add(a, y.name, y.in, y.out, y.drops, y.kind == "sink" ? y.out : 0);
        add(b, c.name, c.in, c.out, c.drops, c.delivered);
    }
    EXPECT_EQ(b, a);
    // The flow-hash farm's workers each see the same flows both ways.
    ASSERT_NE(from_cpp.node("rtc.3/pass"), nullptr);
    EXPECT_GT(from_cpp.node("rtc.3/pass")->in, 0u);
    EXPECT_EQ(from_cpp.node("drop")->delivered, from_yaml.packets);
}

// Every kind of key, given both ways, makes the same graph on the same tiles with the same links.
TEST(Builder, EveryKindOfSettingMakesTheGraphTheFileMakes) {
    const char* yaml =
        "app: knobs\n"
        "topology: tilepro64\n"
        "placement: snake\n"
        "transport: sm\n"
        "queue: 256\n"
        "pool: { mbufs: 8191, cache: 128, data_room: 2048 }\n"
        "runtime: { threads: per_tile, fuse: never, idle: park }\n"
        "latency: off\n"
        "network: { queues: 2 }\n"
        "memory: interleave\n"
        "pipeline:\n"
        "  - stage: synth\n"
        "    name: src\n"
        "    count: 3000\n"
        "    tile: [0, 1]\n"
        "  - stage: parse\n"
        "    transport: ring\n"
        "    queue: 64\n"
        "  - map:\n"
        "      name: m\n"
        "      workers: 3\n"
        "      multicast: linear\n"
        "      queue: 128\n"
        "      worker: [pass]\n"
        "  - farm:\n"
        "      name: f\n"
        "      workers: 2\n"
        "      dispatch: round_robin\n"
        "      collect: ordered\n"
        "      transport: lock\n"
        "      memory: local\n"
        "      worker:\n"
        "        pipeline: [pass, pass]\n"
        "  - stage: drop\n";
    AppConfig file = parse_app_config(yaml, "knobs.yaml");
    nlohmann::json from_yaml;
    {
        AppRunner runner(file);
        from_yaml = to_json(runner.run());
    }

    AppBuilder app("knobs");
    app.topology("tilepro64").placement("snake").transport("sm").queue(256).pool(8191, 128, 2048);
    app.runtime("per_tile", "never", "park").latency("off").set("network.queues", 2).memory("interleave");
    Node src = app.stage("synth", {{"count", 3000}}).name("src").tile(0, 1);
    Node parse = app.stage("parse").transport("ring").queue(64);
    Map m = app.map("m").workers(3).multicast("linear").queue(128).worker({app.stage("pass")});
    Farm f = app.farm("f").workers(2).dispatch("round_robin").collect("ordered").transport("lock").memory("local");
    f.worker_pipeline({app.stage("pass"), app.stage("pass")});
    app.pipeline({src, parse, m, f, app.stage("drop")});
    Runtime runtime;
    const nlohmann::json from_cpp = nlohmann::json::parse(runtime.run(app).json);

    EXPECT_EQ(from_cpp["app"], from_yaml["app"]);
    EXPECT_EQ(from_cpp["header"]["topology"], from_yaml["header"]["topology"]);
    EXPECT_EQ(from_cpp["channels"], from_yaml["channels"]);
    ASSERT_EQ(from_cpp["pools"].size(), 1u);  // pools are named by a process-wide count
    EXPECT_EQ(from_cpp["pools"][0]["capacity"], from_yaml["pools"][0]["capacity"]);
    EXPECT_EQ(from_cpp["pools"][0]["capacity"], 8191);
    ASSERT_EQ(from_cpp["tiles"].size(), from_yaml["tiles"].size());
    for (size_t i = 0; i < from_yaml["tiles"].size(); ++i)
        for (const char* k : {"node", "role", "tile", "packets"})
            EXPECT_EQ(from_cpp["tiles"][i][k], from_yaml["tiles"][i][k]) << i << " " << k;
    ASSERT_EQ(from_cpp["stages"].size(), from_yaml["stages"].size());
    // Round robin deals bursts, whose sizes follow the timing of the links before the farm:
    // a worker's share may differ between runs, the farm's total per stage may not.
    std::map<std::string, std::array<uint64_t, 3>> farm_cpp, farm_yaml;
    const auto add = [](auto& totals, const nlohmann::json& st) {
        const std::string name = st["name"];
        auto& t = totals[name.substr(name.find('.', 2))];  // "f.W.pass_2" -> ".pass_2"
        t[0] += st["in"].get<uint64_t>();
        t[1] += st["out"].get<uint64_t>();
        t[2] += st["bytes"].get<uint64_t>();
    };
    for (size_t i = 0; i < from_yaml["stages"].size(); ++i) {
        const bool in_farm = from_yaml["stages"][i]["name"].get<std::string>().starts_with("f.");
        for (const char* k : {"name", "stage", "kind", "tile", "in", "out", "drops", "bytes"})
            if (!in_farm || std::string(k) == "name" || std::string(k) == "stage" || std::string(k) == "kind" ||
                std::string(k) == "tile" || std::string(k) == "drops")
                EXPECT_EQ(from_cpp["stages"][i][k], from_yaml["stages"][i][k]) << i << " " << k;
        if (in_farm) {
            add(farm_cpp, from_cpp["stages"][i]);
            add(farm_yaml, from_yaml["stages"][i]);
        }
    }
    EXPECT_EQ(farm_cpp.size(), 2u);  // the worker pipeline's two stages
    EXPECT_EQ(farm_cpp, farm_yaml);
    EXPECT_EQ(from_cpp.contains("latency"), from_yaml.contains("latency"));
}

// An endless source ends when the program asks, with everything in flight delivered.
TEST(Builder, StopEndsAnEndlessRunWithEveryPacketAccounted) {
    Runtime runtime;
    AppBuilder app("endless");
    app.pipeline({app.stage("synth", {{"count", 0}}), app.stage("pass"), app.stage("drop")});
    Runtime::stop();  // asked before the run starts: it ends that run at once
    const Report r = runtime.run(app);
    EXPECT_EQ(r.exit_status, 0);
    EXPECT_EQ(r.unaccounted, 0);
    EXPECT_EQ(r.packets, r.delivered);
    EXPECT_TRUE(r.pools_full);
    // The request ended that run only.
    AppBuilder next("next");
    next.pipeline({next.stage("synth", {{"count", 500}}), next.stage("drop")});
    EXPECT_EQ(runtime.run(next).delivered, 500u);
}

TEST(Builder, TheReportIsTheOneTheCliPrints) {
    Runtime runtime;
    AppBuilder app("small");
    app.pipeline({app.stage("synth", {{"count", 1000}}), app.stage("parse"), app.stage("drop")});
    RunSettings settings;
    settings.config = "small.cpp";
    const Report r = runtime.run(app, settings);
    EXPECT_EQ(r.text.rfind("app small: 1000 packets delivered in ", 0), 0u) << r.text;
    const auto j = nlohmann::json::parse(r.json);
    EXPECT_EQ(j["app"], "small");
    EXPECT_EQ(j["packets"], 1000);
    EXPECT_EQ(j["header"]["config"], "small.cpp");
    EXPECT_EQ(j["header"]["exit_status"], 0);
    EXPECT_EQ(r.json.back(), '\n');
    ASSERT_EQ(r.nodes.size(), 3u);
    EXPECT_EQ(r.nodes[1].name, "parse");
    EXPECT_EQ(r.nodes[1].in, 1000u);
    EXPECT_EQ(r.nodes[2].delivered, 1000u);
    EXPECT_EQ(r.nodes[0].delivered, 0u);
    EXPECT_GT(r.nodes[2].bytes, 0u);
}

TEST(Builder, ValidateDescribesTheSameAppAsTheFile) {
    const AppConfig yaml = load_app_config(source_root() + "/conf/farm.yaml");
    EXPECT_EQ(farm_example::farm_app("").validate(), describe_app(yaml));
}

TEST(Builder, TypedValuesAreWrittenAsYamlHoldsThem) {
    EXPECT_EQ(Value(0.25).text(), "0.25");
    EXPECT_EQ(Value(true).text(), "true");
    EXPECT_EQ(Value(false).text(), "false");
    EXPECT_EQ(Value(4096).text(), "4096");
    EXPECT_EQ(Value(uint64_t{1} << 40).text(), "1099511627776");
    EXPECT_EQ(Value({"aa:bb:cc:dd:ee:01", "aa:bb:cc:dd:ee:02"}).text(), "aa:bb:cc:dd:ee:01, aa:bb:cc:dd:ee:02");
    EXPECT_EQ(Value({1, 2, 3}).text(), "1, 2, 3");
}

// Runs validate() and returns the error's text ("" when it passed).
std::string error_of(const AppBuilder& app) {
    try {
        app.validate();
    } catch (const AppError& e) {
        return e.what();
    }
    return "";
}

// A program runs its app as one process: a node on another rank needs `mpirun ... tilepipe run`.
TEST(Builder, ANodeOnAnotherRankIsRefusedInOneProcess) {
    AppBuilder app("t");
    app.pipeline({app.stage("synth", {{"count", 10}}), app.stage("drop", {{"rank", 1}})});
    Runtime runtime;
    try {
        runtime.run(app);
        ADD_FAILURE() << "ran in one process";
    } catch (const AppError& e) {
        EXPECT_NE(std::string(e.what()).find("rank 1 needs mpirun"), std::string::npos) << e.what();
    }
}

TEST(Builder, AnUnknownStageIsNamedAtItsPlaceInThePipeline) {
    AppBuilder app("t");
    app.pipeline({app.stage("synth"), app.stage("prase"), app.stage("drop")});
    EXPECT_EQ(error_of(app).rfind("pipeline[1] (stage prase): unknown stage 'prase' (known: ", 0), 0u) << error_of(app);
}

TEST(Builder, ABadParameterValueIsNamedAtItsNode) {
    AppBuilder app("t");
    app.pipeline({app.stage("synth", {{"count", "lots"}}), app.stage("drop")});
    EXPECT_EQ(error_of(app).rfind("pipeline[0] (stage synth): parameter 'count' expects ", 0), 0u) << error_of(app);

    AppBuilder worker("t");
    worker.pipeline({worker.stage("synth"), worker.farm("fw").worker({worker.stage("pass"), worker.stage("pass", {{"burst", 1}})}),
                     worker.stage("drop")});
    EXPECT_EQ(error_of(worker).rfind("pipeline[1] (farm fw).worker[1] (stage pass): unknown parameter 'burst' for stage 'pass'", 0), 0u)
        << error_of(worker);
}

TEST(Builder, AFarmWithoutWorkersIsRefusedAtTheFarm) {
    AppBuilder app("t");
    app.pipeline({app.stage("synth"), app.stage("parse"), app.farm("rtc").workers(0).worker({app.stage("pass")}), app.stage("drop")});
    EXPECT_EQ(error_of(app), "pipeline[2] (farm rtc): workers must be between 1 and 1024, got 0");

    AppBuilder none("t");
    none.pipeline({none.stage("synth"), none.farm(), none.stage("drop")});
    EXPECT_EQ(error_of(none), "pipeline[1] (farm): farm has no worker: give the stages each worker runs with worker() or worker_pipeline()");
}

TEST(Builder, AppSettingsAndShapeAreCheckedAsTheFileIs) {
    AppBuilder app("t");
    app.queue(1000);
    app.pipeline({app.stage("synth"), app.stage("drop")});
    EXPECT_EQ(error_of(app), "app 't' setting queue: queue must be a power of two, got 1000");

    AppBuilder shape("t");
    shape.pipeline({shape.stage("synth"), shape.stage("parse")});
    EXPECT_EQ(error_of(shape), "pipeline[1] (stage parse): a pipeline ends with a sink (e.g. drop, pcap_out); 'parse' is a processor");

    AppBuilder memory("t");
    memory.pipeline({memory.stage("synth"), memory.stage("pass").memory("everywhere"), memory.stage("drop")});
    EXPECT_EQ(error_of(memory), "pipeline[1] (stage pass): unknown memory placement 'everywhere' (known: local, interleave, first_touch)");

    AppBuilder empty("t");
    EXPECT_EQ(error_of(empty), "app 't': the pipeline is empty");
}

TEST(Builder, APluginThatCannotLoadIsNamedWithItsPath) {
    AppBuilder app("t");
    app.plugin("/nonexistent/libnone.so");
    app.pipeline({app.stage("synth"), app.stage("drop")});
    EXPECT_EQ(error_of(app).rfind("app 't' plugin /nonexistent/libnone.so: plugin /nonexistent/libnone.so: ", 0), 0u) << error_of(app);
}

TEST(Builder, ABuilderErrorIsALocatedErrorWithTheProgramsPlace) {
    AppBuilder app("t");
    app.pipeline({app.stage("synth"), app.farm("fw").workers(0).worker({app.stage("pass")}), app.stage("drop")});
    try {
        app.validate();
        FAIL() << "validated";
    } catch (const LocatedError& e) {
        EXPECT_EQ(e.where().file, "pipeline[1] (farm fw)");
        EXPECT_EQ(e.message(), "workers must be between 1 and 1024, got 0");
    }
}

TEST(Builder, ANodeStandsInOnePlace) {
    AppBuilder app("t");
    Node pass = app.stage("pass");
    app.pipeline({app.stage("synth"), pass, pass, app.stage("drop")});
    EXPECT_EQ(error_of(app), "pipeline[2] (stage pass): this node is already at pipeline[1]: make one node for each place (AppBuilder::stage)");

    AppBuilder loose("t");
    loose.stage("pass");
    loose.pipeline({loose.stage("synth"), loose.stage("drop")});
    EXPECT_EQ(error_of(loose), "node #0 (stage pass): is in no pipeline and no worker: connect every node made with AppBuilder::stage");
}

TEST(Builder, ASecondRuntimeWhileOneLivesIsRefused) {
    Runtime first;
    try {
        Runtime second;
        FAIL() << "a second Runtime was made";
    } catch (const AppError& e) {
        EXPECT_EQ(e.place(), "Runtime");
    }
}

}  // namespace
}  // namespace tp
