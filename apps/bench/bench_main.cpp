#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>

#include "apps/bench/bench.hpp"
#include "apps/bench/benches.hpp"
#include "framework/output/json_out.hpp"

namespace tp::bench {

namespace {
const char* kUsage =
    "usage: tilepipe bench NAME [options]   (NAME --help for its options)\n"
    "  pingpong  one-way latency of a one-word ping-pong between two pinned threads, per\n"
    "            transport, with a `raw` row (one atomic per direction): the physical floor\n"
    "  stream    messages per second streaming items, single and in bursts of 8 and 32, per\n"
    "            transport and for boost::lockfree::spsc_queue and moodycamel::ReaderWriterQueue\n"
    "  asym      receive one-way latency of an asymmetric channel against its sender count,\n"
    "            one sender active and the others idle, per transport\n"
    "  mapvec    the paper's map: a stream of M x M matrices times a vector split over W\n"
    "            workers (tree or linear multicast); service time, bandwidth, scalability\n"
    "  latency   an app's end-to-end latency against load: its synth source paced from 10% to\n"
    "            100% of the app's own top speed (rate, Mpps achieved, p50, p99, p999)\n"
    "  mp-sgemm, mp-nbody, mp-stencil, mp-fft\n"
    "            message-passing kernels (Cannon, N-body ring, 5-point stencil, 2D FFT) on the\n"
    "            tiles or mpi backend: GFLOPS, communication share, verified against serial\n"
    "            (--sizes LIST: a row per problem size)\n"
    "  mp-pingpong  one-way time and bandwidth, 8 B to 1 MiB, tiles and Open MPI side by side\n"    "  mp-shift  every rank shifts round a periodic 1D and 2D grid at once (sendrecv_replace),\n"
    "            sizes and replace buffers swept, the shift model alpha0 + alpha1 k + beta m fitted\n"
    "  ff-grain  a farm's speedup against task grain through the accelerator (FastFlow study, Fig. 6)\n"
    "  ff-matmul a stream of 32/64/128 matrix products through the accelerator (FastFlow study, Fig. 9)\n"
    "  ff-homing the same products, each task's buffers placed by first_touch, local or interleave\n"
    "            (FastFlow study, Fig. 7: local homing, a home per task, hash-for-home)\n"
    "  accel     offload-to-result throughput of a farm fed from the caller's thread (accelerator\n"
    "            mode), tiny and 1 us tasks, against FastFlow's accelerator (tilepipe-bench)\n";
}  // namespace

int main(int argc, char** argv) {
    if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
        std::fputs(kUsage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const std::string name = argv[1];
    try {
        // `--json -`: the JSON alone on standard output, tables and notes on standard error.
        for (int i = 2; i < argc; ++i)
            if ((std::strcmp(argv[i], "--json") == 0 && i + 1 < argc && std::strcmp(argv[i + 1], "-") == 0) ||
                std::strcmp(argv[i], "--json=-") == 0) {
                divert_stdout_to_stderr();
                break;
            }
        if (name == "pingpong") return run_pingpong(argc, argv);
        if (name == "stream") return run_stream(argc, argv);
        if (name == "asym") return run_asym(argc, argv);
        if (name == "mapvec") return run_mapvec(argc, argv);
        if (name == "latency") return run_latency(argc, argv);
        if (name == "accel") return run_accel(argc, argv);
        if (name == "ff-grain") return run_ff_grain(argc, argv);
        if (name == "ff-matmul") return run_ff_matmul(argc, argv);
        if (name == "ff-homing") return run_ff_homing(argc, argv);
        if (name.rfind("mp-", 0) == 0) return run_mp(argc, argv);
        std::fprintf(stderr, "bench: unknown bench '%s'\n%s", name.c_str(), kUsage);
        return 2;
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "bench %s: %s\n", name.c_str(), e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench %s: %s\n", name.c_str(), e.what());
        return 1;
    }
}

}  // namespace tp::bench
