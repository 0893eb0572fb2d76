// Task: what a tile's thread polls. One virtual call per poll (per burst at most), never per
// packet. poll() must not block; it returns true when it moved work or reached its end.
#pragma once

namespace tp {

class Task {
public:
    virtual ~Task() = default;
    virtual bool poll() = 0;
    virtual bool done() const = 0;
};

}  // namespace tp
