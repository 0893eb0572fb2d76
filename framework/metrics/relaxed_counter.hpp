// RelaxedCounter is public (a stage's counters are): tilepipe/counter.hpp.
#pragma once

#include "tilepipe/counter.hpp"
