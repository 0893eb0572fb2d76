// The installed tilepipe as someone outside the tree uses it: `meson install --destdir` of the
// build, every examples/*/ project configured and built against the installed tilepipe.pc (and
// its checks run), then the installed `tilepipe` running the example plugin in an app, and
// refusing each kind of bad plugin with a message that names the file.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/process.hpp"
#include "tilepipe/version.hpp"

namespace fs = std::filesystem;
using tp::test::CommandResult;
using tp::test::run_command;

namespace {

std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr ? v : "";
}

std::string sh_quote(const std::string& s) { return "'" + s + "'"; }

// Set up once: the install tree and the examples built against it.
struct Installed {
    std::string root;      // the --destdir folder
    std::string bin;       // its bin/tilepipe
    std::string pkgconfig; // the folder holding tilepipe.pc
    std::string plugin;    // the example plugin, built against it
    std::string install_log;
    int install_status = -1;
    std::map<std::string, CommandResult> examples;  // name -> setup + build + test
};

Installed* g = nullptr;

class InstallTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        g = new Installed;
        // meson test points LD_LIBRARY_PATH at the build's libraries: the installed tilepipe
        // must find its own.
        ::unsetenv("LD_LIBRARY_PATH");
        char tmpl[] = "/tmp/tp-install-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        g->root = tmpl;
        const CommandResult inst = run_command("meson install -C " + sh_quote(env("TILEPIPE_BUILD_ROOT")) +
                                               " --no-rebuild --quiet --destdir " + sh_quote(g->root));
        g->install_status = inst.status;
        g->install_log = inst.out + inst.err;
        if (inst.status != 0) return;
        for (const auto& e : fs::recursive_directory_iterator(g->root)) {
            if (e.path().filename() == "tilepipe.pc") g->pkgconfig = e.path().parent_path().string();
            if (e.path().filename() == "tilepipe" && e.path().parent_path().filename() == "bin")
                g->bin = e.path().string();
        }
        // Every example with a meson.build is a project of its own, built as its user would.
        const fs::path examples = fs::path(env("TILEPIPE_SOURCE_ROOT")) / "examples";
        for (const auto& e : fs::directory_iterator(examples)) {
            if (!fs::exists(e.path() / "meson.build")) continue;
            const std::string name = e.path().filename().string();
            const std::string build = g->root + "/ex-" + name;
            g->examples[name] = run_command("export PKG_CONFIG_PATH=" + sh_quote(g->pkgconfig) + " && meson setup " +
                                            sh_quote(build) + " " + sh_quote(e.path().string()) + " >/dev/null && ninja -C " +
                                            sh_quote(build) + " -j2 >/dev/null && meson test -C " + sh_quote(build) +
                                            " --print-errorlogs");
        }
        g->plugin = g->root + "/ex-stage_plugin/libbyte_match.so";
    }
    static void TearDownTestSuite() {
        std::error_code ec;
        fs::remove_all(g->root, ec);
        delete g;
        g = nullptr;
    }

    // The installed tilepipe, from the example plugin's folder (its app's relative paths).
    static CommandResult tilepipe(const std::string& args, const std::string& env_prefix = "") {
        return run_command("cd " + sh_quote(env("TILEPIPE_SOURCE_ROOT") + "/examples/stage_plugin") + " && " +
                           env_prefix + sh_quote(g->bin) + " " + args);
    }
    void SetUp() override {
        ASSERT_EQ(g->install_status, 0) << g->install_log;
        ASSERT_FALSE(g->bin.empty()) << "no bin/tilepipe installed";
        ASSERT_FALSE(g->pkgconfig.empty()) << "no tilepipe.pc installed";
    }
};

// The app of examples/stage_plugin keeps the 500 TCP packets of 1000 and drops the 500 UDP
// ones under the plugin's drop reason.
void expect_byte_match_counts(const CommandResult& r, const std::string& json_path) {
    ASSERT_EQ(r.status, 0) << r.err;
    std::ifstream in(json_path);
    const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << "no report";
    EXPECT_EQ(j["packets"], 1000);
    EXPECT_EQ(j["delivered"], 500);
    EXPECT_EQ(j["drops"], 500);
    EXPECT_EQ(j["unaccounted"], 0);
    EXPECT_NE(r.out.find("drop no_match: 500"), std::string::npos) << r.out;
}

std::string copy_plugin(const std::string& from, const std::string& dir, const std::string& name) {
    fs::create_directories(dir);
    ::chmod(dir.c_str(), 0755);
    const std::string to = dir + "/" + name;
    fs::copy_file(from, to, fs::copy_options::overwrite_existing);
    ::chmod(to.c_str(), 0755);
    return to;
}

}  // namespace

TEST_F(InstallTest, InstallsTheLibraryHeadersCommandAndPkgConfig) {
    const fs::path libdir = fs::path(g->pkgconfig).parent_path();
    EXPECT_TRUE(fs::exists(libdir / "libtilepipe.so"));
    const fs::path include = libdir.parent_path().parent_path() / "include" / "tilepipe";
    for (const char* h : {"stage.hpp", "packet.hpp", "params.hpp", "error.hpp", "registration.hpp", "version.hpp"})
        EXPECT_TRUE(fs::exists(include / h)) << h;
    const std::string pc = tp::test::read_file(g->pkgconfig + "/tilepipe.pc");
    EXPECT_NE(pc.find("Requires: libdpdk"), std::string::npos) << pc;
    // The command finds the installed library wherever the tree lies (its rpath is relative).
    const CommandResult r = run_command(sh_quote(g->bin) + " --version");
    EXPECT_EQ(r.status, 0) << r.err;
    const CommandResult ldd = run_command("ldd " + sh_quote(g->bin));
    const size_t line = ldd.out.find("libtilepipe.so");
    ASSERT_NE(line, std::string::npos) << ldd.out;
    EXPECT_NE(ldd.out.substr(line, ldd.out.find('\n', line) - line).find("=> " + g->root + "/"), std::string::npos) << ldd.out;
}

TEST_F(InstallTest, EveryExampleBuildsAgainstTheInstalledTreeAndPassesItsChecks) {
    ASSERT_TRUE(g->examples.count("stage_plugin")) << "examples/stage_plugin has no meson.build";
    for (const auto& [name, r] : g->examples) EXPECT_EQ(r.status, 0) << "examples/" << name << ":\n" << r.out << r.err;
}

TEST_F(InstallTest, AProgramsOwnStageBuiltWithPkgConfigAloneRunsThroughTheInstalledLibrary) {
    const std::string exe = g->root + "/own_stage_app";
    const CommandResult build = run_command(
        "export PKG_CONFIG_PATH=" + sh_quote(g->pkgconfig) + " && c++ -std=c++20 -O1 " +
        sh_quote(env("TILEPIPE_SOURCE_ROOT") + "/tests/install/own_stage_app.cpp") +
        " $(pkg-config --cflags --libs tilepipe) -o " + sh_quote(exe));
    ASSERT_EQ(build.status, 0) << build.err;
    // No LD_LIBRARY_PATH (unset for the suite): the .pc's rpath finds the installed library.
    const CommandResult r = run_command(sh_quote(exe));
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("packets 1000 delivered 500 every_other drops 500"), std::string::npos) << r.out;
}

// Message passing from outside the tree: tilepipe/mp.hpp, run_tiles in libtilepipe, run_mpi in
// libtilepipe-mpi with its own .pc; examples/mp_ring (built and run on tiles by its own meson
// test above) runs as an Open MPI job too.
TEST_F(InstallTest, MessagePassingProgramsBuildAgainstTheInstallOnBothBackends) {
    const fs::path libdir = fs::path(g->pkgconfig).parent_path();
    EXPECT_TRUE(fs::exists(libdir.parent_path().parent_path() / "include" / "tilepipe" / "mp.hpp"));
    ASSERT_TRUE(g->examples.count("mp_ring")) << "examples/mp_ring has no meson.build";
    ASSERT_EQ(g->examples["mp_ring"].status, 0) << g->examples["mp_ring"].out << g->examples["mp_ring"].err;
    const CommandResult tiles = run_command(sh_quote(g->root + "/ex-mp_ring/mp_ring") + " --ranks 5 --laps 2");
    EXPECT_EQ(tiles.status, 0) << tiles.err;
    EXPECT_NE(tiles.out.find("tiles: token 10 after 2 laps of 5 ranks"), std::string::npos) << tiles.out;
    if (!fs::exists(g->pkgconfig + "/tilepipe-mpi.pc")) GTEST_SKIP() << "tilepipe built without Open MPI";
    EXPECT_TRUE(fs::exists(libdir / "libtilepipe-mpi.so"));
    const std::string pc = tp::test::read_file(g->pkgconfig + "/tilepipe-mpi.pc");
    EXPECT_NE(pc.find("Requires: tilepipe, ompi"), std::string::npos) << pc;
    const std::string mpi_ring = g->root + "/ex-mp_ring/mp_ring_mpi";
    ASSERT_TRUE(fs::exists(mpi_ring)) << "tilepipe-mpi.pc installed but mp_ring_mpi not built";
    const CommandResult mpi = run_command("mpirun -np 3 --oversubscribe " +
                                          std::string(geteuid() == 0 ? "--allow-run-as-root " : "") +
                                          sh_quote(mpi_ring) + " --laps 4");
    EXPECT_EQ(mpi.status, 0) << mpi.out << mpi.err;
    EXPECT_NE(mpi.out.find("mpi: token 12 after 4 laps of 3 ranks"), std::string::npos) << mpi.out << mpi.err;
}

// Every complete program README.md shows (a ```cpp block with a `main`) compiles against the
// installed tree with the pkg-config line README gives, and the message-passing one runs.
TEST_F(InstallTest, ReadmesCompleteProgramsBuildWithPkgConfigAndRun) {
    const std::string readme = tp::test::read_file(env("TILEPIPE_SOURCE_ROOT") + "/README.md");
    int programs = 0;
    bool ran_ring = false;
    for (size_t at = readme.find("```cpp\n"); at != std::string::npos; at = readme.find("```cpp\n", at + 1)) {
        const size_t body = at + 7, end = readme.find("```", body);
        ASSERT_NE(end, std::string::npos);
        const std::string code = readme.substr(body, end - body);
        if (code.find("int main(") == std::string::npos) continue;
        const std::string name = "readme_" + std::to_string(++programs);
        const std::string src = g->root + "/" + name + ".cpp", exe = g->root + "/" + name;
        std::ofstream(src) << code;
        const std::string pc = code.find("run_mpi") != std::string::npos ? "tilepipe-mpi" : "tilepipe";
        const CommandResult build = run_command("export PKG_CONFIG_PATH=" + sh_quote(g->pkgconfig) +
                                                " && c++ -std=c++20 -O1 " + sh_quote(src) + " $(pkg-config --cflags --libs " +
                                                pc + ") -o " + sh_quote(exe));
        EXPECT_EQ(build.status, 0) << "README.md program " << programs << ":\n" << code << build.err;
        if (build.status != 0 || code.find("tilepipe/mp.hpp") == std::string::npos) continue;
        const CommandResult r = run_command(sh_quote(exe));
        EXPECT_EQ(r.status, 0) << r.err;
        EXPECT_NE(r.out.find("token 4 after one lap of 4 ranks"), std::string::npos) << r.out;
        ran_ring = true;
    }
    EXPECT_GE(programs, 2) << "the C++ app and the message-passing ring";
    EXPECT_TRUE(ran_ring);
}

TEST_F(InstallTest, RunsThePluginStageNamedOnTheCommandLine) {
    const std::string json = g->root + "/cli.json";
    expect_byte_match_counts(tilepipe("run byte_match_app.yaml --quiet --json " + json + " --plugin " + sh_quote(g->plugin)), json);
}

TEST_F(InstallTest, RunsThePluginStageAnAppConfigLoadsRelativeToItsFolder) {
    const std::string app = g->root + "/apps/app.yaml";
    fs::create_directories(g->root + "/apps");
    std::ofstream(app) << "plugins: [../ex-stage_plugin/libbyte_match.so]\n"
                          "pipeline:\n"
                          "  - { stage: synth, proto: mix, flows: 2, count: 1000 }\n"
                          "  - { stage: byte_match, value: 6 }\n"
                          "  - drop\n";
    const std::string json = g->root + "/key.json";
    expect_byte_match_counts(tilepipe("run " + sh_quote(app) + " --quiet --json " + json), json);
}

TEST_F(InstallTest, LoadsPluginsFromTheDefaultFolderAndThePluginPath) {
    const std::string libdir = fs::path(g->pkgconfig).parent_path().string();
    const std::string in_default = copy_plugin(g->plugin, libdir + "/tilepipe/plugins", "libbyte_match.so");
    CommandResult r = tilepipe("stages byte_match");
    fs::remove(in_default);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("byte_match (processor, plugin " + fs::canonical(libdir).string() + "/tilepipe/plugins/libbyte_match.so)"),
              std::string::npos) << r.out;
    // Gone from the folder: unknown again.
    EXPECT_EQ(tilepipe("stages byte_match").status, 2);

    const std::string elsewhere = copy_plugin(g->plugin, g->root + "/path-dir", "libbm.so");
    r = tilepipe("stages byte_match", "TILEPIPE_PLUGIN_PATH=" + sh_quote(g->root + "/path-dir") + " ");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("plugin " + elsewhere), std::string::npos) << r.out;
}

TEST_F(InstallTest, ValidateChecksAPluginStagesParametersLikeABuiltIns) {
    const std::string p = " --plugin " + sh_quote(g->plugin);
    CommandResult r = tilepipe("validate byte_match_app.yaml" + p);
    EXPECT_EQ(r.status, 0) << r.err;
    r = tilepipe("validate byte_match_app.yaml --set tcp_only.action=keep" + p);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("drop, count"), std::string::npos) << r.err;
    r = tilepipe("validate byte_match_app.yaml --set tcp_only.value=300" + p);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("value"), std::string::npos) << r.err;
    // The stage's own check_params, before anything runs.
    r = tilepipe("validate byte_match_app.yaml --set tcp_only.mask=0x0f --set tcp_only.value=0x16" + p);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("outside `mask`"), std::string::npos) << r.err;
}

// Each refusal: exit 2, the file named, the reason said, and no stage of it in use.
void expect_refused(const CommandResult& r, const std::string& file, const std::string& reason) {
    EXPECT_EQ(r.status, 2) << r.out << r.err;
    EXPECT_NE(r.err.find(file), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(reason), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("terminate"), std::string::npos) << r.err;
}

// The example apps are installed (share/tilepipe/conf), and the installed benches find their
// default app there: from `/`, the option checked after the app was read is what fails.
TEST_F(InstallTest, TheBenchesFindTheInstalledExampleApps) {
    const fs::path share = fs::path(g->bin).parent_path().parent_path() / "share" / "tilepipe" / "conf";
    EXPECT_TRUE(fs::exists(share / "default.yaml")) << share;
    EXPECT_TRUE(fs::exists(share / "mapvec.yaml")) << share;
    const CommandResult r = run_command("cd / && " + sh_quote(g->bin) + " bench latency --seconds 0");
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err.rfind("bench latency: --seconds", 0), 0u) << r.err;
}

TEST_F(InstallTest, RefusesAPluginThatDoesNotExist) {
    const std::string missing = g->root + "/nowhere/libmissing.so";
    expect_refused(tilepipe("stages --plugin " + sh_quote(missing)), missing, "does not exist");
}

TEST_F(InstallTest, RefusesAFileThatIsNotASharedLibrary) {
    const std::string text = g->root + "/text/libtext.so";
    fs::create_directories(g->root + "/text");
    std::ofstream(text) << "not a library\n";
    expect_refused(tilepipe("validate byte_match_app.yaml --plugin " + sh_quote(text)), text,
                   "cannot be loaded as a shared library");
}

// A library cut short (an interrupted copy): dlopen would map its missing pages and the first
// touch of one would end the program with SIGBUS. Cut inside its segments, and inside its
// section headers at the very end.
TEST_F(InstallTest, RefusesALibraryCutShortWithoutCrashing) {
    const std::string lib = env("TILEPIPE_PLUGIN_NO_ENTRY");
    std::ifstream in(lib, std::ios::binary);
    const std::string whole((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_GT(whole.size(), 8000u);
    fs::create_directories(g->root + "/cut");
    for (const size_t keep : {size_t{5000}, whole.size() - 10}) {
        const std::string cut = g->root + "/cut/libcut" + std::to_string(keep) + ".so";
        std::ofstream(cut, std::ios::binary) << whole.substr(0, keep);
        fs::permissions(cut, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
        expect_refused(tilepipe("stages --plugin " + sh_quote(cut)), cut, "is cut short: its ");
    }
    // Whole, but an object file (e_type ET_REL, no program headers): dlopen's reason, not "cut short".
    std::string object = whole;
    object[16] = 1, object[17] = 0;  // e_type
    object[54] = 0, object[55] = 0;  // e_phentsize
    const std::string o = g->root + "/cut/libobject.so";
    std::ofstream(o, std::ios::binary) << object;
    fs::permissions(o, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
    expect_refused(tilepipe("stages --plugin " + sh_quote(o)), o, "cannot be loaded as a shared library");
}

TEST_F(InstallTest, RefusesALibraryWithoutTheRegistrationEntryPoint) {
    const std::string lib = env("TILEPIPE_PLUGIN_NO_ENTRY");
    expect_refused(tilepipe("stages --plugin " + sh_quote(lib)), lib, "no registration entry point 'tilepipe_plugin'");
}

TEST_F(InstallTest, RefusesAPluginBuiltForAnotherAbiVersionNamingBoth) {
    const std::string lib = env("TILEPIPE_PLUGIN_WRONG_ABI");
    const CommandResult r = tilepipe("stages --plugin " + sh_quote(lib));
    expect_refused(r, lib, "built for stage ABI version " + std::to_string(TILEPIPE_ABI_VERSION + 41));
    EXPECT_NE(r.err.find("has stage ABI version " + std::to_string(TILEPIPE_ABI_VERSION) + ":"), std::string::npos) << r.err;
}

TEST_F(InstallTest, RefusesAStageNamedLikeABuiltInAndRegistersNoneOfThatPlugin) {
    const std::string lib = env("TILEPIPE_PLUGIN_DUPLICATE");
    const CommandResult r = tilepipe("stages fresh_stage --plugin " + sh_quote(lib));
    expect_refused(r, lib, "stage 'sample' is already registered by built-in");
    EXPECT_EQ(r.out.find("fresh_stage"), std::string::npos) << r.out;
}

TEST_F(InstallTest, RefusesTwoPluginsWithTheSameStageNamingBothFiles) {
    const std::string a = copy_plugin(g->plugin, g->root + "/two", "liba.so");
    const std::string b = copy_plugin(g->plugin, g->root + "/two", "libb.so");
    const CommandResult r = tilepipe("stages --plugin " + sh_quote(a) + " --plugin " + sh_quote(b));
    expect_refused(r, b, "stage 'byte_match' is already registered by " + a);
    // The same file twice (or under a second name) loads once.
    const std::string link = g->root + "/two/liblink.so";
    fs::create_symlink(a, link);
    EXPECT_EQ(tilepipe("stages byte_match --plugin " + sh_quote(a) + " --plugin " + sh_quote(link)).status, 0);
}

TEST_F(InstallTest, RefusesAPluginFileOrFolderOthersCanWrite) {
    const std::string file = copy_plugin(g->plugin, g->root + "/gw-file", "libbm.so");
    ::chmod(file.c_str(), 0775);
    expect_refused(tilepipe("stages --plugin " + sh_quote(file)), file, "is writable by its group");
    const std::string in_dir = copy_plugin(g->plugin, g->root + "/ow-dir", "libbm.so");
    ::chmod((g->root + "/ow-dir").c_str(), 0757);
    expect_refused(tilepipe("stages --plugin " + sh_quote(in_dir)), g->root + "/ow-dir", "is writable by others");
    // The same through the config's plugins: key, pointing at the entry.
    const std::string app = g->root + "/gw-app.yaml";
    std::ofstream(app) << "plugins:\n  - gw-file/libbm.so\npipeline: [synth, drop]\n";
    const CommandResult r = tilepipe("validate " + sh_quote(app));
    expect_refused(r, app + ":2:5", "writable by its group");
}

TEST_F(InstallTest, ALooseInstalledPluginFolderIsSkippedWhileANamedOneIsRefused) {
    // Installed rwxr-xr-x whatever the installer's umask.
    const std::string folder = fs::path(g->pkgconfig).parent_path().string() + "/tilepipe/plugins";
    struct stat st {};
    ASSERT_EQ(::stat(folder.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0755u);
    // Loosened later (umask 002, a group's share): every command still runs, with a warning,
    // and nothing of that folder is loaded.
    const std::string in_default = copy_plugin(g->plugin, folder, "libbyte_match.so");
    ::chmod(folder.c_str(), 0775);
    CommandResult r = tilepipe("stages");
    const CommandResult unknown = tilepipe("stages byte_match");
    ::chmod(folder.c_str(), 0755);
    fs::remove(in_default);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("/tilepipe/plugins skipped"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("writable by its group"), std::string::npos) << r.err;
    EXPECT_EQ(unknown.status, 2) << unknown.out;
    // A folder the user named in $TILEPIPE_PLUGIN_PATH is refused.
    const std::string named = g->root + "/gw-path";
    copy_plugin(g->plugin, named, "libbm.so");
    ::chmod(named.c_str(), 0775);
    r = tilepipe("stages", "TILEPIPE_PLUGIN_PATH=" + sh_quote(named) + " ");
    expect_refused(r, named, "writable by its group");
}
