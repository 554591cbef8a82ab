//===- GraphNames.h - names of a graph's inputs and outputs -----*- C++ -*-===//
//
// A model's inputs and outputs are bound by name (.npy/.npz files, the
// bundle's plan, exported ONNX, --max-shape bounds, symbolic dims), and the
// printed IR keeps no argument locations, so the ONNX importer records the
// names as two function attributes. Everything that names an input or output
// reads them through these helpers, so that a function without them (written
// by hand, or built by a pass) gets the same names everywhere.
//
//===----------------------------------------------------------------------===//

#ifndef LMOPT_DIALECT_LMOPT_IR_GRAPHNAMES_H
#define LMOPT_DIALECT_LMOPT_IR_GRAPHNAMES_H

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::lmopt {

/// The function attributes, arrays of strings in argument and result order,
/// that name a graph's inputs and outputs.
inline constexpr llvm::StringLiteral kGraphInputNamesAttr = "lmopt.input_names";
inline constexpr llvm::StringLiteral kGraphOutputNamesAttr =
    "lmopt.output_names";

/// The name of input `index` of `func` (its argument `index`): entry `index`
/// of `lmopt.input_names`. When the attribute, the entry or its text is
/// missing or empty, the name is `input<index>`; the bundle (lmopt-run),
/// lmopt-interpret, calibration files, exported ONNX and symbolic dims all
/// use this one spelling. Names are not made unique here: the importer
/// rejects duplicate inputs.
std::string getGraphInputName(FunctionOpInterface func, unsigned index);

/// The name of output `index` of `func`: entry `index` of
/// `lmopt.output_names`, else (as for inputs) `output<index>`.
std::string getGraphOutputName(FunctionOpInterface func, unsigned index);

/// getGraphInputName (getGraphOutputName) of every argument (result).
SmallVector<std::string> getGraphInputNames(FunctionOpInterface func);
SmallVector<std::string> getGraphOutputNames(FunctionOpInterface func);

} // namespace mlir::lmopt

#endif // LMOPT_DIALECT_LMOPT_IR_GRAPHNAMES_H
