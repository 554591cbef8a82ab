//===- JsonFields.h - Reading tokenizer.json fields with paths --*- C++ -*-===//
//
// Every error about tokenizer.json names the field it is about, as a path
// from the root ("model.vocab", "normalizer.normalizers[1].type"), so that a
// malformed or unsupported file says where to look.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_LIB_TOKENIZER_JSONFIELDS_H
#define LMOPT_LIB_TOKENIZER_JSONFIELDS_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <string>

namespace lmopt::tokenizer {

/// A JSON value and the path that reached it.
struct Field {
  const llvm::json::Value *value;
  std::string path;

  Field child(llvm::StringRef key, const llvm::json::Value *v) const {
    return {v, path.empty() ? key.str() : path + "." + key.str()};
  }
  Field element(size_t i, const llvm::json::Value *v) const {
    return {v, path + "[" + std::to_string(i) + "]"};
  }
  bool isNull() const {
    return !value || value->kind() == llvm::json::Value::Null;
  }
};

/// llvm::json::parse recurses once per nesting level, so a file of a few
/// MB of '[' would overflow the stack; deeper nesting is refused first.
/// 128 is serde_json's limit: `tokenizers` reads nothing deeper either.
inline constexpr size_t kMaxJsonDepth = 128;

/// llvm::json::parse behind a check of the nesting depth.
inline llvm::Expected<llvm::json::Value> parseJson(llvm::StringRef text) {
  size_t depth = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       "nesting deeper than " +
                                           llvm::Twine(kMaxJsonDepth) +
                                           " levels at byte " + llvm::Twine(i));
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return llvm::json::parse(text);
}

inline llvm::Error fieldError(const std::string &path, const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "field '" + path + "': " + msg);
}

/// The object at `field`, or an error naming it.
inline llvm::Expected<const llvm::json::Object *> asObject(const Field &field) {
  if (const llvm::json::Object *o =
          field.value ? field.value->getAsObject() : nullptr)
    return o;
  return fieldError(field.path, "expected an object");
}

/// Member `key` of the object at `field`; a missing member is null.
inline Field member(const Field &field, llvm::StringRef key) {
  const llvm::json::Object *o =
      field.value ? field.value->getAsObject() : nullptr;
  return field.child(key, o ? o->get(key) : nullptr);
}

inline llvm::Expected<llvm::StringRef> asString(const Field &field) {
  if (field.value)
    if (std::optional<llvm::StringRef> s = field.value->getAsString())
      return *s;
  return fieldError(field.path, field.value ? "expected a string"
                                            : "missing (expected a string)");
}

/// The "type" string of the object at `field` (a normalizer,
/// pre-tokenizer or post-processor), or an error naming the field.
inline llvm::Expected<llvm::StringRef> asTypedObject(const Field &field) {
  if (llvm::Expected<const llvm::json::Object *> o = asObject(field); !o)
    return o.takeError();
  return asString(member(field, "type"));
}

inline llvm::Expected<int64_t> asInteger(const Field &field) {
  if (field.value)
    if (std::optional<int64_t> i = field.value->getAsInteger())
      return *i;
  return fieldError(field.path, field.value ? "expected an integer"
                                            : "missing (expected an integer)");
}

/// A token id: an integer in [0, 2^31).
inline llvm::Expected<int32_t> asId(const Field &field) {
  llvm::Expected<int64_t> id = asInteger(field);
  if (!id)
    return id.takeError();
  if (*id < 0 || *id > INT32_MAX)
    return fieldError(field.path,
                      "id " + llvm::Twine(*id) + " is out of range");
  return int32_t(*id);
}

inline llvm::Expected<double> asNumber(const Field &field) {
  if (field.value)
    if (std::optional<double> d = field.value->getAsNumber())
      return *d;
  return fieldError(field.path, field.value ? "expected a number"
                                            : "missing (expected a number)");
}

/// A boolean member that may be absent or null (then `fallback`).
inline llvm::Expected<bool> asBool(const Field &field, bool fallback) {
  if (field.isNull())
    return fallback;
  if (std::optional<bool> b = field.value->getAsBoolean())
    return *b;
  return fieldError(field.path, "expected a boolean");
}

inline llvm::Expected<const llvm::json::Array *> asArray(const Field &field) {
  if (const llvm::json::Array *a =
          field.value ? field.value->getAsArray() : nullptr)
    return a;
  return fieldError(field.path, field.value ? "expected an array"
                                            : "missing (expected an array)");
}

/// An optional string member: null or absent gives nullopt.
inline llvm::Expected<std::optional<std::string>>
asOptionalString(const Field &field) {
  if (field.isNull())
    return std::nullopt;
  llvm::Expected<llvm::StringRef> s = asString(field);
  if (!s)
    return s.takeError();
  return std::optional<std::string>(s->str());
}

} // namespace lmopt::tokenizer

#endif // LMOPT_LIB_TOKENIZER_JSONFIELDS_H
