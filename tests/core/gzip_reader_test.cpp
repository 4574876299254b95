// The bytes every reader gets from a file: plain as it is, gzip decompressed member after member,
// and the two endings zlib's own reader passes over quietly refused: a stream cut short and a
// file appended after the gzip data.
#include <gtest/gtest.h>

#include <zlib.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "base/error.hpp"
#include "base/gzip_reader.hpp"

namespace ub {
namespace {

std::string temp(const std::string& name) { return ::testing::TempDir() + "/gzip_reader_" + name; }

// `text` as one gzip member (zlib's own writer), appended to `path`.
void append_member(const std::string& path, const std::string& text) {
  gzFile out = gzopen(path.c_str(), "ab");
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(gzwrite(out, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
  ASSERT_EQ(gzclose(out), Z_OK);
}

void append_bytes(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::app | std::ios::binary) << bytes; }

std::string file_bytes(const std::string& path) {
  std::stringstream s;
  s << std::ifstream(path, std::ios::binary).rdbuf();
  return s.str();
}

// Everything the reader gives, read `block` bytes at a time (small blocks cross every boundary).
std::string read_all(const std::string& path, size_t block, size_t buffer = 64) {
  GzipReader in(path, path, buffer);
  std::string out, chunk(block, '\0');
  while (const size_t n = in.read(chunk.data(), block)) out.append(chunk, 0, n);
  return out;
}

std::string some_text() {
  std::string text;
  for (int i = 0; i < 5000; ++i) text += "line " + std::to_string(i * 7919 % 1000) + "\n";
  return text;
}

TEST(GzipReader, APlainFileIsReadAsItIs) {
  const std::string path = temp("plain.txt");
  std::ofstream(path, std::ios::binary) << some_text();
  for (size_t block : {1, 7, 4096, 1 << 20}) EXPECT_EQ(read_all(path, block), some_text()) << block;
  GzipReader in(path, path);
  EXPECT_TRUE(in.direct());
  // One byte of gzip's magic is not gzip; neither is an empty file.
  std::ofstream(path, std::ios::binary) << "\x1f";
  EXPECT_EQ(read_all(path, 16), "\x1f");
  std::ofstream(path, std::ios::binary | std::ios::trunc).flush();
  EXPECT_EQ(read_all(path, 16), "");
}

TEST(GzipReader, EveryMemberOfAGzipFileIsRead) {
  const std::string path = temp("members.gz");
  std::remove(path.c_str());
  append_member(path, some_text());
  append_member(path, "second member\n");
  append_member(path, "");
  append_member(path, "last\n");
  for (size_t block : {1, 13, 1 << 16}) EXPECT_EQ(read_all(path, block), some_text() + "second member\nlast\n") << block;
  GzipReader in(path, path);
  EXPECT_FALSE(in.direct());
  // Zeros after the end (a device's padding) are ignored, as gzip ignores them.
  append_bytes(path, std::string(3000, '\0'));
  EXPECT_EQ(read_all(path, 4096), some_text() + "second member\nlast\n");
}

TEST(GzipReader, AStreamCutShortIsRefused) {
  const std::string whole = temp("whole.gz"), cut = temp("cut.gz");
  std::remove(whole.c_str());
  append_member(whole, some_text());
  const std::string bytes = file_bytes(whole);
  for (size_t keep : {size_t{2}, size_t{10}, bytes.size() / 2, bytes.size() - 1}) {
    std::ofstream(cut, std::ios::binary | std::ios::trunc) << bytes.substr(0, keep);
    try {
      read_all(cut, 4096);
      ADD_FAILURE() << "a gzip file cut to " << keep << " bytes was read";
    } catch (const WorkError& e) {
      EXPECT_EQ(std::string(e.what()).find(cut + ": the gzip stream stops short of its end"), 0u) << e.what();
    }
  }
}

TEST(GzipReader, AFileAppendedAfterTheGzipDataIsRefusedWhereItStarts) {
  const std::string path = temp("appended.gz");
  std::remove(path.c_str());
  append_member(path, some_text());
  const size_t end = file_bytes(path).size();
  // Plain lines after the gzip data, right after it or after some zeros: they would go unread.
  for (const std::string& tail : {std::string("plain line\n"), std::string(100, '\0') + "x"}) {
    std::remove(path.c_str());
    append_member(path, some_text());
    append_bytes(path, tail);
    try {
      read_all(path, 512);
      ADD_FAILURE() << "the appended bytes went unread without a word";
    } catch (const WorkError& e) {
      EXPECT_NE(std::string(e.what()).find(path + ": the bytes from " + std::to_string(end) + " on, after the end of the gzip data, are not gzip"),
                std::string::npos) << e.what();
    }
  }
}

TEST(GzipReader, DamagedDataIsRefusedNamingWhere) {
  const std::string path = temp("damaged.gz");
  std::remove(path.c_str());
  append_member(path, some_text());
  std::string bytes = file_bytes(path);
  bytes[bytes.size() - 6] ^= 0x55;  // inside the trailer's CRC
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  try {
    read_all(path, 4096);
    ADD_FAILURE() << "a gzip file with a wrong CRC was read";
  } catch (const WorkError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": damaged gzip data at byte"), std::string::npos) << e.what();
  }
}

TEST(GzipReader, APipeIsReadLikeAFile) {
  const std::string fifo = temp("pipe"), gz = temp("pipe_source.gz");
  std::remove(gz.c_str());
  append_member(gz, some_text());
  std::remove(fifo.c_str());
  ASSERT_EQ(std::system(("mkfifo " + fifo + " && (cat " + gz + " > " + fifo + " &)").c_str()), 0);
  EXPECT_EQ(read_all(fifo, 333, 1 << 16), some_text());
}

// A file made to expand (hundreds of MiB of one byte in a few hundred KiB) is refused once past
// 256 MiB, not read for minutes; a real log or trace compresses tens of times, not hundreds.
TEST(GzipReader, AFileMadeToExpandIsRefused) {
  const std::string path = temp("bomb.gz");
  std::remove(path.c_str());
  gzFile out = gzopen(path.c_str(), "wb9");
  ASSERT_NE(out, nullptr);
  const std::string block(size_t{1} << 20, ' ');
  for (int i = 0; i < 300; ++i) ASSERT_EQ(gzwrite(out, block.data(), static_cast<unsigned>(block.size())), static_cast<int>(block.size()));
  ASSERT_EQ(gzclose(out), Z_OK);
  try {
    read_all(path, size_t{1} << 20, size_t{1} << 16);
    ADD_FAILURE() << "300 MiB of spaces were read";
  } catch (const WorkError& e) {
    EXPECT_NE(std::string(e.what()).find("more than 200 times: not a log or a trace"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}

TEST(GzipReader, AMissingFileIsAUsageError) {
  EXPECT_THROW(GzipReader(temp("absent"), "absent"), UsageError);
}

}  // namespace
}  // namespace ub
