// StageRegistry: every stage type by name (built in, the program's own, or a plugin's), with
// its description and parameter declarations.
//
// A stage's record and TILEPIPE_STAGE are public (tilepipe/registration.hpp). The stages of
// tilepipe and of the program note their builders before main(); the registry builds their
// records when it is first asked (instance()). Plugins (framework/plugin/) add theirs after
// the command line and before the config's stages are resolved. Lookups come after both, from
// the thread that plans the app: the registry is filled before any other thread reads it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "framework/stage/param.hpp"
#include "framework/stage/stage.hpp"
#include "tilepipe/registration.hpp"

namespace tp {

class StageRegistry {
public:
    // The registry, with every builder noted so far (outside a plugin's loading) built in.
    static StageRegistry& instance();
    // Adds one stage; std::logic_error when the name is taken or a parameter has a name every
    // pipeline entry reserves (for built-ins, both are build errors).
    void add(StageInfo info);
    // Adds every stage of `infos` (one plugin's) or none: a name taken (by the registry or
    // twice in `infos`) or a parameter named as a reserved key throws std::runtime_error
    // naming the other origin or the key (the caller names the plugin) before anything is added.
    void add_all(std::vector<StageInfo> infos);
    const StageInfo* find(const std::string& name) const;
    std::vector<const StageInfo*> all() const;  // sorted by name

private:
    void build_noted();
    std::map<std::string, StageInfo> stages_;
};

// The keys a pipeline entry takes besides its stage's parameters ("name, transport, queue,
// tile, memory"), so no stage may declare a parameter of those names (nor `stage`).
const std::vector<std::string>& node_keys();

// "built-in" for a stage of tilepipe or of the program, else the plugin's file.
std::string stage_origin(const StageInfo& info);

// While a plugin loads, the builders its registrars note go into `into` instead of the
// registry (nullptr: back to the registry). Set by the loader around dlopen, on its thread.
void collect_stage_builders(std::vector<StageInfoBuilder>* into);

}  // namespace tp
