// App configs: what a valid config becomes, and that every mistake is reported once, as
// `file:line:col: message`, before anything runs.
#include <gtest/gtest.h>

#include <algorithm>

#include "framework/config/app_config.hpp"
#include "framework/config/overrides.hpp"
#include "framework/eal/eal_session.hpp"
#include "framework/graph/app_runner.hpp"

namespace tp {
namespace {

std::string error_of(const std::string& yaml) {
    try {
        parse_app_config(yaml, "app.yaml");
    } catch (const LocatedError& e) {
        return e.what();
    }
    return "no error";
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

}  // namespace
}  // namespace tp
