"""An NPU plugin package (its name matches `npu-packages`): Triton-Ascend
compiles its kernels, and its `tl.arange` takes ranges of any length."""
