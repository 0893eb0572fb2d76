// Channels of peer libraries that only a bench program links (never the library or the
// `tilepipe` command): a program that has one registers its factory before main, and the
// benches that compare against it offer the variant only then.
#pragma once

#include <cstdint>
#include <memory>

#include "framework/channel/channel.hpp"

namespace tp::bench {

using WordChannelFactory = std::unique_ptr<Channel<uint64_t>> (*)(uint32_t capacity);

// FastFlow's SPSC buffer (`tilepipe-bench` built beside FastFlow's headers); nullptr when absent.
WordChannelFactory& fastflow_channel();

}  // namespace tp::bench
