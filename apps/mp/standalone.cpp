// tilepipe-mp-KERNEL: one kernel as a program of its own, for `mpirun -np N` (the mpi
// backend, chosen by default when started by mpirun) or as threads (`--backend tiles`).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>

#include "apps/mp/driver.hpp"
#include "tilepipe/mp.hpp"

int main(int argc, char** argv) {
    const std::string kernel = TILEPIPE_MP_KERNEL;
    const std::string program = "tilepipe-" + kernel;
    if (argc > 1 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
        std::printf("usage: %s [options]   (under mpirun: mpirun -np N %s [options])\n%s", program.c_str(),
                    program.c_str(), tp::mp::kKernelHelp);
        return 0;
    }
    const bool under_mpirun = std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr;
    tp::mp::KernelOptions o;
    try {
        o = tp::mp::parse_kernel_options(kernel, argc, argv, 1);
        if (!o.sizes.empty() && kernel != "mp-shift")
            throw std::invalid_argument("--sizes sweeps are `tilepipe bench " + kernel + " --sizes`'s (one run here: --size)");
        bool backend_given = false;
        for (int i = 1; i < argc; ++i) backend_given |= std::strncmp(argv[i], "--backend", 9) == 0;
        if (!backend_given) o.backend = under_mpirun ? "mpi" : "tiles";
        if (o.backend == "tiles") return tp::mp::emit_report(tp::mp::run_kernel_tiles(o), o);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: %s\n", program.c_str(), e.what());
        return 2;
    }
#ifdef TILEPIPE_HAVE_MPI
    int status = 0;
    const int rc = tp::mp::run_mpi(argc, argv, program.c_str(), [&](tp::mp::Comm& c) {
        o.ranks = c.size();
        const nlohmann::json j = tp::mp::run_kernel(c, o);
        if (c.rank() == 0) status = tp::mp::emit_report(j, o);
    });
    return rc != 0 ? rc : status;
#else
    std::fprintf(stderr, "%s: built without MPI (meson -Dmpi=enabled needs Open MPI)\n", program.c_str());
    return 2;
#endif
}
