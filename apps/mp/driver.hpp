// What `tilepipe bench mp-*` and the standalone tilepipe-mp-* programs share: the options,
// running a kernel on a Comm, and the report (a line on stdout, a JSON file).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tilepipe/mp.hpp"

namespace tp::mp {

struct KernelOptions {
    std::string kernel;           // mp-sgemm, mp-nbody, mp-stencil, mp-fft, mp-pingpong
    std::string backend = "tiles";
    int ranks = 4;                // tiles only; under mpirun the launcher's -np
    int size = 0;                 // 0: the kernel's default
    int iters = 50;               // mp-stencil's sweeps
    int reps = 2000;              // mp-pingpong's round trips for short messages
    std::string topology;         // tiles only
    size_t replace_buffer = 65536; // tiles only
    std::string json;
};

const std::vector<std::string>& kernel_names();
int default_size(const std::string& kernel);
// "--name value" / "--name=value" options after argv[first]; throws std::invalid_argument.
KernelOptions parse_kernel_options(const std::string& kernel, int argc, char** argv, int first);
extern const char* kKernelHelp;

// Runs the kernel on `c` (every rank calls it); the report at rank 0, empty elsewhere.
nlohmann::json run_kernel(Comm& c, const KernelOptions& o);
// Runs the kernel on the tiles backend in this process; returns rank 0's report.
nlohmann::json run_kernel_tiles(const KernelOptions& o);
// Prints the report's line(s) and writes `o.json` when set. Returns the exit status (1 when
// the result was not verified).
int emit_report(const nlohmann::json& report, const KernelOptions& o);

}  // namespace tp::mp
