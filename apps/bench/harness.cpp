#include "apps/bench/harness.hpp"

#include <x86intrin.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <yaml-cpp/yaml.h>

#include "framework/config/yaml_location.hpp"
#include "framework/eal/eal_session.hpp"
#include "framework/output/json_out.hpp"
#include "framework/runtime/cpu_affinity.hpp"
#include "framework/runtime/stop_request.hpp"

namespace tp::bench {

namespace {
bool known(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}
}  // namespace

Args::Args(int argc, char** argv, const std::vector<std::string>& options, const std::vector<std::string>& flags) {
    // The config file first, wherever --config stands, so the command line overrides it.
    for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--config" && i + 1 < argc) read_config(example_file(argv[i + 1], "--config"), argc > 1 ? argv[1] : "", options, flags);
        else if (a.rfind("--config=", 0) == 0) read_config(example_file(a.substr(9), "--config"), argc > 1 ? argv[1] : "", options, flags);
        else if (a == "--config") throw std::invalid_argument("--config needs a value");
        else continue;
        break;
    }
    for (int i = 2; i < argc; ++i) {
        std::string a = argv[i];
        if (a.rfind("--", 0) != 0) throw std::invalid_argument("unexpected argument '" + a + "'");
        a = a.substr(2);
        std::string value;
        const auto eq = a.find('=');
        if (eq != std::string::npos) {
            value = a.substr(eq + 1);
            a = a.substr(0, eq);
        }
        if (a == "config") {
            if (eq == std::string::npos) ++i;  // read above
        } else if (known(flags, a)) {
            values_[a] = "1";
        } else if (known(options, a)) {
            if (eq == std::string::npos) {
                if (i + 1 >= argc) throw std::invalid_argument("--" + a + " needs a value");
                value = argv[++i];
            }
            values_[a] = value;
            config_where_.erase(a);
        } else {
            throw std::invalid_argument("unknown option --" + a + " (try --help)");
        }
    }
}

std::string example_file(const std::string& path, const std::string& option) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::exists(path, ec) || fs::path(path).is_absolute()) return path;
    std::vector<fs::path> places;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) places.push_back(exe.parent_path().parent_path() / "share" / "tilepipe");
    places.emplace_back(TILEPIPE_DATADIR);
    places.emplace_back(TILEPIPE_SOURCE_DIR);
    std::string looked;
    for (const fs::path& p : places) {
        if (fs::exists(p / path, ec)) return (p / path).string();
        looked += ", " + p.string();
    }
    throw std::invalid_argument(path + ": no such file here (" + fs::current_path(ec).string() + looked +
                                "): pass " + option + " FILE");
}

void Args::read_config(const std::string& file, const std::string& bench, const std::vector<std::string>& options,
                       const std::vector<std::string>& flags) {
    auto fail = [&](const YAML::Mark& m, const std::string& msg) {
        throw std::invalid_argument(yaml_location(file, m).str() + ": " + msg);
    };
    YAML::Node root;
    try {
        root = YAML::LoadFile(file);
    } catch (const YAML::BadFile&) {
        throw std::invalid_argument(file + ": cannot read the config file");
    } catch (const YAML::Exception& e) {
        fail(e.mark, e.msg);
    }
    try {
        refuse_repeated_keys(root, file);
    } catch (const LocatedError& e) {
        throw std::invalid_argument(e.what());
    }
    if (!root.IsMap()) fail(root.Mark(), "a bench config is a mapping with a 'bench:' key");
    bool named = false;
    for (auto it = root.begin(); it != root.end(); ++it) {
        const YAML::Node key = it->first;
        const YAML::Node value = it->second;  // copies: the iterator's pair is a temporary
        const std::string k = key.IsScalar() ? key.Scalar() : "";
        std::string v;
        if (value.IsScalar()) {
            v = value.Scalar();
        } else if (value.IsSequence() && value.size() != 0) {
            for (const YAML::Node& item : value) {
                if (!item.IsScalar()) fail(item.Mark(), "'" + k + "' takes single values");
                v += (v.empty() ? "" : ",") + item.Scalar();
            }
        } else {
            fail(value.Mark(), "'" + k + "' needs a value or a list of values");
        }
        if (k == "bench") {
            if (v != bench) fail(value.Mark(), "this config is for bench '" + v + "', not '" + bench + "'");
            named = true;
        } else if (known(flags, k)) {
            if (v != "true" && v != "false") fail(value.Mark(), "'" + k + "' is true or false, got '" + v + "'");
            if (v == "true") values_[k] = "1";
        } else if (known(options, k)) {
            values_[k] = v;
            config_where_[k] = yaml_location(file, value.Mark()).str();
        } else {
            fail(key.Mark(), "unknown option '" + k + "' for bench " + bench + " (try --help)");
        }
    }
    if (!named) fail(root.Mark(), "missing 'bench: " + bench + "'");
}

std::string Args::label(const std::string& name) const {
    auto it = config_where_.find(name);
    return it == config_where_.end() ? "--" + name : it->second + ": " + name;
}

std::string Args::str(const std::string& name, const std::string& fallback) const {
    auto it = values_.find(name);
    return it == values_.end() ? fallback : it->second;
}

uint64_t Args::num(const std::string& name, uint64_t fallback) const {
    auto it = values_.find(name);
    if (it == values_.end()) return fallback;
    if (!it->second.empty() && !std::isdigit(static_cast<unsigned char>(it->second[0])))
        throw std::invalid_argument(label(name) + " needs a number (0 or more), got '" + it->second + "'");
    size_t used = 0;
    uint64_t v = 0;
    try {
        v = std::stoull(it->second, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != it->second.size() || it->second.empty())
        throw std::invalid_argument(label(name) + " needs a number, got '" + it->second + "'");
    return v;
}

std::vector<std::string> Args::list(const std::string& name, const std::vector<std::string>& fallback) const {
    auto it = values_.find(name);
    if (it == values_.end()) return fallback;
    std::vector<std::string> out;
    std::stringstream ss(it->second);
    for (std::string item; std::getline(ss, item, ',');)
        if (!item.empty()) out.push_back(item);
    return out;
}

int allowed_cpu(const std::string& text, const std::string& option, const std::vector<int>& allowed) {
    std::string list;
    for (int a : allowed) list += (list.empty() ? "" : ",") + std::to_string(a);
    size_t used = 0;
    int cpu = -1;
    try {
        cpu = std::stoi(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != text.size() || cpu < 0)
        throw std::invalid_argument(option + ": '" + text + "' is not a CPU number (allowed: " + list + ")");
    if (std::find(allowed.begin(), allowed.end(), cpu) == allowed.end())
        throw std::invalid_argument(option + ": CPU " + text + " is not one this process may run on (allowed: " + list + ")");
    return cpu;
}

Common parse_common(const Args& args, const std::vector<std::string>& all_transports) {
    Common c;
    c.reps = static_cast<unsigned>(std::min<uint64_t>(at_least(args, "reps", 5, 1), 1000000));
    c.json = args.str("json", "");
    const std::vector<int> allowed = allowed_cpus();
    c.cpu_a = allowed[0];
    c.cpu_b = allowed.size() > 1 ? allowed[1] : allowed[0];
    if (args.has("cpus")) {
        const auto cpus = args.list("cpus", {});
        if (cpus.size() != 2) throw std::invalid_argument("--cpus needs two CPUs: A,B");
        c.cpu_a = allowed_cpu(cpus[0], "--cpus", allowed);
        c.cpu_b = allowed_cpu(cpus[1], "--cpus", allowed);
    }
    c.transports = args.list("transports", all_transports);
    for (const auto& t : c.transports)
        if (std::find(all_transports.begin(), all_transports.end(), t) == all_transports.end()) {
            std::string known;
            for (const auto& k : all_transports) known += (known.empty() ? "" : ", ") + k;
            throw std::invalid_argument("unknown transport '" + t + "' (known: " + known + ")");
        }
    return c;
}

void start_eal_if_needed(const std::vector<std::string>& transports) {
    for (const char* needs_eal : {"dpdk", "udn_eventdev"})
        if (std::find(transports.begin(), transports.end(), needs_eal) != transports.end()) {
            eal_start(EalOptions{});
            return;
        }
}

void pin(int cpu) {
    static bool warned = false;
    if (!pin_current_thread(cpu) && !warned) {
        warned = true;
        std::fprintf(stderr, "bench: cannot pin a thread to CPU %d; results will be noisy\n", cpu);
    }
}

Summary summarize(std::vector<double> v) {
    Summary s;
    if (v.empty()) return s;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    s.median = n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    s.min = v.front();
    s.max = v.back();
    return s;
}

namespace {
std::string duration_text(double s) {
    char buf[32];
    if (s < 90) std::snprintf(buf, sizeof buf, "%.0f s", s);
    else if (s < 5400) std::snprintf(buf, sizeof buf, "%.0f min", s / 60);
    else std::snprintf(buf, sizeof buf, "%.1f h", s / 3600);
    return buf;
}
constexpr double kSayAfterSeconds = 3.0;  // a shorter run just runs
}  // namespace

unsigned interleave(unsigned reps, size_t cases, const std::function<void(size_t, unsigned)>& measure) {
    using clock = std::chrono::steady_clock;
    install_stop_signal_handlers();
    const auto start = clock::now();
    const double total = double(reps) * double(cases);
    for (unsigned r = 0; r < reps; ++r) {
        for (size_t c = 0; c < cases; ++c) {
            if (stop_requested()) {
                std::fputc('\n', stderr);
                return r;
            }
            measure(c, r);
            std::fputc('.', stderr);
            const double elapsed = std::chrono::duration<double>(clock::now() - start).count();
            // Cases differ (sizes, worker counts): the first estimate is rough, the one after a
            // whole repetition holds every case once.
            const bool first = r == 0 && c == 0, first_rep = c + 1 == cases && r == 0 && reps > 1;
            if ((first && cases > 1) || first_rep) {
                const double left = elapsed / (first ? 1.0 : double(cases)) * total - elapsed;
                if (left > kSayAfterSeconds)
                    std::fprintf(stderr, "\nbench: %zu case(s) x %u rep(s); about %s %s (Ctrl-C stops early and reports what was measured)\n",
                                 cases, reps, duration_text(left).c_str(), first ? "to go, from the first measurement" : "more");
            }
        }
        std::fputc(r + 1 == reps ? '\n' : ' ', stderr);
    }
    return reps;
}

int finish(const std::string& bench, unsigned done, unsigned reps) {
    if (done >= reps) return 0;
    if (done == 0)
        std::fprintf(stderr, "bench %s: interrupted before every case was measured once: nothing to report\n", bench.c_str());
    else
        std::fprintf(stderr, "bench %s: interrupted: the figures are from %u of %u repetitions\n", bench.c_str(), done, reps);
    return kExitInterrupted;
}

uint64_t at_least(const Args& args, const std::string& name, uint64_t fallback, uint64_t min) {
    const uint64_t v = args.num(name, fallback);
    if (v < min)
        throw std::invalid_argument(args.label(name) + " must be at least " + std::to_string(min) + ", got " + std::to_string(v));
    return v;
}

namespace {
std::string cell(const nlohmann::json& row, const Column& c) {
    const nlohmann::json::json_pointer p(c.pointer);
    if (!row.contains(p)) return "-";
    const auto& v = row.at(p);
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
    if (v.is_number()) return format_figure(v.get<double>(), c.decimals);
    return v.dump();
}
}  // namespace

std::string format_figure(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
    // A figure too small for the column's decimals keeps three significant digits rather than
    // reading 0.000 (a rate of 1 in 10000 per microsecond, a one-by-one round trip's Mtasks/s).
    const double shown = std::strtod(buf, nullptr);
    if (shown == 0 && v != 0 && std::isfinite(v)) std::snprintf(buf, sizeof(buf), "%.3g", v);
    return buf;
}

void print_table(const std::string& title, const std::vector<nlohmann::json>& rows, const std::vector<Column>& columns) {
    std::vector<std::vector<std::string>> cells;
    std::vector<size_t> width;
    for (const auto& c : columns) width.push_back(c.header.size());
    for (const auto& r : rows) {
        cells.emplace_back();
        for (size_t i = 0; i < columns.size(); ++i) {
            cells.back().push_back(cell(r, columns[i]));
            width[i] = std::max(width[i], cells.back().back().size());
        }
    }
    std::cout << title << '\n';
    auto line = [&](const std::vector<std::string>& v) {
        for (size_t i = 0; i < v.size(); ++i) {
            const std::string pad(width[i] - v[i].size(), ' ');
            std::cout << (i == 0 ? v[i] + pad : "  " + pad + v[i]);
        }
        std::cout << '\n';
    };
    std::vector<std::string> headers;
    for (const auto& c : columns) headers.push_back(c.header);
    line(headers);
    for (const auto& r : cells) line(r);
    std::cout.flush();
}

void write_json(const std::string& path, const std::string& name, const std::vector<nlohmann::json>& rows) {
    std::cout.flush();
    write_json_text(path, nlohmann::json{{"bench", name}, {"rows", rows}}.dump(2) + "\n");
}

uint64_t ticks() { return __rdtsc(); }

double ticks_per_ns() {
    static const double rate = [] {
        const auto t0 = std::chrono::steady_clock::now();
        const uint64_t c0 = __rdtsc();
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        const uint64_t c1 = __rdtsc();
        const auto t1 = std::chrono::steady_clock::now();
        return static_cast<double>(c1 - c0) / std::chrono::duration<double, std::nano>(t1 - t0).count();
    }();
    return rate;
}

}  // namespace tp::bench
