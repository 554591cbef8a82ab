//===- TestUtil.cpp - Helpers for the runtime unit tests ------------------===//

#include "TestUtil.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <numeric>
#include <sstream>

#include <dirent.h>
#include <unistd.h>

using namespace lmopt::runtime::test;

std::string lmopt::runtime::test::inputsDir() {
  if (const char *dir = std::getenv("LMOPT_RUNTIME_TEST_INPUTS"))
    return dir;
  return LMOPT_RUNTIME_TEST_INPUTS;
}

std::string lmopt::runtime::test::inputPath(const std::string &name) {
  return inputsDir() + "/" + name;
}

std::vector<uint8_t> lmopt::runtime::test::readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

void lmopt::runtime::test::writeBytes(const std::string &path,
                                      const std::vector<uint8_t> &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char *>(bytes.data()),
            std::streamsize(bytes.size()));
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

std::vector<std::string> lmopt::runtime::test::listDir(const std::string &dir) {
  std::vector<std::string> names;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d))
      if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, ".."))
        names.push_back(e->d_name);
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

TempDir::TempDir() {
  const char *base = std::getenv("TMPDIR");
  std::string templ = std::string(base ? base : "/tmp") + "/lmopt-rt-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()))
    path_ = buf.data();
  EXPECT_FALSE(path_.empty()) << "mkdtemp failed";
}

static void removeTree(const std::string &path) {
  for (const std::string &name : listDir(path)) {
    std::string child = path + "/" + name;
    if (::unlink(child.c_str()) != 0)
      removeTree(child);
  }
  ::rmdir(path.c_str());
}

TempDir::~TempDir() {
  if (!path_.empty())
    removeTree(path_);
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

const Json &Json::operator[](const std::string &key) const {
  static const Json null;
  for (const auto &kv : object)
    if (kv.first == key)
      return kv.second;
  ADD_FAILURE() << "expected.json has no key '" << key << "'";
  return null;
}

namespace {
class JsonParser {
public:
  explicit JsonParser(const std::string &text) : text_(text) {}
  bool parseValue(Json &out) {
    skip();
    if (pos_ >= text_.size())
      return false;
    char c = text_[pos_];
    if (c == '{')
      return parseObject(out);
    if (c == '[')
      return parseArray(out);
    if (c == '"') {
      out.kind = Json::String;
      return parseString(out.string);
    }
    if (text_.compare(pos_, 4, "true") == 0 ||
        text_.compare(pos_, 5, "false") == 0) {
      out.kind = Json::Bool;
      out.boolean = text_[pos_] == 't';
      pos_ += out.boolean ? 4 : 5;
      return true;
    }
    if (text_.compare(pos_, 4, "null") == 0) {
      pos_ += 4;
      return true;
    }
    const char *start = text_.c_str() + pos_;
    char *end = nullptr;
    out.kind = Json::Number;
    out.number = std::strtod(start, &end);
    pos_ += size_t(end - start);
    return end != start;
  }
  bool atEnd() {
    skip();
    return pos_ == text_.size();
  }

private:
  void skip() {
    while (pos_ < text_.size() && std::isspace((unsigned char)text_[pos_]))
      ++pos_;
  }
  bool expect(char c) {
    skip();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool parseString(std::string &out) {
    if (!expect('"'))
      return false;
    out.clear();
    while (pos_ < text_.size() && text_[pos_] != '"') {
      if (text_[pos_] == '\\')
        return false; // expected.json needs no escapes
      out += text_[pos_++];
    }
    return expect('"');
  }
  bool parseArray(Json &out) {
    out.kind = Json::Array;
    expect('[');
    if (expect(']'))
      return true;
    do {
      out.array.emplace_back();
      if (!parseValue(out.array.back()))
        return false;
    } while (expect(','));
    return expect(']');
  }
  bool parseObject(Json &out) {
    out.kind = Json::Object;
    expect('{');
    if (expect('}'))
      return true;
    do {
      std::string key;
      skip();
      if (!parseString(key) || !expect(':'))
        return false;
      out.object.emplace_back(key, Json());
      if (!parseValue(out.object.back().second))
        return false;
    } while (expect(','));
    return expect('}');
  }

  const std::string &text_;
  size_t pos_ = 0;
};
} // namespace

bool Json::parse(const std::string &text, Json &out) {
  JsonParser parser(text);
  return parser.parseValue(out) && parser.atEnd();
}

const Json &lmopt::runtime::test::expectedJson() {
  static Json json = [] {
    std::ifstream in(inputPath("expected.json"));
    std::stringstream ss;
    ss << in.rdbuf();
    Json j;
    EXPECT_TRUE(Json::parse(ss.str(), j)) << "cannot parse expected.json";
    return j;
  }();
  return json;
}

std::vector<float>
lmopt::runtime::test::hashValues(uint32_t seed, int64_t count, double scale) {
  std::vector<float> out(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    uint32_t h = uint32_t(uint64_t(i) * 0x9E3779B9u + seed * 0x632BE5ABu);
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    h *= 0xC2B2AE35u;
    h ^= h >> 16;
    out[size_t(i)] = float((double(h) / 4294967296.0 - 0.5) * scale);
  }
  return out;
}

const lmopt::runtime::Tensor *
lmopt::runtime::test::member(const std::vector<NamedTensor> &all,
                             const char *name) {
  for (const NamedTensor &t : all)
    if (t.name == name)
      return &t.tensor;
  return nullptr;
}

std::unique_ptr<lmopt::runtime::CpuContext>
lmopt::runtime::test::makeContext(int threads) {
  std::unique_ptr<CpuContext> ctx;
  Status st = CpuContext::create({threads}, ctx);
  EXPECT_TRUE(st) << st.toString();
  return ctx;
}

std::vector<float> lmopt::runtime::test::arange(int n) {
  std::vector<float> data(size_t(n), 0);
  std::iota(data.begin(), data.end(), 0.0f);
  return data;
}
