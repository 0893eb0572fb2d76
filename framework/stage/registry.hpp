// StageRegistry: every stage type by name, with its description and parameter declarations.
//
// Stages register themselves at static-initialization time with TILEPIPE_STAGE, next to their
// class; the config validator, `--set`, the factory and `tilepipe stages` all read the same
// declaration. Registration happens before main(); lookups afterwards are read-only and
// thread-safe.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "framework/stage/param.hpp"
#include "framework/stage/stage.hpp"

namespace tp {

struct StageInfo {
    std::string name;
    std::string description;
    StageKind kind = StageKind::Processor;
    std::vector<ParamSpec> params;
    std::function<std::unique_ptr<Stage>(const ParamValues&)> create;
    // Bytes of DPDK memory an instance needs beyond the app's pool (loaded captures, tables),
    // from CLASS::memory_hint(params) when the class declares one; sizes EAL's memory.
    std::function<uint64_t(const ParamValues&)> memory_hint;
    // PCI devices an instance will probe (from CLASS::pci_devices(params) when declared), so
    // EAL scans the PCI bus for those only, and not at all when no stage names one.
    std::function<std::vector<std::string>(const ParamValues&)> pci_devices;
    // Estimated work per packet, in units of about 10 ns of a current x86 core (CLASS::kCost
    // when declared; otherwise sources 2.5, processors 1, sinks 0.5). Only a weight: it decides
    // which tiles share a CPU when an app has more tiles than CPUs.
    double cost = 1.0;
    // The share of its input an instance is expected to pass on (CLASS::expected_pass(params)
    // when declared, else 1): filters make the stages after them lighter. A weight, as `cost`.
    std::function<double(const ParamValues&)> expected_pass;
    // Checks between parameters that their declarations cannot express (CLASS::check_params
    // when declared): run when the app is planned, after every `--set`, so `validate` reports
    // them before anything starts.
    std::function<void(const ParamValues&)> check_params;
    // Checks against the app's packet pool (CLASS::check_data_room(params, data_room) when
    // declared): a source whose frames would not fit one mbuf of the pool is refused when the
    // app is planned, at the parameter that makes them that long.
    std::function<void(const ParamValues&, uint32_t)> check_data_room;
    // Device ports an instance sets up (CLASS::device_ports(params) when declared, else 1):
    // each one's rings hold mbufs of the app's pool, which the default pool size counts.
    std::function<uint64_t(const ParamValues&)> device_ports;
    // More than the one-line description, for `tilepipe stages NAME` (CLASS::stage_notes() when
    // declared, else ""): lines, each ending in a newline.
    std::function<std::string()> notes;

    const ParamSpec* find_param(const std::string& p) const;
};

class StageRegistry {
public:
    static StageRegistry& instance();
    void add(StageInfo info);
    const StageInfo* find(const std::string& name) const;
    std::vector<const StageInfo*> all() const;  // sorted by name

private:
    std::map<std::string, StageInfo> stages_;
};

namespace detail {
template <typename C>
uint64_t memory_hint_of(const ParamValues& p) {
    if constexpr (requires { C::memory_hint(p); }) return C::memory_hint(p);
    else return 0;
}

template <typename C>
std::vector<std::string> pci_devices_of(const ParamValues& p) {
    if constexpr (requires { C::pci_devices(p); }) return C::pci_devices(p);
    else return {};
}

template <typename C>
double expected_pass_of(const ParamValues& p) {
    if constexpr (requires { C::expected_pass(p); }) return C::expected_pass(p);
    else return 1.0;
}

template <typename C>
void check_params_of(const ParamValues& p) {
    if constexpr (requires { C::check_params(p); }) C::check_params(p);
}

template <typename C>
void check_data_room_of(const ParamValues& p, uint32_t data_room) {
    if constexpr (requires { C::check_data_room(p, data_room); }) C::check_data_room(p, data_room);
}

template <typename C>
uint64_t device_ports_of(const ParamValues& p) {
    if constexpr (requires { C::device_ports(p); }) return C::device_ports(p);
    else return 1;
}

template <typename C>
std::string notes_of() {
    if constexpr (requires { C::stage_notes(); }) return C::stage_notes();
    else return "";
}

template <typename C>
constexpr double cost_of() {
    if constexpr (requires { C::kCost; }) return C::kCost;
    else if constexpr (C::kKind == StageKind::Source) return 2.5;
    else if constexpr (C::kKind == StageKind::Sink) return 0.5;
    else return 1.0;
}

struct StageRegistrar {
    explicit StageRegistrar(StageInfo info) { StageRegistry::instance().add(std::move(info)); }
};
}  // namespace detail

}  // namespace tp

// Registers CLASS (constructible from `const tp::ParamValues&`, with a static constexpr
// `kKind`, optionally a static `uint64_t memory_hint(const tp::ParamValues&)`, a static
// `std::vector<std::string> pci_devices(const tp::ParamValues&)`, a static constexpr double
// `kCost`, a static `double expected_pass(const tp::ParamValues&)` and a static
// `void check_params(const tp::ParamValues&)` throwing LocatedError, and a static
// `void check_data_room(const tp::ParamValues&, uint32_t)` and a static
// `uint64_t device_ports(const tp::ParamValues&)` and a static `std::string stage_notes()`)
// under NAME with a one-line DESCRIPTION and its parameter declarations.
#define TILEPIPE_STAGE(CLASS, NAME, DESCRIPTION, ...)                                          \
    static const ::tp::detail::StageRegistrar tilepipe_stage_registrar_##CLASS{::tp::StageInfo{ \
        NAME, DESCRIPTION, CLASS::kKind, {__VA_ARGS__},                                         \
        [](const ::tp::ParamValues& p) -> std::unique_ptr<::tp::Stage> {                        \
            return std::make_unique<CLASS>(p);                                                  \
        },                                                                                      \
        &::tp::detail::memory_hint_of<CLASS>, &::tp::detail::pci_devices_of<CLASS>,             \
        ::tp::detail::cost_of<CLASS>(), &::tp::detail::expected_pass_of<CLASS>,                 \
        &::tp::detail::check_params_of<CLASS>, &::tp::detail::check_data_room_of<CLASS>,        \
        &::tp::detail::device_ports_of<CLASS>, &::tp::detail::notes_of<CLASS>}}
