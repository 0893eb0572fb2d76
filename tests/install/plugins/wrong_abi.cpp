// A plugin whose record says it was built for another stage ABI version: refused, naming both.
#include <tilepipe/registration.hpp>

namespace {
class Other final : public tp::Stage {
public:
    static constexpr tp::StageKind kKind = tp::StageKind::Processor;
    explicit Other(const tp::ParamValues&) : Stage(kKind) {}
};
}  // namespace

TILEPIPE_STAGE(Other, "wrong_abi_stage", "processor: never registered (built for another ABI version)");

extern "C" __attribute__((visibility("default"))) const tp::PluginRecord* tilepipe_plugin() {
    static const tp::PluginRecord record{TILEPIPE_ABI_VERSION + 41, "9.9.9"};
    return &record;
}
