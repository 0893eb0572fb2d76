#include "framework/config/location.hpp"

namespace tp {

std::string Location::str() const {
    std::string s = file.empty() ? std::string("<input>") : file;
    if (line > 0) {
        s += ':' + std::to_string(line);
        if (column > 0) s += ':' + std::to_string(column);
    }
    return s;
}

}  // namespace tp
