// Burst is public (stages see it): tilepipe/packet.hpp.
#pragma once

#include "tilepipe/packet.hpp"
