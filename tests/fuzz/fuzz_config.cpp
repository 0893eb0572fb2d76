// The YAML app config loader and the rest of `validate` on arbitrary files: load_app_config
// (YAML, stage parameters, the checks that span settings, rule files and captures it names)
// and plan_app (graph, topology, placement). Either step may refuse the file with a located
// error; nothing else may escape (`validate` reports only LocatedError).
//
// Paths in a config are relative to its file, so the input is written where the shipped apps
// live, as seen from a scratch folder: SCRATCH/app/conf/app.yaml, with SCRATCH/app/conf/data
// linking to the source tree's conf/data and SCRATCH/shared to the folder of the shared
// captures. The seeds (conf/*.yaml) then reach their rule files and captures as they do in the
// tree; nothing is written through the links (`validate` never creates output files).
#include <cstdlib>
#include <cstdint>
#include <filesystem>
#include <string>
#include <system_error>

#include "framework/config/app_config.hpp"
#include "framework/graph/app_plan.hpp"
#include "tests/fuzz/fuzz_support.hpp"

namespace {

void link_tree() {
    namespace fs = std::filesystem;
    const char* pcaps = std::getenv("TILEPIPE_PCAPS");
    const fs::path shared = fs::absolute(pcaps != nullptr ? fs::path(pcaps) / ".." : fs::path("..") / "shared");
    const fs::path scratch = tp::fuzz::scratch_dir();
    std::error_code ec;
    fs::create_directories(scratch / "app" / "conf", ec);
    if (!ec) fs::create_directory_symlink(fs::absolute("conf/data"), scratch / "app" / "conf" / "data", ec);
    if (!ec) fs::create_directory_symlink(shared, scratch / "shared", ec);
    if (ec) tp::fuzz::finding("cannot lay out " + scratch.string() + ": " + ec.message());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace tp;
    fuzz::start_eal();
    static const bool linked = (link_tree(), true);
    (void)linked;
    const std::string path = fuzz::scratch_file("app/conf/app.yaml", data, size);
    try {
        const AppConfig app = load_app_config(path);
        (void)plan_app(app);
    } catch (const LocatedError&) {
        // refused at a file:line:col: what `validate` prints
    }
    return 0;
}
