#include "framework/eal/eal_session.hpp"

#include <rte_eal.h>
#include <rte_errno.h>
#include <sched.h>

#include <fstream>
#include <mutex>
#include <sstream>
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
}  // namespace

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
    a.push_back("--no-telemetry");
    if (!has_user_flag(user, "--log-level"))
        a.push_back(opts.verbose ? "--log-level=*:info" : "--log-level=*:warning");
    for (const auto& v : opts.vdevs) a.insert(a.end(), {"--vdev", v});
    a.insert(a.end(), user.begin(), user.end());
    return a;
}

const EalInfo& eal_start(const EalOptions& opts) {
    std::call_once(g_once, [&] {
        g_info.hugepages = host_has_hugepages();
        g_info.argv = eal_arguments(opts, g_info.hugepages);
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
