#include "framework/stage/registry.hpp"

#include <stdexcept>

namespace tp {

const ParamSpec* StageInfo::find_param(const std::string& p) const {
    for (const auto& s : params)
        if (s.name == p) return &s;
    return nullptr;
}

StageRegistry& StageRegistry::instance() {
    static StageRegistry r;
    return r;
}

void StageRegistry::add(StageInfo info) {
    const std::string name = info.name;
    if (!stages_.emplace(name, std::move(info)).second)
        throw std::logic_error("stage '" + name + "' registered twice");
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
