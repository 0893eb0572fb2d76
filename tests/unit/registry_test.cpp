// The stage registry: built-ins and the program's own stages are there when first asked, a
// plugin's stages are added all or none, and a name is never registered twice.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "framework/stage/registry.hpp"

namespace tp {
namespace {

class Noop final : public Stage {
public:
    static constexpr StageKind kKind = StageKind::Processor;
    explicit Noop(const ParamValues&) : Stage(kKind) {}
};

}  // namespace

TILEPIPE_STAGE(Noop, "registry_test_noop", "processor: a stage of the test program itself",
               param<uint32_t>("n", 1, "a parameter"));

namespace {

StageInfo plugin_stage(const std::string& name, const std::string& origin) {
    StageInfo s{name, "processor: from a plugin", StageKind::Processor, {}};
    s.create = [](const ParamValues& p) -> std::unique_ptr<Stage> { return std::make_unique<Noop>(p); };
    s.origin = origin;
    return s;
}

TEST(StageRegistry, HoldsTheBuiltInsAndTheProgramsOwnStagesWhenFirstAsked) {
    ASSERT_NE(StageRegistry::instance().find("sample"), nullptr);
    const StageInfo* own = StageRegistry::instance().find("registry_test_noop");
    ASSERT_NE(own, nullptr);
    EXPECT_EQ(stage_origin(*own), "built-in");
    ASSERT_NE(own->find_param("n"), nullptr);
}

// With runtime.prefetch: burst a tile prefetches the mbufs of each burst it takes only where a
// stage reads them: `pass` and `drop` declare they do not, a stage that says nothing (the
// program's Noop) reads them.
TEST(StageRegistry, RecordsWhetherAStageReadsThePackets) {
    EXPECT_FALSE(StageRegistry::instance().find("pass")->reads_packets);
    EXPECT_FALSE(StageRegistry::instance().find("drop")->reads_packets);
    EXPECT_TRUE(StageRegistry::instance().find("parse")->reads_packets);
    EXPECT_TRUE(StageRegistry::instance().find("registry_test_noop")->reads_packets);
}

TEST(StageRegistry, AddsAPluginsStagesAllOrNone) {
    std::vector<StageInfo> infos;
    infos.push_back(plugin_stage("registry_test_fresh", "/p/liba.so"));
    infos.push_back(plugin_stage("sample", "/p/liba.so"));
    try {
        StageRegistry::instance().add_all(std::move(infos));
        FAIL() << "a plugin stage named like a built-in was accepted";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "stage 'sample' is already registered by built-in (stage names must be unique)");
    }
    EXPECT_EQ(StageRegistry::instance().find("registry_test_fresh"), nullptr);
    EXPECT_EQ(stage_origin(*StageRegistry::instance().find("sample")), "built-in");
}

TEST(StageRegistry, RefusesOneNameTwiceInOnePluginAndAcrossPlugins) {
    std::vector<StageInfo> twice;
    twice.push_back(plugin_stage("registry_test_twice", "/p/libb.so"));
    twice.push_back(plugin_stage("registry_test_twice", "/p/libb.so"));
    EXPECT_THROW(StageRegistry::instance().add_all(std::move(twice)), std::runtime_error);
    EXPECT_EQ(StageRegistry::instance().find("registry_test_twice"), nullptr);

    std::vector<StageInfo> first;
    first.push_back(plugin_stage("registry_test_shared", "/p/libc.so"));
    StageRegistry::instance().add_all(std::move(first));
    std::vector<StageInfo> second;
    second.push_back(plugin_stage("registry_test_shared", "/p/libd.so"));
    try {
        StageRegistry::instance().add_all(std::move(second));
        FAIL() << "a second plugin's stage of the same name was accepted";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "stage 'registry_test_shared' is already registered by /p/libc.so "
                               "(stage names must be unique)");
    }
    EXPECT_EQ(StageRegistry::instance().find("registry_test_shared")->origin, "/p/libc.so");
}

}  // namespace
}  // namespace tp
