// The `memory:` setting: where an app's packet pool, its channels' buffers and its stages'
// state live (framework/graph/memory_plan.hpp turns it into NUMA nodes, the runner binds).
//
//   memory: first_touch          # app-wide: first_touch (default) | local | interleave
//   pipeline:
//     - { stage: acl, memory: local }            # one node
//     - farm: { workers: 4, memory: interleave,  # a farm or map: its emitter, workers and
//               worker: [stage: pass] }          # collector, unless a worker stage says otherwise
//
// A node inherits its farm's or map's setting, which inherits the app's.
#pragma once

#include <optional>
#include <string>

#include "framework/config/location.hpp"
#include "framework/runtime/memory_binding.hpp"

namespace tp {

struct AppConfig;
struct NodeConfig;
struct PatternConfig;
struct StageInfo;

struct MemorySetting {
    std::optional<MemoryPolicy> policy;  // empty: inherited (the app's default: first_touch)
    Location where;                      // where it was given
};

// The values `memory:` takes, for errors and help: "local, interleave, first_touch".
const char* memory_policy_names();
// `text` as a policy; empty when it names none.
std::optional<MemoryPolicy> memory_policy_named(const std::string& text);
// `text` given at `where` as a setting; throws LocatedError naming the values otherwise.
MemorySetting read_memory_setting(const std::string& text, const Location& where);

// The policy in force on a stage node (its own, its farm's or map's, the app's), on a pattern
// (its own, the app's), and app-wide.
MemoryPolicy memory_policy_of(const AppConfig& app, const NodeConfig& node);
// Worker `worker`'s instance of a farm's or map's stage node: its own setting, else the node's.
MemoryPolicy memory_policy_of(const AppConfig& app, const NodeConfig& node, uint32_t worker);
MemoryPolicy memory_policy_of(const AppConfig& app, const PatternConfig& pattern);
MemoryPolicy memory_policy_of(const AppConfig& app);
// True when some node asks for more than the kernel's default, so the runner binds.
bool memory_policy_given(const AppConfig& app);
// Throws LocatedError at a worker's own setting naming a worker its farm or map lacks, or at
// a setting (a worker's own or every worker's) on a stage of a worker chain other than its
// first: the chain runs as one node, placed by its first stage's.
void check_worker_memory(const AppConfig& app);

}  // namespace tp
