//===- GraphNames.cpp - names of a graph's inputs and outputs -------------===//

#include "lmopt/Dialect/Lmopt/IR/GraphNames.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

/// Entry `index` of the string array `attrName` on `func`, else `fallback`
/// followed by `index`.
static std::string getGraphName(FunctionOpInterface func, StringRef attrName,
                                unsigned index, StringRef fallback) {
  if (auto names = func->getAttrOfType<ArrayAttr>(attrName))
    if (index < names.size())
      if (auto name = llvm::dyn_cast<StringAttr>(names[index]))
        if (!name.getValue().empty())
          return name.str();
  return fallback.str() + std::to_string(index);
}

std::string lmopt::getGraphInputName(FunctionOpInterface func, unsigned index) {
  return getGraphName(func, kGraphInputNamesAttr, index, "input");
}

std::string lmopt::getGraphOutputName(FunctionOpInterface func,
                                      unsigned index) {
  return getGraphName(func, kGraphOutputNamesAttr, index, "output");
}

SmallVector<std::string> lmopt::getGraphInputNames(FunctionOpInterface func) {
  SmallVector<std::string> names;
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    names.push_back(getGraphInputName(func, i));
  return names;
}

SmallVector<std::string> lmopt::getGraphOutputNames(FunctionOpInterface func) {
  SmallVector<std::string> names;
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
    names.push_back(getGraphOutputName(func, i));
  return names;
}
