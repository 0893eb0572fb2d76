// GoogleTest entry point shared by every suite: brings up EAL once per process (tests that
// touch mbufs need it) with the same machine-fitting defaults the CLI uses.
//
// Several test files may share one executable (compiled together, which is most of what a
// fresh test run saves): `--tp_file=SUFFIX` runs only the tests defined in the file whose
// path ends with SUFFIX, so each file stays its own test in meson (its own process, timeout,
// log and skip lines). A SUFFIX that names no test is an error, not an empty pass.
#include <gtest/gtest.h>

#include <cstdio>
#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>

#include "tests/support/eal_fixture.hpp"

namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// GoogleTest's pattern syntax: '*' any run, '?' any one character.
bool glob(const char* p, const char* s) {
    if (*p == '\0') return *s == '\0';
    if (*p == '*') return glob(p + 1, s) || (*s != '\0' && glob(p, s + 1));
    return *s != '\0' && (*p == '?' || *p == *s) && glob(p + 1, s + 1);
}

// Whether `name` passes a --gtest_filter: "POSITIVE[:POSITIVE...][-NEGATIVE[:NEGATIVE...]]".
bool passes(const std::string& name, const std::string& filter) {
    const size_t dash = filter.find('-');
    auto any = [&](std::string list) {
        for (size_t from = 0; from <= list.size();) {
            const size_t end = std::min(list.find(':', from), list.size());
            if (glob(list.substr(from, end - from).c_str(), name.c_str())) return true;
            from = end + 1;
        }
        return false;
    };
    const std::string positive = dash == std::string::npos ? filter : filter.substr(0, dash);
    return (positive.empty() || any(positive)) && (dash == std::string::npos || !any(filter.substr(dash + 1)));
}

// The tests of the file ending with `suffix` that `filter` selects, as a --gtest_filter.
std::string tests_of_file(std::string_view suffix, const std::string& filter, bool& any_in_file) {
    std::string patterns;
    const testing::UnitTest& all = *testing::UnitTest::GetInstance();
    for (int s = 0; s < all.total_test_suite_count(); ++s) {
        const testing::TestSuite& suite = *all.GetTestSuite(s);
        for (int t = 0; t < suite.total_test_count(); ++t) {
            const testing::TestInfo& info = *suite.GetTestInfo(t);
            if (!ends_with(info.file(), suffix)) continue;
            any_in_file = true;
            const std::string name = std::string(info.test_suite_name()) + "." + info.name();
            if (!passes(name, filter)) continue;
            if (!patterns.empty()) patterns += ':';
            patterns += name;
        }
    }
    return patterns;
}

}  // namespace

int main(int argc, char** argv) {
    testing::InitGoogleTest(&argc, argv);
    for (int i = 1; i < argc; ++i) {
        constexpr std::string_view kFile = "--tp_file=";
        if (std::strncmp(argv[i], kFile.data(), kFile.size()) != 0) continue;
        const std::string_view suffix(argv[i] + kFile.size());
        bool any_in_file = false;
        // A --gtest_filter given too narrows the file's tests (GoogleTest's filter has no "and").
        const std::string mine = tests_of_file(suffix, GTEST_FLAG_GET(filter), any_in_file);
        if (!any_in_file) {
            std::fprintf(stderr, "%s: no test is defined in a file ending with '%.*s'\n", argv[0],
                         static_cast<int>(suffix.size()), suffix.data());
            return 2;
        }
        GTEST_FLAG_SET(filter, mine.empty() ? "-*" : mine);
    }
    testing::AddGlobalTestEnvironment(new tp::test::EalEnvironment());
    return RUN_ALL_TESTS();
}
