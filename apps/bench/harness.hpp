// The benches' shared harness: option parsing, interleaved repetitions, median/min/max,
// table printing and the JSON report.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tp::bench {

// `--name value` / `--name=value` options and `--flag`s; anything unknown is an error.
// `--config FILE` first reads a YAML mapping `bench: NAME` plus option names to values (a
// sequence for a list option, true/false for a flag); options on the command line win.
// A file of the example apps, such as conf/default.yaml: `path` as given when it exists;
// else, for a relative path, the installed copy (<binary>/../share/tilepipe/PATH, then the
// install's datadir) or the source tree's, so a bench's default runs from any folder and from
// an install. Throws std::invalid_argument naming the places looked in and `option`.
std::string example_file(const std::string& path, const std::string& option);

class Args {
public:
    // `flags` take no value; every other known option takes one. Throws std::invalid_argument,
    // naming `file:line:col` for a mistake in the config file.
    Args(int argc, char** argv, const std::vector<std::string>& options, const std::vector<std::string>& flags);
    bool has(const std::string& name) const { return values_.count(name) != 0; }
    // How to name option `name` in an error: `--name`, or `file:line:col: name` when the
    // value came from the config file.
    std::string label(const std::string& name) const;
    std::string str(const std::string& name, const std::string& fallback) const;
    uint64_t num(const std::string& name, uint64_t fallback) const;
    std::vector<std::string> list(const std::string& name, const std::vector<std::string>& fallback) const;

private:
    void read_config(const std::string& file, const std::string& bench, const std::vector<std::string>& options,
                     const std::vector<std::string>& flags);

    std::map<std::string, std::string> values_;
    std::map<std::string, std::string> config_where_;  // option -> "file:line:col" of its value
};

// The options every bench takes.
struct Common {
    unsigned reps = 5;
    std::string json;                 // --json OUT
    int cpu_a = 0, cpu_b = 1;         // --cpus A,B
    std::vector<std::string> transports;  // --transports a,b,... (default: all)
};
inline const char* kCommonHelp =
    "  --reps N           repetitions of each measurement (default 5, at least 1)\n"
    "  --cpus A,B         the two CPUs to pin the threads to (default: the first two allowed)\n"
    "  --transports LIST  comma-separated transports to measure (default: all)\n"
    "  --json OUT         also write {\"bench\": NAME, \"rows\": [...]} to OUT\n"
    "  --help             this text\n";
Common parse_common(const Args& args, const std::vector<std::string>& all_transports);
// `text` as a CPU this process may run on; std::invalid_argument naming `option` otherwise.
int allowed_cpu(const std::string& text, const std::string& option, const std::vector<int>& allowed);

// Starts DPDK EAL when `dpdk` or `udn_eventdev` is among the transports measured.
void start_eal_if_needed(const std::vector<std::string>& transports);

// Pins the calling thread (warns once on stderr if the OS refuses).
void pin(int cpu);

struct Summary {
    double median = 0, min = 0, max = 0;
};
Summary summarize(std::vector<double> values);

// Exit status of a bench stopped by Ctrl-C (SIGINT) or SIGTERM, after it reported what it had
// measured (128 + SIGINT, as a shell reports a command ended by it).
inline constexpr int kExitInterrupted = 130;

// Runs `measure(case, rep)` for rep 0..reps-1 of every case, interleaved: all cases of
// rep 0, then all of rep 1, ...; prints a dot per measurement on stderr. Says on stderr how
// long the whole run will take once the first measurement shows it is more than a few seconds
// (and again once the first repetition gives a better estimate). Ctrl-C lets the measurement
// in progress finish and starts no other. Returns the repetitions every case completed: `reps`,
// or fewer when interrupted (a second Ctrl-C ends the process at once, status 130).
unsigned interleave(unsigned reps, size_t cases, const std::function<void(size_t, unsigned)>& measure);

// Drops the measurements of a repetition not every case completed.
template <typename T>
void keep_reps(std::vector<std::vector<T>>& per_case, unsigned done) {
    for (auto& v : per_case)
        if (v.size() > done) v.resize(done);
}

// The exit status once a bench has printed its report: 0, or kExitInterrupted (saying on
// stderr how many of the repetitions the figures hold) when `done` < `reps`; with done == 0
// there is nothing to report, and it says so.
int finish(const std::string& bench, unsigned done, unsigned reps);

// A count option that must be at least `min` (`--iters 0` is a mistake, not 1).
uint64_t at_least(const Args& args, const std::string& name, uint64_t fallback, uint64_t min);

// A column: header, JSON pointer into a row ("/one_way_ns/avg"), decimals.
struct Column {
    std::string header;
    std::string pointer;
    int decimals = 1;
};
void print_table(const std::string& title, const std::vector<nlohmann::json>& rows, const std::vector<Column>& columns);
// `v` with `decimals` decimals, or three significant digits when those would show a nonzero
// figure as 0 ("0.000" for 0.00004 becomes "4e-05").
std::string format_figure(double v, int decimals);

// Writes {"bench": name, "rows": rows} to `path` (no-op when empty; "-": standard output,
// see divert_stdout_to_stderr); throws on I/O errors.
void write_json(const std::string& path, const std::string& name, const std::vector<nlohmann::json>& rows);

// TSC ticks (rdtsc) and its rate, measured once against the steady clock.
uint64_t ticks();
double ticks_per_ns();

}  // namespace tp::bench
