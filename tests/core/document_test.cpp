// The three renderings of a document: aligned text, markdown, CSV with quoting.
#include "report/document.hpp"

#include <gtest/gtest.h>

namespace ub::report {
namespace {

Document sample() {
  Document d;
  auto& b = d.add("Title");
  b.table.columns = {{"name", Align::left}, {"value"}};
  b.table.add_row({"a", "1.0"});
  b.table.add_row({"b, \"quoted\"", "22.5"});
  b.notes.push_back("a note");
  return d;
}

TEST(Document, TextAlignsColumns) {
  EXPECT_EQ(render_text(sample()),
            "Title\n"
            "name         value\n"
            "------------------\n"
            "a              1.0\n"
            "b, \"quoted\"   22.5\n"
            "a note\n");
}

TEST(Document, TextFromFilesCannotDriveTheTerminalOrBreakLines) {
  Document d;
  auto& b = d.add("GPU \x1b]0;title\x07 X\r\nnext");
  b.table.columns = {{"gpu", Align::left}};
  b.table.add_row({"A\x1b[2J\nB|C"});
  b.notes.push_back("two\nlines\x1b[31m");
  for (const std::string& out : {render_text(d), render_markdown(d)}) {
    EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
    EXPECT_EQ(out.find('\r'), std::string::npos) << out;
    EXPECT_NE(out.find("A [2J B"), std::string::npos) << out;  // the cell stays on its line
    EXPECT_NE(out.find("two\nlines"), std::string::npos) << out;  // a note keeps its own newlines
  }
  EXPECT_NE(render_markdown(d).find("### GPU  ]0;title  X  next\n"), std::string::npos) << render_markdown(d);
}

TEST(Document, Markdown) {
  EXPECT_EQ(render_markdown(sample()),
            "### Title\n\n| name | value |\n|---|--:|\n| a | 1.0 |\n| b, \"quoted\" | 22.5 |\n\n"
            "- a note\n");
}

TEST(Document, CsvQuotesAndSkipsNotes) {
  EXPECT_EQ(render_csv(sample()), "name,value\na,1.0\n\"b, \"\"quoted\"\"\",22.5\n");
}

TEST(Document, BulletsWrapAtOneHundredColumns) {
  Document d;
  auto& b = d.add();
  b.bulleted = true;
  b.notes.push_back(std::string(60, 'x') + " " + std::string(60, 'y'));
  EXPECT_EQ(render_text(d), "- " + std::string(60, 'x') + "\n  " + std::string(60, 'y') + "\n");
}

TEST(Document, RowOfWrongWidthIsRejected) {
  Table t;
  t.columns = {{"a"}, {"b"}};
  EXPECT_THROW(t.add_row({"1"}), std::logic_error);
}

}  // namespace
}  // namespace ub::report
