"""Runtime, matmul, lookup and tune over the C API."""

import ctypes
import json
import os
import subprocess

import numpy as np

from mmtune import _library

_ROW_MAJOR, _COL_MAJOR = 101, 102
_NO_TRANS, _TRANS = 111, 112

# (A dtype, B dtype) -> (C function, C dtype, scalar type, dtype name for lookup)
_GEMMS = {
    (np.dtype(np.float32), np.dtype(np.float32)): ("mmtune_sgemm", np.float32, float, "f32"),
    (np.dtype(np.float64), np.dtype(np.float64)): ("mmtune_dgemm", np.float64, float, "f64"),
    (np.dtype(np.uint16), np.dtype(np.uint16)): ("mmtune_gemm_bf16", np.float32, float, "bf16"),
    (np.dtype(np.uint8), np.dtype(np.int8)): ("mmtune_gemm_u8s8s32", np.int32, int, "s8"),
    (np.dtype(np.int8), np.dtype(np.int8)): ("mmtune_gemm_s8s8s32", np.int32, int, "s8"),
}

# B dtype -> (C name of the packed GEMM's dtype, the A dtype it takes, C dtype, scalar type)
_PACKED = {
    np.dtype(np.float32): ("f32", np.dtype(np.float32), np.float32, float),
    np.dtype(np.float64): ("f64", np.dtype(np.float64), np.float64, float),
    np.dtype(np.uint16): ("bf16", np.dtype(np.uint16), np.float32, float),
    np.dtype(np.int8): ("s8", np.dtype(np.uint8), np.int32, int),
}

_lib = None


def _c():
    global _lib
    if _lib is None:
        _lib = _library.load()
    return _lib


class Error(RuntimeError):
    """A failure the library reported; `status` is the C API's mmtune_status code."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status


def _check(status):
    if status != 0:
        raise Error(_c().mmtune_last_error().decode(), status)


def _operand(x, layout):
    """(transpose flag, leading dimension, array) describing matrix x in `layout` terms without
    a copy where one of its strides is the element size; otherwise of a C-ordered copy."""
    rows, cols = x.shape
    item = x.itemsize
    s0, s1 = x.strides
    # In row-major terms the storage of op(X) = X runs along s1 (no transpose) or along s0
    # (transposed); column-major the other way round.
    along, across = (s1, s0) if layout == _ROW_MAJOR else (s0, s1)
    lines, length = (rows, cols) if layout == _ROW_MAJOR else (cols, rows)

    if x.size == 0:  # K = 0: nothing is read
        return _NO_TRANS, max(1, length), x

    def fits(unit_stride, line_stride, n_lines, line_length):
        unit = unit_stride == item or line_length <= 1
        spaced = line_stride >= 0 and line_stride % item == 0 and \
            (n_lines <= 1 or line_stride // item >= max(1, line_length))
        return unit and spaced

    if fits(along, across, lines, length):
        return _NO_TRANS, max(1, length, across // item if lines > 1 else 0), x
    if fits(across, along, length, lines):
        return _TRANS, max(1, lines, along // item if length > 1 else 0), x
    copy = np.ascontiguousarray(x) if layout == _ROW_MAJOR else np.asfortranarray(x)
    return _operand(copy, layout)


# The strided batch of each GEMM of _GEMMS that has one.
_BATCHED = {
    "mmtune_sgemm": "mmtune_sgemm_batch_strided",
    "mmtune_dgemm": "mmtune_dgemm_batch_strided",
    "mmtune_gemm_bf16": "mmtune_gemm_bf16_batch_strided",
    "mmtune_gemm_u8s8s32": "mmtune_gemm_u8s8s32_batch_strided",
}


# The epilogue form of each GEMM of _GEMMS that has one.
_WITH_EPILOGUE = {
    "mmtune_sgemm": "mmtune_sgemm_epilogue",
    "mmtune_dgemm": "mmtune_dgemm_epilogue",
    "mmtune_gemm_bf16": "mmtune_gemm_bf16_epilogue",
    "mmtune_gemm_u8s8s32": "mmtune_gemm_u8s8s32_epilogue",
}
_ACTIVATIONS = {None: 0, "relu": 1, "gelu": 2, "silu": 3}


def _batched_operand(x, layout, count):
    """(transpose flag, leading dimension, item stride in elements, array) for the items of x:
    a 3-D array of `count` matrices, or a 2-D one that every item shares (stride 0). In place
    where every item is laid out as the first one, a fixed number of elements apart; otherwise
    of a C-ordered copy."""
    if x.ndim == 2:
        trans, ld, x = _operand(x, layout)
        return trans, ld, 0, x
    item = x.itemsize
    step = x.strides[0]
    if count <= 1 or (step >= 0 and step % item == 0):
        first = x[0]
        trans, ld, kept = _operand(first, layout)
        if kept is first:
            return trans, ld, (step // item if count > 1 else 0), x
    return _batched_operand(np.ascontiguousarray(x), layout, count)


def _output(out, m, n, dtype):
    """(out, layout, ldc): `out` checked, or a new C-ordered array, and how the GEMM writes it
    in place; layout None where there is nothing to write (M or N = 0)."""
    if out is None:
        out = np.empty((m, n), dtype=dtype)
    else:
        if not isinstance(out, np.ndarray) or out.dtype != np.dtype(dtype) or \
                out.shape != (m, n):
            raise ValueError(f"out must be a {np.dtype(dtype)} array of shape {(m, n)}")
        if not out.flags.writeable:
            raise ValueError("out is read-only")
    if m == 0 or n == 0:
        return out, None, None
    found = _c_layout(m, n, out.itemsize, *out.strides)
    if found is None:
        raise ValueError("out must have one unit stride (C or Fortran order, or a view of "
                         "one), since the GEMM writes it in place")
    return (out, *found)


def _epilogue(bias, activation, n, dtype):
    """(mmtune_epilogue, the bias array it points to): a bias per column of N values converted
    to `dtype` (None: none) and an activation name."""
    epilogue = _library.Epilogue(0, None, _ACTIVATIONS[activation])
    if bias is not None:
        bias = np.ascontiguousarray(bias, dtype=dtype)
        if bias.shape != (n,):
            raise ValueError(f"bias must be 1-D with {n} values (one per column), got "
                             f"shape {bias.shape}")
        epilogue.bias_kind, epilogue.bias = 1, bias.ctypes.data
    return epilogue, bias


def _packed_shape(a, b):
    """(M, N) of a @ b for a 2-D a and a 2-D b or PackedWeights, whose K must agree."""
    (m, k), (k2, n) = a.shape, b.shape
    if k != k2:
        raise ValueError(f"shapes {a.shape} and {b.shape} do not multiply (K {k} != {k2})")
    return m, n


def _packed_output(out, m, n, dtype):
    """(out, ldc) for a GEMM with packed weights, which writes row-major: `out` checked (unit
    column stride), or a new C-ordered array; ldc None where there is nothing to write."""
    if out is None:
        out = np.empty((m, n), dtype=dtype)
    elif not isinstance(out, np.ndarray) or out.dtype != np.dtype(dtype) or \
            out.shape != (m, n) or not out.flags.writeable or \
            (m > 1 and n > 0 and out.strides[1] != out.itemsize):
        raise ValueError(f"out must be a writeable {np.dtype(dtype)} array of shape "
                         f"{(m, n)} with unit column stride (weights are packed row-major)")
    if m == 0 or n == 0:
        return out, None
    return out, max(1, n, out.strides[0] // out.itemsize if m > 1 else 0)


def _c_layout(m, n, item, row_stride, col_stride):
    """(layout, ldc) of an m x n output with these strides (bytes), written in place; None when
    neither stride is the element size (or the other is not a whole number of elements, or the
    lines would overlap)."""
    if (col_stride == item or n == 1) and row_stride % item == 0 and \
            (m == 1 or row_stride // item >= n):
        return _ROW_MAJOR, max(1, n, row_stride // item if m > 1 else 0)
    if (row_stride == item or m == 1) and col_stride % item == 0 and \
            (n == 1 or col_stride // item >= m):
        return _COL_MAJOR, max(1, m, col_stride // item if n > 1 else 0)
    return None


class PackedWeights:
    """A weight matrix B (K x N) packed once by Runtime.pack_weights, for matmul(a, weights)
    calls that then skip packing it (docs/runtime.md, Packed weights). It holds its own copy:
    changing or freeing the array it came from does not change it. close() frees it early."""

    def __init__(self, handle, b_dtype, shape):
        self._handle = handle
        self.dtype = b_dtype
        self.shape = shape

    @property
    def nbytes(self):
        """Bytes of the packed copy."""
        return int(_c().mmtune_packed_b_bytes(self._handle)) if self._handle else 0

    def lookup(self):
        """What matmul with these weights runs, chosen when they were packed, as
        Runtime.lookup reports it."""
        handle = self._live()
        return _json_of(lambda buffer, size: _c().mmtune_packed_b_lookup_json(handle, buffer,
                                                                              size))

    def close(self):
        if getattr(self, "_handle", None):
            _c().mmtune_packed_b_free(self._handle)
            self._handle = None

    def __del__(self):
        self.close()

    def _live(self):
        if not self._handle:
            raise ValueError("these mmtune.PackedWeights are closed")
        return self._handle


class Runtime:
    """An mmtune runtime: the winners of `db` (a `mmtune tune` DB or an export) for this machine;
    without a db, the analytical defaults. `max_threads` = 0: every core this process may use
    (MMTUNE_NUM_THREADS caps it); `allow_compatible`: also the winners of machines with the same
    ISA level and caches. Use as a context manager, or close() it."""

    def __init__(self, db=None, max_threads=0, allow_compatible=False):
        self._handle = None
        options = _library.Options()
        _c().mmtune_options_init(ctypes.byref(options))
        options.db_path = None if db is None else os.fsencode(db)
        options.max_threads = int(max_threads)
        options.allow_compatible = int(bool(allow_compatible))
        handle = ctypes.c_void_p()
        _check(_c().mmtune_open_with_options(ctypes.byref(options), ctypes.byref(handle)))
        self._handle = handle

    def close(self):
        if getattr(self, "_handle", None):
            _c().mmtune_close(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def _live(self):
        if not self._handle:
            raise ValueError("this mmtune.Runtime is closed")
        return self._handle

    def pack_weights(self, b, rows):
        """B (a 2-D float32, float64, uint16 bfloat16 bits or int8 array, any order or view)
        packed once for matmul(a, weights) calls whose A has about `rows` rows (the config is
        chosen for that many; any number may use the weights). int8 weights take uint8 A (the
        u8s8s32 GEMM)."""
        b = np.asarray(b)
        if b.ndim != 2:
            raise ValueError(f"weights must be a 2-D array, got {b.ndim}-D")
        packed = _PACKED.get(b.dtype)
        if packed is None:
            raise TypeError(f"no packed weights of {b.dtype}: use float32, float64, uint16 "
                            "(bfloat16 bits) or int8")
        k, n = b.shape
        tb, ldb, b = _operand(b, _ROW_MAJOR)
        handle = ctypes.c_void_p()
        _check(getattr(_c(), "mmtune_pack_b_" + packed[0])(
            self._live(), _ROW_MAJOR, tb, int(rows), n, k, b.ctypes.data, ldb,
            ctypes.byref(handle)))
        return PackedWeights(handle, b.dtype, (k, n))

    def _matmul_packed(self, a, weights, out, bias, activation):
        name, a_dtype, c_dtype, scalar = _PACKED[weights.dtype]
        a = np.asarray(a)
        if a.ndim != 2 or a.dtype != a_dtype:
            raise TypeError(f"{weights.dtype} weights multiply a 2-D {a_dtype} array, not a "
                            f"{a.ndim}-D {a.dtype} one")
        m, n = _packed_shape(a, weights)
        fused = bias is not None or activation is not None
        epilogue, bias = _epilogue(bias, activation, n, c_dtype)
        out, ldc = _packed_output(out, m, n, c_dtype)
        if ldc is None:
            return out
        ta, lda, a = _operand(a, _ROW_MAJOR)
        function = "mmtune_gemm_" + ("u8s8s32" if name == "s8" else name) + "_packed"
        args = [self._live(), _ROW_MAJOR, ta, m, scalar(1), a.ctypes.data, lda, weights._live(),
                scalar(0), out.ctypes.data, ldc]
        if fused:
            _check(getattr(_c(), function + "_epilogue")(*args, ctypes.byref(epilogue)))
        else:
            _check(getattr(_c(), function)(*args))
        return out

    def matmul(self, a, b, out=None, bias=None, activation=None):
        """out = a @ b. a and b: 2-D arrays of float32, float64, bfloat16 bits (uint16, giving
        float32), int8 x int8 or uint8 x int8 (giving int32, exact modulo 2^32), C or Fortran
        order or transposed views, read in place where one stride is the element size (copied
        otherwise). b may also be PackedWeights (pack_weights); out must then have a unit column
        stride. out: None (a new C-ordered array) or an array of the result's shape and dtype
        with one unit stride, overwritten.

        A fused epilogue, 2-D calls and packed weights (docs/runtime.md, Fused epilogues): out =
        activation(a @ b + bias), bias a 1-D array of N values (converted to out's dtype),
        activation None, "relu", "gelu" (tanh form) or "silu"; int32 results take relu only,
        and int8 x int8 takes none.

        A batch: a and b 3-D stacks of matrices (count x M x K and count x K x N, the same
        count), or one of them 2-D and shared by every item as numpy broadcasts it; one call
        (docs/runtime.md, Batches). Items are read in place where each is laid out like the
        first, a fixed stride apart; out is then count x M x N with items a fixed stride apart
        (not int8 x int8). bias and activation apply to every item, the same bias to each."""
        fused = bias is not None or activation is not None
        if activation not in _ACTIVATIONS:
            raise ValueError(f"unknown activation {activation!r} (expected None, 'relu', "
                             "'gelu' or 'silu')")
        if isinstance(b, PackedWeights):
            return self._matmul_packed(a, b, out, bias, activation)
        a = np.asarray(a)
        b = np.asarray(b)
        if a.ndim in (2, 3) and b.ndim in (2, 3) and 3 in (a.ndim, b.ndim):
            return self._matmul_batch(a, b, out, bias if fused else None, activation, fused)
        if a.ndim != 2 or b.ndim != 2:
            raise ValueError(f"matmul needs 2-D arrays or stacks of them (3-D), got {a.ndim}-D "
                             f"and {b.ndim}-D")
        gemm = _GEMMS.get((a.dtype, b.dtype))
        if gemm is None:
            raise TypeError(f"no mmtune GEMM for {a.dtype} x {b.dtype}: use float32, float64, "
                            "uint16 (bfloat16 bits), int8 x int8 or uint8 x int8")
        function, c_dtype, scalar, _ = gemm
        (m, k), (k2, n) = a.shape, b.shape
        if k != k2:
            raise ValueError(f"shapes {a.shape} and {b.shape} do not multiply (K {k} != {k2})")
        epilogue = None
        if fused:
            if function not in _WITH_EPILOGUE:
                raise TypeError(f"no fused epilogue for {a.dtype} x {b.dtype}")
            epilogue, bias = _epilogue(bias, activation, n, c_dtype)
        out, layout, ldc = _output(out, m, n, c_dtype)
        if layout is None:
            return out
        ta, lda, a = _operand(a, layout)
        tb, ldb, b = _operand(b, layout)
        args = [self._live(), layout, ta, tb, m, n, k, scalar(1), a.ctypes.data, lda,
                b.ctypes.data, ldb, scalar(0), out.ctypes.data, ldc]
        if epilogue is None:
            _check(getattr(_c(), function)(*args))
        else:
            _check(getattr(_c(), _WITH_EPILOGUE[function])(*args, ctypes.byref(epilogue)))
        return out

    def matmul_dequantized(self, a, b, a_scale, b_scales, a_zero_point=0, bias=None,
                           activation=None, out=None):
        """A quantized linear layer (docs/runtime.md, Quantized layers): out = activation(
        a_scale * b_scales[j] * ((a - a_zero_point) @ b)[:, j] + bias[j]) in float32, the 8-bit
        product dequantized in the GEMM's pass. a: 2-D uint8 or int8; b: 2-D int8, or int8
        PackedWeights (pack_weights; out must then have a unit column stride); b_scales: one
        float or a 1-D array of N (one per column); bias: None or N floats; activation None,
        "relu", "gelu" or "silu". out: None (a new C-ordered float32 array) or a float32 array
        of shape (M, N) with one unit stride, overwritten."""
        a = np.asarray(a)
        packed = isinstance(b, PackedWeights)
        if not packed:
            b = np.asarray(b)
        if a.ndim != 2 or (not packed and b.ndim != 2):
            raise ValueError(f"matmul_dequantized needs 2-D arrays, got {a.ndim}-D and "
                             f"{len(b.shape)}-D")
        if a.dtype not in (np.uint8, np.int8) or b.dtype != np.int8:
            raise TypeError(f"matmul_dequantized takes uint8 or int8 x int8, got {a.dtype} x "
                            f"{b.dtype}")
        if activation not in _ACTIVATIONS:
            raise ValueError(f"unknown activation {activation!r} (expected None, 'relu', "
                             "'gelu' or 'silu')")
        m, n = _packed_shape(a, b)
        k = a.shape[1]
        dequantization = _library.Dequantization(float(a_scale), int(a_zero_point), None, 1.0)
        if np.ndim(b_scales) == 0:
            dequantization.b_scale = float(b_scales)
        else:
            b_scales = np.ascontiguousarray(b_scales, dtype=np.float32)
            if b_scales.shape != (n,):
                raise ValueError(f"b_scales must be one value or 1-D with {n} values (one per "
                                 f"column), got shape {b_scales.shape}")
            dequantization.b_scales = b_scales.ctypes.data
        epilogue, bias = _epilogue(bias, activation, n, np.float32)
        function = "mmtune_gemm_u8s8f32" if a.dtype == np.uint8 else "mmtune_gemm_s8s8f32"
        if packed:
            out, ldc = _packed_output(out, m, n, np.float32)
            if ldc is None:
                return out
            ta, lda, a = _operand(a, _ROW_MAJOR)
            _check(getattr(_c(), function + "_packed")(
                self._live(), _ROW_MAJOR, ta, m, a.ctypes.data, lda, b._live(), out.ctypes.data,
                ldc, ctypes.byref(dequantization), ctypes.byref(epilogue)))
            return out
        out, layout, ldc = _output(out, m, n, np.float32)
        if layout is None:
            return out
        ta, lda, a = _operand(a, layout)
        tb, ldb, b = _operand(b, layout)
        _check(getattr(_c(), function)(
            self._live(), layout, ta, tb, m, n, k, a.ctypes.data, lda, b.ctypes.data, ldb,
            out.ctypes.data, ldc, ctypes.byref(dequantization), ctypes.byref(epilogue)))
        return out

    def _matmul_batch(self, a, b, out, bias, activation, fused):
        gemm = _GEMMS.get((a.dtype, b.dtype))
        if gemm is None or gemm[0] not in _BATCHED:
            raise TypeError(f"no mmtune batched GEMM for {a.dtype} x {b.dtype}: use float32, "
                            "float64, uint16 (bfloat16 bits) or uint8 x int8")
        function, c_dtype, scalar, _ = gemm
        counts = {x.shape[0] for x in (a, b) if x.ndim == 3}
        if len(counts) != 1:
            raise ValueError(f"batches of {a.shape[0]} and {b.shape[0]} items do not multiply")
        count = counts.pop()
        (m, k), (k2, n) = a.shape[-2:], b.shape[-2:]
        if k != k2:
            raise ValueError(f"shapes {a.shape} and {b.shape} do not multiply (K {k} != {k2})")
        epilogue = None
        if fused:
            epilogue, bias = _epilogue(bias, activation, n, c_dtype)
        if out is None:
            out = np.empty((count, m, n), dtype=c_dtype)
        elif not isinstance(out, np.ndarray) or out.dtype != np.dtype(c_dtype) or \
                out.shape != (count, m, n) or not out.flags.writeable:
            raise ValueError(f"out must be a writeable {np.dtype(c_dtype)} array of shape "
                             f"{(count, m, n)}")
        if count == 0 or m == 0 or n == 0:
            return out
        item = out.itemsize
        s0 = out.strides[0]
        found = _c_layout(m, n, item, *out.strides[1:])
        if found is None:
            raise ValueError("out's items must have one unit stride, since the GEMM writes "
                             "them in place")
        layout, ldc = found
        if count > 1 and (s0 < 0 or s0 % item != 0):
            raise ValueError("out's items must lie a fixed, non-negative number of elements "
                             "apart")
        stride_c = s0 // item if count > 1 else 0
        ta, lda, stride_a, a = _batched_operand(a, layout, count)
        tb, ldb, stride_b, b = _batched_operand(b, layout, count)
        args = [self._live(), layout, ta, tb, m, n, k, scalar(1), a.ctypes.data, lda, stride_a,
                b.ctypes.data, ldb, stride_b, scalar(0), out.ctypes.data, ldc, stride_c, count]
        if epilogue is None:
            _check(getattr(_c(), _BATCHED[function])(*args))
        else:
            _check(getattr(_c(), _BATCHED[function] + "_epilogue")(*args,
                                                                   ctypes.byref(epilogue)))
        return out

    def lookup(self, m, n, k, dtype="f32", layout="row", trans="NN", packed_b=False, batch=1):
        """What the runtime runs for the problem: a dict with tier ("exact", "bucket",
        "nearest", "default"), config (one line), config_json, threads, threads_reason, tuned,
        bucket_range (the tuned range of the bucket tier, else None), runs (packed_b: the
        config a GEMM of M rows runs on the weights' panels where it is another, else None),
        gflops. `packed_b`: what weights of this problem packed with pack_weights run;
        `batch`: what a batch of that many GEMMs (matmul of 3-D stacks) runs."""
        if packed_b and batch != 1:
            raise ValueError("packed_b and batch do not go together")
        if layout not in ("row", "col"):
            raise ValueError(f"layout must be 'row' or 'col', not {layout!r}")
        if len(trans) != 2 or any(t not in "NT" for t in trans):
            raise ValueError(f"trans must be NN, NT, TN or TT, not {trans!r}")
        flags = [_TRANS if t == "T" else _NO_TRANS for t in trans]
        args = [self._live(), str(dtype).encode(), _ROW_MAJOR if layout == "row" else _COL_MAJOR,
                flags[0], flags[1], int(m), int(n), int(k)]
        if batch != 1:
            return _json_of(lambda buffer, size: _c().mmtune_lookup_batch_json(
                *args, int(batch), buffer, size))
        function = _c().mmtune_lookup_packed_b_json if packed_b else _c().mmtune_lookup_json
        return _json_of(lambda buffer, size: function(*args, buffer, size))


def _json_of(write):
    """The JSON object a C function writes snprintf-style: write(buffer, size) returns the
    whole text's length, or -1 with the error set."""
    length = write(None, 0)
    if length < 0:
        raise ValueError(_c().mmtune_last_error().decode())
    buffer = ctypes.create_string_buffer(length + 1)
    write(buffer, length + 1)
    return json.loads(buffer.value.decode())


def _shape_text(shape):
    if isinstance(shape, str):
        return shape
    m, n, k = shape
    return f"{int(m)}x{int(n)}x{int(k)}"


def tune(shapes, db, dtype="f32", budget=None, threads=None, strategy=None, packed_b=False,
         batch=1, extra_args=()):
    """Runs `mmtune tune` on this machine for `shapes` ("MxNxK" strings or (m, n, k) tuples)
    into `db` and returns each shape's winner as Runtime.lookup reports it, with "shape" added.
    `packed_b`: tune for weights packed once (`tune --packed-b`), the winners pack_weights
    then runs; `batch`: tune batches of that many GEMMs (`tune --batch`), the winners matmul
    of 3-D stacks of that many items runs. Raises Error with the CLI's message when the tune
    fails."""
    texts = [_shape_text(s) for s in shapes]
    if not texts:
        raise ValueError("tune needs at least one shape")
    command = [_library.cli_path(), "tune", "--db", os.fspath(db), "--shapes", ",".join(texts),
               "--dtype", str(dtype)]
    if budget is not None:
        command += ["--budget", str(budget)]
    if threads is not None:
        command += ["--threads", str(threads)]
    if strategy is not None:
        command += ["--strategy", str(strategy)]
    if packed_b:
        command.append("--packed-b")
    if batch != 1:
        command += ["--batch", str(int(batch))]
    command += [str(arg) for arg in extra_args]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        raise Error(lines[-1] if lines else f"mmtune tune exited {done.returncode}",
                    done.returncode)
    winners = []
    with Runtime(db=db) as runtime:
        for text in texts:
            m, n, k = (int(v) for v in text.lower().split("x"))
            winner = runtime.lookup(m, n, k, dtype=dtype, packed_b=packed_b, batch=batch)
            winner["shape"] = text
            winners.append(winner)
    return winners
