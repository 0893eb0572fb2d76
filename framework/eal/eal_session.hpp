// EAL bring-up with defaults that fit the machine, so that `tilepipe run` just works.
//
// - Hugepages when the host has free ones (then --in-memory: no files left behind), otherwise
//   --no-huge with a memory size derived from what the app's pools need.
// - No PCI scan unless a stage asked for one (a `port` stage on a real NIC).
// - No shared config files, so several runs and test processes can run at once.
// - The main lcore floats over every allowed CPU: tiles pin their own threads.
// - DPDK's telemetry socket stays on (`<runtime dir>/dpdk_telemetry.v2`, see
//   framework/metrics/telemetry.hpp), unless EAL could not create it: EAL 22.11 refuses to
//   start when its socket fails, so eal_start checks the path first and, when the socket
//   cannot be made there, starts without telemetry and says so once.
// - `user_args` (from `--eal "..."`) come last and win.
// EAL can be initialised once per process; `start` is idempotent and thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tp {

struct EalOptions {
    uint64_t memory_bytes = 256ull << 20;  // what the app's pools and tables need
    std::vector<std::string> pci_devices;  // probed with -a each; none: --no-pci
    std::vector<std::string> vdevs;        // e.g. "net_null0"
    std::string user_args;                 // passed through, split on whitespace
    bool verbose = false;                  // EAL's own info logs
};

struct EalInfo {
    bool hugepages = false;
    uint64_t memory_mb = 0;
    std::vector<std::string> argv;  // what EAL was started with
    std::string runtime_dir;        // EAL's runtime directory (the telemetry socket's folder)
    std::string telemetry_off;      // why live telemetry is off; empty when its socket is up
};

// Starts EAL (once per process); throws std::runtime_error with EAL's reason on failure.
const EalInfo& eal_start(const EalOptions& opts);
bool eal_started();

// The args eal_start would pass for `opts` (exposed for tests and `--log-level debug`).
std::vector<std::string> eal_arguments(const EalOptions& opts, bool hugepages);

// The runtime directory EAL 22.11 uses for `args`: $RUNTIME_DIRECTORY, else /var/run for root
// and $XDG_RUNTIME_DIR or /tmp for other users, then dpdk/<--file-prefix, default "rte">.
std::string eal_runtime_dir(const std::vector<std::string>& args);

// Why DPDK's telemetry socket cannot be created in `runtime_dir` (empty when it can).
std::string telemetry_socket_problem(const std::string& runtime_dir);

// Memory EAL gets without hugepages (-m), in MiB.
uint64_t eal_memory_mb(const EalOptions& opts);

// True when the host has free hugepages mounted for use.
bool host_has_hugepages();

// Bytes EAL can get on this host: free hugepages when it uses them, else MemAvailable.
uint64_t host_memory_available(bool hugepages);
// The same for the EAL `opts` would start: hugepages unless the host has none or
// `opts.user_args` says --no-huge.
uint64_t eal_memory_available(const EalOptions& opts);

// Splits `--eal "..."` text on whitespace, honouring single and double quotes.
std::vector<std::string> split_args(const std::string& text);

}  // namespace tp
