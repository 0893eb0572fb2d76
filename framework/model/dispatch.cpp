#include "framework/model/dispatch.hpp"

#include <stdexcept>

namespace tp {

Dispatch dispatch_policy(const std::string& name) {
    if (name == "round_robin") return Dispatch::RoundRobin;
    if (name == "on_demand") return Dispatch::OnDemand;
    if (name == "flow_hash") return Dispatch::FlowHash;
    throw std::invalid_argument("unknown dispatch '" + name + "'");
}

}  // namespace tp
