#include "framework/metrics/latency_config.hpp"

#include <stdexcept>

namespace tp {

std::string LatencyConfig::str() const {
    switch (mode) {
        case Mode::Off: return "off";
        case Mode::All: return "all";
        case Mode::Sample: break;
    }
    return "sample " + std::to_string(every);
}

LatencyConfig parse_latency(const std::string& text) {
    LatencyConfig c;
    if (text == "off") {
        c.mode = LatencyConfig::Mode::Off;
        return c;
    }
    if (text == "all") {
        c.mode = LatencyConfig::Mode::All;
        c.every = 1;
        return c;
    }
    // "sample N": digits only, so neither a sign, a base prefix nor trailing text slips through.
    const std::string prefix = "sample ";
    bool ok = text.size() > prefix.size() && text.compare(0, prefix.size(), prefix) == 0 &&
              text.size() - prefix.size() <= 7;
    uint64_t n = 0;
    for (size_t i = prefix.size(); ok && i < text.size(); ++i) {
        ok = text[i] >= '0' && text[i] <= '9';
        n = n * 10 + uint64_t(text[i] - '0');
    }
    if (!ok || n < 1 || n > LatencyConfig::kMaxEvery)
        throw std::invalid_argument("latency must be off, all or sample N (N from 1 to " +
                                    std::to_string(LatencyConfig::kMaxEvery) + "), got '" + text + "'");
    c.every = static_cast<uint32_t>(n);
    return c;
}

}  // namespace tp
