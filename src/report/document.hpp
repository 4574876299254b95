// What a command shows a person: a list of blocks, each with an optional title, an optional
// table and optional notes. One structure, three renderings (terminal text, markdown, CSV), so
// every command gets every format by building the document once. JSON is built per command from
// its own result, with stable keys (docs/json.md).
#pragma once

#include <deque>
#include <string>
#include <vector>

namespace ub::report {

enum class Align { left, right };

struct Column {
  std::string name;
  Align align = Align::right;
};

struct Table {
  std::vector<Column> columns;
  std::vector<std::vector<std::string>> rows;

  void add_row(std::vector<std::string> row);
};

struct Block {
  std::string title;
  Table table;                     // empty columns: no table
  std::vector<std::string> notes;  // rendered as lines (text) or bullets (markdown)
  bool bulleted = false;           // text: "- " and wrapped at 100 columns
};

struct Document {
  std::deque<Block> blocks;  // a deque: references from add() stay valid as blocks are added
  // What the numbers are when not measurements (EXAMPLE DATA, PREDICTED; "" measured). Text and
  // markdown say it in their notes; CSV, which carries the tables only, as a data column on each.
  std::string data_tag;
  Block& add(std::string title = {}) {
    blocks.push_back(Block{std::move(title), {}, {}, false});
    return blocks.back();
  }
};

std::string render_text(const Document& doc);
// Markdown text that stays text: a pipe would end a table cell and < would open raw HTML (a GPU
// or host named "<script>..." in a page), so each is escaped.
std::string md_text(const std::string& s);
std::string render_markdown(const Document& doc);
// CSV carries the tables only (each with its header row; blocks separated by a blank line), and
// the document's data_tag as a last "data" column where a table has none of its own.
std::string render_csv(const Document& doc);

}  // namespace ub::report
