# -*- Python -*-
# lit configuration for the lmopt regression suite.

import os
import shutil
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "LMOPT"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.lmopt_obj_root, "test")
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "models"]
# Tests that only run tools on binary inputs (ONNX models) are `.test` files;
# their inputs live in `Inputs` folders, which are never tests themselves.
config.suffixes.append(".test")
config.excludes.append("Inputs")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%lmopt_src_root", config.lmopt_src_root))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
tool_dirs = [config.lmopt_tools_dir, config.llvm_tools_dir]
tools = [ToolSubst("lmopt-opt", unresolved="fatal")]
llvm_config.add_tool_substitutions(tools, tool_dirs)
llvm_config.add_tool_substitutions(
    [ToolSubst("lmopt-translate", unresolved="fatal")], tool_dirs)
llvm_config.add_tool_substitutions(
    [ToolSubst("lmopt-reduce-layers", unresolved="fatal")], tool_dirs)
# The runtime's GoogleTest binary, and the Python the build was configured
# with (it has numpy, which checks the files the runtime writes).
llvm_config.add_tool_substitutions(
    [ToolSubst("lmopt-runtime-tests", unresolved="fatal")], tool_dirs)
# lmopt-run, and the generator of the bundles its tests run.
llvm_config.add_tool_substitutions(
    [ToolSubst("lmopt-run", unresolved="fatal"),
     ToolSubst("lmopt-soak", unresolved="fatal"),
     ToolSubst("lmopt-train", unresolved="fatal"),
     ToolSubst("lmopt-make-test-bundles", unresolved="fatal")], tool_dirs)
# Without -DPython3_EXECUTABLE, the first python3 on PATH (several tests
# need its numpy), else the one running lit.
config.substitutions.append(
    ("%lmopt_python",
     config.python_executable or shutil.which("python3") or sys.executable))
# The reference interpreter, and the ONNX fixtures the e2e suite runs.
llvm_config.add_tool_substitutions(
    [ToolSubst("lmopt-interpret", unresolved="fatal")], tool_dirs)
# Compiles kernels with compileKernels and runs them (test/Target/CPU).
llvm_config.add_tool_substitutions(
    [ToolSubst("lmopt-kernel-test", unresolved="fatal")], tool_dirs)
config.substitutions.append(
    ("%fixtures", os.path.join(config.lmopt_src_root, "test", "models", "onnx")))
# The training references (PyTorch gradients and loss curves).
config.substitutions.append(
    ("%lmopt_train_refs",
     os.path.join(config.lmopt_src_root, "test", "models", "train")))
# The distillation references (teacher, student, PyTorch's KD loss).
config.substitutions.append(
    ("%lmopt_distill_refs",
     os.path.join(config.lmopt_src_root, "test", "models", "distill")))
# The layer reduction references (a four-layer BERT, PyTorch's block
# importance and reduced outputs; scripts/make_layer_reduce_fixtures.py).
config.substitutions.append(
    ("%lmopt_reduce_refs",
     os.path.join(config.lmopt_src_root, "test", "models", "reduce")))
# Upstream MLIR tools that lower and run what convert-lmopt-to-linalg
# produces, and the runner's printing libraries.
llvm_config.add_tool_substitutions(
    [ToolSubst("mlir-opt", unresolved="fatal"),
     ToolSubst("mlir-runner", unresolved="ignore")], [config.llvm_tools_dir])
_llvm_lib_dir = os.path.join(os.path.dirname(config.llvm_tools_dir), "lib")
config.substitutions.append(
    ("%mlir_runner_utils",
     ",".join(os.path.join(_llvm_lib_dir, name)
              for name in ["libmlir_c_runner_utils.so",
                           "libmlir_runner_utils.so"])))
if os.path.exists(os.path.join(config.llvm_tools_dir, "mlir-runner")) and \
        os.path.exists(os.path.join(_llvm_lib_dir, "libmlir_runner_utils.so")):
    config.available_features.add("mlir-runner")
# The runtime has its CUDA device (built where the CUDA toolkit is), and
# this machine has an NVIDIA GPU with its driver: the GPU tests say
# `REQUIRES: cuda-device` and are reported as unsupported elsewhere, never
# passed without running.
if config.lmopt_enable_cuda.upper() in ("ON", "1", "TRUE", "YES"):
    config.available_features.add("cuda-runtime")
    _smi = shutil.which("nvidia-smi")
    if _smi:
        import subprocess
        try:
            if subprocess.run([_smi, "-L"], capture_output=True,
                              timeout=30).returncode == 0:
                config.available_features.add("cuda-device")
        except (OSError, subprocess.SubprocessError):
            pass
# The tokenizer tool, and the tokenizer fixtures (scripts/make_tokenizer_fixtures.py).
llvm_config.add_tool_substitutions(
    [ToolSubst("lmopt-tokenize", unresolved="fatal")], tool_dirs)
config.substitutions.append(
    ("%tokenizers",
     os.path.join(config.lmopt_src_root, "test", "models", "tokenizers")))
# The compiler driver.
llvm_config.add_tool_substitutions(
    [ToolSubst("lmopt-compile", unresolved="fatal")], tool_dirs)

# The CUDA kernel codegen's driver; its tests need ptxas (the CUDA toolkit),
# found where compileCudaKernels looks: $CUDA_HOME, /usr/local/cuda, PATH.
llvm_config.add_tool_substitutions(
    [ToolSubst("lmopt-cuda-kernel-test", unresolved="fatal"),
     ToolSubst("llvm-readelf", unresolved="fatal")],
    tool_dirs)
_cuda_home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
if os.access(os.path.join(_cuda_home, "bin", "ptxas"), os.X_OK) or \
        shutil.which("ptxas"):
    config.available_features.add("cuda-toolkit")
if "CUDA_HOME" in os.environ:
    config.environment["CUDA_HOME"] = os.environ["CUDA_HOME"]

# A small size-limited file system for the full-disk tests (test/Reliability):
# only where this runner may mount a tmpfs (root, or CAP_SYS_ADMIN); elsewhere
# those tests are reported as unsupported, never passed without running.
def _can_mount_tmpfs():
    import subprocess
    import tempfile
    if not shutil.which("mount") or not shutil.which("umount"):
        return False
    folder = tempfile.mkdtemp(prefix="lmopt-lit-mount-")
    try:
        mounted = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", folder],
            capture_output=True, timeout=30).returncode == 0
        if mounted:
            subprocess.run(["umount", folder], capture_output=True, timeout=30)
        return mounted
    except (OSError, subprocess.SubprocessError):
        return False
    finally:
        try:
            os.rmdir(folder)
        except OSError:
            pass


if _can_mount_tmpfs():
    config.available_features.add("size-limited-fs")


# AMX-BF16 on this CPU (its tile kernels then run; tests of their exact bits
# require it, others run everywhere).
def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


if "amx_bf16" in _cpu_flags() and "DNNL_MAX_CPU_ISA" not in os.environ:
    config.available_features.add("amx-bf16")
