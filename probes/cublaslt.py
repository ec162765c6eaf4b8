"""A minimal ctypes binding to cuBLASLt: enough for one TN matrix product with scale pointers
(fp8) or integer accumulation (int8), with the library's heuristic choosing the algorithm.

The library is the one already loaded into the process (CuPy's cuBLAS pulls it in), found
through /proc/self/maps, else the usual sonames."""

from __future__ import annotations

import contextlib
import ctypes
from typing import Any

# cudaDataType_t
CUDA_R_32F, CUDA_R_16F, CUDA_R_8I, CUDA_R_32I, CUDA_R_16BF = 0, 2, 3, 10, 14
CUDA_R_8F_E4M3, CUDA_R_8F_E5M2 = 28, 29
# cublasComputeType_t
CUBLAS_COMPUTE_16F, CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32I, CUBLAS_COMPUTE_32F_FAST_TF32 = 64, 68, 72, 77
# cublasOperation_t
OP_N, OP_T = 0, 1
# cublasLtMatmulDescAttributes_t
DESC_TRANSA, DESC_TRANSB, DESC_A_SCALE_POINTER, DESC_B_SCALE_POINTER, DESC_FAST_ACCUM = 3, 4, 17, 18, 25
# cublasLtMatmulPreferenceAttributes_t
PREF_MAX_WORKSPACE_BYTES = 1


class CublasLtError(RuntimeError):
    pass


class HeuristicResult(ctypes.Structure):
    _fields_ = [
        ("algo", ctypes.c_uint64 * 8),
        ("workspaceSize", ctypes.c_size_t),
        ("state", ctypes.c_int),
        ("wavesCount", ctypes.c_float),
        ("reserved", ctypes.c_int * 4),
    ]


def _loaded_path() -> str | None:
    with contextlib.suppress(OSError), open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
        for line in f:
            parts = line.split()
            if parts and "libcublasLt.so" in parts[-1]:
                return parts[-1]
    return None


def load_library() -> tuple[ctypes.CDLL, str]:
    path = _loaded_path()
    candidates = [path] if path else []
    candidates += ["libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so.11", "libcublasLt.so"]
    errors = []
    for c in candidates:
        try:
            return ctypes.CDLL(c), c
        except OSError as e:
            errors.append(f"{c}: {e}")
    raise CublasLtError("cuBLASLt not found: " + "; ".join(errors))


_vp = ctypes.c_void_p


class CublasLt:
    def __init__(self) -> None:
        self.lib, self.path = load_library()
        lib = self.lib
        lib.cublasLtCreate.argtypes = [ctypes.POINTER(_vp)]
        lib.cublasLtMatmulDescCreate.argtypes = [ctypes.POINTER(_vp), ctypes.c_int, ctypes.c_int]
        lib.cublasLtMatmulDescSetAttribute.argtypes = [_vp, ctypes.c_int, _vp, ctypes.c_size_t]
        lib.cublasLtMatrixLayoutCreate.argtypes = [ctypes.POINTER(_vp), ctypes.c_int, ctypes.c_uint64,
                                                   ctypes.c_uint64, ctypes.c_int64]
        lib.cublasLtMatmulPreferenceCreate.argtypes = [ctypes.POINTER(_vp)]
        lib.cublasLtMatmulPreferenceSetAttribute.argtypes = [_vp, ctypes.c_int, _vp, ctypes.c_size_t]
        lib.cublasLtMatmulAlgoGetHeuristic.argtypes = [_vp, _vp, _vp, _vp, _vp, _vp, _vp, ctypes.c_int,
                                                       ctypes.POINTER(HeuristicResult), ctypes.POINTER(ctypes.c_int)]
        lib.cublasLtMatmul.argtypes = [_vp, _vp, _vp, _vp, _vp, _vp, _vp, _vp, _vp, _vp, _vp, _vp, _vp, _vp,
                                       ctypes.c_size_t, _vp]
        for fn in ("cublasLtDestroy", "cublasLtMatmulDescDestroy", "cublasLtMatrixLayoutDestroy",
                   "cublasLtMatmulPreferenceDestroy"):
            getattr(lib, fn).argtypes = [_vp]
        self.handle = _vp()
        self._check(lib.cublasLtCreate(ctypes.byref(self.handle)), "cublasLtCreate")
        self.version = None
        with contextlib.suppress(Exception):
            lib.cublasLtGetVersion.restype = ctypes.c_size_t
            self.version = int(lib.cublasLtGetVersion())

    @staticmethod
    def _check(status: int, what: str) -> None:
        if status != 0:
            raise CublasLtError(f"{what} failed with cuBLAS status {status}")

    def close(self) -> None:
        if self.handle:
            self.lib.cublasLtDestroy(self.handle)
            self.handle = _vp()


class Plan:
    """D = alpha * op(A) @ op(B) + beta * C for one shape and type set, with candidate algorithms."""

    def __init__(self, lt: CublasLt, m: int, n: int, k: int, *, a_type: int, b_type: int, c_type: int,
                 d_type: int, compute: int, scale_type: int, transa: int = OP_T, transb: int = OP_N,
                 a_scale_ptr: int | None = None, b_scale_ptr: int | None = None,
                 workspace_ptr: int = 0, workspace_bytes: int = 0, max_algos: int = 1) -> None:
        self.lt, lib = lt, lt.lib
        self.workspace_ptr, self.workspace_bytes = workspace_ptr, workspace_bytes
        self.desc = _vp()
        lt._check(lib.cublasLtMatmulDescCreate(ctypes.byref(self.desc), compute, scale_type), "MatmulDescCreate")
        for attr, val in ((DESC_TRANSA, transa), (DESC_TRANSB, transb)):
            v = ctypes.c_int32(val)
            lt._check(lib.cublasLtMatmulDescSetAttribute(self.desc, attr, ctypes.byref(v), 4), "DescSetAttribute")
        for attr, ptr in ((DESC_A_SCALE_POINTER, a_scale_ptr), (DESC_B_SCALE_POINTER, b_scale_ptr)):
            if ptr is not None:
                vp = _vp(ptr)
                lt._check(lib.cublasLtMatmulDescSetAttribute(self.desc, attr, ctypes.byref(vp), 8), "scale pointer")

        def layout(dtype: int, rows: int, cols: int) -> _vp:
            h = _vp()
            lt._check(lib.cublasLtMatrixLayoutCreate(ctypes.byref(h), dtype, rows, cols, rows), "LayoutCreate")
            return h

        a_rows, a_cols = (k, m) if transa == OP_T else (m, k)
        b_rows, b_cols = (n, k) if transb == OP_T else (k, n)
        self.a, self.b = layout(a_type, a_rows, a_cols), layout(b_type, b_rows, b_cols)
        self.c, self.d = layout(c_type, m, n), layout(d_type, m, n)
        self.pref = _vp()
        lt._check(lib.cublasLtMatmulPreferenceCreate(ctypes.byref(self.pref)), "PreferenceCreate")
        ws = ctypes.c_uint64(workspace_bytes)
        lt._check(lib.cublasLtMatmulPreferenceSetAttribute(self.pref, PREF_MAX_WORKSPACE_BYTES, ctypes.byref(ws), 8),
                  "PreferenceSetAttribute")
        results = (HeuristicResult * max_algos)()
        count = ctypes.c_int(0)
        lt._check(lib.cublasLtMatmulAlgoGetHeuristic(lt.handle, self.desc, self.a, self.b, self.c, self.d, self.pref,
                                                     max_algos, results, ctypes.byref(count)), "AlgoGetHeuristic")
        self.algos = [results[i] for i in range(count.value) if results[i].state == 0]
        if not self.algos:
            raise CublasLtError("cuBLASLt heuristic found no algorithm for this problem")

    def __call__(self, alpha_ptr: int, a_ptr: int, b_ptr: int, beta_ptr: int, c_ptr: int, d_ptr: int,
                 stream: int = 0, algo: int = 0) -> None:
        h = self.algos[algo]
        self.lt._check(self.lt.lib.cublasLtMatmul(
            self.lt.handle, self.desc, alpha_ptr, a_ptr, self.a, b_ptr, self.b, beta_ptr, c_ptr, self.c, d_ptr,
            self.d, ctypes.byref(h.algo), self.workspace_ptr, self.workspace_bytes, stream), "cublasLtMatmul")

    def close(self) -> None:
        lib = self.lt.lib
        for h in (self.a, self.b, self.c, self.d):
            lib.cublasLtMatrixLayoutDestroy(h)
        lib.cublasLtMatmulPreferenceDestroy(self.pref)
        lib.cublasLtMatmulDescDestroy(self.desc)

    def __enter__(self) -> Plan:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
