#include "apps/mp/driver.hpp"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
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
    "  --steps K           mp-nbody: time steps (default 10; style study)\n"
    "  --style S           study (the kernels as the Epiphany study wrote them, default) or tilepipe\n"
    "  --reps K            mp-pingpong: round trips for the shortest message (default 2000)\n"
    "  --topology T        tiles: the mesh preset the ranks are placed on (default: the host)\n"
    "  --replace-buffer B  tiles: bytes sendrecv_replace stages at most (default 65536, at least 256;\n"
    "                      below 1008 the segments every message moves in shrink to it)\n"
    "  --sizes LIST        problem sizes to sweep, comma-separated: a row each (GFLOPS, comm share);\n"
    "                      mp-shift: message bytes (default 256,1024,4096,16384,65536)\n"
    "  --buffers LIST      mp-shift, tiles: replace buffers swept (default 256,512,1008,4096,65536)\n"
    "  --tiles-per-rank T  tiles: each rank owns T tiles and runs its loops over them (hybrid; mp-stencil)\n"
    "  --runs K            tilepipe bench: run K times, report each and the median, mean and spread\n"
    "  --json OUT          write the report as JSON\n";

const std::vector<std::string>& kernel_names() {
    static const std::vector<std::string> names = {"mp-sgemm", "mp-nbody", "mp-stencil", "mp-fft", "mp-pingpong",
                                                   "mp-shift"};
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

// A count that must be at least `lo`: refused below it, never bent up to it.
int at_least(const std::string& name, const std::string& v, int lo) {
    const int x = to_int(name, v);
    if (x < lo) throw std::invalid_argument("--" + name + " must be at least " + std::to_string(lo) + ", got " + v);
    return x;
}

std::vector<size_t> to_list(const std::string& name, const std::string& v) {
    std::vector<size_t> out;
    size_t at = 0;
    while (at <= v.size()) {
        const size_t comma = std::min(v.find(',', at), v.size());
        const int x = to_int(name, v.substr(at, comma - at));
        if (x < 1) throw std::invalid_argument("--" + name + ": '" + v + "': every entry must be at least 1");
        out.push_back(static_cast<size_t>(x));
        at = comma + 1;
    }
    return out;
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
            o.size = at_least(a, v, 1);
        } else if (a == "iters") {
            o.iters = at_least(a, v, 1);
        } else if (a == "steps") {
            o.steps = at_least(a, v, 1);
        } else if (a == "style") {
            if (v != "study" && v != "tilepipe") throw std::invalid_argument("--style: '" + v + "' (known: study, tilepipe)");
            o.style = v;
        } else if (a == "reps") {
            o.reps = at_least(a, v, 1);
        } else if (a == "topology") {
            o.topology = v;
        } else if (a == "replace-buffer") {
            o.replace_buffer = static_cast<size_t>(at_least(a, v, 256));
        } else if (a == "tiles-per-rank") {
            o.tiles_per_rank = to_int(a, v);
            if (o.tiles_per_rank < 1 || o.tiles_per_rank > 64)
                throw std::invalid_argument("--tiles-per-rank must be 1..64, not " + v);
        } else if (a == "runs") {
            o.runs = at_least(a, v, 1);
        } else if (a == "sizes") {
            o.sizes = to_list(a, v);
        } else if (a == "buffers") {
            o.buffers = to_list(a, v);
        } else if (a == "json") {
            o.json = v;
        } else {
            throw std::invalid_argument("unknown option '--" + a + "'");
        }
    }
    if (o.size == 0) o.size = default_size(kernel);
    if (o.tiles_per_rank > 1 && o.backend != "tiles")
        throw std::invalid_argument("--tiles-per-rank is the tiles backend's (an mpi rank is one process)");
    if (kernel == "mp-shift") {
        if (o.sizes.empty()) o.sizes = {256, 1024, 4096, 16384, 65536};
        if (o.buffers.empty()) o.buffers = {256, 512, 1008, 4096, 65536};
        for (size_t b : o.buffers)
            if (b < 256) throw std::invalid_argument("--buffers: " + std::to_string(b) + " is below 256 bytes");
    } else if (kernel != "mp-pingpong") {
        kernels::check_shape(kernel, o.ranks, o.size);
        for (size_t n : o.sizes) kernels::check_shape(kernel, o.ranks, static_cast<int>(n));
    }
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
    if (o.kernel == "mp-shift") {
        j["rows"] = nlohmann::json::array();
        // The tiles backend stages through o.replace_buffer; Open MPI stages a whole message.
        const bool tiles = std::string(c.backend()) == "tiles";
        for (const auto& r : kernels::shift(c, o.sizes, o.reps)) {
            const size_t buffer = tiles ? o.replace_buffer : r.bytes;
            j["rows"].push_back({{"backend", c.backend()}, {"grid", r.grid}, {"buffer", tiles ? buffer : 0},
                                 {"bytes", r.bytes}, {"pieces", std::max<size_t>(1, (r.bytes + buffer - 1) / buffer)},
                                 {"us", r.us}});
        }
        return c.rank() == 0 ? j : nlohmann::json();
    }
    kernels::check_shape(o.kernel, c.size(), o.size);
    kernels::Result r;
    const kernels::Style style = o.style == "tilepipe" ? kernels::Style::Tilepipe : kernels::Style::Study;
    if (o.kernel == "mp-sgemm") r = kernels::sgemm(c, o.size, style);
    else if (o.kernel == "mp-nbody") r = kernels::nbody(c, o.size, style, o.steps);
    else if (o.kernel == "mp-stencil") r = kernels::stencil(c, o.size, o.iters, style);
    else if (o.kernel == "mp-fft") r = kernels::fft2d(c, o.size, style);
    else throw std::invalid_argument("unknown kernel '" + o.kernel + "'");
    j["size"] = o.size;
    j["style"] = o.style;
    if (o.kernel == "mp-stencil") j["iters"] = o.iters;
    if (o.kernel == "mp-nbody" && o.style == "study") j["steps"] = o.steps;
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
    t.tiles_per_rank = o.tiles_per_rank;
    nlohmann::json report;
    if (o.kernel == "mp-shift") {
        for (size_t b : o.buffers) {
            KernelOptions one = o;
            one.replace_buffer = t.replace_buffer = b;
            nlohmann::json rows;
            run_tiles(t, [&](Comm& c) {
                nlohmann::json j = run_kernel(c, one);
                if (c.rank() == 0) rows = std::move(j);
            });
            if (report.is_null()) report = rows;
            else
                for (auto& r : rows["rows"]) report["rows"].push_back(r);
        }
        return report;
    }
    run_tiles(t, [&](Comm& c) {
        nlohmann::json j = run_kernel(c, o);
        if (c.rank() == 0) report = std::move(j);
    });
    if (!o.topology.empty()) report["topology"] = o.topology;
    if (o.tiles_per_rank > 1) report["tiles_per_rank"] = o.tiles_per_rank;
    return report;
}

nlohmann::json print_shift(const nlohmann::json& rows) {
    std::printf("%-6s %-4s %8s %9s %7s %11s %9s\n", "", "grid", "buffer", "bytes", "pieces", "us/shift", "GB/s");
    std::map<std::pair<std::string, std::string>, std::vector<kernels::ShiftPoint>> pts;  // (backend, grid)
    for (const auto& r : rows) {
        const std::string buffer = r["buffer"].get<size_t>() == 0 ? "whole" : std::to_string(r["buffer"].get<size_t>());
        std::printf("%-6s %-4s %8s %9zu %7zu %11.2f %9.3f\n", r["backend"].get<std::string>().c_str(),
                    r["grid"].get<std::string>().c_str(), buffer.c_str(), r["bytes"].get<size_t>(),
                    r["pieces"].get<size_t>(), r["us"].get<double>(),
                    r["bytes"].get<double>() / (r["us"].get<double>() * 1e3));
        pts[{r["backend"], r["grid"]}].push_back(
            kernels::ShiftPoint{r["pieces"].get<double>(), r["bytes"].get<double>(), r["us"].get<double>()});
    }
    nlohmann::json fits = nlohmann::json::array();
    for (const auto& [key, p] : pts) {
        const kernels::ShiftFit f = kernels::fit_shift(p);
        nlohmann::json fj = {{"backend", key.first}, {"grid", key.second}, {"alpha0_us", f.alpha0_us},
                             {"beta_ns_per_byte", f.beta_ns}};
        if (f.has_alpha1) {
            fj["alpha1_us"] = f.alpha1_us;
            std::printf("%-6s %s: alpha0 %.3f us  alpha1 %.3f us/piece  beta %.4f ns/B (%.2f GB/s)\n", key.first.c_str(),
                        key.second.c_str(), f.alpha0_us, f.alpha1_us, f.beta_ns, f.beta_ns > 0 ? 1 / f.beta_ns : 0);
        } else {
            fj["alpha1_us"] = nullptr;
            std::printf("%-6s %s: alpha0 %.3f us  alpha1 n/a (one piece per message)  beta %.4f ns/B (%.2f GB/s)\n",
                        key.first.c_str(), key.second.c_str(), f.alpha0_us, f.beta_ns, f.beta_ns > 0 ? 1 / f.beta_ns : 0);
        }
        fits.push_back(fj);
    }
    return fits;
}

int emit_report(const nlohmann::json& report, const KernelOptions& o) {
    nlohmann::json j = report;
    if (o.kernel == "mp-shift") {
        j["fit"] = print_shift(j["rows"]);
    } else if (j.contains("rows")) {
        for (const auto& r : j["rows"])
            std::printf("%-6s %8zu B  one-way %9.2f us  %7.3f GB/s\n", r["backend"].get<std::string>().c_str(),
                        r["bytes"].get<size_t>(), r["one_way_us"].get<double>(), r["bandwidth_gbs"].get<double>());
    } else {
        std::printf("%s (%s) backend=%s ranks=%d size=%d: %.3f GFLOPS, %.1f%% communicating, %.4f s, %s\n",
                    o.kernel.c_str(), o.style.c_str(), j["backend"].get<std::string>().c_str(), j["ranks"].get<int>(),
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
