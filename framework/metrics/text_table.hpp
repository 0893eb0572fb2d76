// TextTable: rows of cells printed in columns as wide as their widest cell or header, so long
// node names or large counts never push a row out of line. A row may carry notes, indented
// lines printed under it (drop reasons, what a sink did).
#pragma once

#include <string>
#include <vector>

namespace tp {

class TextTable {
public:
    enum class Align { Left, Right };

    void add_column(std::string header, Align align);
    // One cell per column; the notes print under the row, indented by four spaces.
    void add_row(std::vector<std::string> cells, std::vector<std::string> notes = {});
    std::string str() const;

private:
    struct Row {
        std::vector<std::string> cells;
        std::vector<std::string> notes;
    };
    std::vector<std::string> headers_;
    std::vector<Align> align_;
    std::vector<Row> rows_;
};

}  // namespace tp
