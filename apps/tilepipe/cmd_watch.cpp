// `tilepipe watch [SOCKET]`: a running tilepipe seen like `top`, through DPDK's telemetry
// socket: redrawn in place on a terminal (q or Ctrl-C quits), one frame of plain lines per
// interval otherwise. It ends when the run's socket goes away.
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <thread>

#include "apps/tilepipe/commands.hpp"
#include "apps/tilepipe/watch_view.hpp"
#include "framework/eal/eal_session.hpp"
#include "framework/metrics/telemetry_client.hpp"

namespace tp::cli {

namespace {

struct WatchArgs {
    std::string socket;  // a socket path, or a --file-prefix; empty: EAL's default prefix
    double interval = 1.0;
    int frames = 0;      // 0: until the run ends or q
};

// How long a socket may answer null (no run registered yet) before watch says it is not a run's.
constexpr int kStartPatienceS = 5;

volatile std::sig_atomic_t g_quit = 0;
void on_signal(int) { g_quit = 1; }

// The socket a run with `--file-prefix name` makes, unless `name` is a path already.
std::string socket_path(const std::string& given) {
    if (given.find('/') != std::string::npos) return given;
    std::vector<std::string> args;
    if (!given.empty()) args = {"--file-prefix", given};
    return eal_runtime_dir(args) + "/dpdk_telemetry.v2";
}

// The terminal in single-key mode (no echo, no line buffering) while watch draws; restored
// when it ends.
class KeyReader {
public:
    KeyReader() {
        if (tcgetattr(STDIN_FILENO, &saved_) != 0) return;
        termios raw = saved_;
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO);
        raw.c_cc[VMIN] = 0;
        raw.c_cc[VTIME] = 0;
        active_ = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
    }
    ~KeyReader() {
        if (active_) tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
    }
    // Waits up to `ms` for a key; true when it was q.
    bool quit_within(int ms) {
        pollfd p{STDIN_FILENO, POLLIN, 0};
        if (!active_) {
            std::this_thread::sleep_for(std::chrono::milliseconds(ms));
            return false;
        }
        if (poll(&p, 1, ms) <= 0) return false;
        char c = 0;
        return read(STDIN_FILENO, &c, 1) == 1 && (c == 'q' || c == 'Q');
    }

private:
    termios saved_{};
    bool active_ = false;
};

int watch(const WatchArgs& args) {
    const std::string path = socket_path(args.socket);
    TelemetryClient client(path);
    if (!client.connected()) {
        std::fprintf(stderr,
                     "tilepipe: watch: no running tilepipe answers on %s (name the run's socket or its --file-prefix)\n",
                     path.c_str());
        return kExitRuntime;
    }
    const bool terminal = isatty(STDOUT_FILENO) == 1;
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    std::unique_ptr<KeyReader> keys;
    if (terminal && isatty(STDIN_FILENO) == 1) keys = std::make_unique<KeyReader>();
    if (terminal) std::fputs("\033[?25l", stdout);  // no cursor blinking over the figures
    WatchMemory memory;
    int drawn = 0;
    bool ended = false, waiting = false;
    int status = kExitOk;
    using clock = std::chrono::steady_clock;
    const clock::time_point patience_ends = clock::now() + std::chrono::seconds(kStartPatienceS);
    while (g_quit == 0) {
        nlohmann::json stats = client.query("/tilepipe/stats");
        if (stats.is_discarded()) {
            if (g_quit != 0) break;  // Ctrl-C during the exchange
            if (!client.closed()) {  // it answered no more within the client's patience
                std::fprintf(stderr, "tilepipe: watch: %s: %s\n", path.c_str(), client.failure().c_str());
                status = kExitRuntime;
                break;
            }
            ended = true;
            break;
        }
        // A run registers /tilepipe/... once its stages are built (captures loaded), and DPDK
        // answers null until then, as it does for another program's socket: wait a while for
        // the first frame, then refuse.
        if (stats.is_null() && drawn > 0) {  // the run finished and withdrew its endpoints before its socket went
            ended = true;
            break;
        }
        if (stats.is_null() && drawn == 0 && clock::now() < patience_ends) {
            if (!waiting) std::fprintf(stderr, "tilepipe: watch: %s publishes no tilepipe run yet: waiting up to %d s\n", path.c_str(),
                                       kStartPatienceS);
            waiting = true;
            if (keys ? keys->quit_within(200) : (std::this_thread::sleep_for(std::chrono::milliseconds(200)), false)) break;
            continue;
        }
        const WatchSample s{std::move(stats), client.query("/tilepipe/nodes"), client.query("/tilepipe/latency")};
        if (const std::string problem = watch_reply_problem(s); !problem.empty()) {
            std::fprintf(stderr, "tilepipe: watch: %s does not answer as a tilepipe run: %s%s\n", path.c_str(), problem.c_str(),
                         s.stats.is_null() ? " (another program's socket, or a run still loading: try again once it runs)" : "");
            status = kExitRuntime;
            break;
        }
        const std::string frame = watch_frame(s, memory);
        // In place on a terminal (home, the frame, clear what is left); a blank line between
        // frames otherwise.
        if (terminal) std::printf("\033[H\033[2Jtilepipe watch %s (q quits)\n%s", path.c_str(), frame.c_str());
        else std::printf("%s%s", drawn > 0 ? "\n" : "", frame.c_str());
        std::fflush(stdout);
        if (++drawn == args.frames) break;
        const int ms = static_cast<int>(args.interval * 1000);
        if (keys ? keys->quit_within(ms) : (std::this_thread::sleep_for(std::chrono::milliseconds(ms)), false)) break;
    }
    if (terminal) std::fputs("\033[?25h", stdout);
    if (ended) std::printf("%sthe run ended (its telemetry socket closed)\n", drawn > 0 && !terminal ? "\n" : "");
    std::fflush(stdout);
    return status;
}

}  // namespace

void add_watch(CLI::App& app, Action& action) {
    auto args = std::make_shared<WatchArgs>();
    CLI::App* cmd = app.add_subcommand("watch", "watch a running tilepipe like top, through its telemetry socket");
    cmd->add_option("SOCKET", args->socket,
                    "the run's telemetry socket, or its --file-prefix (default: EAL's default prefix, rte)");
    cmd->add_option("--interval", args->interval, "seconds between frames (0.1 to 3600)")
        ->check(CLI::Validator(
            [](std::string& s) {
                char* end = nullptr;
                const double v = std::strtod(s.c_str(), &end);
                // Not CLI::Range: a NaN compares false both ways and would pass it.
                if (end == s.c_str() || *end != '\0' || !(v >= 0.1 && v <= 3600))
                    return "must be 0.1 to 3600 seconds, got '" + s + "'";
                return std::string();
            },
            "SECONDS"));
    cmd->add_option("-n,--frames", args->frames, "quit after N frames (default: when the run ends, or on q)")
        ->check(CLI::Range(1, 1 << 30));
    cmd->callback([args, &action] { action = [args] { return watch(*args); }; });
}

}  // namespace tp::cli
