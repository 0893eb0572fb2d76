// NetworkSettings: the `network:` key of an app, the shape of the messaging network its `udn`
// and `udn_eventdev` links run on (framework/graph/network_plan.hpp builds it):
//
//   network:
//     queues: 4          # demux queues per tile (the TILEPro64's UDN: 4), 1..254
//     queue_words: auto  # words each queue holds, header words included: auto sizes each
//                        # queue of a `udn` network to the credits its links ask for (their
//                        # `queue`); a power of two N gives every queue N words, as the
//                        # TILEPro64's UDN does with 128, and bounds K by it (udn_eventdev: auto = 128)
//     credits: fit       # fit: a link's K is lowered to what its queue holds (the plan says
//                        # so); exact: such a link is refused
//     catch_all: strays  # strays: the catch-all only takes messages no tag is bound to;
//                        # shared: it also carries a tile's overflow logical channels
#pragma once

#include <cstdint>
#include <string>

#include "framework/config/location.hpp"

namespace tp {

struct NetworkSettings {
    uint32_t queues = 4;
    static constexpr uint32_t kAutoQueueWords = 0;
    uint32_t queue_words = kAutoQueueWords;
    bool auto_queue_words() const { return queue_words == kAutoQueueWords; }
    std::string credits = "fit";
    std::string catch_all = "strays";
    Location where;  // the `network:` key; empty when the app did not write one
    Location queues_where;  // where `queues` was given; empty when it was not
};

}  // namespace tp
