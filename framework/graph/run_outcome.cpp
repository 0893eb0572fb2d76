#include "framework/graph/run_outcome.hpp"

#include <algorithm>

#include "tilepipe_version.h"

namespace tp {

int exit_status_of(const RunReport& r) {
    if (r.unaccounted != 0 || !r.pools_full()) return kExitAccounting;
    if (!r.failures.empty()) return kExitRuntime;
    if (r.header.interrupted) return kExitSignalBase + r.header.signal;
    return kExitOk;
}

std::vector<std::string> captures_of(const AppConfig& app) {
    std::vector<std::string> files;
    for (const NodeConfig& n : app.pipeline)
        if (n.stage->kind == StageKind::Source && n.stage->find_param("file") != nullptr) {
            const std::string& f = n.params.get_string("file");
            if (!f.empty() && std::find(files.begin(), files.end(), f) == files.end()) files.push_back(f);
        }
    return files;
}

void finish_report(RunReport& r, const AppConfig& app, const std::string& config, std::vector<std::string> overrides) {
    r.header.version = TILEPIPE_VERSION;
    r.header.config = config;
    r.header.captures = captures_of(app);
    r.header.overrides = std::move(overrides);
    r.header.exit_status = exit_status_of(r);
}

}  // namespace tp
