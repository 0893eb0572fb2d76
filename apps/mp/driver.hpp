// What `tilepipe bench mp-*` and the standalone tilepipe-mp-* programs share: the options,
// running a kernel on a Comm, and the report (a line on stdout, a JSON file).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tilepipe/mp.hpp"

namespace tp::mp {

struct KernelOptions {
    std::string kernel;           // mp-sgemm, mp-nbody, mp-stencil, mp-fft, mp-pingpong, mp-shift
    std::string backend = "tiles";
    int ranks = 4;                // tiles only; under mpirun the launcher's -np
    int size = 0;                 // 0: the kernel's default
    int iters = 50;               // mp-stencil's sweeps
    int steps = 10;               // mp-nbody's time steps (study style)
    std::string style = "study";  // study (as the Epiphany study wrote them) or tilepipe
    int reps = 2000;              // mp-pingpong's round trips for short messages
    std::string topology;         // tiles only
    size_t replace_buffer = 65536; // tiles only
    int tiles_per_rank = 1;       // tiles only: the hybrid model's tiles per rank
    int runs = 1;                 // tilepipe bench: repeats, with their spread
    std::vector<size_t> sizes;    // mp-shift: message bytes (empty: its default list)
    std::vector<size_t> buffers;  // mp-shift, tiles: replace buffers swept (empty: its default list)
    std::string json;
};

const std::vector<std::string>& kernel_names();
int default_size(const std::string& kernel);
// "--name value" / "--name=value" options after argv[first]; throws std::invalid_argument.
KernelOptions parse_kernel_options(const std::string& kernel, int argc, char** argv, int first);
extern const char* kKernelHelp;

// Runs the kernel on `c` (every rank calls it); the report at rank 0, empty elsewhere.
nlohmann::json run_kernel(Comm& c, const KernelOptions& o);
// Runs the kernel on the tiles backend in this process; returns rank 0's report (mp-shift:
// one world per replace buffer of o.buffers, their rows together).
nlohmann::json run_kernel_tiles(const KernelOptions& o);
// mp-shift: prints its rows and the shift model fitted per backend and grid; returns the fits.
nlohmann::json print_shift(const nlohmann::json& rows);
// Prints the report's line(s) (mp-shift: with the fits, added to the JSON) and writes `o.json` when set. Returns the exit status (1 when
// the result was not verified).
int emit_report(const nlohmann::json& report, const KernelOptions& o);

}  // namespace tp::mp
