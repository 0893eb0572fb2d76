#include "framework/stage/registry.hpp"

#include <algorithm>
#include <mutex>
#include <stdexcept>

namespace tp {

namespace {
// Builders noted before the registry was first asked (static initialization) or since.
std::vector<StageInfoBuilder>& noted_builders() {
    static std::vector<StageInfoBuilder> v;
    return v;
}
// The plugin being loaded, if any (dlopen runs its registrars on the loading thread).
thread_local std::vector<StageInfoBuilder>* t_collecting = nullptr;
std::mutex g_noted_lock;  // registrars of a plugin loaded while another thread asks
}  // namespace

void collect_stage_builders(std::vector<StageInfoBuilder>* into) { t_collecting = into; }

const ParamSpec* StageInfo::find_param(const std::string& p) const {
    for (const auto& s : params)
        if (s.name == p) return &s;
    return nullptr;
}

std::string stage_origin(const StageInfo& info) { return info.origin.empty() ? "built-in" : info.origin; }

StageRegistry& StageRegistry::instance() {
    static StageRegistry r;
    r.build_noted();
    return r;
}

void StageRegistry::build_noted() {
    const std::lock_guard<std::mutex> g(g_noted_lock);
    std::vector<StageInfoBuilder>& noted = noted_builders();
    for (StageInfoBuilder build : noted) add(build());
    noted.clear();
}

const std::vector<std::string>& node_keys() {
    static const std::vector<std::string> keys{"name", "transport", "queue", "tile", "memory", "rank", "next"};
    return keys;
}

std::vector<OutputSpec> single_output() { return {OutputSpec{"out", "every packet it passes on"}}; }

namespace {
// Empty when every parameter of `s` may be given in a pipeline entry, else why not.
std::string reserved_param_of(const StageInfo& s) {
    for (const ParamSpec& p : s.params)
        if (p.name == "stage" || std::find(node_keys().begin(), node_keys().end(), p.name) != node_keys().end())
            return "stage '" + s.name + "' declares a parameter '" + p.name +
                   "', a key every pipeline entry reserves (stage, name, transport, queue, tile, memory, next)";
    return "";
}
}  // namespace

void StageRegistry::add(StageInfo info) {
    if (const std::string why = reserved_param_of(info); !why.empty()) throw std::logic_error(why);
    const std::string name = info.name;
    if (!stages_.emplace(name, std::move(info)).second)
        throw std::logic_error("stage '" + name + "' registered twice");
}

void StageRegistry::add_all(std::vector<StageInfo> infos) {
    std::map<std::string, const StageInfo*> mine;
    for (const StageInfo& s : infos) {
        if (const std::string why = reserved_param_of(s); !why.empty()) throw std::runtime_error(why);
        const StageInfo* other = find(s.name);
        if (other == nullptr) {
            auto [it, fresh] = mine.emplace(s.name, &s);
            if (fresh) continue;
            other = it->second;
        }
        throw std::runtime_error("stage '" + s.name + "' is already registered by " + stage_origin(*other) +
                                 " (stage names must be unique)");
    }
    for (StageInfo& s : infos) add(std::move(s));
}

const StageInfo* StageRegistry::find(const std::string& name) const {
    auto it = stages_.find(name);
    return it == stages_.end() ? nullptr : &it->second;
}

std::vector<const StageInfo*> StageRegistry::all() const {
    std::vector<const StageInfo*> v;
    for (const auto& [_, info] : stages_) v.push_back(&info);
    return v;
}

}  // namespace tp

extern "C" void tilepipe_add_stage_builder(tp::StageInfoBuilder build) {
    if (tp::t_collecting != nullptr) {
        tp::t_collecting->push_back(build);
        return;
    }
    const std::lock_guard<std::mutex> g(tp::g_noted_lock);
    tp::noted_builders().push_back(build);
}
