//===- BundleEmitter.cpp - Write a target's plan as a .lmopt bundle -------===//

#include "lmopt/Target/Common/BundleEmitter.h"
#include "lmopt/Format/PlanShapes.h"

#include "lmopt/Format/Bundle.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::lmopt;
namespace rt = ::lmopt::runtime;

static llvm::json::Array
describeValues(const rt::Plan &plan, const std::vector<rt::PlanValue> &values) {
  llvm::json::Array array;
  for (const rt::PlanValue &value : values) {
    const rt::PlanTensor &tensor = plan.tensors[value.tensor];
    // A symbolic dim is written as its expression; "max_dims" holds the
    // bounds' values.
    llvm::json::Array dims, maxDims;
    for (auto [d, dim] : llvm::enumerate(tensor.dims)) {
      maxDims.push_back(dim);
      if (tensor.isSymbolic() && tensor.dimExprs[d] >= 0)
        dims.push_back(
            rt::formatDimExpr(plan, plan.exprs[size_t(tensor.dimExprs[d])]));
      else
        dims.push_back(dim);
    }
    llvm::json::Object object{{"name", value.name},
                              {"dtype", rt::dtypeName(tensor.dtype)},
                              {"dims", std::move(dims)}};
    if (tensor.isSymbolic())
      object["max_dims"] = std::move(maxDims);
    array.push_back(std::move(object));
  }
  return array;
}

std::string mlir::lmopt::buildMetaJSON(const BundlePlan &bundle,
                                       const BundleMeta &meta) {
  const rt::Plan &plan = bundle.entries.front().plan;
  llvm::json::Object root{
      {"model", meta.modelName},
      {"lmopt_version", kLmoptVersion},
      {"target", meta.target},
      {"inputs", describeValues(plan, plan.inputs)},
      {"outputs", describeValues(plan, plan.outputs)},
      {"fusions", llvm::json::Object(meta.fusions)},
      {"precision", meta.precision},
  };
  if (meta.weightsOmitted)
    root["weights_omitted"] = true;
  if (!meta.training.empty())
    root["training"] = llvm::json::Object(meta.training);
  if (bundle.entries.size() > 1 || !bundle.states.empty()) {
    llvm::json::Array entries, states;
    for (const TargetPlan &entry : bundle.entries)
      entries.push_back(llvm::json::Object{
          {"name", entry.plan.name},
          {"inputs", describeValues(entry.plan, entry.plan.inputs)},
          {"outputs", describeValues(entry.plan, entry.plan.outputs)}});
    for (const rt::PlanState &state : bundle.states)
      states.push_back(
          llvm::json::Object{{"name", state.name},
                             {"dtype", rt::dtypeName(state.dtype)},
                             {"capacity", llvm::json::Array(state.dims)}});
    root["entries"] = std::move(entries);
    root["states"] = std::move(states);
  }
  return llvm::formatv("{0:2}", llvm::json::Value(std::move(root))).str();
}

rt::Program BundlePlan::getProgram(StringRef device) const {
  rt::Program program;
  std::string kernelSection = numKernels ? "kernels" : "";
  program.states = states;
  if (device == "cpu") {
    program.devices = {{device.str(), kernelSection}};
  } else {
    // The host holds the inputs and outputs; the device the rest, states
    // included (DevicePlacement.h).
    program.devices = {{"cpu", ""}, {device.str(), kernelSection}};
    for (rt::PlanState &state : program.states)
      state.device = 1;
  }
  for (const TargetPlan &entry : entries)
    program.entries.push_back(entry.plan);
  return program;
}

llvm::Expected<uint64_t> mlir::lmopt::writeBundle(
    StringRef path, const BundlePlan &plan, StringRef device,
    ArrayRef<uint8_t> kernels, const std::string &metaJSON,
    ArrayRef<std::string> requirements, const rt::OmittedWeights *omitted,
    const rt::SparseWeights *sparse) {
  assert(!(omitted && sparse) && "omitted and sparse weights together");
  rt::BundleWriter writer;
  std::vector<uint8_t> meta(metaJSON.begin(), metaJSON.end());
  uint64_t size = rt::bundle_format::kHeaderSize;
  auto add = [&](const char *name, rt::SectionKind kind,
                 std::vector<uint8_t> bytes) -> llvm::Error {
    size += bytes.size();
    rt::Status status = writer.addSection(name, kind, std::move(bytes));
    if (!status.isOk())
      return llvm::createStringError(status.message());
    return llvm::Error::success();
  };
  if (llvm::Error error = add("meta", rt::SectionKind::Meta, std::move(meta)))
    return std::move(error);
  // The runtime's own validation, so a plan it would refuse is never written.
  std::vector<uint8_t> planBytes =
      rt::serializeProgram(plan.getProgram(device));
  rt::Program parsed;
  rt::Status valid = rt::parsePlan(planBytes.data(), planBytes.size(),
                                   plan.weights.size(), path.str(), parsed);
  if (!valid.isOk())
    return llvm::createStringError("the plan does not validate: " +
                                   valid.message());
  if (llvm::Error error =
          add("plan", rt::SectionKind::Plan, std::move(planBytes)))
    return std::move(error);
  if (omitted) {
    // The plan's offsets keep indexing the full layout, which the runtime
    // rebuilds from the kept bytes and this list.
    assert(omitted->fullSize == plan.weights.size() && "another layout");
    if (llvm::Error error = add("weights", rt::SectionKind::Weights,
                                rt::keptWeights(plan.weights.data(), *omitted)))
      return std::move(error);
    if (llvm::Error error =
            add("omitted-weights", rt::SectionKind::OmittedWeights,
                rt::serializeOmittedWeights(*omitted)))
      return std::move(error);
  } else if (sparse) {
    // The same: the runtime expands the compressed ranges into the full
    // layout.
    assert(sparse->fullSize == plan.weights.size() && "another layout");
    if (llvm::Error error =
            add("weights", rt::SectionKind::Weights,
                rt::compressSparseWeights(plan.weights.data(), *sparse)))
      return std::move(error);
    if (llvm::Error error =
            add("sparse-weights", rt::SectionKind::SparseWeights,
                rt::serializeSparseWeights(*sparse)))
      return std::move(error);
  } else {
    // Referenced in place: the weights can be most of the bundle.
    rt::Status status =
        writer.addSection("weights", rt::SectionKind::Weights,
                          plan.weights.data(), plan.weights.size());
    if (!status.isOk())
      return llvm::createStringError(status.message());
  }
  if (!kernels.empty())
    if (llvm::Error error =
            add("kernels", rt::SectionKind::Kernels,
                std::vector<uint8_t>(kernels.begin(), kernels.end())))
      return std::move(error);
  if (!requirements.empty()) {
    std::string lines;
    for (const std::string &requirement : requirements)
      lines += requirement + "\n";
    if (llvm::Error error =
            add("requires", rt::SectionKind::Requirements,
                std::vector<uint8_t>(lines.begin(), lines.end())))
      return std::move(error);
  }
  rt::Status status = writer.write(path.str());
  if (!status.isOk())
    return llvm::createStringError(status.message());
  uint64_t fileSize = 0;
  if (std::error_code ec = llvm::sys::fs::file_size(path, fileSize))
    return llvm::createStringError(ec,
                                   "cannot read the size of '" + path + "'");
  return fileSize;
}

static void printIds(llvm::raw_ostream &os, const std::vector<uint32_t> &ids) {
  os << "(";
  llvm::interleaveComma(ids, os, [&](uint32_t id) { os << "%" << id; });
  os << ")";
}

void mlir::lmopt::printPlan(llvm::raw_ostream &os, const TargetPlan &target,
                            uint64_t weightsBytes) {
  const rt::Plan &plan = target.plan;
  os << "plan: " << plan.tensors.size() << " tensors, " << plan.steps.size()
     << " steps, arena " << plan.arenaSize() << " bytes";
  // Other devices' arenas (DevicePlacement.h) by device number.
  for (size_t d = 1; d < plan.arenaSizes.size(); ++d)
    os << " + " << plan.arenaSizes[d] << " on device " << d;
  os << " (naive " << target.memory.naiveSize << "), weights " << weightsBytes
     << " bytes\n";
  for (const rt::PlanSymbol &symbol : plan.symbols)
    os << "symbol " << symbol.name << " <= " << symbol.bound << "\n";
  for (const rt::PlanAssumption &assumption : plan.assumptions)
    os << "assume " << rt::formatDimExpr(plan, plan.exprs[assumption.lhs])
       << (assumption.kind == rt::PlanAssumption::Kind::Equal ? " == " : " <= ")
       << rt::formatDimExpr(plan, plan.exprs[assumption.rhs]) << "\n";
  for (auto [id, tensor] : llvm::enumerate(plan.tensors)) {
    bool numbered = tensor.storage == rt::TensorStorage::Input ||
                    tensor.storage == rt::TensorStorage::State;
    os << "tensor %" << id << " = " << rt::tensorStorageName(tensor.storage)
       << " " << (numbered ? "" : "@") << tensor.offset << " '" << tensor.name
       << "' " << rt::dtypeName(tensor.dtype) << " [";
    // A symbolic dim prints as its expression and its value at the bounds.
    for (auto [d, dim] : llvm::enumerate(tensor.dims)) {
      if (d)
        os << ", ";
      if (tensor.isSymbolic() && tensor.dimExprs[d] >= 0)
        os << rt::formatDimExpr(plan, plan.exprs[size_t(tensor.dimExprs[d])])
           << " <= ";
      os << dim;
    }
    os << "]";
    if (tensor.device != 0)
      os << " on device " << tensor.device;
    if (id < target.aliasRoot.size() && target.aliasRoot[id] != id)
      os << " alias of %" << target.aliasRoot[id];
    os << "\n";
  }
  for (const rt::PlanValue &value : plan.inputs)
    os << "input '" << value.name << "' = %" << value.tensor << "\n";
  for (const rt::PlanValue &value : plan.outputs)
    os << "output '" << value.name << "' = %" << value.tensor << "\n";
  for (const rt::PlanStateUse &use : plan.stateReads)
    os << "reads state " << use.state << " = %" << use.tensor << "\n";
  for (const rt::PlanStateUse &use : plan.stateWrites)
    os << "writes state " << use.state << " = %" << use.tensor << "\n";
  for (auto [index, step] : llvm::enumerate(plan.steps)) {
    os << "step " << index << ": " << rt::stepKindName(step.kind) << " '"
       << step.name << "' ";
    printIds(os, step.operands);
    os << " -> ";
    printIds(os, step.results);
    if (!step.attrs.empty()) {
      os << " {";
      llvm::interleaveComma(step.attrs, os, [&](const rt::PlanAttr &attr) {
        os << attr.name << " = ";
        switch (attr.kind) {
        case rt::PlanAttr::Kind::Int:
          os << attr.intValue;
          break;
        case rt::PlanAttr::Kind::Float:
          os << llvm::format("%.9g", attr.floatValue);
          break;
        case rt::PlanAttr::Kind::String:
          os << "\"" << attr.stringValue << "\"";
          break;
        }
      });
      os << "}";
    }
    if (step.device != 0)
      os << " on device " << step.device;
    os << "\n";
  }
}
