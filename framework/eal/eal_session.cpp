#include "framework/eal/eal_session.hpp"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_log.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string_view>
#include <stdexcept>

namespace tp {

namespace {
std::once_flag g_once;
EalInfo g_info;
bool g_started = false;

bool has_user_flag(const std::vector<std::string>& user, const char* flag) {
    for (const auto& a : user)
        if (a == flag || a.rfind(std::string(flag) + "=", 0) == 0) return true;
    return false;
}

// "0@(0-1)": the main lcore may run on every CPU this process is allowed.
std::string floating_main_lcore() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::string cpus;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &set)) cpus += (cpus.empty() ? "" : ",") + std::to_string(c);
    }
    return cpus.empty() ? "0" : "0@(" + cpus + ")";
}
// The value of `flag` in `args` ("--flag V" or "--flag=V"; the last one wins), or `fallback`.
std::string flag_value(const std::vector<std::string>& args, const std::string& flag, std::string fallback) {
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == flag && i + 1 < args.size()) fallback = args[i + 1];
        else if (args[i].rfind(flag + "=", 0) == 0) fallback = args[i].substr(flag.size() + 1);
    }
    return fallback;
}

// EAL's log stream: stderr, less one notice DPDK 22.11's telemetry prints at every start when
// no client of its deprecated v1 interface registered (nothing a tilepipe user can act on).
// DPDK writes each message with one vfprintf and flushes it, so a write holds whole lines.
ssize_t write_eal_log(void*, const char* buf, size_t n) {
    static constexpr std::string_view kLegacyNotice = "No legacy callbacks, legacy socket not created";
    if (std::string_view(buf, n).find(kLegacyNotice) == std::string_view::npos) std::fwrite(buf, 1, n, stderr);
    return static_cast<ssize_t>(n);
}

FILE* filtered_eal_log() {
    static FILE* f = [] {
        cookie_io_functions_t io{};
        io.write = write_eal_log;
        FILE* s = fopencookie(nullptr, "w", io);
        if (s != nullptr) setvbuf(s, nullptr, _IOLBF, 0);
        return s;
    }();
    return f;
}
}  // namespace

std::string eal_runtime_dir(const std::vector<std::string>& args) {
    std::string base;
    if (const char* d = std::getenv("RUNTIME_DIRECTORY"); d != nullptr && *d != '\0') base = d;
    else if (getuid() == 0) base = "/var/run";
    else if (const char* x = std::getenv("XDG_RUNTIME_DIR"); x != nullptr && *x != '\0') base = x;
    else base = "/tmp";
    return base + "/dpdk/" + flag_value(args, "--file-prefix", "rte");
}

std::string telemetry_socket_problem(const std::string& runtime_dir) {
    const std::string socket = runtime_dir + "/dpdk_telemetry.v2";
    // Room for the ":N" DPDK appends when another process of the same prefix holds the name.
    constexpr size_t kMax = sizeof(sockaddr_un::sun_path) - 1;
    if (socket.size() + 3 > kMax)
        return "its socket path " + socket + " is longer than a unix socket address allows (" +
               std::to_string(kMax - 3) + " characters); choose a shorter --file-prefix";
    struct stat st {};
    if (stat(runtime_dir.c_str(), &st) != 0) return "";  // EAL creates it, mode 0700
    if (!S_ISDIR(st.st_mode)) return runtime_dir + " is not a directory";
    if (st.st_uid != geteuid()) return runtime_dir + " belongs to another user";
    if (access(runtime_dir.c_str(), W_OK | X_OK) != 0) return "cannot create files in " + runtime_dir;
    return "";
}

bool host_has_hugepages() {
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    uint64_t free_pages = 0;
    while (meminfo >> key) {
        if (key == "HugePages_Free:") {
            meminfo >> free_pages;
            break;
        }
    }
    if (free_pages == 0) return false;
    std::ifstream mounts("/proc/mounts");
    std::string line;
    while (std::getline(mounts, line))
        if (line.find(" hugetlbfs ") != std::string::npos) return true;
    return false;
}

uint64_t host_memory_available(bool hugepages) {
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    uint64_t free_pages = 0, page_kb = 0, available_kb = 0, value = 0;
    while (meminfo >> key >> value) {
        if (key == "HugePages_Free:") free_pages = value;
        else if (key == "Hugepagesize:") page_kb = value;
        else if (key == "MemAvailable:") available_kb = value;
        meminfo.ignore(64, '\n');
    }
    return (hugepages ? free_pages * page_kb : available_kb) << 10;
}

uint64_t eal_memory_available(const EalOptions& opts) {
    return host_memory_available(host_has_hugepages() && !has_user_flag(split_args(opts.user_args), "--no-huge"));
}

std::vector<std::string> split_args(const std::string& text) {
    std::vector<std::string> out;
    std::string cur;
    bool in_word = false;
    char quote = 0;
    for (char c : text) {
        if (quote != 0) {
            if (c == quote) quote = 0;
            else cur += c;
        } else if (c == '\'' || c == '"') {
            quote = c;
            in_word = true;
        } else if (c == ' ' || c == '\t' || c == '\n') {
            if (in_word) out.push_back(cur), cur.clear(), in_word = false;
        } else {
            cur += c;
            in_word = true;
        }
    }
    if (quote != 0) throw std::invalid_argument("unterminated quote in EAL arguments: " + text);
    if (in_word) out.push_back(cur);
    return out;
}

uint64_t eal_memory_mb(const EalOptions& opts) { return (opts.memory_bytes >> 20) + 256; }

std::vector<std::string> eal_arguments(const EalOptions& opts, bool hugepages) {
    const std::vector<std::string> user = split_args(opts.user_args);
    std::vector<std::string> a{"tilepipe"};
    if (!has_user_flag(user, "-l") && !has_user_flag(user, "--lcores") && !has_user_flag(user, "-c"))
        a.insert(a.end(), {"--lcores", floating_main_lcore()});
    const bool user_no_huge = has_user_flag(user, "--no-huge");
    if (hugepages && !user_no_huge) {
        a.push_back("--in-memory");
    } else {
        if (!user_no_huge) a.push_back("--no-huge");
        a.push_back("--no-shconf");
    }
    // With hugepages EAL grows its memory on demand. Without, it reserves -m up front (address
    // space only: pages are touched when used), so be generous: pools plus room for EAL's heap.
    const bool no_huge = !hugepages || user_no_huge;
    if (no_huge && !has_user_flag(user, "-m") && !has_user_flag(user, "--socket-mem"))
        a.insert(a.end(), {"-m", std::to_string(eal_memory_mb(opts))});
    if (!has_user_flag(user, "-a") && !has_user_flag(user, "--allow") && !has_user_flag(user, "-b") &&
        !has_user_flag(user, "--block")) {
        if (opts.pci_devices.empty()) a.push_back("--no-pci");
        for (const auto& d : opts.pci_devices) a.insert(a.end(), {"-a", d});  // scan these only
    }
    if (!has_user_flag(user, "--log-level"))
        a.push_back(opts.verbose ? "--log-level=*:info" : "--log-level=*:warning");
    for (const auto& v : opts.vdevs) a.insert(a.end(), {"--vdev", v});
    // A relocated build (scripts/bundle.sh) names the folder of the DPDK drivers it carries:
    // EAL loads those, and only those the user pointed at, as with their own -d.
    if (const char* d = std::getenv("TILEPIPE_EAL_DRIVERS"); d != nullptr && *d != '\0' && !has_user_flag(user, "-d"))
        a.insert(a.end(), {"-d", d});
    a.insert(a.end(), user.begin(), user.end());
    return a;
}

const EalInfo& eal_start(const EalOptions& opts) {
    std::call_once(g_once, [&] {
        g_info.hugepages = host_has_hugepages();
        g_info.argv = eal_arguments(opts, g_info.hugepages);
        g_info.runtime_dir = eal_runtime_dir(g_info.argv);
        if (has_user_flag(g_info.argv, "--no-telemetry")) {
            g_info.telemetry_off = "--no-telemetry given";
        } else if (std::string why = telemetry_socket_problem(g_info.runtime_dir); !why.empty()) {
            // EAL would refuse to start over its socket: the run goes on without live telemetry.
            g_info.telemetry_off = why;
            g_info.argv.push_back("--no-telemetry");
            spdlog::warn("live telemetry is off: {}; the run goes on without it", why);
        }
        if (!opts.verbose)
            if (FILE* log = filtered_eal_log()) rte_openlog_stream(log);
        std::vector<char*> argv;
        for (auto& s : g_info.argv) argv.push_back(s.data());
        argv.push_back(nullptr);
        // EAL keeps pointers into argv: g_info owns the strings for the process lifetime.
        const int rc = rte_eal_init(static_cast<int>(argv.size() - 1), argv.data());
        if (rc < 0) {
            std::ostringstream os;
            os << "cannot start DPDK EAL (" << rte_strerror(rte_errno) << ") with:";
            for (const auto& s : g_info.argv) os << ' ' << s;
            throw std::runtime_error(os.str());
        }
        g_info.memory_mb = eal_memory_mb(opts);
        g_started = true;
    });
    if (!g_started) throw std::runtime_error("DPDK EAL failed to start earlier in this process");
    return g_info;
}

bool eal_started() { return g_started; }

}  // namespace tp
