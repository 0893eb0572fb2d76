#include "framework/metrics/text_table.hpp"

#include <algorithm>
#include <stdexcept>

namespace tp {

namespace {
// Display width: UTF-8 continuation bytes take no column.
size_t width(const std::string& s) {
    size_t w = 0;
    for (unsigned char c : s) w += (c & 0xc0) != 0x80;
    return w;
}
}  // namespace

void TextTable::add_column(std::string header, Align align) {
    headers_.push_back(std::move(header));
    align_.push_back(align);
}

void TextTable::add_row(std::vector<std::string> cells, std::vector<std::string> notes) {
    if (cells.size() != headers_.size()) throw std::logic_error("TextTable: a row needs one cell per column");
    rows_.push_back(Row{std::move(cells), std::move(notes)});
}

std::string TextTable::str() const {
    std::vector<size_t> w(headers_.size());
    for (size_t c = 0; c < headers_.size(); ++c) {
        w[c] = width(headers_[c]);
        for (const Row& r : rows_) w[c] = std::max(w[c], width(r.cells[c]));
    }
    std::string out;
    const auto line = [&](const std::vector<std::string>& cells) {
        std::string s;
        for (size_t c = 0; c < cells.size(); ++c) {
            const std::string pad(w[c] - width(cells[c]), ' ');
            if (c != 0) s += "  ";
            s += align_[c] == Align::Left ? cells[c] + pad : pad + cells[c];
        }
        while (!s.empty() && s.back() == ' ') s.pop_back();  // no trailing blanks
        out += s + "\n";
    };
    line(headers_);
    for (const Row& r : rows_) {
        line(r.cells);
        for (const std::string& n : r.notes) out += "    " + n + "\n";
    }
    return out;
}

}  // namespace tp
