// Every shipped app on the messaging network: `--set transport=udn` puts each of its links on
// the app's one network (K lowered to what the 128-word queues hold) and the app must deliver
// and drop exactly what it does on the default transport, every packet accounted; `tilepipe
// topo` shows each tile's queues, the tags and credits they carry; what cannot fit is refused
// before the run, at its place in the config.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "tests/support/cli.hpp"

namespace tp::test {
namespace {

namespace fs = std::filesystem;

// The app configs of conf/ (conf/bench's and benchmark files aside).
std::vector<std::string> conf_apps() {
    std::vector<std::string> apps;
    for (const auto& e : fs::directory_iterator(source_root() + "/conf")) {
        if (e.path().extension() != ".yaml") continue;
        std::ifstream in(e.path());
        const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (text.find("\nbench:") != std::string::npos) continue;
        // Halves of a two-process pair (memif) wait for their peer: tests/e2e/apps_test.cpp runs them.
        if (e.path().stem().string().rfind("memif_", 0) == 0) continue;
        // Apps across ranks run under mpirun: tests/e2e/ranks_test.cpp runs them.
        if (e.path().stem().string().rfind("ranks_", 0) == 0) continue;
        apps.push_back("conf/" + e.path().filename().string());
    }
    std::sort(apps.begin(), apps.end());
    return apps;
}

TEST(Network, EveryConfAppDeliversTheSameOnTheSharedUdnNetwork) {
    const std::vector<std::string> apps = conf_apps();
    ASSERT_GE(apps.size(), 10u);
    for (const std::string& app : apps) {
        SCOPED_TRACE(app);
        const nlohmann::json base = run_json("run " + app);
        const nlohmann::json udn = run_json("run " + app + " --set transport=udn");
        ASSERT_TRUE(udn.is_object());
        EXPECT_EQ(udn["unaccounted"], 0);
        EXPECT_TRUE(udn["pools_full"].get<bool>());
        EXPECT_EQ(udn["packets"], base["packets"]);
        EXPECT_EQ(udn["delivered"], base["delivered"]);
        EXPECT_EQ(udn["drops"], base["drops"]);
        bool on_udn = false;
        for (const auto& c : udn["channels"]) on_udn = on_udn || c["transport"] == "udn";
        EXPECT_TRUE(on_udn) << "some link runs on the network";
    }
}

TEST(Network, TopoShowsEachTilesQueuesWithTheirTagsAndCredits) {
    // By default each queue is sized to its links' credits: the collector receives with the
    // K its links ask for.
    const CommandResult sized = run_command("cd '" + source_root() + "' && COLUMNS=300 '" + tilepipe_bin() +
                                            "' topo conf/farm.yaml --set transport=udn");
    ASSERT_EQ(sized.status, 0) << sized.err;
    EXPECT_NE(sized.out.find("queues sized to their credits"), std::string::npos) << sized.out;
    EXPECT_NE(sized.out.find("asymmetric, data from rtc.0, rtc.1, rtc.2, rtc.3, K 1024 each"), std::string::npos)
        << sized.out;
    EXPECT_NE(sized.out.find("12288/16384 words"), std::string::npos) << "4 x 1024 x 3 words, a power of two up";
    // The TILEPro64's fixed 128-word queues bound K at 128/(3 x 4).
    const std::string json = tmp_path("topo.json");
    const CommandResult r = run_command("cd '" + source_root() + "' && COLUMNS=300 '" + tilepipe_bin() +
                                        "' topo conf/farm.yaml --set transport=udn --set network.queue_words=128 --json " + json);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("udn network: "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("asymmetric, data from rtc.0, rtc.1, rtc.2, rtc.3, K 10 each"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("logical"), std::string::npos) << "the emitter's credits share a queue";
    const nlohmann::json j = nlohmann::json::parse(read_file(json));
    fs::remove(json);
    ASSERT_EQ(j["networks"].size(), 1u);
    const auto& net = j["networks"][0];
    EXPECT_EQ(net["queues"], 4);
    EXPECT_EQ(net["queue_words"], 128);
    bool collector = false;
    for (const auto& t : net["tiles"]) {
        for (const auto& q : t["queues"]) {
            EXPECT_LE(q["reserved_words"].get<int>(), 128) << t["node"];
            EXPECT_EQ(q["words"], 128) << t["node"];
        }
        if (t["node"] != "rtc.collector") continue;
        collector = true;
        EXPECT_EQ(t["queues"][0]["carries"].size(), 1u);
    }
    EXPECT_TRUE(collector);
    for (const auto& l : net["links"])
        if (l["to"] == "rtc.collector") {
            EXPECT_TRUE(l["asymmetric"].get<bool>());
            EXPECT_EQ(l["credits"], 10);
            EXPECT_EQ(l["requested"], 1024);
        }
}

TEST(Network, ValidateRefusesLinksTheNetworkCannotHoldAtTheirPlace) {
    const CommandResult r =
        tilepipe("validate conf/farm.yaml --set transport=udn --set network.queue_words=2");
    EXPECT_NE(r.status, 0);
    EXPECT_NE(r.err.find("--set network.queue_words=2"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("need at least 3 words"), std::string::npos) << r.err;
    const CommandResult exact =
        tilepipe("validate conf/farm.yaml --set transport=udn --set network.queue_words=128 --set network.credits=exact");
    EXPECT_NE(exact.status, 0);
    EXPECT_NE(exact.err.find("asks for K = 1024"), std::string::npos) << exact.err;
    // Following the advice (a queue that is a power of two) gets the app accepted: each link's
    // advice in turn, as a user would.
    CommandResult advised = exact;
    for (int tries = 0; tries < 4 && advised.status != 0; ++tries) {
        std::smatch m;
        ASSERT_TRUE(std::regex_search(advised.err, m, std::regex("lower the link's queue to ([0-9]+)"))) << advised.err;
        advised = tilepipe("validate conf/farm.yaml --set transport=udn --set network.credits=exact --set queue=" + m[1].str());
        EXPECT_EQ(advised.err.find("must be a power of two"), std::string::npos) << "advice refused: " << advised.err;
    }
    EXPECT_EQ(advised.status, 0) << advised.err;
}

}  // namespace
}  // namespace tp::test
