// Stage is public (tilepipe/stage.hpp); in the tree its environment's types come with it.
#pragma once

#include "framework/stage/pending_outputs.hpp"
#include "tilepipe/stage.hpp"
