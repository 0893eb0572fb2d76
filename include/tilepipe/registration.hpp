/// @file
/// How a stage makes itself known: its record (StageInfo: name, description, parameters,
/// factory), TILEPIPE_STAGE, which registers a class next to its definition, and
/// TILEPIPE_PLUGIN, the one entry point of a shared library of stages loaded at run time.
///
/// The config validator, `--set`, the factory and `tilepipe stages` all read the same record,
/// so a stage declares each parameter once. Registration only notes a function that builds the
/// record; tilepipe builds it when it first looks stages up (the stages of tilepipe and of the
/// program) or, for a plugin, after checking the plugin's TILEPIPE_ABI_VERSION.
///
///     class Mark final : public tp::Stage { ... };
///     TILEPIPE_STAGE(Mark, "mark", "processor: ...", tp::param<uint32_t>("offset", 0, "..."));
///     TILEPIPE_PLUGIN();  // once per plugin library
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tilepipe/params.hpp"
#include "tilepipe/stage.hpp"
#include "tilepipe/version.hpp"

namespace tp {

/// One named output of a stage: where a packet it passes on may go. In an app each output
/// feeds one edge (`next:` in YAML, node.out() in C++).
struct OutputSpec {
    std::string name;  ///< the name `next:` uses: `out`, `ipv4`, `port3`, `default`, ...
    std::string doc;   ///< one line: which packets take it
};

/// The outputs of a stage that passes every packet on one way: `out`.
std::vector<OutputSpec> single_output();

/// Everything tilepipe knows about one stage type.
struct StageInfo {
    std::string name;         ///< the name configs use: `{ stage: NAME }`
    std::string description;  ///< one line for `tilepipe stages`, starting with the kind
    StageKind kind = StageKind::Processor;  ///< source, processor or sink
    std::vector<ParamSpec> params;          ///< the parameters, in the order listed
    /// Makes an instance from validated parameters (after EAL is up).
    std::function<std::unique_ptr<Stage>(const ParamValues&)> create;
    /// Bytes of DPDK memory an instance needs beyond the app's pool (loaded captures, tables),
    /// from CLASS::memory_hint(params) when the class declares one; sizes EAL's memory.
    std::function<uint64_t(const ParamValues&)> memory_hint;
    /// PCI devices an instance will probe (from CLASS::pci_devices(params) when declared), so
    /// EAL scans the PCI bus for those only, and not at all when no stage names one.
    std::function<std::vector<std::string>(const ParamValues&)> pci_devices;
    /// Estimated work per packet, in units of about 10 ns of a current x86 core (CLASS::kCost
    /// when declared; otherwise sources 2.5, processors 1, sinks 0.5). Only a weight: it
    /// decides which tiles share a CPU when an app has more tiles than CPUs.
    double cost = 1.0;
    /// The share of its input an instance is expected to pass on (CLASS::expected_pass(params)
    /// when declared, else 1): filters make the stages after them lighter. A weight, as `cost`.
    std::function<double(const ParamValues&)> expected_pass;
    /// Checks between parameters that their declarations cannot express (CLASS::check_params
    /// when declared): run when the app is planned, after every `--set`, so `validate` reports
    /// them before anything starts.
    std::function<void(const ParamValues&)> check_params;
    /// Checks against the app's packet pool (CLASS::check_data_room(params, data_room) when
    /// declared): a source whose frames would not fit one mbuf of the pool is refused when
    /// the app is planned, at the parameter that makes them that long.
    std::function<void(const ParamValues&, uint32_t)> check_data_room;
    /// Device ports an instance sets up (CLASS::device_ports(params) when declared, else 1):
    /// each one's rings hold mbufs of the app's pool, which the default pool size counts.
    std::function<uint64_t(const ParamValues&)> device_ports;
    /// More than the one-line description, for `tilepipe stages NAME` (CLASS::stage_notes()
    /// when declared, else ""): lines, each ending in a newline.
    std::function<std::string()> notes;
    /// The stage's outputs for these parameters, in index order (CLASS::outputs(params) when
    /// declared; else `out` for sources and processors, none for sinks). A stage with more
    /// than one calls Stage::set_output() for every packet it passes on.
    std::function<std::vector<OutputSpec>(const ParamValues&)> outputs;
    /// Whether process() reads or writes the packets' mbufs (CLASS::kReadsPackets when
    /// declared, else true). With `runtime.prefetch: burst` a tile one of whose stages does
    /// prefetches the mbufs of each burst it takes from a channel, so their transfer from the
    /// tile before overlaps; one that only moves descriptors (or frees them unread) leaves the
    /// lines where they are for the tile that writes them next.
    bool reads_packets = true;
    /// Where the stage comes from: empty for a stage of tilepipe or of the program, the
    /// plugin's file for a plugin's (set by the loader).
    std::string origin;

    /// The declaration of parameter `p`, nullptr when the stage has none of that name.
    const ParamSpec* find_param(const std::string& p) const;
};

/// A function that builds one stage's record; TILEPIPE_STAGE defines one per class.
using StageInfoBuilder = StageInfo (*)();

/// What a plugin's entry point returns. Its first member keeps this place in every version,
/// so tilepipe can read the number of a plugin built against another one and refuse it.
struct PluginRecord {
    uint32_t abi_version;          ///< TILEPIPE_ABI_VERSION the plugin was built with
    const char* tilepipe_version;  ///< the tilepipe release whose headers it was built with
};

}  // namespace tp

extern "C" {
/// Notes a stage's builder (TILEPIPE_STAGE calls it at static initialization). Only the
/// function pointer crosses; a plugin's records are built after its version was checked.
void tilepipe_add_stage_builder(tp::StageInfoBuilder build);
}

/// The name of a plugin's entry point, which TILEPIPE_PLUGIN defines.
#define TILEPIPE_PLUGIN_ENTRY "tilepipe_plugin"

namespace tp::detail {
/// CLASS::memory_hint(p) when declared, else 0.
template <typename C>
uint64_t memory_hint_of(const ParamValues& p) {
    if constexpr (requires { C::memory_hint(p); }) return C::memory_hint(p);
    else return 0;
}

/// CLASS::pci_devices(p) when declared, else none.
template <typename C>
std::vector<std::string> pci_devices_of(const ParamValues& p) {
    if constexpr (requires { C::pci_devices(p); }) return C::pci_devices(p);
    else return {};
}

/// CLASS::expected_pass(p) when declared, else 1.
template <typename C>
double expected_pass_of(const ParamValues& p) {
    if constexpr (requires { C::expected_pass(p); }) return C::expected_pass(p);
    else return 1.0;
}

/// CLASS::check_params(p) when declared.
template <typename C>
void check_params_of(const ParamValues& p) {
    if constexpr (requires { C::check_params(p); }) C::check_params(p);
}

/// CLASS::check_data_room(p, data_room) when declared.
template <typename C>
void check_data_room_of(const ParamValues& p, uint32_t data_room) {
    if constexpr (requires { C::check_data_room(p, data_room); }) C::check_data_room(p, data_room);
}

/// CLASS::device_ports(p) when declared, else 1.
template <typename C>
uint64_t device_ports_of(const ParamValues& p) {
    if constexpr (requires { C::device_ports(p); }) return C::device_ports(p);
    else return 1;
}

/// CLASS::stage_notes() when declared, else "".
template <typename C>
std::string notes_of() {
    if constexpr (requires { C::stage_notes(); }) return C::stage_notes();
    else return "";
}

/// CLASS::outputs(p) when declared, else `out` (sinks: none).
template <typename C>
std::vector<OutputSpec> outputs_of(const ParamValues& p) {
    if constexpr (requires { C::outputs(p); }) return C::outputs(p);
    else if constexpr (C::kKind == StageKind::Sink) return {};
    else return single_output();
}

/// CLASS::kReadsPackets when declared, else true.
template <typename C>
constexpr bool reads_packets_of() {
    if constexpr (requires { C::kReadsPackets; }) return C::kReadsPackets;
    else return true;
}

/// CLASS::kCost when declared, else by kind.
template <typename C>
constexpr double cost_of() {
    if constexpr (requires { C::kCost; }) return C::kCost;
    else if constexpr (C::kKind == StageKind::Source) return 2.5;
    else if constexpr (C::kKind == StageKind::Sink) return 0.5;
    else return 1.0;
}

/// Notes one builder at static initialization.
struct StageRegistrar {
    /// Hands `build` to tilepipe.
    explicit StageRegistrar(StageInfoBuilder build) { tilepipe_add_stage_builder(build); }
};
}  // namespace tp::detail

/// Registers CLASS under NAME with a one-line DESCRIPTION and its parameter declarations
/// (tp::param(...), comma-separated). CLASS is constructible from `const tp::ParamValues&`
/// and has a `static constexpr tp::StageKind kKind`; it may also declare, and tilepipe then
/// uses: a static `uint64_t memory_hint(const tp::ParamValues&)`, a static
/// `std::vector<std::string> pci_devices(const tp::ParamValues&)`, a static constexpr double
/// `kCost`, a static `double expected_pass(const tp::ParamValues&)`, a static
/// `void check_params(const tp::ParamValues&)` throwing LocatedError, a static
/// `void check_data_room(const tp::ParamValues&, uint32_t)`, a static
/// `uint64_t device_ports(const tp::ParamValues&)`, a static `std::string stage_notes()`, a
/// static `std::vector<tp::OutputSpec> outputs(const tp::ParamValues&)` and a static
/// constexpr bool `kReadsPackets`
/// (see StageInfo for what each is for). Use it at namespace scope, once per class.
#define TILEPIPE_STAGE(CLASS, NAME, DESCRIPTION, ...)                                           \
    static ::tp::StageInfo tilepipe_stage_info_##CLASS() {                                       \
        return ::tp::StageInfo{                                                                  \
            NAME, DESCRIPTION, CLASS::kKind, {__VA_ARGS__},                                      \
            [](const ::tp::ParamValues& p) -> std::unique_ptr<::tp::Stage> {                     \
                return std::make_unique<CLASS>(p);                                               \
            },                                                                                   \
            &::tp::detail::memory_hint_of<CLASS>, &::tp::detail::pci_devices_of<CLASS>,          \
            ::tp::detail::cost_of<CLASS>(), &::tp::detail::expected_pass_of<CLASS>,              \
            &::tp::detail::check_params_of<CLASS>, &::tp::detail::check_data_room_of<CLASS>,     \
            &::tp::detail::device_ports_of<CLASS>, &::tp::detail::notes_of<CLASS>,                \
            &::tp::detail::outputs_of<CLASS>, ::tp::detail::reads_packets_of<CLASS>(), {}};      \
    }                                                                                            \
    static const ::tp::detail::StageRegistrar tilepipe_stage_registrar_##CLASS{&tilepipe_stage_info_##CLASS}

/// Defines a plugin's entry point: `extern "C" const tp::PluginRecord* tilepipe_plugin()`,
/// recording the TILEPIPE_ABI_VERSION and tilepipe version of the headers it is compiled
/// with. Use it once per plugin library, at global scope, in any one of its sources.
#define TILEPIPE_PLUGIN()                                                                        \
    extern "C" __attribute__((visibility("default"))) const ::tp::PluginRecord* tilepipe_plugin() { \
        static const ::tp::PluginRecord record{TILEPIPE_ABI_VERSION, TILEPIPE_VERSION_STRING};   \
        return &record;                                                                          \
    }                                                                                            \
    static_assert(true, "TILEPIPE_PLUGIN(); ends with a semicolon")
