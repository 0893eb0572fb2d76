// A library with a stage but no registration entry point (no TILEPIPE_PLUGIN): refused.
#include <tilepipe/registration.hpp>

namespace {
class Nothing final : public tp::Stage {
public:
    static constexpr tp::StageKind kKind = tp::StageKind::Processor;
    explicit Nothing(const tp::ParamValues&) : Stage(kKind) {}
};
}  // namespace

TILEPIPE_STAGE(Nothing, "no_entry_stage", "processor: never registered (its library has no entry point)");
