//===- PostProcessor.cpp - Special tokens around encoded sequences --------===//

#include "lmopt/Tokenizer/PostProcessor.h"

#include "JsonFields.h"

using namespace lmopt::tokenizer;
using llvm::Expected;
using llvm::StringRef;

using Kind = TemplatePiece::Kind;

size_t PostProcessor::addedTokens(bool isPair) const {
  size_t count = 0;
  for (const TemplatePiece &piece : isPair ? pair : single)
    count += piece.ids.size();
  return count;
}

bool PostProcessor::usesTypeIds() const {
  for (const auto *list : {&single, &pair})
    for (const TemplatePiece &piece : *list)
      if (piece.typeId != 0)
        return true;
  return false;
}

void PostProcessor::process(const std::vector<int32_t> &a,
                            const std::vector<int32_t> *b,
                            bool addSpecialTokens, Encoding &out) const {
  out.ids.clear();
  out.typeIds.clear();
  auto append = [&](const std::vector<int32_t> &ids, int32_t typeId) {
    out.ids.insert(out.ids.end(), ids.begin(), ids.end());
    out.typeIds.insert(out.typeIds.end(), ids.size(), typeId);
  };
  if (!addSpecialTokens) {
    append(a, 0);
    if (b)
      append(*b, 1);
    return;
  }
  for (const TemplatePiece &piece : b ? pair : single) {
    if (piece.kind == Kind::Special)
      append(piece.ids, piece.typeId);
    else if (piece.kind == Kind::SequenceA)
      append(a, piece.typeId);
    else if (b)
      append(*b, piece.typeId);
  }
}

static PostProcessor plainConcatenation() {
  PostProcessor p;
  p.single = {{Kind::SequenceA, {}, 0}};
  p.pair = {{Kind::SequenceA, {}, 0}, {Kind::SequenceB, {}, 1}};
  return p;
}

/// ["[SEP]", 102] in Bert's and RoBERTa's processors.
static Expected<int32_t> parseTokenPair(const Field &field) {
  const llvm::json::Array *pair =
      field.value ? field.value->getAsArray() : nullptr;
  if (!pair || pair->size() != 2)
    return fieldError(field.path, "expected [token, id]");
  return asId(field.element(1, &(*pair)[1]));
}

/// A template places each of its sequences once (A alone, or A and B):
/// truncation budgets the ids on that count, and a sequence left out or
/// repeated would drop or duplicate them.
static llvm::Error checkSequences(const Field &field,
                                  const std::vector<TemplatePiece> &pieces,
                                  bool isPair) {
  size_t a = 0, b = 0;
  for (const TemplatePiece &piece : pieces) {
    a += piece.kind == Kind::SequenceA;
    b += piece.kind == Kind::SequenceB;
  }
  if (a == 1 && b == size_t(isPair))
    return llvm::Error::success();
  return fieldError(field.path,
                    llvm::Twine(isPair ? "a pair template must use sequences "
                                         "'A' and 'B' once each"
                                       : "a single template must use sequence "
                                         "'A' once and not 'B'") +
                        " (has 'A' " + llvm::Twine(a) + " times, 'B' " +
                        llvm::Twine(b) + " times)");
}

static Expected<std::vector<TemplatePiece>>
parseTemplate(const Field &field, const llvm::json::Object &specials,
              const Field &specialsField, bool isPair) {
  std::vector<TemplatePiece> pieces;
  Expected<const llvm::json::Array *> array = asArray(field);
  if (!array)
    return array.takeError();
  for (size_t i = 0; i < (*array)->size(); ++i) {
    Field item = field.element(i, &(**array)[i]);
    Field special = member(item, "SpecialToken");
    Field sequence = member(item, "Sequence");
    Field body = special.isNull() ? sequence : special;
    if (body.isNull())
      return fieldError(item.path, "expected {\"SpecialToken\": ...} or "
                                   "{\"Sequence\": ...}");
    TemplatePiece piece{Kind::Special, {}, 0};
    Field typeField = member(body, "type_id");
    Expected<int32_t> typeId = asId(typeField);
    if (!typeId)
      return typeId.takeError();
    piece.typeId = *typeId;
    Field idField = member(body, "id");
    Expected<StringRef> id = asString(idField);
    if (!id)
      return id.takeError();
    if (!special.isNull()) {
      const llvm::json::Value *entry = specials.get(*id);
      if (!entry)
        return fieldError(idField.path,
                          "'" + *id + "' is not in " + specialsField.path);
      Field idsField = member(specialsField.child(*id, entry), "ids");
      Expected<const llvm::json::Array *> ids = asArray(idsField);
      if (!ids)
        return ids.takeError();
      for (size_t k = 0; k < (*ids)->size(); ++k) {
        Expected<int32_t> v = asId(idsField.element(k, &(**ids)[k]));
        if (!v)
          return v.takeError();
        piece.ids.push_back(*v);
      }
    } else if (*id == "A") {
      piece.kind = Kind::SequenceA;
    } else if (*id == "B") {
      piece.kind = Kind::SequenceB;
    } else {
      return fieldError(idField.path, "expected 'A' or 'B', got '" + *id + "'");
    }
    pieces.push_back(std::move(piece));
  }
  if (llvm::Error err = checkSequences(field, pieces, isPair))
    return std::move(err);
  return pieces;
}

static Expected<std::optional<PostProcessor>> parseField(const Field &field) {
  if (field.isNull())
    return std::nullopt;
  Field typeField = member(field, "type");
  Expected<StringRef> type = asTypedObject(field);
  if (!type)
    return type.takeError();
  if (*type == "ByteLevel")
    return std::nullopt;
  if (*type == "BertProcessing" || *type == "RobertaProcessing") {
    Expected<int32_t> cls = parseTokenPair(member(field, "cls"));
    if (!cls)
      return cls.takeError();
    Expected<int32_t> sep = parseTokenPair(member(field, "sep"));
    if (!sep)
      return sep.takeError();
    PostProcessor p;
    TemplatePiece c{Kind::Special, {*cls}, 0}, s{Kind::Special, {*sep}, 0};
    TemplatePiece a{Kind::SequenceA, {}, 0}, b{Kind::SequenceB, {}, 0};
    p.single = {c, a, s};
    if (*type == "RobertaProcessing") {
      p.pair = {c, a, s, s, b, s};
    } else {
      TemplatePiece s1 = s;
      s1.typeId = b.typeId = 1;
      p.pair = {c, a, s, b, s1};
    }
    return std::optional<PostProcessor>(std::move(p));
  }
  if (*type == "TemplateProcessing") {
    Field specialsField = member(field, "special_tokens");
    Expected<const llvm::json::Object *> specials = asObject(specialsField);
    if (!specials)
      return specials.takeError();
    PostProcessor p;
    Expected<std::vector<TemplatePiece>> single =
        parseTemplate(member(field, "single"), **specials, specialsField,
                      /*isPair=*/false);
    if (!single)
      return single.takeError();
    Expected<std::vector<TemplatePiece>> pair =
        parseTemplate(member(field, "pair"), **specials, specialsField,
                      /*isPair=*/true);
    if (!pair)
      return pair.takeError();
    p.single = std::move(*single);
    p.pair = std::move(*pair);
    return std::optional<PostProcessor>(std::move(p));
  }
  if (*type == "Sequence") {
    // ByteLevel steps change no id; at most one step may add tokens.
    Field list = member(field, "processors");
    Expected<const llvm::json::Array *> array = asArray(list);
    if (!array)
      return array.takeError();
    std::optional<PostProcessor> result;
    for (size_t i = 0; i < (*array)->size(); ++i) {
      Field step = list.element(i, &(**array)[i]);
      Expected<std::optional<PostProcessor>> p = parseField(step);
      if (!p)
        return p.takeError();
      if (!*p)
        continue;
      if (result)
        return fieldError(step.path, "a second post-processor that adds "
                                     "special tokens is not supported");
      result = std::move(*p);
    }
    return result;
  }
  return fieldError(typeField.path,
                    "unsupported post-processor '" + *type +
                        "' (supported: TemplateProcessing, BertProcessing, "
                        "RobertaProcessing, ByteLevel, Sequence)");
}

Expected<PostProcessor>
lmopt::tokenizer::parsePostProcessor(const llvm::json::Value *value,
                                     const std::string &path) {
  Expected<std::optional<PostProcessor>> p = parseField(Field{value, path});
  if (!p)
    return p.takeError();
  return *p ? std::move(**p) : plainConcatenation();
}
