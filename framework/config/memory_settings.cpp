#include "framework/config/memory_settings.hpp"

#include "framework/config/app_config.hpp"

namespace tp {

const char* memory_policy_names() { return "local, interleave, first_touch"; }

std::optional<MemoryPolicy> memory_policy_named(const std::string& text) {
    for (MemoryPolicy p : {MemoryPolicy::Local, MemoryPolicy::Interleave, MemoryPolicy::FirstTouch})
        if (text == memory_policy_name(p)) return p;
    return std::nullopt;
}

MemorySetting read_memory_setting(const std::string& text, const Location& where) {
    const std::optional<MemoryPolicy> p = memory_policy_named(text);
    if (!p) throw LocatedError(where, "unknown memory placement '" + text + "' (known: " + memory_policy_names() + ")");
    return MemorySetting{p, where};
}


MemoryPolicy memory_policy_of(const AppConfig& app) { return app.memory.policy.value_or(MemoryPolicy::FirstTouch); }

MemoryPolicy memory_policy_of(const AppConfig& app, const PatternConfig& pattern) {
    return pattern.memory.policy ? *pattern.memory.policy : memory_policy_of(app);
}

MemoryPolicy memory_policy_of(const AppConfig& app, const NodeConfig& node) {
    if (node.memory.policy) return *node.memory.policy;
    if (node.pattern >= 0) return memory_policy_of(app, app.patterns.at(static_cast<size_t>(node.pattern)));
    return memory_policy_of(app);
}

MemoryPolicy memory_policy_of(const AppConfig& app, const NodeConfig& node, uint32_t worker) {
    const auto it = node.worker_memory.find(worker);
    return it != node.worker_memory.end() && it->second.policy ? *it->second.policy : memory_policy_of(app, node);
}

bool memory_policy_given(const AppConfig& app) {
    auto set = [](const MemorySetting& m) { return m.policy && *m.policy != MemoryPolicy::FirstTouch; };
    if (set(app.memory)) return true;
    for (const auto& f : app.patterns)
        if (set(f.memory)) return true;
    for (const auto& n : app.pipeline) {
        if (set(n.memory)) return true;
        for (const auto& [w, m] : n.worker_memory)
            if (set(m)) return true;
    }
    return false;
}

void check_worker_memory(const AppConfig& app) {
    for (size_t i = 0; i < app.pipeline.size(); ++i) {
        const NodeConfig& n = app.pipeline[i];
        if (n.pattern >= 0 && i != app.patterns[static_cast<size_t>(n.pattern)].first && n.memory.policy) {
            const PatternConfig& f = app.patterns[static_cast<size_t>(n.pattern)];
            if (f.map || !f.worker_pipeline)
                throw LocatedError(n.memory.where, "'" + n.name + "' is not the first stage of the worker chain of " +
                                                       (f.map ? "map '" : "farm '") + f.name +
                                                       "', which runs as one node placed by its first stage's memory: give it on '" + app.pipeline[f.first].name + "' or on the " +
                                                       (f.map ? "map" : "farm"));
        }
        if (n.worker_memory.empty()) continue;
        const PatternConfig& f = app.patterns.at(static_cast<size_t>(n.pattern));
        const auto& [w, m] = *n.worker_memory.rbegin();  // the highest worker named
        if (w >= f.workers)
            throw LocatedError(m.where, (f.map ? "map '" : "farm '") + f.name + "' has " + std::to_string(f.workers) +
                                            " worker(s), numbered from 0");
        // A worker's chain runs as one node, placed by its first stage's setting: a later
        // stage's own would be ignored.
        if (i != f.first && (f.map || !f.worker_pipeline)) {
            const auto& [w0, m0] = *n.worker_memory.begin();
            const std::string worker = f.name + "." + std::to_string(w0);
            throw LocatedError(m0.where, "'" + n.name + "' is not the first stage of worker " + worker +
                                             "'s chain, which runs as one node placed by its first stage's memory: use --set " +
                                             worker + "/" + app.pipeline[f.first].name + ".memory=...");
        }
    }
}

}  // namespace tp
