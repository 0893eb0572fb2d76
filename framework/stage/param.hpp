// Stage parameters are public (a stage declares them): tilepipe/params.hpp.
#pragma once

#include "tilepipe/params.hpp"
