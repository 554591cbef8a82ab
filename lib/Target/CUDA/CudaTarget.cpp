// The CUDA target (TargetBackend); written on another branch, replaced at merge.
