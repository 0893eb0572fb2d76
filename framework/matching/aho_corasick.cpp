#include "framework/matching/aho_corasick.hpp"

#include <stdexcept>

namespace tp {

namespace {

uint8_t fold(uint8_t b, bool nocase) {
    return nocase && b >= 'A' && b <= 'Z' ? static_cast<uint8_t>(b - 'A' + 'a') : b;
}

}  // namespace

AhoCorasick::AhoCorasick(const std::vector<std::string>& patterns, bool nocase)
    : pattern_count_(patterns.size()) {
    // Byte classes: class 0 for bytes no pattern uses, one class per (folded) byte used.
    std::array<bool, 256> used{};
    for (const std::string& p : patterns) {
        if (p.empty()) throw std::invalid_argument("an empty pattern matches everywhere");
        for (const char c : p) used[fold(static_cast<uint8_t>(c), nocase)] = true;
    }
    if (patterns.size() > UINT32_MAX - 1) throw std::invalid_argument("too many patterns");
    std::array<uint8_t, 256> class_of_folded{};
    classes_ = 1;
    for (int b = 0; b < 256; ++b)
        if (used[b]) class_of_folded[b] = static_cast<uint8_t>(classes_++);
    for (int b = 0; b < 256; ++b) class_of_[b] = class_of_folded[fold(static_cast<uint8_t>(b), nocase)];

    // The trie (goto function); kNoState where it has no edge.
    std::vector<State> go(classes_, kNoState);
    std::vector<std::vector<uint32_t>> own(1);
    for (uint32_t id = 0; id < patterns.size(); ++id) {
        State s = 0;
        for (const char c : patterns[id]) {
            const uint8_t k = class_of_[static_cast<uint8_t>(c)];
            State& edge = go[size_t(s) * classes_ + k];
            if (edge == kNoState) {
                edge = static_cast<State>(own.size());
                own.emplace_back();
                go.resize(go.size() + classes_, kNoState);
            }
            s = go[size_t(s) * classes_ + k];  // `edge` may dangle after the resize
        }
        own[s].push_back(id);
    }
    const size_t n = own.size();

    // Breadth first: a state's failure target is shallower, so its row is complete already.
    std::vector<State>& next = go;
    std::vector<State> fail(n, 0);
    output_link_.assign(n, kNoState);
    std::vector<State> queue;
    queue.reserve(n);
    for (size_t k = 0; k < classes_; ++k) {
        State& t = next[k];
        if (t == kNoState) t = 0;
        else queue.push_back(t);
    }
    for (size_t head = 0; head < queue.size(); ++head) {
        const State u = queue[head];
        for (size_t k = 0; k < classes_; ++k) {
            State& v = next[size_t(u) * classes_ + k];
            const State via_fail = next[size_t(fail[u]) * classes_ + k];
            if (v == kNoState) {
                v = via_fail;
                continue;
            }
            fail[v] = via_fail;
            output_link_[v] = !own[via_fail].empty() ? via_fail : output_link_[via_fail];
            queue.push_back(v);
        }
    }

    output_begin_.resize(n + 1);
    std::vector<bool> accepting(n);
    for (size_t s = 0; s < n; ++s) {
        output_begin_[s] = static_cast<uint32_t>(outputs_.size());
        outputs_.insert(outputs_.end(), own[s].begin(), own[s].end());
        // A state with no patterns of its own still accepts through its output link.
        accepting[s] = !own[s].empty() || output_link_[s] != kNoState;
    }
    output_begin_[n] = static_cast<uint32_t>(outputs_.size());

    // Entries become row offsets with the accept bit, in the narrowest type that holds them.
    states_ = n;
    const uint64_t cells = uint64_t(n) * classes_;
    if (cells > kAccept32) throw std::invalid_argument("patterns too long: automaton too large");
    narrow_ = cells <= kAccept16;
    const auto entry = [&](State target) {
        return static_cast<uint32_t>(target * classes_) | (accepting[target] ? (narrow_ ? kAccept16 : kAccept32) : 0);
    };
    if (narrow_) {
        next16_.resize(cells);
        for (size_t i = 0; i < cells; ++i) next16_[i] = static_cast<uint16_t>(entry(next[i]));
    } else {
        next32_.resize(cells);
        for (size_t i = 0; i < cells; ++i) next32_[i] = entry(next[i]);
    }
}

}  // namespace tp
