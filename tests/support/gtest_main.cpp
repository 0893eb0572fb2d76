// GoogleTest entry point shared by every suite: brings up EAL once per process (tests that
// touch mbufs need it) with the same machine-fitting defaults the CLI uses.
#include <gtest/gtest.h>

#include "tests/support/eal_fixture.hpp"

int main(int argc, char** argv) {
    testing::InitGoogleTest(&argc, argv);
    testing::AddGlobalTestEnvironment(new tp::test::EalEnvironment());
    return RUN_ALL_TESTS();
}
