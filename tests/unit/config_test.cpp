// App configs: what a valid config becomes, and that every mistake is reported once, as
// `file:line:col: message`, before anything runs.
#include <gtest/gtest.h>

#include <algorithm>

#include "framework/config/app_config.hpp"
#include "framework/config/overrides.hpp"
#include "framework/eal/eal_session.hpp"
#include "framework/graph/app_runner.hpp"
#include "tests/support/config_error.hpp"

namespace tp {
namespace {

using test::error_of;

TEST(StageRegistry, AStageMayNotDeclareAParameterNamedAsAPipelineEntrysKey) {
    // `memory: local` on a node is its placement; a stage parameter of that name could never be
    // given. A plugin declaring one is refused whole, before any of its stages is added.
    StageInfo fine;
    fine.name = "reserved_test_fine";
    StageInfo bad;
    bad.name = "reserved_test_bad";
    bad.params.push_back(param<uint64_t>("memory", 0, "bytes"));
    std::vector<StageInfo> plugin{fine, bad};
    try {
        StageRegistry::instance().add_all(std::move(plugin));
        ADD_FAILURE() << "a parameter named memory was registered";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("stage 'reserved_test_bad' declares a parameter 'memory', a key every "
                                             "pipeline entry reserves"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_EQ(StageRegistry::instance().find("reserved_test_fine"), nullptr) << "nothing half-registered";
    for (const StageInfo* s : StageRegistry::instance().all())
        for (const ParamSpec& p : s->params)
            EXPECT_TRUE(std::find(node_keys().begin(), node_keys().end(), p.name) == node_keys().end())
                << s->name << " declares " << p.name;
}

TEST(AppConfig, NodesTakeTheirStageNameAndDuplicatesAreNumbered) {
    const AppConfig app = parse_app_config(
        "pipeline:\n  - stage: synth\n  - pass\n  - pass\n  - stage: pass\n    name: third\n  - drop\n",
        "dir/chain.yaml");
    ASSERT_EQ(app.pipeline.size(), 5u);
    EXPECT_EQ(app.name, "chain");
    EXPECT_EQ(app.pipeline[0].name, "synth");
    EXPECT_EQ(app.pipeline[1].name, "pass");
    EXPECT_EQ(app.pipeline[2].name, "pass_2");
    EXPECT_EQ(app.pipeline[3].name, "third");
    EXPECT_EQ(app.pipeline[4].name, "drop");
}

TEST(AppConfig, ParametersAreTypedAndDefaultsFilled) {
    const AppConfig app = parse_app_config(
        "app: demo\npipeline:\n  - stage: synth\n    count: 5k\n    size: imix\n  - drop\n", "a.yaml");
    EXPECT_EQ(app.name, "demo");
    const ParamValues& p = app.pipeline[0].params;
    EXPECT_EQ(p.get_uint("count"), 5000u);
    EXPECT_EQ(p.get_string("size"), "imix");
    EXPECT_EQ(p.get_uint("flows"), 1024u);
    EXPECT_FALSE(p.given("flows"));
    EXPECT_TRUE(p.given("count"));
}

// yaml-cpp would keep the last of the two without a word.
TEST(AppConfig, AKeyGivenTwiceInOneMappingIsRefusedAtTheSecondNamingTheFirst) {
    EXPECT_EQ(error_of("pipeline:\n  - stage: synth\n    count: 5\n    count: 7\n  - drop\n"),
              "app.yaml:4:5: 'count' is given twice in this mapping (first at line 3): give each key once");
    EXPECT_EQ(error_of("app: a\npipeline:\n  - synth\n  - drop\napp: b\n"),
              "app.yaml:5:1: 'app' is given twice in this mapping (first at line 1): give each key once");
    EXPECT_EQ(error_of("pipeline:\n  - synth\n  - farm: { workers: 2, workers: 3, worker: [pass] }\n  - drop\n"),
              "app.yaml:3:25: 'workers' is given twice in this mapping (first at line 3): give each key once");
    // Aliases are walked once each: nine nested levels of ten (a billion nodes if expanded) end
    // at the unknown key, not in an endless walk.
    std::string laughs = "lol0: &l0 [a, a, a, a, a, a, a, a, a, a]\n";
    for (int i = 1; i < 9; ++i) {
        laughs += "lol" + std::to_string(i) + ": &l" + std::to_string(i) + " [";
        for (int k = 0; k < 10; ++k) laughs += std::string(k ? ", " : "") + "*l" + std::to_string(i - 1);
        laughs += "]\n";
    }
    EXPECT_EQ(error_of(laughs + "pipeline: [synth, drop]\n").rfind("app.yaml:1:1: unknown key 'lol0'", 0), 0u);
    // The same key in different mappings is two settings.
    EXPECT_EQ(error_of("pipeline:\n  - { stage: synth, name: a }\n  - { stage: pass, name: b }\n  - drop\n"), "no error");
}

TEST(AppConfig, UnknownStageNamesItsPosition) {
    EXPECT_EQ(error_of("pipeline:\n  - stage: synth\n  - stage: nope\n  - drop\n").substr(0, 44),
              "app.yaml:3:12: unknown stage 'nope' (known: ");
}

TEST(AppConfig, UnknownParameterPointsAtTheKey) {
    const std::string e = error_of("pipeline:\n  - stage: synth\n    colour: red\n  - drop\n");
    EXPECT_EQ(e.rfind("app.yaml:3:5: unknown parameter 'colour' for stage 'synth'", 0), 0u) << e;
}

TEST(AppConfig, IllTypedParameterPointsAtTheValue) {
    const std::string e = error_of("pipeline:\n  - stage: synth\n    count: lots\n  - drop\n");
    EXPECT_EQ(e, "app.yaml:3:12: parameter 'count' expects an unsigned integer, got 'lots'");
}

TEST(AppConfig, MissingRequiredParameterPointsAtTheNode) {
    const std::string e = error_of("pipeline:\n  - stage: pcap\n  - drop\n");
    EXPECT_EQ(e.rfind("app.yaml:2:12: missing required parameter 'file'", 0), 0u) << e;
}

TEST(AppConfig, UnknownTopLevelKeyIsRejected) {
    EXPECT_EQ(error_of("pipelines:\n  - synth\n").rfind("app.yaml:1:1: unknown key 'pipelines'", 0), 0u);
}

TEST(AppConfig, SyntaxErrorsCarryTheParserPosition) {
    const std::string e = error_of("pipeline:\n  - stage: synth\n   - drop: [\n");
    EXPECT_EQ(e.rfind("app.yaml:3:", 0), 0u) << e;
}

TEST(AppConfig, PipelineMustRunFromSourceToSink) {
    EXPECT_NE(error_of("pipeline:\n  - parse\n  - drop\n").find("app.yaml:2:5: a pipeline starts with a source"),
              std::string::npos);
    EXPECT_NE(error_of("pipeline:\n  - synth\n  - parse\n").find("app.yaml:3:5: a pipeline ends with a sink"),
              std::string::npos);
    EXPECT_NE(error_of("pipeline:\n  - synth\n  - drop\n  - drop\n").find("app.yaml:3:5: 'drop' is a sink"),
              std::string::npos);
}

TEST(AppConfig, DuplicateExplicitNamesAreRejected) {
    const std::string e = error_of(
        "pipeline:\n  - stage: synth\n    name: x\n  - stage: drop\n    name: x\n");
    EXPECT_EQ(e, "app.yaml:4:12: duplicate node name 'x'");
}

TEST(AppConfig, QueueMustBeAPowerOfTwoAndTransportKnown) {
    EXPECT_EQ(error_of("queue: 1000\npipeline: [synth, drop]\n"),
              "app.yaml:1:8: queue must be a power of two, got 1000");
    EXPECT_EQ(error_of("transport: carrier_pigeon\npipeline: [synth, drop]\n").rfind(
                  "app.yaml:1:12: unknown transport 'carrier_pigeon'", 0),
              0u);
}

TEST(AppConfig, EmptyOrMissingFileIsAnError) {
    EXPECT_EQ(error_of(""), "app.yaml:1:1: the file is empty; an app needs a 'pipeline:'");
    try {
        load_app_config("/nonexistent/app.yaml");
        FAIL();
    } catch (const LocatedError& e) {
        EXPECT_EQ(std::string(e.what()),
                  "/nonexistent/app.yaml: cannot read app config: No such file or directory");
    }
}

TEST(AppConfig, SetOverridesAParameterAndIsCheckedLikeTheFile) {
    AppConfig app = parse_app_config("pipeline: [synth, drop]\n", "a.yaml");
    apply_set(app, "synth.count=42");
    EXPECT_EQ(app.pipeline[0].params.get_uint("count"), 42u);
    EXPECT_THROW(apply_set(app, "synth.count=-1"), LocatedError);
    try {
        apply_set(app, "nosuch.count=1");
        FAIL();
    } catch (const LocatedError& e) {
        EXPECT_EQ(std::string(e.what()),
                  "--set nosuch.count=1: no node or farm named 'nosuch' (names: synth, drop; top-level settings "
                  "take no name: --set queue=256, --set pool.mbufs=8191)");
    }
    EXPECT_THROW(apply_set(app, "synth.bogus=1"), LocatedError);
    EXPECT_THROW(apply_set(app, "synth=1"), LocatedError);
}

TEST(AppConfig, FarmWorkersAreStagesInPlaceAndNamed) {
    const AppConfig app = parse_app_config(
        "pipeline:\n  - synth\n  - farm:\n      workers: 3\n      dispatch: flow_hash\n"
        "      worker:\n        - pass\n        - stage: parse\n  - drop\n",
        "f.yaml");
    ASSERT_EQ(app.patterns.size(), 1u);
    const PatternConfig& f = app.patterns[0];
    EXPECT_EQ(f.name, "farm");
    EXPECT_EQ(f.workers, 3u);
    EXPECT_EQ(f.dispatch, "flow_hash");
    EXPECT_EQ(f.collect, "unordered");
    EXPECT_EQ(f.last - f.first, 2u);
    EXPECT_EQ(app.pipeline[f.first].name, "pass");
    EXPECT_EQ(app.pipeline[f.first].pattern, 0);
    EXPECT_EQ(app.elements.size(), 3u);
}

TEST(AppConfig, FarmMistakesAreLocated) {
    EXPECT_EQ(error_of("pipeline:\n  - synth\n  - farm:\n      workers: 0\n      worker: [pass]\n  - drop\n"),
              "app.yaml:4:16: workers must be between 1 and 1024, got 0");
    EXPECT_EQ(error_of("pipeline:\n  - synth\n  - farm:\n      dispatch: random\n      worker: [pass]\n  - drop\n")
                  .rfind("app.yaml:4:17: unknown dispatch 'random'", 0),
              0u);
    EXPECT_EQ(error_of("pipeline:\n  - synth\n  - farm:\n      workers: 2\n  - drop\n"),
              "app.yaml:4:7: farm has no 'worker:' (the stages each worker runs)");
    EXPECT_EQ(error_of("pipeline:\n  - synth\n  - farm:\n      emitter: false\n      collect: ordered\n"
                       "      worker: [pass]\n  - drop\n")
                  .rfind("app.yaml:4:7: collect: ordered needs the emitter", 0),
              0u);
    EXPECT_NE(error_of("pipeline:\n  - synth\n  - farm:\n      worker: [drop]\n  - drop\n").find(
                  "a worker may end with a sink only in the last farm, with collect: none"),
              std::string::npos);
}

TEST(AppConfig, MapsTakeMulticastAndRejectFarmOnlyKeys) {
    const AppConfig app = parse_app_config(
        "pipeline:\n  - synth\n  - map:\n      workers: 6\n      multicast: linear\n      worker: [parse]\n  - drop\n",
        "m.yaml");
    ASSERT_EQ(app.patterns.size(), 1u);
    EXPECT_TRUE(app.patterns[0].map);
    EXPECT_EQ(app.patterns[0].name, "map");
    EXPECT_EQ(app.patterns[0].multicast, "linear");
    EXPECT_EQ(error_of("pipeline:\n  - synth\n  - map:\n      dispatch: flow_hash\n      worker: [pass]\n  - drop\n")
                  .rfind("app.yaml:4:7: unknown map key 'dispatch'", 0),
              0u);
    EXPECT_EQ(error_of("pipeline:\n  - synth\n  - map:\n      multicast: star\n      worker: [pass]\n  - drop\n")
                  .rfind("app.yaml:4:18: unknown multicast 'star'", 0),
              0u);
    EXPECT_NE(error_of("pipeline:\n  - synth\n  - map:\n      worker: [drop]\n").find("a map worker runs processors"),
              std::string::npos);
}

TEST(AppConfig, PcapOverrideReplacesTheSourceAndKeepsItsName) {
    AppConfig app = parse_app_config("pipeline:\n  - stage: synth\n    name: src\n  - drop\n", "a.yaml");
    replace_source_with_pcap(app, "x.pcap");
    set_loop(app, "3");
    EXPECT_EQ(app.pipeline[0].name, "src");
    EXPECT_EQ(app.pipeline[0].stage->name, "pcap");
    EXPECT_EQ(app.pipeline[0].params.get_string("file"), "x.pcap");
    EXPECT_EQ(app.pipeline[0].params.get_uint("loop"), 3u);
}

TEST(EalOptions, PciIsScannedOnlyForTheDevicesPortStagesName) {
    auto args_for = [](const std::string& device) {
        const AppConfig app = parse_app_config(
            "pipeline:\n  - synth\n  - stage: port_out\n    device: \"" + device + "\"\n", "a.yaml");
        const EalOptions o = eal_options_for(app, plan_app(app));
        return std::make_pair(o.pci_devices, eal_arguments(o, false));
    };
    auto has = [](const std::vector<std::string>& v, const std::string& s) {
        return std::find(v.begin(), v.end(), s) != v.end();
    };
    const auto [none, vdev_args] = args_for("net_null0");
    EXPECT_TRUE(none.empty());
    EXPECT_TRUE(has(vdev_args, "--no-pci"));
    const auto [pci, pci_args] = args_for("0000:3b:00.0,txq_inline=1");
    EXPECT_EQ(pci, (std::vector<std::string>{"0000:3b:00.0"}));
    EXPECT_FALSE(has(pci_args, "--no-pci"));
    const auto a = std::find(pci_args.begin(), pci_args.end(), "-a");
    ASSERT_NE(a, pci_args.end());
    EXPECT_EQ(*(a + 1), "0000:3b:00.0");
}

TEST(AppConfig, AFarmOpensThePipelineOnlyWhenEachWorkerReadsItsOwnPortQueue) {
    auto farm = [](const std::string& farm_keys, const std::string& source) {
        return "pipeline:\n  - farm:\n      workers: 2\n" + farm_keys + "      worker:\n        - stage: " + source +
               "\n          file: a.pcap\n        - parse\n  - drop\n";
    };
    const AppConfig ok = parse_app_config(farm("      emitter: false\n", "port"), "app.yaml");
    EXPECT_EQ(ok.elements.front().pattern, 0);
    EXPECT_EQ(error_of(farm("", "port")),
              "app.yaml:3:7: farm 'farm' opens the pipeline: its workers read their own queues, so it needs 'emitter: false'");
    EXPECT_EQ(error_of(farm("      emitter: false\n      dispatch: flow_hash\n", "port")),
              "app.yaml:3:7: farm 'farm' has no dispatch: each worker reads its own queue");
    EXPECT_EQ(error_of(farm("      emitter: false\n", "pcap")),
              "app.yaml:6:18: 'pcap' cannot start a farm's workers: each worker must read a queue of its own (use 'port')");
    EXPECT_EQ(error_of(farm("      emitter: false\n", "port\n          rx_queue: 1")),
              "app.yaml:7:21: worker w of farm 'farm' uses RX queue w: drop 'rx_queue'");
    EXPECT_EQ(error_of("pipeline:\n  - synth\n  - farm:\n      workers: 2\n      collect: none\n      worker:\n"
                       "        - stage: port_out\n          tx_queue: 0\n"),
              "app.yaml:8:21: worker w of farm 'farm' uses TX queue w: drop 'tx_queue'");
    // A farm opening the pipeline may be all of it.
    EXPECT_EQ(error_of("pipeline:\n  - farm:\n      emitter: false\n      collect: none\n      worker:\n"
                       "        - { stage: port, file: a.pcap }\n        - port_out\n"),
              "no error");
    EXPECT_EQ(error_of(farm("      emitter: false\n", "port\n          queues: 1")),
              "app.yaml:7:19: 'queues' must give each of the 2 workers of farm 'farm' a queue");
    // A source anywhere else in a worker is still misplaced.
    EXPECT_NE(error_of("pipeline:\n  - synth\n  - farm:\n      worker: [port]\n  - drop\n").find("can only stand at the start"),
              std::string::npos);
}

TEST(AppConfig, ChecksBetweenParametersRunOnceEverySetIsApplied) {
    AppConfig app = parse_app_config("pipeline:\n  - stage: port\n  - drop\n", "app.yaml");
    try {
        check_stage_params(app);
        ADD_FAILURE() << "a port with neither device nor file passed";
    } catch (const LocatedError& e) {
        EXPECT_EQ(e.where().str(), "app.yaml:2:12");
    }
    // One --set may undo what another left inconsistent: only the end result counts.
    apply_set(app, "port.file=a.pcap");
    apply_set(app, "port.device=net_null0");
    EXPECT_THROW(check_stage_params(app), LocatedError);
    apply_set(app, "port.file=");
    EXPECT_NO_THROW(check_stage_params(app));
}

// --- Command-line overrides: every setting a file holds, with the file's checks ---

std::string override_error(AppConfig app, const AppOverrides& o) {
    try {
        apply_overrides(app, o);
    } catch (const LocatedError& e) {
        return e.what();
    }
    return "no error";
}

const char* kFarmApp =
    "pipeline:\n  - stage: synth\n    name: src\n  - farm:\n      name: fw\n      workers: 4\n"
    "      dispatch: flow_hash\n      worker:\n        - stage: sample\n        - stage: pass\n  - drop\n";

TEST(Overrides, SetReachesTopLevelPoolAndRuntimeSettings) {
    AppConfig app = parse_app_config(kFarmApp, "a.yaml");
    AppOverrides o;
    o.sets = {"transport=sm", "queue=256", "topology=tilepro64", "placement=linear", "pool.mbufs=8191",
              "pool.data_room=4096", "runtime.threads=per_tile", "runtime.fuse=never", "app=renamed"};
    apply_overrides(app, o);
    EXPECT_EQ(app.transport, "sm");
    EXPECT_EQ(app.queue, 256u);
    EXPECT_EQ(app.topology, "tilepro64");
    EXPECT_EQ(app.placement, "linear");
    EXPECT_EQ(app.pool.mbufs, 8191u);
    EXPECT_EQ(app.pool.data_room, 4096u);
    EXPECT_EQ(app.threads, "per_tile");
    EXPECT_EQ(app.fuse, "never");
    EXPECT_EQ(app.name, "renamed");
    const AppConfig base = parse_app_config(kFarmApp, "a.yaml");
    EXPECT_EQ(override_error(base, {.sets = {"queue=1000"}}), "--set queue=1000: queue must be a power of two, got 1000");
    EXPECT_EQ(override_error(base, {.sets = {"pool.mbufs=lots"}}),
              "--set pool.mbufs=lots: parameter 'pool.mbufs' expects an unsigned integer, got 'lots'");
    EXPECT_EQ(override_error(base, {.sets = {"runtime.threads=many"}}),
              "--set runtime.threads=many: runtime.threads must be auto or per_tile, got 'many'");
    EXPECT_EQ(override_error(base, {.sets = {"transport=pigeon"}}).rfind("--set transport=pigeon: unknown transport 'pigeon'", 0), 0u);
    EXPECT_EQ(override_error(base, {.sets = {"pool.size=1"}}),
              "--set pool.size=1: unknown key 'pool.size' (known: mbufs, cache, data_room)");
}

TEST(Overrides, SetReachesFarmSettingsWithTheFilesChecksAndNamesTheOverride) {
    AppConfig app = parse_app_config(kFarmApp, "a.yaml");
    apply_overrides(app, {.sets = {"fw.workers=3", "fw.dispatch=on_demand", "fw.collect=ordered", "fw.transport=sm", "fw.queue=64"}});
    const PatternConfig& f = app.patterns[0];
    EXPECT_EQ(f.workers, 3u);
    EXPECT_EQ(f.dispatch, "on_demand");
    EXPECT_EQ(f.collect, "ordered");
    EXPECT_EQ(f.transport, "sm");
    EXPECT_EQ(f.queue, 64u);
    const AppConfig base = parse_app_config(kFarmApp, "a.yaml");
    EXPECT_EQ(override_error(base, {.sets = {"fw.workers=x"}}),
              "--set fw.workers=x: parameter 'workers' expects an unsigned integer, got 'x'");
    EXPECT_EQ(override_error(base, {.sets = {"fw.workers=0"}}), "--set fw.workers=0: workers must be between 1 and 1024, got 0");
    EXPECT_EQ(override_error(base, {.sets = {"fw.multicast=tree"}}).rfind("--set fw.multicast=tree: unknown farm key 'multicast'", 0), 0u);
    // Checks that span settings run on the result: an ordered farm needs its emitter.
    EXPECT_EQ(override_error(base, {.sets = {"fw.collect=ordered", "fw.emitter=false"}}),
              "a.yaml:5:7: collect: ordered needs the emitter (it numbers the packets the collector restores)");
    EXPECT_EQ(override_error(base, {.sets = {"fw.worker=pass"}}), "--set fw.worker=pass: a farm's worker cannot be overridden: edit the file");
}

TEST(Overrides, SetReachesANodesTransportQueueAndTile) {
    AppConfig app = parse_app_config(kFarmApp, "a.yaml");
    apply_overrides(app, {.sets = {"drop.transport=lock", "drop.queue=128", "src.tile=[1, 2]"}});
    EXPECT_EQ(app.pipeline.back().transport, "lock");
    EXPECT_EQ(app.pipeline.back().queue, 128u);
    ASSERT_TRUE(app.pipeline[0].tile.has_value());
    EXPECT_EQ(app.pipeline[0].tile->x, 1);
    EXPECT_EQ(app.pipeline[0].tile->y, 2);
    const AppConfig base = parse_app_config(kFarmApp, "a.yaml");
    EXPECT_EQ(override_error(base, {.sets = {"src.tile=3"}}), "--set src.tile=3: tile must be a pair [x, y]");
    EXPECT_EQ(override_error(base, {.sets = {"drop.queue=3"}}), "--set drop.queue=3: queue must be a power of two, got 3");
    EXPECT_EQ(override_error(base, {.sets = {"src.name=x"}}), "--set src.name=x: a node's name cannot be overridden: edit the file");
}

// A farm worker's stage: by its name or through its farm for every worker, by the name the
// report prints (fw.0/sample, or fw.0.sample) for one worker only.
TEST(Overrides, AWorkersStageIsAddressedForAllWorkersOrForOne) {
    AppConfig app = parse_app_config(kFarmApp, "a.yaml");
    apply_overrides(app, {.sets = {"fw.sample.every=8", "fw.1/sample.every=2", "fw.3.sample.seed=7"}});
    const NodeConfig& sample = *app.find_node("sample");
    EXPECT_EQ(sample.params_of(0).get_uint("every"), 8u);
    EXPECT_EQ(sample.params_of(1).get_uint("every"), 2u);
    EXPECT_EQ(sample.params_of(2).get_uint("every"), 8u);
    EXPECT_EQ(sample.params_of(3).get_uint("every"), 8u);
    EXPECT_EQ(sample.params_of(3).get_uint("seed"), 7u);
    EXPECT_EQ(sample.params_of(1).where("every").str(), "--set fw.1/sample.every=2");
    AppConfig plain = parse_app_config(kFarmApp, "a.yaml");
    apply_overrides(plain, {.sets = {"sample.every=5"}});
    EXPECT_EQ(plain.find_node("sample")->params_of(2).get_uint("every"), 5u);
    const AppConfig base = parse_app_config(kFarmApp, "a.yaml");
    EXPECT_EQ(override_error(base, {.sets = {"fw.1/sample.every=0"}}),
              "--set fw.1/sample.every=0: parameter 'every' must be at least 1, got '0'");
    // The worker must exist once every override is in (workers may be overridden too).
    EXPECT_EQ(override_error(base, {.sets = {"fw.3/sample.every=2", "fw.workers=2"}}),
              "--set fw.3/sample.every=2: farm 'fw' has 2 worker(s), numbered from 0");
    AppConfig grown = parse_app_config(kFarmApp, "a.yaml");
    apply_overrides(grown, {.sets = {"fw.workers=8", "fw.7/sample.every=3"}});
    EXPECT_EQ(grown.find_node("sample")->params_of(7).get_uint("every"), 3u);
    EXPECT_EQ(grown.find_node("sample")->params_of(6).get_uint("every"), 16u);  // the stage default
    EXPECT_NE(override_error(base, {.sets = {"fw.0/sample.transport=sm"}})
                  .find("one worker's instance takes only parameters of its stage 'sample'"),
              std::string::npos);
    EXPECT_EQ(override_error(base, {.sets = {"fw.parse.every=2"}}),
              "--set fw.parse.every=2: the workers of 'fw' run no stage named 'parse' (they run: sample, pass)");
}

TEST(Overrides, TwoOverridesOfOneSettingAreRefused) {
    const char* replay = "pipeline:\n  - stage: pcap\n    name: src\n    file: x.pcap\n  - drop\n";
    const AppConfig app = parse_app_config(replay, "a.yaml");
    EXPECT_EQ(override_error(app, {.loop = "2", .sets = {"src.loop=3"}}),
              "--set src.loop=3: sets what --loop 2 already set; give each setting once");
    EXPECT_EQ(override_error(app, {.sets = {"src.loop=3", "src.loop=4"}}),
              "--set src.loop=4: sets what --set src.loop=3 already set; give each setting once");
    EXPECT_EQ(override_error(app, {.pcap = "y.pcap", .sets = {"src.file=z.pcap"}}),
              "--set src.file=z.pcap: sets what --pcap y.pcap already set; give each setting once");
    EXPECT_EQ(override_error(app, {.topology = "tilepro64", .sets = {"topology=host"}}),
              "--set topology=host: sets what --topology tilepro64 already set; give each setting once");
    EXPECT_EQ(override_error(app, {.latency = "all", .sets = {"latency=off"}}),
              "--set latency=off: sets what --latency all already set; give each setting once");
    const AppConfig farm = parse_app_config(kFarmApp, "a.yaml");
    EXPECT_EQ(override_error(farm, {.sets = {"sample.every=2", "fw.sample.every=3"}}),
              "--set fw.sample.every=3: sets what --set sample.every=2 already set; give each setting once");
    // One worker's value refines every worker's: not a second override of one setting.
    EXPECT_EQ(override_error(farm, {.sets = {"sample.every=2", "fw.0/sample.every=3"}}), "no error");
}

TEST(Overrides, LoopRefusesNegativeAndOutOfRangeCounts) {
    const AppConfig app = parse_app_config("pipeline:\n  - stage: pcap\n    file: x.pcap\n  - drop\n", "a.yaml");
    EXPECT_EQ(override_error(app, {.loop = "-1"}), "--loop -1: parameter 'loop' expects an unsigned integer, got '-1'");
    EXPECT_EQ(override_error(app, {.loop = "4294967296"}),
              "--loop 4294967296: parameter 'loop' must be from 0 to 4294967295, got '4294967296'");
    EXPECT_EQ(override_error(app, {.loop = "3"}), "no error");
}

// --pcap keeps what a pcap source also has: a paced replay stays paced.
TEST(Overrides, PcapKeepsTheReplacedSourcesLoopAndPacing) {
    AppConfig app = parse_app_config(
        "pipeline:\n  - stage: pcap\n    name: src\n    file: a.pcap\n    loop: 2\n    pps: 1000\n    memory: local\n  - drop\n",
        "a.yaml");
    apply_overrides(app, {.pcap = "b.pcap"});
    const NodeConfig& src = app.pipeline[0];
    EXPECT_EQ(src.params.get_string("file"), "b.pcap");
    EXPECT_EQ(src.params.get_uint("loop"), 2u);
    EXPECT_EQ(src.params.get_double("pps"), 1000.0);
    EXPECT_EQ(src.memory.policy, MemoryPolicy::Local);
    // A source of another stage keeps only what a pcap source also takes.
    AppConfig synth = parse_app_config("pipeline:\n  - stage: synth\n    count: 5\n  - drop\n", "a.yaml");
    apply_overrides(synth, {.pcap = "b.pcap", .loop = "4"});
    EXPECT_EQ(synth.pipeline[0].params.get_uint("loop"), 4u);
}

// Files a config reads are found beside it; files it writes and paths from the command line
// are the working directory's.
TEST(AppConfig, FilesAConfigReadsAreRelativeToItsFolder) {
    AppConfig app = parse_app_config(
        "pipeline:\n  - stage: pcap\n    file: ../caps/x.pcap\n  - stage: lpm_route\n    routes: data/r.txt\n"
        "  - stage: pcap_out\n    file: out.pcap\n",
        "conf/sub/app.yaml");
    EXPECT_EQ(app.pipeline[0].params.get_string("file"), "conf/caps/x.pcap");
    EXPECT_EQ(app.pipeline[1].params.get_string("routes"), "conf/sub/data/r.txt");
    EXPECT_EQ(app.pipeline[2].params.get_string("file"), "out.pcap");
    apply_set(app, "lpm_route.routes=mine.txt");
    EXPECT_EQ(app.pipeline[1].params.get_string("routes"), "mine.txt");
    const AppConfig abs = parse_app_config("pipeline:\n  - stage: pcap\n    file: /caps/x.pcap\n  - drop\n", "conf/app.yaml");
    EXPECT_EQ(abs.pipeline[0].params.get_string("file"), "/caps/x.pcap");
}

TEST(AppConfig, NodeNamesThatWouldHideTopLevelSettingsAreRefused) {
    EXPECT_EQ(error_of("pipeline:\n  - stage: synth\n    name: pool\n  - drop\n"),
              "app.yaml:3:11: node name 'pool' is taken by the app's pool settings");
}

TEST(Overrides, PcapOnAFarmOfPortSourcesNamesTheNodeToSet) {
    const AppConfig app = parse_app_config(
        "pipeline:\n  - farm:\n      name: rx\n      workers: 2\n      emitter: false\n      worker:\n"
        "        - { stage: port, file: a.pcap }\n        - parse\n  - drop\n",
        "rss.yaml");
    EXPECT_EQ(override_error(app, {.pcap = "b.pcap"}),
              "--pcap b.pcap: the workers of farm 'rx' each read a port queue, so there is no single source to replace: "
              "set the port's file instead (--set rx.port.file=FILE)");
}

}  // namespace
}  // namespace tp
