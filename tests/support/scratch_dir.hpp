// Test support: a fresh folder under /tmp for one test's files, removed with all it holds when
// the test ends (a fixture's member: made before each test, gone after it).
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace tp::test {

class ScratchDir {
public:
    // `prefix`: the folder's name before a random suffix, /tmp/PREFIX_XXXXXX.
    explicit ScratchDir(const std::string& prefix) {
        std::string tmpl = "/tmp/" + prefix + "_XXXXXX";
        if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("cannot make a scratch folder " + tmpl);
        path_ = tmpl;
    }
    ~ScratchDir() {
        std::error_code ec;  // a test that fails halfway may leave anything: remove what is there
        std::filesystem::remove_all(path_, ec);
    }
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;

    const std::string& path() const { return path_; }

private:
    std::string path_;
};

}  // namespace tp::test
