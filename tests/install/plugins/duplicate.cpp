// A plugin with a new stage and one named like a built-in (`sample`): refused as a whole, so
// its new stage is not registered either.
#include <tilepipe/registration.hpp>

namespace {
class Fresh final : public tp::Stage {
public:
    static constexpr tp::StageKind kKind = tp::StageKind::Processor;
    explicit Fresh(const tp::ParamValues&) : Stage(kKind) {}
};
class Sample final : public tp::Stage {
public:
    static constexpr tp::StageKind kKind = tp::StageKind::Processor;
    explicit Sample(const tp::ParamValues&) : Stage(kKind) {}
};
}  // namespace

TILEPIPE_STAGE(Fresh, "fresh_stage", "processor: registered only with its whole plugin");
TILEPIPE_STAGE(Sample, "sample", "processor: a second `sample`");
TILEPIPE_PLUGIN();
