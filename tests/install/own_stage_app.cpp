// A program with a stage of its own, built against the installed tilepipe with nothing but
// `c++ ... $(pkg-config --cflags --libs tilepipe)`: its TILEPIPE_STAGE registers in the
// installed libtilepipe before main(), and the builder runs it like a built-in.
// Exit status 0 when the report counts what the stage did, 1 otherwise.
#include <cstdio>

#include <tilepipe/app.hpp>
#include <tilepipe/registration.hpp>

namespace {

// Keeps every other packet, drops the rest as "odd".
class EveryOther final : public tp::Stage {
public:
    static constexpr tp::StageKind kKind = tp::StageKind::Processor;
    explicit EveryOther(const tp::ParamValues&) : Stage(kKind), odd_(declare_drop("odd")) {}
    void process(tp::Burst& b) override {
        uint16_t kept = 0;
        for (uint16_t i = 0; i < b.n; ++i) {
            if ((seen_++ & 1) == 0) b.d[kept++] = b.d[i];
            else drop(b.d[i], odd_);
        }
        b.n = kept;
    }

private:
    uint16_t odd_;
    uint64_t seen_ = 0;
};

}  // namespace

TILEPIPE_STAGE(EveryOther, "every_other", "processor: keeps every other packet (a program's own stage)");

int main() {
    try {
        tp::AppBuilder app("own_stage");
        app.pipeline({app.stage("synth", {{"count", 1000}}), app.stage("every_other"), app.stage("drop")});
        tp::Runtime runtime;
        const tp::Report report = runtime.run(app);
        const tp::NodeCounts* mine = report.node("every_other");
        std::printf("packets %llu delivered %llu every_other drops %llu\n", (unsigned long long)report.packets,
                    (unsigned long long)report.delivered, (unsigned long long)(mine ? mine->drops : 0));
        const bool ok = report.exit_status == 0 && report.packets == 1000 && report.delivered == 500 &&
                        mine != nullptr && mine->drops == 500;
        return ok ? 0 : 1;
    } catch (const tp::AppError& e) {
        std::fprintf(stderr, "own_stage_app: %s\n", e.what());
        return 1;
    }
}
