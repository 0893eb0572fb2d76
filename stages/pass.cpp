#include "stages/pass.hpp"

#include "framework/stage/registry.hpp"

namespace tp {

TILEPIPE_STAGE(Pass, "pass", "processor: forward every packet unchanged (for measurements)");

}  // namespace tp
