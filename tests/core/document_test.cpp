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
  // C1 controls (CSI U+009B, OSC U+009D) and a right-to-left override (U+202E), in UTF-8.
  b.table.add_row({"D\xc2\x9b" "2J\xc2\x9d" "0;t\xe2\x80\xae" "E"});
  // A right-to-left mark (U+200F), a line separator (U+2028) and the Arabic letter mark (U+061C).
  b.table.add_row({"F\xe2\x80\x8f" "G\xe2\x80\xa8" "H\xd8\x9c" "I"});
  b.notes.push_back("two\nlines\x1b[31m");
  for (const std::string& out : {render_text(d), render_markdown(d), render_csv(d)}) {
    EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
    EXPECT_EQ(out.find('\r'), std::string::npos) << out;
    EXPECT_EQ(out.find("\xc2\x9b"), std::string::npos) << out;
    EXPECT_EQ(out.find("\xe2\x80\xae"), std::string::npos) << out;
    EXPECT_NE(out.find("A\\x1b[2J\\x0aB"), std::string::npos) << out;  // shown as it is, on its own line
    EXPECT_NE(out.find("D\\xc2\\x9b2J\\xc2\\x9d0;t\\xe2\\x80\\xaeE"), std::string::npos) << out;
    EXPECT_NE(out.find("F\\xe2\\x80\\x8fG\\xe2\\x80\\xa8H\\xd8\\x9cI"), std::string::npos) << out;
  }
  // A line break from a file is no line of ours: a note's, as a cell's, is written out.
  EXPECT_NE(render_text(d).find("two\\x0alines\\x1b[31m"), std::string::npos) << render_text(d);
  EXPECT_NE(render_markdown(d).find("- two\\x0alines"), std::string::npos) << render_markdown(d);
  EXPECT_NE(render_markdown(d).find("### GPU \\x1b]0;title\\x07 X\\x0d\\x0anext\n"), std::string::npos) << render_markdown(d);
}

// Text from files is shown, never run: raw HTML in a markdown page is escaped, and a CSV cell that
// a spreadsheet would take for a formula starts with an apostrophe; our own signed figures do not.
TEST(Document, MarkdownHtmlAndCsvFormulasFromFilesStayText) {
  Document d;
  auto& b = d.add("hosts");
  b.table.columns = {{"host", Align::left}, {"change", Align::left}};
  b.table.add_row({"<script>alert(1)</script>", "+2.3% [+1.8%, +2.8%]"});
  b.table.add_row({"=cmd|' /C calc'!A0", "-0.4%"});
  b.table.add_row({"@SUM(1+1)", "-evil"});
  b.notes.push_back("<img src=x onerror=alert(2)>");
  const std::string md = render_markdown(d);
  for (size_t at = md.find('<'); at != std::string::npos; at = md.find('<', at + 1)) {
    EXPECT_TRUE(at > 0 && md[at - 1] == '\\') << "a raw < at " << at << ":\n" << md;
  }
  EXPECT_NE(md.find("\\<script>"), std::string::npos) << md;
  EXPECT_NE(md.find("- \\<img"), std::string::npos) << md;
  const std::string csv = render_csv(d);
  EXPECT_NE(csv.find("\n'=cmd|' /C calc'!A0,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("'@SUM(1+1)"), std::string::npos) << csv;
  EXPECT_NE(csv.find("'-evil"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",\"+2.3% [+1.8%, +2.8%]\""), std::string::npos) << csv;
  EXPECT_NE(csv.find(",-0.4%"), std::string::npos) << csv;
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
