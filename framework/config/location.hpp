// Location and LocatedError are public (a stage throws them): tilepipe/error.hpp.
#pragma once

#include "tilepipe/error.hpp"
