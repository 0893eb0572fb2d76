#include "apps/mp/driver.hpp"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "apps/mp/kernels.hpp"
#include "framework/mp/tiles_world.hpp"
#include "framework/output/json_out.hpp"

namespace tp::mp {

const char* kKernelHelp =
    "  --backend B         tiles (ranks as threads on the mesh, this process) or mpi (Open MPI)\n"
    "  --ranks N           ranks (default 4; under mpirun its -np)\n"
    "  --size n            problem size (matrix/grid side, particles; default per kernel)\n"
    "  --iters K           mp-stencil: sweeps (default 50)\n"
    "  --reps K            mp-pingpong: round trips for the shortest message (default 2000)\n"
    "  --topology T        tiles: the mesh preset the ranks are placed on (default: the host)\n"
    "  --replace-buffer B  tiles: bytes sendrecv_replace stages at most (default 65536)\n"
    "  --json OUT          write the report as JSON\n";

const std::vector<std::string>& kernel_names() {
    static const std::vector<std::string> names = {"mp-sgemm", "mp-nbody", "mp-stencil", "mp-fft", "mp-pingpong"};
    return names;
}

int default_size(const std::string& kernel) {
    if (kernel == "mp-sgemm") return 512;
    if (kernel == "mp-nbody") return 4096;
    if (kernel == "mp-stencil") return 512;
    if (kernel == "mp-fft") return 512;
    return 0;
}

namespace {
int to_int(const std::string& name, const std::string& v) {
    size_t used = 0;
    long x = 0;
    try {
        x = std::stol(v, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != v.size() || v.empty() || x < 0 || x > (1l << 30))
        throw std::invalid_argument("--" + name + ": '" + v + "' is not a count");
    return static_cast<int>(x);
}
}  // namespace

KernelOptions parse_kernel_options(const std::string& kernel, int argc, char** argv, int first) {
    KernelOptions o;
    o.kernel = kernel;
    for (int i = first; i < argc; ++i) {
        std::string a = argv[i], v;
        if (a.rfind("--", 0) != 0) throw std::invalid_argument("unexpected argument '" + a + "'");
        a = a.substr(2);
        if (const size_t eq = a.find('='); eq != std::string::npos) {
            v = a.substr(eq + 1);
            a = a.substr(0, eq);
        } else {
            if (i + 1 >= argc) throw std::invalid_argument("--" + a + " needs a value");
            v = argv[++i];
        }
        if (a == "backend") {
            if (v != "tiles" && v != "mpi") throw std::invalid_argument("--backend: '" + v + "' (known: tiles, mpi)");
            o.backend = v;
        } else if (a == "ranks") {
            o.ranks = to_int(a, v);
            if (o.ranks < 1) throw std::invalid_argument("--ranks must be at least 1");
        } else if (a == "size") {
            o.size = to_int(a, v);
        } else if (a == "iters") {
            o.iters = to_int(a, v);
        } else if (a == "reps") {
            o.reps = std::max(1, to_int(a, v));
        } else if (a == "topology") {
            o.topology = v;
        } else if (a == "replace-buffer") {
            o.replace_buffer = static_cast<size_t>(to_int(a, v));
        } else if (a == "json") {
            o.json = v;
        } else {
            throw std::invalid_argument("unknown option '--" + a + "'");
        }
    }
    if (o.size == 0) o.size = default_size(kernel);
    if (kernel != "mp-pingpong") kernels::check_shape(kernel, o.ranks, o.size);
    return o;
}

nlohmann::json run_kernel(Comm& c, const KernelOptions& o) {
    nlohmann::json j = {{"bench", o.kernel}, {"backend", c.backend()}, {"ranks", c.size()}};
    if (o.kernel == "mp-pingpong") {
        std::vector<size_t> sizes;
        for (size_t b = 8; b <= (size_t{1} << 20); b *= 4) sizes.push_back(b);
        if (sizes.back() != (size_t{1} << 20)) sizes.push_back(size_t{1} << 20);
        const auto rows = kernels::pingpong(c, sizes, o.reps);
        j["rows"] = nlohmann::json::array();
        for (const auto& r : rows)
            j["rows"].push_back({{"backend", c.backend()}, {"bytes", r.bytes}, {"one_way_us", r.one_way_us},
                                 {"bandwidth_gbs", r.bandwidth_gbs}});
        return c.rank() == 0 ? j : nlohmann::json();
    }
    kernels::check_shape(o.kernel, c.size(), o.size);
    kernels::Result r;
    if (o.kernel == "mp-sgemm") r = kernels::sgemm(c, o.size);
    else if (o.kernel == "mp-nbody") r = kernels::nbody(c, o.size);
    else if (o.kernel == "mp-stencil") r = kernels::stencil(c, o.size, o.iters);
    else if (o.kernel == "mp-fft") r = kernels::fft2d(c, o.size);
    else throw std::invalid_argument("unknown kernel '" + o.kernel + "'");
    j["size"] = o.size;
    if (o.kernel == "mp-stencil") j["iters"] = o.iters;
    j["seconds"] = r.seconds;
    j["gflops"] = r.gflops();
    j["comm_share"] = r.comm_share;
    j["verified"] = r.verified;
    return c.rank() == 0 ? j : nlohmann::json();
}

nlohmann::json run_kernel_tiles(const KernelOptions& o) {
    TilesOptions t;
    t.ranks = o.ranks;
    t.topology = o.topology;
    t.replace_buffer = o.replace_buffer;
    nlohmann::json report;
    run_tiles(t, [&](Comm& c) {
        nlohmann::json j = run_kernel(c, o);
        if (c.rank() == 0) report = std::move(j);
    });
    if (!o.topology.empty()) report["topology"] = o.topology;
    return report;
}

int emit_report(const nlohmann::json& j, const KernelOptions& o) {
    if (j.contains("rows")) {
        for (const auto& r : j["rows"])
            std::printf("%-6s %8zu B  one-way %9.2f us  %7.3f GB/s\n", r["backend"].get<std::string>().c_str(),
                        r["bytes"].get<size_t>(), r["one_way_us"].get<double>(), r["bandwidth_gbs"].get<double>());
    } else {
        std::printf("%s backend=%s ranks=%d size=%d: %.3f GFLOPS, %.1f%% communicating, %.4f s, %s\n",
                    o.kernel.c_str(), j["backend"].get<std::string>().c_str(), j["ranks"].get<int>(),
                    j["size"].get<int>(), j["gflops"].get<double>(), 100 * j["comm_share"].get<double>(),
                    j["seconds"].get<double>(), j["verified"].get<bool>() ? "verified" : "NOT VERIFIED");
    }
    if (!o.json.empty()) {
        std::fflush(stdout);
        write_json_text(o.json, j.dump(2) + "\n");
    }
    return j.contains("verified") && !j["verified"].get<bool>() ? 1 : 0;
}

}  // namespace tp::mp
