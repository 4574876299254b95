// Files written without following links (base/file_place.hpp): a symlink where the file goes is
// refused and what it points to stays as it was; a link planted at the staging name is removed,
// not written through; a plain file is replaced whole; opening for writing refuses a link.
#include "base/file_place.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.hpp"
#include "file_text.hpp"

namespace ub {
namespace {

namespace fs = std::filesystem;

std::string slurp(const std::filesystem::path& p) { return ub_test::file_text(p); }

fs::path fresh_dir(const char* name) {
  const fs::path d = fs::path(::testing::TempDir()) / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

TEST(FilePlace, AFileIsReplacedWhole) {
  const fs::path d = fresh_dir("file_place_plain");
  std::ofstream(d / "manifest.json") << "old and longer than the new text";
  write_file_replacing(d / "manifest.json", "new", "the suite's manifest");
  EXPECT_EQ(slurp(d / "manifest.json"), "new");
  EXPECT_EQ(std::distance(fs::directory_iterator(d), fs::directory_iterator()), 1) << "no staging file left";
}

TEST(FilePlace, ALinkWhereTheFileGoesIsRefusedAndItsTargetKept) {
  const fs::path d = fresh_dir("file_place_link");
  std::ofstream(d / "victim.txt") << "VICTIM";
  fs::create_symlink(d / "victim.txt", d / "manifest.json");
  try {
    write_file_replacing(d / "manifest.json", "new", "the suite's manifest");
    FAIL() << "wrote through a symlink";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("a symlink where the suite's manifest goes"), std::string::npos) << e.what();
  }
  EXPECT_EQ(slurp(d / "victim.txt"), "VICTIM");
  EXPECT_THROW(open_for_writing_no_follow(d / "manifest.json", "the env part's output"), UsageError);
  EXPECT_EQ(slurp(d / "victim.txt"), "VICTIM");
}

TEST(FilePlace, ALinkPlantedAtTheStagingNameIsNotFollowed) {
  const fs::path d = fresh_dir("file_place_staging");
  std::ofstream(d / "victim.txt") << "VICTIM";
  fs::create_symlink(d / "victim.txt", d / fmt::format(".report.md.{}.part", ::getpid()));
  write_file_replacing(d / "report.md", "page", "a file of the report");
  EXPECT_EQ(slurp(d / "report.md"), "page");
  EXPECT_EQ(slurp(d / "victim.txt"), "VICTIM");
  EXPECT_FALSE(fs::is_symlink(d / "report.md"));
}

}  // namespace
}  // namespace ub
