"""Finds and declares libmmtune.so and the mmtune CLI."""

import ctypes
import os
import shutil

try:  # written by `cmake --install`: where the library and the CLI lie, relative to this file
    from mmtune._install_paths import BINDIR, LIBDIR
except ImportError:  # the source tree
    BINDIR = LIBDIR = None

_HERE = os.path.dirname(os.path.abspath(__file__))


def _installed(variable, directory, name):
    """The file `name` from the environment variable, else from the install's `directory`
    (relative to this package), else None."""
    if os.environ.get(variable):
        return os.environ[variable]
    if directory is not None:
        candidate = os.path.join(_HERE, directory, name)
        if os.path.exists(candidate):
            return candidate
    return None


def _library_path():
    """libmmtune.so: MMTUNE_LIBRARY, the install's, or the system library path's."""
    return _installed("MMTUNE_LIBRARY", LIBDIR, "libmmtune.so.0") or "libmmtune.so.0"


def cli_path():
    """The mmtune executable: MMTUNE_CLI, the install's, or the one on PATH."""
    found = _installed("MMTUNE_CLI", BINDIR, "mmtune") or shutil.which("mmtune")
    if found is None:
        raise FileNotFoundError("the mmtune CLI is not found: set MMTUNE_CLI or put it on PATH")
    return found


_i64 = ctypes.c_int64
_int = ctypes.c_int
_p = ctypes.c_void_p


class Options(ctypes.Structure):
    """mmtune_options of mmtune/mmtune.h."""
    _fields_ = [("db_path", ctypes.c_char_p), ("max_threads", _int),
                ("allow_compatible", _int), ("record_path", ctypes.c_char_p)]


class Epilogue(ctypes.Structure):
    """mmtune_epilogue of mmtune/mmtune.h."""
    _fields_ = [("bias_kind", _int), ("bias", _p), ("activation", _int)]


class Dequantization(ctypes.Structure):
    """mmtune_dequantization of mmtune/mmtune.h."""
    _fields_ = [("a_scale", ctypes.c_float), ("a_zero_point", ctypes.c_int32),
                ("b_scales", _p), ("b_scale", ctypes.c_float)]


def load():
    lib = ctypes.CDLL(_library_path())
    lib.mmtune_options_init.argtypes = [ctypes.POINTER(Options)]
    lib.mmtune_options_init.restype = None
    lib.mmtune_open_with_options.argtypes = [ctypes.POINTER(Options), ctypes.POINTER(_p)]
    lib.mmtune_open_with_options.restype = _int
    lib.mmtune_close.argtypes = [_p]
    lib.mmtune_close.restype = None
    lib.mmtune_last_error.argtypes = []
    lib.mmtune_last_error.restype = ctypes.c_char_p
    gemm_head = [_p, _int, _int, _int, _i64, _i64, _i64]
    for name, scalar in (("mmtune_sgemm", ctypes.c_float), ("mmtune_dgemm", ctypes.c_double),
                         ("mmtune_gemm_bf16", ctypes.c_float),
                         ("mmtune_gemm_u8s8s32", ctypes.c_int32),
                         ("mmtune_gemm_s8s8s32", ctypes.c_int32)):
        function = getattr(lib, name)
        function.argtypes = gemm_head + [scalar, _p, _i64, _p, _i64, scalar, _p, _i64]
        function.restype = _int
    for name, scalar in (("mmtune_sgemm_epilogue", ctypes.c_float),
                         ("mmtune_dgemm_epilogue", ctypes.c_double),
                         ("mmtune_gemm_bf16_epilogue", ctypes.c_float),
                         ("mmtune_gemm_u8s8s32_epilogue", ctypes.c_int32)):
        function = getattr(lib, name)
        function.argtypes = gemm_head + [scalar, _p, _i64, _p, _i64, scalar, _p, _i64,
                                         ctypes.POINTER(Epilogue)]
        function.restype = _int
    for name in ("mmtune_gemm_u8s8f32", "mmtune_gemm_s8s8f32"):
        function = getattr(lib, name)
        function.argtypes = gemm_head + [_p, _i64, _p, _i64, _p, _i64,
                                         ctypes.POINTER(Dequantization), ctypes.POINTER(Epilogue)]
        function.restype = _int
    for name, scalar in (("mmtune_sgemm_batch_strided", ctypes.c_float),
                         ("mmtune_dgemm_batch_strided", ctypes.c_double),
                         ("mmtune_gemm_bf16_batch_strided", ctypes.c_float),
                         ("mmtune_gemm_u8s8s32_batch_strided", ctypes.c_int32)):
        function = getattr(lib, name)
        function.argtypes = gemm_head + [scalar, _p, _i64, _i64, _p, _i64, _i64, scalar, _p,
                                         _i64, _i64, _i64]
        function.restype = _int
        fused = getattr(lib, name + "_epilogue")
        fused.argtypes = function.argtypes + [ctypes.POINTER(Epilogue)]
        fused.restype = _int
    for name, scalar in (("f32", ctypes.c_float), ("f64", ctypes.c_double),
                         ("bf16", ctypes.c_float), ("s8", ctypes.c_int32)):
        pack = getattr(lib, "mmtune_pack_b_" + name)
        pack.argtypes = [_p, _int, _int, _i64, _i64, _i64, _p, _i64, ctypes.POINTER(_p)]
        pack.restype = _int
        gemm = getattr(lib, "mmtune_gemm_" + ("u8s8s32" if name == "s8" else name) + "_packed")
        gemm.argtypes = [_p, _int, _int, _i64, scalar, _p, _i64, _p, scalar, _p, _i64]
        gemm.restype = _int
        fused = getattr(lib, "mmtune_gemm_" + ("u8s8s32" if name == "s8" else name) +
                        "_packed_epilogue")
        fused.argtypes = gemm.argtypes + [ctypes.POINTER(Epilogue)]
        fused.restype = _int
    for name in ("mmtune_gemm_u8s8f32_packed", "mmtune_gemm_s8s8f32_packed"):
        function = getattr(lib, name)
        function.argtypes = [_p, _int, _int, _i64, _p, _i64, _p, _p, _i64,
                             ctypes.POINTER(Dequantization), ctypes.POINTER(Epilogue)]
        function.restype = _int
    lib.mmtune_packed_b_bytes.argtypes = [_p]
    lib.mmtune_packed_b_bytes.restype = _i64
    lib.mmtune_packed_b_free.argtypes = [_p]
    lib.mmtune_packed_b_free.restype = None
    for function in (lib.mmtune_lookup_json, lib.mmtune_lookup_packed_b_json):
        function.argtypes = [_p, ctypes.c_char_p, _int, _int, _int, _i64, _i64, _i64,
                             ctypes.c_char_p, _i64]
        function.restype = _i64
    lib.mmtune_lookup_batch_json.argtypes = [_p, ctypes.c_char_p, _int, _int, _int, _i64, _i64,
                                             _i64, _i64, ctypes.c_char_p, _i64]
    lib.mmtune_lookup_batch_json.restype = _i64
    lib.mmtune_packed_b_lookup_json.argtypes = [_p, ctypes.c_char_p, _i64]
    lib.mmtune_packed_b_lookup_json.restype = _i64
    return lib
