// `tilepipe bench mp-sgemm|mp-nbody|mp-stencil|mp-fft|mp-pingpong|mp-shift`: the
// message-passing kernels. The tiles backend runs in this process; the mpi backend runs the kernel's
// standalone program under `mpirun -np N` (localhost, oversubscribed) and reads its report.
// mp-pingpong measures both backends in one run, rounds interleaved (tiles, mpi, tiles, ...),
// or the one `--backend` names, and fits one-way time = alpha + bytes / beta for each;
// mp-shift likewise runs both (tiles once per replace buffer) and fits the shift model.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/bench/benches.hpp"
#include "apps/mp/driver.hpp"
#include "framework/output/json_out.hpp"

namespace tp::bench {

namespace {

namespace fs = std::filesystem;

// The standalone program for `kernel`: installed next to this binary, or in the build tree's apps/mp.
std::string program_for(const std::string& kernel) {
    const fs::path self = fs::read_symlink("/proc/self/exe").parent_path();
    const std::string name = "tilepipe-" + kernel;
    for (const fs::path& p : {self / name, self / "mp" / name})
        if (fs::exists(p)) return p.string();
    throw std::runtime_error("the mpi backend runs " + name + " under mpirun, and it is not installed next to " +
                             self.string() + " (build with Open MPI: meson -Dmpi=enabled)");
}

// Runs `mpirun -np N PROGRAM ARGS... --json TMP` and returns the report it wrote.
nlohmann::json run_under_mpirun(const mp::KernelOptions& o, int ranks) {
    const std::string program = program_for(o.kernel);
    char tmpl[] = "/tmp/tilepipe-mp-XXXXXX";
    const int fd = mkstemp(tmpl);
    if (fd < 0) throw std::runtime_error(std::string("cannot create a temporary file: ") + std::strerror(errno));
    close(fd);
    const std::string out = tmpl;
    std::vector<std::string> args = {"mpirun", "-np", std::to_string(ranks), "--oversubscribe"};
    if (geteuid() == 0) args.push_back("--allow-run-as-root");
    args.insert(args.end(), {program, "--backend", "mpi", "--size", std::to_string(o.size), "--iters",
                             std::to_string(o.iters), "--reps", std::to_string(o.reps), "--steps",
                             std::to_string(o.steps), "--style", o.style, "--json", out});
    if (!o.sizes.empty()) {
        std::string list;
        for (size_t b : o.sizes) list += (list.empty() ? "" : ",") + std::to_string(b);
        args.insert(args.end(), {"--sizes", list});
    }
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
        // This bench prints the result itself: the program's own report line is dropped.
        if (const int null = open("/dev/null", O_WRONLY); null >= 0) dup2(null, 1);
        execvp("mpirun", argv.data());
        std::fprintf(stderr, "cannot run mpirun: %s (install openmpi-bin)\n", std::strerror(errno));
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    nlohmann::json j;
    std::ifstream f(out);
    if (f) {
        try {
            f >> j;
        } catch (const std::exception&) {
            j = nlohmann::json();
        }
    }
    fs::remove(out);
    if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 1) || j.is_null())
        throw std::runtime_error("mpirun -np " + std::to_string(ranks) + " " + program + " failed (status " +
                                 std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)) +
                                 ", its messages above)");
    return j;
}

struct Fit {
    double alpha_us = 0, beta_gbs = 0;
};
// Least squares of one_way_us = alpha + bytes / (beta x 1e3).
Fit fit(const std::vector<std::pair<double, double>>& pts) {
    double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (auto [x, y] : pts) {
        n += 1;
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
    }
    const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);  // us per byte
    return Fit{(sy - slope * sx) / n, slope > 0 ? 1e-3 / slope : 0};
}

// `backends`: tiles and mpi interleaved, or the one --backend named.
int run_pingpong(const mp::KernelOptions& base, unsigned rounds, const std::vector<std::string>& backends) {
    mp::KernelOptions o = base;
    o.ranks = 2;
    std::map<std::pair<std::string, size_t>, std::vector<double>> us;  // (backend, bytes) -> one-way per round
    for (unsigned r = 0; r < rounds; ++r) {
        for (const std::string& backend : backends) {
            const nlohmann::json j = backend == "tiles" ? mp::run_kernel_tiles(o) : run_under_mpirun(o, 2);
            for (const auto& row : j["rows"]) us[{backend, row["bytes"].get<size_t>()}].push_back(row["one_way_us"]);
            std::fputc('.', stderr);
        }
    }
    std::fputc('\n', stderr);
    nlohmann::json rows = nlohmann::json::array();
    std::map<std::string, std::vector<std::pair<double, double>>> pts;
    std::map<size_t, std::map<std::string, double>> table;
    for (auto& [key, v] : us) {
        std::sort(v.begin(), v.end());
        const double med = v[v.size() / 2];
        const double gbs = double(key.second) / (med * 1e-6) / 1e9;
        rows.push_back({{"backend", key.first}, {"bytes", key.second}, {"one_way_us", med}, {"bandwidth_gbs", gbs}});
        pts[key.first].push_back({double(key.second), med});
        table[key.second][key.first] = med;
    }
    std::printf("%10s", "bytes");
    for (const std::string& b : backends) std::printf("  %12s", (b + " us").c_str());
    for (const std::string& b : backends) std::printf("  %10s", (b + " GB/s").c_str());
    std::printf("\n");
    for (auto& [bytes, m] : table) {
        std::printf("%10zu", bytes);
        for (const std::string& b : backends) std::printf("  %12.3f", m[b]);
        for (const std::string& b : backends) std::printf("  %10.3f", double(bytes) / (m[b] * 1e3));
        std::printf("\n");
    }
    nlohmann::json fits;
    for (auto& [backend, p] : pts) {
        const Fit f = fit(p);
        fits[backend] = {{"alpha_us", f.alpha_us}, {"beta_gbs", f.beta_gbs}};
        std::printf("%-6s alpha %.3f us  beta %.3f GB/s\n", backend.c_str(), f.alpha_us, f.beta_gbs);
    }
    nlohmann::json report{{"bench", "mp-pingpong"}, {"rounds", rounds}, {"rows", rows}, {"fit", fits}};
    if (backends.size() == 2) {
        const size_t smallest = table.begin()->first;
        const double ratio = table[smallest]["tiles"] / table[smallest]["mpi"];
        std::printf("%zu-byte one-way: tiles / mpi = %.2f (median of %u interleaved rounds)\n", smallest, ratio,
                    rounds);
        report["small_ratio"] = ratio;
    }
    if (!o.json.empty()) {
        write_json_text(o.json, report.dump(2) + "\n");
    }
    return 0;
}

// A kernel over the problem sizes of --sizes (the study's Figs. 3-6: GFLOPS and the share
// of time communicating against size), one run per size on the backend named; a row each.
int run_sizes(const mp::KernelOptions& o) {
    nlohmann::json rows = nlohmann::json::array();
    bool all_verified = true;
    std::printf("%s (%s) backend=%s ranks=%d\n%8s %10s %9s %10s %s\n", o.kernel.c_str(), o.style.c_str(),
                o.backend.c_str(), o.ranks, "size", "GFLOPS", "comm %", "seconds", "");
    for (size_t n : o.sizes) {
        mp::KernelOptions one = o;
        one.size = static_cast<int>(n);
        one.sizes.clear();
        one.json.clear();
        const nlohmann::json j = o.backend == "tiles" ? mp::run_kernel_tiles(one) : run_under_mpirun(one, one.ranks);
        const bool ok = j["verified"].get<bool>();
        all_verified &= ok;
        std::printf("%8zu %10.3f %8.1f%% %10.4f %s\n", n, j["gflops"].get<double>(), 100 * j["comm_share"].get<double>(),
                    j["seconds"].get<double>(), ok ? "verified" : "NOT VERIFIED");
        std::fflush(stdout);
        rows.push_back(j);
    }
    if (!o.json.empty()) {
        const nlohmann::json report{{"bench", o.kernel},   {"backend", o.backend}, {"ranks", o.ranks},
                                    {"style", o.style},    {"sweep", "sizes"},     {"rows", rows}};
        write_json_text(o.json, report.dump(2) + "\n");
    }
    return all_verified ? 0 : 1;
}

// One configuration `o.runs` times: each run's line, then the median, mean, standard
// deviation and range of GFLOPS (the run-to-run variance the hybrid table reports).
int run_repeated(const mp::KernelOptions& o) {
    nlohmann::json runs = nlohmann::json::array();
    std::vector<double> g;
    bool all_verified = true;
    mp::KernelOptions one = o;
    one.json.clear();
    for (int i = 0; i < o.runs; ++i) {
        const nlohmann::json j = o.backend == "tiles" ? mp::run_kernel_tiles(one) : run_under_mpirun(one, one.ranks);
        all_verified &= mp::emit_report(j, one) == 0;
        g.push_back(j["gflops"].get<double>());
        runs.push_back(j);
    }
    std::vector<double> sorted = g;
    std::sort(sorted.begin(), sorted.end());
    double mean = 0, var = 0;
    for (double x : g) mean += x / double(g.size());
    for (double x : g) var += (x - mean) * (x - mean) / double(g.size() - 1);
    const double median = sorted[sorted.size() / 2], sd = std::sqrt(var);
    std::printf("%s ranks=%d tiles_per_rank=%d, %d runs: GFLOPS median %.3f, mean %.3f, sd %.3f (%.1f%%), min %.3f, max %.3f\n",
                o.kernel.c_str(), o.ranks, o.tiles_per_rank, o.runs, median, mean, sd, mean > 0 ? 100 * sd / mean : 0,
                sorted.front(), sorted.back());
    if (!o.json.empty()) {
        const nlohmann::json report{{"bench", o.kernel},
                                    {"backend", o.backend},
                                    {"ranks", o.ranks},
                                    {"tiles_per_rank", o.tiles_per_rank},
                                    {"style", o.style},
                                    {"runs", runs},
                                    {"gflops", {{"median", median}, {"mean", mean}, {"sd", sd}, {"min", sorted.front()}, {"max", sorted.back()}}}};
        write_json_text(o.json, report.dump(2) + "\n");
    }
    return all_verified ? 0 : 1;
}

}  // namespace

int run_mp(int argc, char** argv) {
    const std::string kernel = argv[1];
    if (std::find(mp::kernel_names().begin(), mp::kernel_names().end(), kernel) == mp::kernel_names().end())
        throw std::invalid_argument("unknown bench '" + kernel + "'");
    for (int i = 2; i < argc; ++i)
        if (std::strcmp(argv[i], "--help") == 0) {
            std::printf("usage: tilepipe bench %s [options]\n%s%s", kernel.c_str(), mp::kKernelHelp,
                        kernel == "mp-pingpong" ? "  --rounds K          interleaved rounds per backend (default 3)\n"
                                                  "  (mp-pingpong measures both backends unless --backend names one)\n"
                        : kernel == "mp-shift" ? "  (mp-shift measures both backends unless --backend names one;\n"
                                                 "   --reps: shifts per size for the shortest message, default 2000)\n"
                                               : "");
            return 0;
        }
    // --rounds belongs to mp-pingpong here, not to the kernel.
    unsigned rounds = 3;
    std::vector<char*> rest;
    for (int i = 2; i < argc; ++i) {
        if (kernel == "mp-pingpong" && std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
            rounds = static_cast<unsigned>(std::max(1, std::atoi(argv[++i])));
            continue;
        }
        rest.push_back(argv[i]);
    }
    rest.insert(rest.begin(), argv[1]);
    const mp::KernelOptions o = mp::parse_kernel_options(kernel, static_cast<int>(rest.size()), rest.data(), 1);
    if (kernel == "mp-pingpong") {
        // Both backends, interleaved, unless --backend names one.
        bool backend_given = false;
        for (const char* a : rest) backend_given |= std::strncmp(a, "--backend", 9) == 0;
        return run_pingpong(o, rounds, backend_given ? std::vector<std::string>{o.backend}
                                                     : std::vector<std::string>{"tiles", "mpi"});
    }
    if (kernel == "mp-shift") {
        bool backend_given = false;
        for (const char* a : rest) backend_given |= std::strncmp(a, "--backend", 9) == 0;
        nlohmann::json j;
        for (const std::string& b : backend_given ? std::vector<std::string>{o.backend}
                                                 : std::vector<std::string>{"tiles", "mpi"}) {
            const nlohmann::json one = b == "tiles" ? mp::run_kernel_tiles(o) : run_under_mpirun(o, o.ranks);
            if (j.is_null()) j = one;
            else
                for (const auto& r : one["rows"]) j["rows"].push_back(r);
        }
        j["backend"] = backend_given ? o.backend : "both";
        return mp::emit_report(j, o);
    }
    if (!o.sizes.empty()) return run_sizes(o);
    if (o.runs > 1) return run_repeated(o);
    const nlohmann::json j = o.backend == "tiles" ? mp::run_kernel_tiles(o) : run_under_mpirun(o, o.ranks);
    return mp::emit_report(j, o);
}

}  // namespace tp::bench
