// Command-line overrides on the shipped apps, as `validate CONF --set ... --loop ...` applies
// them. The input's first byte picks the app; each following line is one override:
// "--loop N", "--pcap FILE", "--topology NAME", "--latency SPEC", anything else a `--set`.
// Applying them, then planning the app, either works or is refused with a located error.
#include <cstdint>
#include <string>
#include <vector>

#include "framework/config/app_config.hpp"
#include "framework/config/overrides.hpp"
#include "framework/graph/app_plan.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

// Loaded once, from the source tree (the runner starts the fuzzer there).
const std::vector<tp::AppConfig>& apps() {
    static const std::vector<tp::AppConfig> loaded = [] {
        std::vector<tp::AppConfig> v;
        for (const char* f : {"conf/default.yaml", "conf/farm.yaml", "conf/firewall.yaml", "conf/ids.yaml",
                              "conf/l3fwd.yaml", "conf/map.yaml", "conf/rss.yaml", "conf/compose.yaml"}) {
            try {
                v.push_back(tp::load_app_config(f));
            } catch (const tp::LocatedError& e) {
                tp::fuzz::finding(std::string("a shipped app does not load (run from the source tree): ") + e.what());
            }
        }
        return v;
    }();
    return loaded;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace tp;
    fuzz::start_eal();
    if (size == 0) return 0;
    AppConfig app = apps()[data[0] % apps().size()];
    AppOverrides o;
    const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
    size_t at = 0;
    while (at <= text.size()) {
        size_t end = text.find('\n', at);
        if (end == std::string::npos) end = text.size();
        const std::string line = text.substr(at, end - at);
        at = end + 1;
        auto option = [&](const char* name, std::optional<std::string>& into) {
            const std::string prefix = std::string(name) + " ";
            if (line.compare(0, prefix.size(), prefix) != 0) return false;
            into = line.substr(prefix.size());
            return true;
        };
        if (!option("--loop", o.loop) && !option("--pcap", o.pcap) && !option("--topology", o.topology) &&
            !option("--latency", o.latency))
            o.sets.push_back(line);
    }
    try {
        apply_overrides(app, o);
        (void)plan_app(app);
    } catch (const LocatedError&) {
        // refused, naming the override: what `validate` prints
    }
    return 0;
}
