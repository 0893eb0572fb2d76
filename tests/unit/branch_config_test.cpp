// Branching apps as a user writes them: `next:` wires named outputs to nodes, joins, and every
// wiring mistake refused before anything runs, at its place and with what is valid.
#include <gtest/gtest.h>

#include <string>

#include "framework/config/app_config.hpp"
#include "framework/graph/app_graph.hpp"
#include "tests/support/config_error.hpp"
#include "tilepipe/app.hpp"

#include <functional>
#include <map>

namespace tp {
namespace {

using test::error_of;

// "a: a, b: b" style classify over synth: two matches and default.
const std::string kHead = "pipeline:\n  - stage: synth\n    count: 10\n  - parse\n";
const std::string kCls = "  - stage: classify\n    name: cls\n    matches: \"tcp: proto=tcp; udp: proto=udp\"\n";

size_t node_of(const AppGraph& g, const std::string& name) {
    for (size_t n = 0; n < g.nodes.size(); ++n)
        if (g.nodes[n].name == name) return n;
    ADD_FAILURE() << "no node " << name;
    return 0;
}

TEST(Branches, AnAppWithoutNextIsTheChainItWasWithOneEdgePerStep) {
    const AppConfig app = parse_app_config(kHead + "  - pass\n  - drop\n", "a.yaml");
    ASSERT_EQ(app.edges.size(), 3u);
    for (size_t k = 0; k < 3; ++k) {
        EXPECT_EQ(app.edges[k].from, k);
        EXPECT_EQ(app.edges[k].to, k + 1);
        EXPECT_EQ(app.edges[k].output_name, "out");
    }
    EXPECT_EQ(app.order, (std::vector<size_t>{0, 1, 2, 3}));
    const AppGraph g = build_graph(app);
    for (const GraphNode& n : g.nodes) EXPECT_NE(n.dispatch, Dispatch::Branch) << n.name;
}

TEST(Branches, EachOutputFeedsItsNodeAndSeveralOutputsJoinIntoOne) {
    const AppConfig app = parse_app_config(
        kHead + kCls + "    next: {tcp: tcps, udp: both, default: {to: both, queue: 64, transport: sm}}\n"
                       "  - stage: drop\n    name: tcps\n  - stage: drop\n    name: both\n",
        "a.yaml");
    const AppGraph g = build_graph(app);
    const size_t cls = node_of(g, "cls");
    EXPECT_EQ(g.nodes[cls].dispatch, Dispatch::Branch);
    const auto outs = g.outputs_of(cls);
    ASSERT_EQ(outs.size(), 3u);
    std::map<std::string, const GraphEdge*> by_label;
    for (size_t e : outs) by_label[g.edges[e].label] = &g.edges[e];
    EXPECT_EQ(by_label.at("tcp")->to, node_of(g, "tcps"));
    EXPECT_EQ(by_label.at("tcp")->output, 0);
    EXPECT_EQ(by_label.at("udp")->to, node_of(g, "both"));
    EXPECT_EQ(by_label.at("udp")->output, 1);
    EXPECT_EQ(by_label.at("default")->to, node_of(g, "both"));
    EXPECT_EQ(by_label.at("default")->output, 2);
    EXPECT_EQ(by_label.at("default")->capacity, 64u) << "the edge's own queue";
    EXPECT_EQ(by_label.at("default")->transport, "sm");
    EXPECT_EQ(g.inputs_of(node_of(g, "both")).size(), 2u) << "a join";
}

TEST(Branches, ANodeListedBeforeTheNodeThatFeedsItIsBuiltAfterIt) {
    // The target comes first in the list: the build order follows the edges, not the list.
    const AppConfig app = parse_app_config(kHead + "  - stage: pass\n    next: late\n  - stage: drop\n    name: early\n"
                                                   "  - stage: pass\n    name: late\n    next: early\n",
                                           "a.yaml");
    EXPECT_EQ(app.order, (std::vector<size_t>{0, 1, 2, 4, 3}));
    const AppGraph g = build_graph(app);
    EXPECT_EQ(g.edges.size(), 4u);
}

TEST(Branches, AFarmSitsOnABranchWithOneInputAndOneOutput) {
    const AppConfig app = parse_app_config(
        kHead + kCls + "    next: {tcp: fw, udp: drop, default: drop}\n"
                       "  - farm:\n      name: fw\n      workers: 2\n      worker: [pass]\n      next: drop\n  - drop\n",
        "a.yaml");
    const AppGraph g = build_graph(app);
    EXPECT_EQ(g.inputs_of(node_of(g, "fw.emitter")).size(), 1u);
    EXPECT_EQ(g.inputs_of(node_of(g, "drop")).size(), 3u) << "udp, default and the farm's collector";
}

TEST(Branches, AnOutputTheStageLacksIsRefusedWithItsOutputs) {
    const std::string e = error_of(kHead + kCls + "    next: {tcp: drop, udp: drop, default: drop, web: drop}\n  - drop\n");
    EXPECT_NE(e.find("app.yaml:8:49: node 'cls' (classify) has no output 'web' (its outputs: tcp, udp, default)"), std::string::npos) << e;
}

TEST(Branches, TwoEdgesFromOneOutputAreRefusedPointingAtTee) {
    for (const std::string next : {"{tcp: [drop, d2], udp: drop, default: drop}", "{tcp: drop, tcp: d2, udp: drop, default: drop}"}) {
        const std::string e = error_of(kHead + kCls + "    next: " + next + "\n  - drop\n  - stage: drop\n    name: d2\n");
        EXPECT_NE(e.find("app.yaml:8:"), std::string::npos) << e;
        EXPECT_NE(e.find("one output feeds one edge"), std::string::npos) << e;
        EXPECT_NE(e.find("tee"), std::string::npos) << e;
    }
}

TEST(Branches, AnUnwiredOutputIsRefusedWithTheNodesOutputs) {
    std::string e = error_of(kHead + kCls + "    next: {tcp: drop, udp: drop}\n  - drop\n");
    EXPECT_NE(e.find("app.yaml:8:5: output 'default' of node 'cls' (classify) is not wired (its outputs: tcp, udp, default"),
              std::string::npos)
        << e;
    // Without next:, a node of several outputs cannot flow on down the list.
    e = error_of(kHead + kCls + "  - drop\n");
    EXPECT_NE(e.find("app.yaml:5:12: node 'cls' (classify) has outputs tcp, udp, default: wire each under next:"),
              std::string::npos)
        << e;
}

TEST(Branches, ACycleIsRefusedAndPrinted) {
    const std::string e = error_of(kHead + "  - stage: pass\n    name: a\n    next: b\n  - stage: pass\n    name: b\n    next: a\n"
                                           "  - drop\n");
    EXPECT_NE(e.find("cycle: "), std::string::npos) << e;
    EXPECT_TRUE(e.find("a -> b -> a") != std::string::npos || e.find("b -> a -> b") != std::string::npos) << e;
}

TEST(Branches, ANodeNothingFeedsIsRefused) {
    const std::string e = error_of(kHead + "  - stage: pass\n    next: drop\n  - stage: pass\n    name: orphan\n  - drop\n");
    EXPECT_NE(e.find("app.yaml:7:12: nothing feeds node 'orphan' (pass)"), std::string::npos) << e;
}

TEST(Branches, ASinkWithNextIsRefused) {
    const std::string e = error_of(kHead + "  - stage: drop\n    next: d2\n  - stage: drop\n    name: d2\n");
    EXPECT_NE(e.find("app.yaml:6:5: node 'drop' (drop) has no outputs (it ends in a sink): remove its next:"),
              std::string::npos)
        << e;
}

TEST(Branches, NextInsideAWorkerChainIsRefused) {
    const std::string e = error_of(kHead + "  - farm:\n      worker:\n        - stage: pass\n          next: drop\n  - drop\n");
    EXPECT_NE(e.find("app.yaml:8:17: next: inside a farm's worker chain"), std::string::npos) << e;
}

TEST(Branches, AStageOfSeveralOutputsInsideAWorkerChainIsRefused) {
    // Its outputs could not be wired there: it would pass every packet on as if it had one.
    const std::string e = error_of(kHead + "  - farm:\n      worker:\n        - stage: classify\n          matches: \"t: tcp\"\n"
                                           "  - drop\n");
    EXPECT_NE(e.find("app.yaml:7:18: node 'classify' (classify) has outputs t, default: a farm's worker chain runs in order"),
              std::string::npos)
        << e;
}

TEST(Branches, ATeeOfZeroOutputsIsRefusedAtItsParameter) {
    AppConfig app = parse_app_config(kHead + "  - stage: tee\n    outputs: 1\n  - drop\n", "a.yaml");
    EXPECT_EQ(app.edges.back().output_name, "out0");
    const std::string e = error_of(kHead + "  - stage: tee\n    outputs: 0\n  - drop\n");
    EXPECT_NE(e.find("app.yaml:6:14: a tee of 0 outputs copies to nowhere"), std::string::npos) << e;
}

TEST(Branches, ATargetThatIsNoNodeIsRefusedWithTheNodes) {
    const std::string e = error_of(kHead + "  - stage: pass\n    next: nowhere\n  - drop\n");
    EXPECT_NE(e.find("app.yaml:6:11: no node named 'nowhere' in the pipeline (nodes: drop, parse, pass, synth)"),
              std::string::npos)
        << e;
}

TEST(Branches, FeedingTheSourceIsRefused) {
    const std::string e = error_of(kHead + "  - stage: pass\n    next: synth\n  - drop\n");
    EXPECT_NE(e.find("starts with a source: no edge may feed it"), std::string::npos) << e;
}

TEST(Branches, ABadClassifyExpressionIsRefusedNamingTheMatch) {
    const std::string e = error_of(kHead + "  - stage: classify\n    matches: \"web: tcp prot 80\"\n    next: {web: drop, default: drop}\n  - drop\n");
    EXPECT_NE(e.find("app.yaml:6:14: match 1 ('web: tcp prot 80'):"), std::string::npos) << e;
}

TEST(Branches, LpmRoutePerPortHasAnOutputPerRoutedPortAndNoRoute) {
    const std::string routes = testing::TempDir() + "/branch_routes.txt";
    FILE* f = std::fopen(routes.c_str(), "w");
    std::fputs("10.0.0.0/8 2\n192.168.0.0/16 0\n2001:db8::/32 2\n", f);
    std::fclose(f);
    const std::string e = error_of(kHead + "  - stage: lpm_route\n    routes: " + routes + "\n    outputs: per_port\n    next: {port0: drop}\n  - drop\n");
    EXPECT_NE(e.find("output 'port2' of node 'lpm_route' (lpm_route) is not wired (its outputs: port0, port2, no_route"),
              std::string::npos)
        << e;
}

}  // namespace
}  // namespace tp

namespace tp {
namespace {

// The C++ builder wires outputs with node.out(), checked as `next:` is, errors at the program's places.
TEST(BranchBuilder, OutWiresEachOutputAndJoinsAsNextDoes) {
    AppBuilder app("b");
    Node cls = app.stage("classify", {{"matches", "tcp: proto=tcp"}});
    Node t = app.stage("drop").name("t");
    Node both = app.stage("drop").name("both");
    Node tee = app.stage("tee");
    cls.out("tcp", tee).out("default", both);
    tee.out("out0", t).out("out1", both);
    app.pipeline({app.stage("synth", {{"count", 10}}), app.stage("parse"), cls, tee, t, both});
    EXPECT_EQ(app.validate(), "synth -> parse -> classify{tcp: tee, default: both} -> tee{out0: t, out1: both} -> t(drop) -> both(drop)");
}

TEST(BranchBuilder, AFarmOnABranchWiresItsOutput) {
    AppBuilder app("b");
    Node cls = app.stage("classify", {{"matches", "tcp: proto=tcp"}});
    Node d = app.stage("drop");
    Farm f = app.farm("fw").workers(2).worker({app.stage("pass")});
    cls.out("tcp", f).out("default", d);
    f.out(d);
    app.pipeline({app.stage("synth", {{"count", 10}}), cls, f, d});
    EXPECT_EQ(app.validate(), "synth -> classify{tcp: fw, default: drop} -> fw=farm(2){pass}{out: drop} -> drop");
}

std::string builder_error(const std::function<void(AppBuilder&, Node&, Node&)>& wire) {
    AppBuilder app("b");
    Node cls = app.stage("classify", {{"matches", "tcp: proto=tcp"}});
    Node d = app.stage("drop");
    wire(app, cls, d);
    try {
        app.validate();
    } catch (const AppError& e) {
        return e.what();
    }
    return "no error";
}

TEST(BranchBuilder, WiringMistakesAreRefusedAtTheProgramsPlaces) {
    std::string e = builder_error([](AppBuilder& app, Node& cls, Node& d) {
        cls.out("web", d).out("default", d);
        app.pipeline({app.stage("synth"), cls, d});
    });
    EXPECT_EQ(e, "pipeline[1] (stage classify) out(\"web\"): node 'classify' (classify) has no output 'web' (its outputs: tcp, default)");
    e = builder_error([](AppBuilder& app, Node& cls, Node& d) {
        cls.out("tcp", d);
        app.pipeline({app.stage("synth"), cls, d});
    });
    EXPECT_EQ(e, "pipeline[1] (stage classify): output 'default' of node 'classify' (classify) is not wired (its outputs: "
                 "tcp, default; each needs a node under next:)");
    e = builder_error([](AppBuilder& app, Node& cls, Node& d) {
        cls.out("tcp", d).out("tcp", d).out("default", d);
        app.pipeline({app.stage("synth"), cls, d});
    });
    EXPECT_NE(e.find("out(\"tcp\"): output 'tcp' is wired twice: one output feeds one edge"), std::string::npos) << e;
    e = builder_error([](AppBuilder& app, Node& cls, Node& d) {
        Node other = app.stage("drop").name("other");
        cls.out("tcp", other).out("default", d);
        app.pipeline({app.stage("synth"), cls, d});
    });
    EXPECT_EQ(e, "pipeline[1] (stage classify) out(\"tcp\"): feeds a node that is not in the pipeline: list it in AppBuilder::pipeline");
}

}  // namespace
}  // namespace tp
