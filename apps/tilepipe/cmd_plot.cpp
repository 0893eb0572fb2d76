// `tilepipe plot REPORT.json [-o OUT.png]`: draws a JSON tilepipe wrote (run report, interval
// stats, topology, bench report) as a PNG. The drawing is scripts/plot.py (matplotlib); this
// command finds it and Debian's Python, and hands the arguments over.
//
// The script is looked for, in order: $TILEPIPE_PLOT_SCRIPT; `tilepipe-plot.py` next to the
// binary (the build puts a copy there); <binary>/../share/tilepipe/plot.py (installed); the
// source tree's scripts/plot.py; each with plot_input.py, the checks of its input, beside it.
// Python: $TILEPIPE_PYTHON, else /usr/bin/python3 (where Debian's python3-matplotlib lives),
// else python3 on the PATH.
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "apps/tilepipe/commands.hpp"

namespace tp::cli {

namespace {

namespace fs = std::filesystem;

struct PlotArgs {
    std::string report;
    std::string out;
};

std::string plot_script() {
    if (const char* s = std::getenv("TILEPIPE_PLOT_SCRIPT"); s != nullptr && *s != '\0') return s;
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    std::vector<fs::path> candidates;
    if (!ec) {
        candidates.push_back(exe.parent_path() / "tilepipe-plot.py");
        candidates.push_back(exe.parent_path().parent_path() / "share" / "tilepipe" / "plot.py");
    }
#ifdef TILEPIPE_SOURCE_DIR
    candidates.push_back(fs::path(TILEPIPE_SOURCE_DIR) / "scripts" / "plot.py");
#endif
    for (const fs::path& p : candidates)
        if (fs::is_regular_file(p, ec)) return p.string();
    return "";
}

std::string python() {
    if (const char* p = std::getenv("TILEPIPE_PYTHON"); p != nullptr && *p != '\0') return p;
    if (access("/usr/bin/python3", X_OK) == 0) return "/usr/bin/python3";
    return "python3";
}

int plot(const PlotArgs& args) {
    const std::string script = plot_script();
    if (script.empty()) {
        std::fprintf(stderr, "tilepipe plot: cannot find plot.py next to the binary, installed or in the source tree "
                             "(set TILEPIPE_PLOT_SCRIPT)\n");
        return kExitRuntime;
    }
    std::vector<std::string> argv{python(), script, args.report};
    if (!args.out.empty()) argv.insert(argv.end(), {"-o", args.out});
    std::vector<char*> cargv;
    for (std::string& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0) {
        std::perror("tilepipe plot: fork");
        return kExitRuntime;
    }
    if (pid == 0) {
        execvp(cargv[0], cargv.data());
        std::fprintf(stderr, "tilepipe plot: cannot run %s: %s\n", cargv[0], std::strerror(errno));
        _exit(kExitRuntime);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return kExitRuntime;
    // The script's own status: 0 drawn, 1 it could not (matplotlib, the output), 2 bad input.
    return WIFEXITED(status) ? WEXITSTATUS(status) : kExitRuntime;
}

}  // namespace

void add_plot(CLI::App& app, Action& action) {
    auto args = std::make_shared<PlotArgs>();
    CLI::App* cmd = app.add_subcommand(
        "plot", "draw a JSON tilepipe wrote (run --json, --stats-out, topo --json, bench --json) as a PNG");
    cmd->add_option("report", args->report, "the JSON file")->required();
    cmd->add_option("-o,--output", args->out, "the PNG to write, a name ending .png (default: REPORT with its extension replaced by .png)")->type_name("OUT.png");
    cmd->callback([args, &action] { action = [args] { return plot(*args); }; });
}

}  // namespace tp::cli
