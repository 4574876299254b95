// Renderers for report::Document.
#include "report/document.hpp"

#include "base/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

namespace ub::report {

std::string md_text(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|' || c == '<' || c == '*' || c == '`') out += '\\';  // a table's cell, HTML, emphasis, code
    out += c;
  }
  return out;
}

namespace {

// Display width of a UTF-8 string (counts code points; our tables use no wide characters).
size_t width(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string pad(const std::string& s, size_t w, Align a) {
  const size_t fill = w > width(s) ? w - width(s) : 0;
  return a == Align::left ? s + std::string(fill, ' ') : std::string(fill, ' ') + s;
}

// "- " + text wrapped at `columns`, continuation lines indented by two spaces.
std::string bullet(const std::string& text, size_t columns) {
  std::string out = "- ", line;
  size_t col = 2;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(' ', pos);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(pos, end - pos);
    if (col > 2 && col + 1 + width(word) > columns) {
      out += "\n  ";
      col = 2;
    } else if (col > 2) {
      out += ' ';
      ++col;
    }
    out += word;
    col += width(word);
    pos = end + 1;
  }
  return out + "\n";
}

// A field as a spreadsheet reads it: text that starts like a formula is given a leading
// apostrophe, so a host named "=cmd|..." is shown, not run (OWASP's advice for CSV injection):
// every cell starting with =, @, a tab or a carriage return, and one starting with + or - that
// holds a letter or ( = ! | (our own signed figures, "+2.3% [+1.8%, +2.8%]", stay as they are).
// Commas, quotes and line breaks are quoted.
std::string csv_field(const std::string& in) {
  std::string s = in;
  const bool formula = !s.empty() && (std::string_view("=@\t\r").find(s.front()) != std::string_view::npos ||
                                      ((s.front() == '+' || s.front() == '-') &&
                                       std::any_of(s.begin() + 1, s.end(), [](char c) {
                                         return std::isalpha(static_cast<unsigned char>(c)) ||
                                                std::string_view("(=!|").find(c) != std::string_view::npos;
                                       })));
  if (formula) s = "'" + s;
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string md_cell(const std::string& s) { return md_text(s); }

}  // namespace

void Table::add_row(std::vector<std::string> row) {
  if (row.size() != columns.size()) {
    throw std::logic_error(fmt::format("table row has {} cells, header {}", row.size(),
                                       columns.size()));
  }
  rows.push_back(std::move(row));
}

// The document with every text printable (base/text.hpp): names read from files reach it.
static Document printable_copy(const Document& in) {
  Document doc = in;
  for (Block& b : doc.blocks) {
    b.title = ub::printable(b.title);
    for (auto& c : b.table.columns) c.name = ub::printable(c.name);
    for (auto& r : b.table.rows) {
      for (auto& cell : r) cell = ub::printable(cell);
    }
    for (auto& n : b.notes) n = ub::printable(n);  // a line break from a file is no line of ours
  }
  return doc;
}

std::string render_text(const Document& in) {
  const Document doc = printable_copy(in);
  std::string out;
  bool first = true;
  for (const Block& b : doc.blocks) {
    if (!first) out += "\n";
    first = false;
    if (!b.title.empty()) out += b.title + "\n";
    const Table& t = b.table;
    if (!t.columns.empty()) {
      std::vector<size_t> w(t.columns.size());
      for (size_t i = 0; i < w.size(); ++i) {
        w[i] = width(t.columns[i].name);
        for (const auto& r : t.rows) w[i] = std::max(w[i], width(r[i]));
      }
      auto line = [&](const std::vector<std::string>& cells, bool header) {
        std::string l;
        for (size_t i = 0; i < cells.size(); ++i) {
          if (i) l += "  ";
          l += pad(cells[i], w[i], header && i == 0 ? Align::left : t.columns[i].align);
        }
        while (!l.empty() && l.back() == ' ') l.pop_back();
        return l + "\n";
      };
      std::vector<std::string> header;
      for (const auto& c : t.columns) header.push_back(c.name);
      out += line(header, true);
      size_t total = 0;
      for (size_t i = 0; i < w.size(); ++i) total += w[i] + (i ? 2 : 0);
      out += std::string(total, '-') + "\n";
      for (const auto& r : t.rows) out += line(r, false);
    }
    for (const std::string& n : b.notes) out += b.bulleted ? bullet(n, 100) : n + "\n";
  }
  return out;
}

std::string render_markdown(const Document& in) {
  const Document doc = printable_copy(in);
  std::string out;
  bool first = true;
  for (const Block& b : doc.blocks) {
    if (!first) out += "\n";
    first = false;
    if (!b.title.empty()) out += "### " + md_text(b.title) + "\n\n";
    const Table& t = b.table;
    if (!t.columns.empty()) {
      out += "|";
      for (const auto& c : t.columns) out += " " + md_cell(c.name) + " |";
      out += "\n|";
      for (const auto& c : t.columns) out += c.align == Align::right ? "--:|" : "---|";
      out += "\n";
      for (const auto& r : t.rows) {
        out += "|";
        for (const auto& cell : r) out += " " + md_cell(cell) + " |";
        out += "\n";
      }
      if (!b.notes.empty()) out += "\n";
    }
    for (const std::string& n : b.notes) out += "- " + md_text(n) + "\n";
  }
  return out;
}

std::string render_csv(const Document& in) {
  const Document doc = printable_copy(in);
  std::string out;
  bool first = true;
  for (const Block& block : doc.blocks) {
    Table t = block.table;
    if (t.columns.empty()) continue;
    const bool tagged = std::any_of(t.columns.begin(), t.columns.end(), [](const Column& c) { return c.name == "data"; });
    if (!doc.data_tag.empty() && !tagged) {
      t.columns.push_back({"data", Align::left});
      for (auto& row : t.rows) row.push_back(doc.data_tag);
    }
    if (!first) out += "\n";
    first = false;
    for (size_t i = 0; i < t.columns.size(); ++i) {
      out += (i ? "," : "") + csv_field(t.columns[i].name);
    }
    out += "\n";
    for (const auto& r : t.rows) {
      for (size_t i = 0; i < r.size(); ++i) out += (i ? "," : "") + csv_field(r[i]);
      out += "\n";
    }
  }
  return out;
}

}  // namespace ub::report
