//===- TensorImport.cpp - ONNX tensors and types to MLIR ------------------===//

#include "TensorImport.h"

#include "lmopt/Dialect/Lmopt/IR/ShapeUtils.h"
#include "lmopt/Importer/ONNX/OpConverter.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cstring>

using namespace mlir;
using namespace mlir::lmopt::onnx_import;

namespace {
struct ElementTypeInfo {
  int64_t code;
  const char *name;
  Type (*get)(MLIRContext *);
};
} // namespace

static const ElementTypeInfo kElementTypes[] = {
    {onnx::TensorProto::FLOAT, "FLOAT",
     [](MLIRContext *c) -> Type { return Float32Type::get(c); }},
    {onnx::TensorProto::UINT8, "UINT8",
     [](MLIRContext *c) -> Type {
       return IntegerType::get(c, 8, IntegerType::Unsigned);
     }},
    {onnx::TensorProto::INT8, "INT8",
     [](MLIRContext *c) -> Type { return IntegerType::get(c, 8); }},
    {onnx::TensorProto::UINT16, "UINT16",
     [](MLIRContext *c) -> Type {
       return IntegerType::get(c, 16, IntegerType::Unsigned);
     }},
    {onnx::TensorProto::INT16, "INT16",
     [](MLIRContext *c) -> Type { return IntegerType::get(c, 16); }},
    {onnx::TensorProto::INT32, "INT32",
     [](MLIRContext *c) -> Type { return IntegerType::get(c, 32); }},
    {onnx::TensorProto::INT64, "INT64",
     [](MLIRContext *c) -> Type { return IntegerType::get(c, 64); }},
    {onnx::TensorProto::STRING, "STRING", nullptr},
    {onnx::TensorProto::BOOL, "BOOL",
     [](MLIRContext *c) -> Type { return IntegerType::get(c, 1); }},
    {onnx::TensorProto::FLOAT16, "FLOAT16",
     [](MLIRContext *c) -> Type { return Float16Type::get(c); }},
    {onnx::TensorProto::DOUBLE, "DOUBLE",
     [](MLIRContext *c) -> Type { return Float64Type::get(c); }},
    {onnx::TensorProto::UINT32, "UINT32",
     [](MLIRContext *c) -> Type {
       return IntegerType::get(c, 32, IntegerType::Unsigned);
     }},
    {onnx::TensorProto::UINT64, "UINT64",
     [](MLIRContext *c) -> Type {
       return IntegerType::get(c, 64, IntegerType::Unsigned);
     }},
    {onnx::TensorProto::COMPLEX64, "COMPLEX64",
     [](MLIRContext *c) -> Type {
       return ComplexType::get(Float32Type::get(c));
     }},
    {onnx::TensorProto::COMPLEX128, "COMPLEX128",
     [](MLIRContext *c) -> Type {
       return ComplexType::get(Float64Type::get(c));
     }},
    {onnx::TensorProto::BFLOAT16, "BFLOAT16",
     [](MLIRContext *c) -> Type { return BFloat16Type::get(c); }},
    {onnx::TensorProto::FLOAT8E4M3FN, "FLOAT8E4M3FN",
     [](MLIRContext *c) -> Type { return Float8E4M3FNType::get(c); }},
    {onnx::TensorProto::FLOAT8E4M3FNUZ, "FLOAT8E4M3FNUZ",
     [](MLIRContext *c) -> Type { return Float8E4M3FNUZType::get(c); }},
    {onnx::TensorProto::FLOAT8E5M2, "FLOAT8E5M2",
     [](MLIRContext *c) -> Type { return Float8E5M2Type::get(c); }},
    {onnx::TensorProto::FLOAT8E5M2FNUZ, "FLOAT8E5M2FNUZ",
     [](MLIRContext *c) -> Type { return Float8E5M2FNUZType::get(c); }},
    {onnx::TensorProto::UINT4, "UINT4",
     [](MLIRContext *c) -> Type {
       return IntegerType::get(c, 4, IntegerType::Unsigned);
     }},
    {onnx::TensorProto::INT4, "INT4",
     [](MLIRContext *c) -> Type { return IntegerType::get(c, 4); }},
    {onnx::TensorProto::FLOAT4E2M1, "FLOAT4E2M1",
     [](MLIRContext *c) -> Type { return Float4E2M1FNType::get(c); }},
    {onnx::TensorProto::FLOAT8E8M0, "FLOAT8E8M0",
     [](MLIRContext *c) -> Type { return Float8E8M0FNUType::get(c); }},
    {onnx::TensorProto::UINT2, "UINT2",
     [](MLIRContext *c) -> Type {
       return IntegerType::get(c, 2, IntegerType::Unsigned);
     }},
    {onnx::TensorProto::INT2, "INT2",
     [](MLIRContext *c) -> Type { return IntegerType::get(c, 2); }},
    {onnx::TensorProto::FLOAT6E2M3, "FLOAT6E2M3",
     [](MLIRContext *c) -> Type { return Float6E2M3FNType::get(c); }},
    {onnx::TensorProto::FLOAT6E3M2, "FLOAT6E3M2",
     [](MLIRContext *c) -> Type { return Float6E3M2FNType::get(c); }},
};

static const ElementTypeInfo *lookupElementType(int64_t code) {
  for (const ElementTypeInfo &info : kElementTypes)
    if (info.code == code)
      return &info;
  return nullptr;
}

Type mlir::lmopt::onnx_import::convertElementType(MLIRContext *ctx,
                                                  int64_t code) {
  const ElementTypeInfo *info = lookupElementType(code);
  if (!info || !info->get)
    return {};
  return info->get(ctx);
}

StringRef mlir::lmopt::onnx_import::getElementTypeName(int64_t code) {
  const ElementTypeInfo *info = lookupElementType(code);
  return info ? info->name : "<unknown>";
}

FailureOr<SmallVector<int64_t>> mlir::lmopt::onnx_import::convertTensorDims(
    const google::protobuf::RepeatedField<int64_t> &dims, StringRef tensorName,
    Location loc) {
  SmallVector<int64_t> shape;
  int64_t numElements = 1;
  for (int64_t dim : dims) {
    if (dim < 0)
      return emitError(loc)
             << "tensor '" << tensorName << "' has negative dim " << dim;
    if (llvm::MulOverflow(numElements, dim, numElements))
      return emitError(loc) << "tensor '" << tensorName
                            << "' has more elements than fit in 64 bits";
    shape.push_back(dim);
  }
  return shape;
}

/// Bytes per element for types lmopt reads from byte-addressed data: widths
/// that are whole bytes, plus bool (one byte per value in ONNX). Zero for
/// packed sub-byte types.
static int64_t getStorageBytes(Type type) {
  if (type.isInteger(1))
    return 1;
  if (auto complex = llvm::dyn_cast<ComplexType>(type))
    return 2 * getStorageBytes(complex.getElementType());
  unsigned width = type.getIntOrFloatBitWidth();
  return width % 8 == 0 ? width / 8 : 0;
}

/// Builds an elements attribute from little-endian bytes in ONNX layout.
static ElementsAttr buildFromBytes(RankedTensorType type, ArrayRef<char> bytes,
                                   StringRef name, size_t inlineLimit,
                                   AsmResourceBlob::DeleterFn owner,
                                   size_t ownerAlignment) {
  Type elementType = type.getElementType();
  if (elementType.isInteger(1)) {
    SmallVector<bool> values;
    values.reserve(bytes.size());
    for (char byte : bytes)
      values.push_back(byte != 0);
    return DenseElementsAttr::get(type, values);
  }
  // Small integer tensors stay inline so that shape arithmetic can read them.
  bool smallInts = llvm::isa<IntegerType>(elementType) &&
                   type.getNumElements() <= kMaxKnownElements;
  if (bytes.size() <= inlineLimit || smallInts ||
      llvm::isa<ComplexType>(elementType))
    return DenseElementsAttr::getFromRawBuffer(type, bytes);

  std::string key = name.empty() ? std::string("tensor") : name.str();
  for (char &c : key)
    if (!llvm::isAlnum(c) && c != '_')
      c = '_';
  if (!llvm::isAlpha(key.front()) && key.front() != '_')
    key.insert(key.begin(), '_');
  size_t elementAlign = getStorageBytes(elementType);
  if (owner && ownerAlignment >= elementAlign) {
    AsmResourceBlob blob(bytes, ownerAlignment, std::move(owner),
                         /*dataIsMutable=*/false);
    return DenseResourceElementsAttr::get(type, key, std::move(blob));
  }
  return DenseResourceElementsAttr::get(
      type, key,
      HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, alignof(int64_t)));
}

/// The largest power of two (up to 64) that divides `ptr`.
static size_t getPointerAlignment(const void *ptr) {
  auto address = reinterpret_cast<uintptr_t>(ptr);
  size_t align = 64;
  while (align > 1 && address % align != 0)
    align /= 2;
  return align;
}

/// Copies a repeated field into bytes, narrowing each entry to `byteWidth`
/// little-endian bytes (ONNX keeps 8- and 16-bit types in int32_data).
template <typename T>
static std::vector<char>
packField(const google::protobuf::RepeatedField<T> &field, int64_t byteWidth) {
  std::vector<char> bytes(static_cast<size_t>(field.size()) * byteWidth);
  for (int i = 0; i < field.size(); ++i) {
    T value = field.Get(i);
    std::memcpy(bytes.data() + static_cast<size_t>(i) * byteWidth, &value,
                std::min<size_t>(byteWidth, sizeof(T)));
  }
  return bytes;
}

TensorReader::TensorReader(StringRef modelPath, size_t inlineLimit)
    : externalDataAllowed(!modelPath.empty() && modelPath != "-"),
      inlineLimit(inlineLimit) {
  if (!externalDataAllowed)
    return;
  SmallString<256> dir(llvm::sys::path::parent_path(modelPath));
  if (dir.empty())
    dir = ".";
  SmallString<256> real;
  if (llvm::sys::fs::real_path(dir, real))
    externalDataAllowed = false;
  else
    modelDir = std::string(real);
}

FailureOr<ElementsAttr> TensorReader::read(onnx::TensorProto &tensor,
                                           Location loc) {
  MLIRContext *ctx = loc.getContext();
  StringRef name = tensor.name();
  if (!tensor.has_data_type())
    return emitError(loc) << "tensor '" << name << "' has no element type";
  int64_t code = tensor.data_type();
  Type elementType = convertElementType(ctx, code);
  if (!elementType)
    return emitError(loc) << "tensor '" << name
                          << "' has unsupported element type "
                          << getElementTypeName(code) << " (" << code << ")";
  FailureOr<SmallVector<int64_t>> shape =
      convertTensorDims(tensor.dims(), name, loc);
  if (failed(shape))
    return failure();
  if (tensor.has_segment())
    return emitError(loc) << "tensor '" << name
                          << "' is segmented, which lmopt does not support";
  auto type = RankedTensorType::get(*shape, elementType);
  int64_t numElements = type.getNumElements();
  int64_t byteWidth = getStorageBytes(elementType);
  if (code == onnx::TensorProto::INT4 || code == onnx::TensorProto::UINT4)
    return readPacked4Bit(tensor, type, loc);
  if (byteWidth == 0)
    return emitError(loc) << "tensor '" << name << "' of packed element type "
                          << getElementTypeName(code)
                          << " is not supported as a constant";
  int64_t expectedBytes;
  if (llvm::MulOverflow(numElements, byteWidth, expectedBytes))
    return emitError(loc) << "tensor '" << name
                          << "' is too large: its size overflows 64 bits";

  if (tensor.data_location() == onnx::TensorProto::EXTERNAL)
    return readExternal(tensor, type, expectedBytes, loc);

  if (tensor.has_raw_data()) {
    int64_t size = tensor.raw_data().size();
    if (size != expectedBytes)
      return emitError(loc)
             << "tensor '" << name << "' has " << size
             << " bytes of raw data but shape " << formatShape(type.getShape())
             << " of " << getElementTypeName(code) << " needs "
             << expectedBytes;
    // Take ownership of the parsed bytes so they are not copied again; the
    // deleter's capture frees them whether or not a blob keeps them.
    std::shared_ptr<std::string> raw(tensor.release_raw_data());
    ArrayRef<char> bytes(raw->data(), raw->size());
    size_t align = getPointerAlignment(raw->data());
    AsmResourceBlob::DeleterFn owner = [raw](void *, size_t, size_t) {};
    std::string nameCopy = name.str();
    ElementsAttr attr = buildFromBytes(type, bytes, nameCopy, inlineLimit,
                                       std::move(owner), align);
    return attr;
  }

  // Typed fields: pick the one ONNX uses for this element type.
  std::vector<char> bytes;
  int64_t count = 0;
  StringRef field;
  switch (code) {
  case onnx::TensorProto::FLOAT:
  case onnx::TensorProto::COMPLEX64:
    bytes = packField(tensor.float_data(), 4);
    count = tensor.float_data_size();
    field = "float_data";
    break;
  case onnx::TensorProto::DOUBLE:
  case onnx::TensorProto::COMPLEX128:
    bytes = packField(tensor.double_data(), 8);
    count = tensor.double_data_size();
    field = "double_data";
    break;
  case onnx::TensorProto::INT64:
    bytes = packField(tensor.int64_data(), 8);
    count = tensor.int64_data_size();
    field = "int64_data";
    break;
  case onnx::TensorProto::UINT32:
  case onnx::TensorProto::UINT64:
    bytes = packField(tensor.uint64_data(), byteWidth);
    count = tensor.uint64_data_size();
    field = "uint64_data";
    break;
  default:
    bytes = packField(tensor.int32_data(), byteWidth);
    count = tensor.int32_data_size();
    field = "int32_data";
    break;
  }
  if (llvm::isa<ComplexType>(elementType))
    count /= 2;
  if (count != numElements)
    return emitError(loc) << "tensor '" << name << "' has " << count
                          << " elements in '" << field << "' but shape "
                          << formatShape(type.getShape()) << " needs "
                          << numElements;
  return buildFromBytes(type, bytes, name, inlineLimit, nullptr, 0);
}

/// INT4 / UINT4: two values per byte, low nibble first, in `raw_data` or one
/// byte per `int32_data` entry. Unpacked to one value per byte, the layout of
/// a dense attribute of `i4`/`ui4`.
FailureOr<ElementsAttr> TensorReader::readPacked4Bit(onnx::TensorProto &tensor,
                                                     RankedTensorType type,
                                                     Location loc) {
  StringRef name = tensor.name();
  int64_t numElements = type.getNumElements();
  int64_t packedBytes = numElements / 2 + numElements % 2;
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL)
    return emitError(loc) << "tensor '" << name << "' of packed element type "
                          << getElementTypeName(tensor.data_type())
                          << " has external data, which lmopt does not read";
  std::vector<char> packed;
  if (tensor.has_raw_data()) {
    packed.assign(tensor.raw_data().begin(), tensor.raw_data().end());
    if (static_cast<int64_t>(packed.size()) != packedBytes)
      return emitError(loc)
             << "tensor '" << name << "' has " << packed.size()
             << " bytes of raw data but shape " << formatShape(type.getShape())
             << " of " << getElementTypeName(tensor.data_type()) << " needs "
             << packedBytes;
  } else {
    if (tensor.int32_data_size() != packedBytes)
      return emitError(loc)
             << "tensor '" << name << "' has " << tensor.int32_data_size()
             << " elements in 'int32_data' but shape "
             << formatShape(type.getShape()) << " needs " << packedBytes
             << " packed bytes";
    for (int32_t byte : tensor.int32_data())
      packed.push_back(static_cast<char>(byte & 0xFF));
  }
  std::vector<char> values(numElements);
  for (int64_t i = 0; i < numElements; ++i) {
    auto byte = static_cast<uint8_t>(packed[i / 2]);
    values[i] = static_cast<char>(i % 2 ? byte >> 4 : byte & 0xF);
  }
  return ElementsAttr(DenseElementsAttr::getFromRawBuffer(type, values));
}

/// True when `location` could leave the folder it is resolved in.
static bool isUnsafeRelativePath(StringRef location) {
  if (llvm::sys::path::is_absolute(location, llvm::sys::path::Style::posix) ||
      llvm::sys::path::is_absolute(location, llvm::sys::path::Style::windows))
    return true;
  SmallVector<StringRef> parts;
  location.split(parts, llvm::any_of(location, [](char c) { return c == '\\'; })
                            ? '\\'
                            : '/');
  for (StringRef part : parts)
    for (StringRef sub : llvm::split(part, '/'))
      if (sub == "..")
        return true;
  return false;
}

FailureOr<ElementsAttr> TensorReader::readExternal(onnx::TensorProto &tensor,
                                                   RankedTensorType type,
                                                   int64_t expectedBytes,
                                                   Location loc) {
  StringRef name = tensor.name();
  std::string location;
  std::optional<uint64_t> offset, length;
  for (const onnx::StringStringEntryProto &entry : tensor.external_data()) {
    StringRef key = entry.key(), value = entry.value();
    if (key == "location") {
      location = value.str();
      continue;
    }
    if (key != "offset" && key != "length")
      continue;
    uint64_t parsed;
    if (value.getAsInteger(10, parsed))
      return emitError(loc)
             << "external data of tensor '" << name << "' has " << key << " '"
             << value << "', which is not a non-negative integer";
    (key == "offset" ? offset : length) = parsed;
  }
  if (location.empty())
    return emitError(loc) << "external data of tensor '" << name
                          << "' has no 'location'";
  if (!externalDataAllowed)
    return emitError(loc) << "tensor '" << name
                          << "' has external data, which needs the model to "
                             "be read from a file";
  if (location.find('\0') != std::string::npos ||
      isUnsafeRelativePath(location))
    return emitError(loc) << "external data location '" << location
                          << "' of tensor '" << name
                          << "' is not a relative path inside the model folder";
  SmallString<256> path(modelDir);
  llvm::sys::path::append(path, location);
  SmallString<256> real;
  if (std::error_code error = llvm::sys::fs::real_path(path, real))
    return emitError(loc) << "cannot open external data file '" << location
                          << "' of tensor '" << name
                          << "': " << error.message();
  std::string folderPrefix = modelDir;
  if (!llvm::sys::path::is_separator(folderPrefix.back()))
    folderPrefix += '/';
  if (!StringRef(real).starts_with(folderPrefix))
    return emitError(loc) << "external data location '" << location
                          << "' of tensor '" << name
                          << "' resolves outside the model folder";
  uint64_t fileSize;
  if (std::error_code error = llvm::sys::fs::file_size(real, fileSize))
    return emitError(loc) << "cannot read external data file '" << location
                          << "': " << error.message();
  uint64_t start = offset.value_or(0);
  uint64_t size = length.value_or(start <= fileSize ? fileSize - start : 0);
  if (start > fileSize || size > fileSize - start)
    return emitError(loc) << "external data of tensor '" << name << "' (offset "
                          << start << ", length " << size
                          << ") runs past the end of '" << location << "' ("
                          << fileSize << " bytes)";
  if (size != static_cast<uint64_t>(expectedBytes))
    return emitError(loc) << "external data of tensor '" << name << "' has "
                          << size << " bytes but shape "
                          << formatShape(type.getShape()) << " of "
                          << getElementTypeName(tensor.data_type()) << " needs "
                          << expectedBytes;
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFileSlice(real, size, start,
                                       /*IsVolatile=*/false);
  if (!buffer)
    return emitError(loc) << "cannot read external data file '" << location
                          << "': " << buffer.getError().message();
  std::shared_ptr<llvm::MemoryBuffer> owned = std::move(*buffer);
  ArrayRef<char> bytes(owned->getBufferStart(), owned->getBufferSize());
  size_t align = getPointerAlignment(owned->getBufferStart());
  AsmResourceBlob::DeleterFn owner = [owned](void *, size_t, size_t) {};
  return buildFromBytes(type, bytes, name, inlineLimit, std::move(owner),
                        align);
}
