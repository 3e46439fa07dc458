"""The Python package against the reference (NumPy in double / exact integers): every dtype,
C and Fortran order, transposed and strided views, `out`, errors, lookup and tune."""

import numpy as np
import pytest

import mmtune

RNG = np.random.default_rng(7)


def bf16_bits(x):
    """float32 -> bfloat16 bits, round to nearest even (as mmtune's conversion)."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_value(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


@pytest.fixture(scope="module")
def rt():
    with mmtune.Runtime() as runtime:
        yield runtime


def views(x):
    """x itself, in Fortran order, as a transposed view of a transposed copy, and strided."""
    yield "C", x
    yield "F", np.asfortranarray(x)
    yield "T-view", np.ascontiguousarray(x.T).T
    wide = np.zeros((x.shape[0], 2 * x.shape[1] + 3), dtype=x.dtype)
    wide[:, 1:2 * x.shape[1] + 1:2] = x
    yield "strided", wide[:, 1:2 * x.shape[1] + 1:2]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1, 1, 1), (7, 5, 3), (33, 17, 65), (1, 40, 30), (40, 1, 30)])
def test_real_matmul_in_every_order(rt, dtype, shape):
    m, n, k = shape
    a = RNG.standard_normal((m, k)).astype(dtype)
    b = RNG.standard_normal((k, n)).astype(dtype)
    want = a.astype(np.float64) @ b.astype(np.float64)
    tol = 1e-4 if dtype == np.float32 else 1e-11
    for a_name, a_view in views(a):
        for b_name, b_view in views(b):
            c = rt.matmul(a_view, b_view)
            assert c.dtype == dtype and c.shape == (m, n)
            np.testing.assert_allclose(c, want, rtol=tol, atol=tol * np.sqrt(k),
                                       err_msg=f"A {a_name}, B {b_name}")


@pytest.mark.parametrize("order", ["C", "F"])
def test_out_is_written_in_place_and_nan_is_not_read(rt, order):
    a = RNG.standard_normal((9, 11)).astype(np.float32)
    b = RNG.standard_normal((11, 6)).astype(np.float32)
    out = np.full((9, 6), np.nan, dtype=np.float32, order=order)
    result = rt.matmul(a, b, out=out)
    assert result is out
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-5)
    # A column-strided view of a bigger array with a canary around it.
    big = np.full((9, 14), -7.0, dtype=np.float32)
    rt.matmul(a, b, out=big[:, 2:8])
    np.testing.assert_allclose(big[:, 2:8], a @ b, rtol=1e-5, atol=1e-5)
    assert np.all(big[:, :2] == -7.0) and np.all(big[:, 8:] == -7.0)


def test_bf16_matmul(rt):
    a = RNG.standard_normal((24, 40)).astype(np.float32)
    b = RNG.standard_normal((40, 16)).astype(np.float32)
    a16, b16 = bf16_bits(a), bf16_bits(b)
    want = bf16_value(a16).astype(np.float64) @ bf16_value(b16).astype(np.float64)
    for _, b_view in views(b16):
        c = rt.matmul(a16, b_view)
        assert c.dtype == np.float32
        np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("a_dtype", [np.int8, np.uint8])
def test_int8_matmul_is_exact(rt, a_dtype):
    info = np.iinfo(a_dtype)
    a = RNG.integers(info.min, info.max + 1, size=(13, 300), dtype=a_dtype)
    b = RNG.integers(-128, 128, size=(300, 10), dtype=np.int8)
    want = (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32)
    for _, a_view in views(a):
        for _, b_view in views(b):
            c = rt.matmul(a_view, b_view)
            assert c.dtype == np.int32
            np.testing.assert_array_equal(c, want)


def test_empty_and_zero_k(rt):
    assert rt.matmul(np.zeros((0, 3), np.float32), np.zeros((3, 4), np.float32)).shape == (0, 4)
    c = rt.matmul(np.zeros((2, 0), np.float32), np.zeros((0, 3), np.float32))
    np.testing.assert_array_equal(c, np.zeros((2, 3), np.float32))


def test_bad_input_raises_clear_errors(rt):
    f = np.zeros((3, 4), np.float32)
    with pytest.raises(TypeError, match="float16"):
        rt.matmul(f.astype(np.float16), f.T.astype(np.float16))
    with pytest.raises(TypeError, match="float32 x float64"):
        rt.matmul(f, np.zeros((4, 2), np.float64))
    with pytest.raises(ValueError, match="do not multiply"):
        rt.matmul(f, f)
    with pytest.raises(ValueError, match="2-D"):
        rt.matmul(np.zeros(3, np.float32), f)
    with pytest.raises(ValueError, match="out must be a float32 array of shape"):
        rt.matmul(f, f.T, out=np.zeros((3, 3), np.float64))
    with pytest.raises(ValueError, match="unit stride"):
        rt.matmul(f, f.T, out=np.zeros((6, 6), np.float32)[::2, ::2])
    with pytest.raises(ValueError, match="read-only"):
        out = np.zeros((3, 3), np.float32)
        out.flags.writeable = False
        rt.matmul(f, f.T, out=out)
    with pytest.raises(ValueError, match="lookup_json"):
        rt.lookup(4, 4, 4, dtype="f16")
    with pytest.raises(mmtune.Error, match="does not exist") as raised:
        mmtune.Runtime(db="/nonexistent/mmtune.db")
    assert raised.value.status == 3  # MMTUNE_NOT_FOUND
    closed = mmtune.Runtime()
    closed.close()
    with pytest.raises(ValueError, match="closed"):
        closed.matmul(f, f.T)


def test_lookup_without_a_db_is_the_default(rt):
    report = rt.lookup(128, 768, 768, dtype="f32")
    assert report["tier"] == "default"
    assert report["threads"] >= 1
    assert report["config"]


def test_tune_returns_exact_winners(tmp_path):
    db = tmp_path / "tuned.db"
    winners = mmtune.tune(["16x16x16", (1, 64, 64)], db=db, budget=0, threads=1,
                          strategy="model")
    assert [w["shape"] for w in winners] == ["16x16x16", "1x64x64"]
    assert all(w["tier"] == "exact" for w in winners), winners
    with mmtune.Runtime(db=db) as tuned:
        a = RNG.standard_normal((16, 16)).astype(np.float32)
        np.testing.assert_allclose(tuned.matmul(a, a), a @ a, rtol=1e-5, atol=1e-5)
    with pytest.raises(mmtune.Error, match="shape"):
        mmtune.tune(["0x4x4"], db=db)


def test_tune_for_packed_weights(tmp_path):
    db = tmp_path / "weights.db"
    winners = mmtune.tune(["16x48x70"], db=db, dtype="s8", budget=0, threads=1,
                          strategy="model", packed_b=True)
    assert winners[0]["tier"] == "exact", winners
    assert winners[0]["tuned"].endswith(" packed-b"), winners
    with mmtune.Runtime(db=db, max_threads=1) as tuned:
        assert tuned.lookup(16, 48, 70, dtype="s8")["tier"] == "default"
        b = RNG.integers(-3, 4, size=(70, 48)).astype(np.int8)
        weights = tuned.pack_weights(b, rows=16)
        report = weights.lookup()
        assert report["tier"] == "exact" and report["config"] == winners[0]["config"], report
        a = RNG.integers(0, 4, size=(16, 70)).astype(np.uint8)
        np.testing.assert_array_equal(tuned.matmul(a, weights),
                                      (a.astype(np.int64) @ b).astype(np.int32))
        weights.close()
        with pytest.raises(ValueError, match="closed"):
            weights.lookup()


def test_tune_for_batches(tmp_path):
    db = tmp_path / "batches.db"
    winners = mmtune.tune(["16x24x40"], db=db, budget=0, threads=1, strategy="model", batch=6)
    assert winners[0]["tier"] == "exact", winners
    assert winners[0]["tuned"].endswith(" batch:6"), winners
    with mmtune.Runtime(db=db, max_threads=1) as tuned:
        assert tuned.lookup(16, 24, 40, batch=6)["config"] == winners[0]["config"]
        assert tuned.lookup(16, 24, 40, batch=5)["tier"] == "default"
        assert tuned.lookup(16, 24, 40)["tier"] == "default"
        a = RNG.standard_normal((6, 16, 40)).astype(np.float32)
        b = RNG.standard_normal((6, 40, 24)).astype(np.float32)
        np.testing.assert_allclose(tuned.matmul(a, b), a @ b, rtol=1e-5, atol=1e-5)
        with pytest.raises(ValueError, match="batch"):
            tuned.lookup(16, 24, 40, batch=0)
        with pytest.raises(ValueError, match="together"):
            tuned.lookup(16, 24, 40, packed_b=True, batch=6)


@pytest.mark.parametrize("dtype", ["f32", "f64", "bf16", "s8"])
@pytest.mark.parametrize("rows", [1, 48])
def test_packed_weights_in_every_dtype(rt, dtype, rows):
    k, n = 70, 45
    small = RNG.integers(-3, 4, size=(k, n))
    b = {"f32": small.astype(np.float32), "f64": small.astype(np.float64),
         "bf16": bf16_bits(small.astype(np.float32)), "s8": small.astype(np.int8)}[dtype]
    weights = rt.pack_weights(np.asfortranarray(b), rows=rows)
    assert isinstance(weights, mmtune.PackedWeights)
    assert weights.shape == (k, n) and weights.nbytes >= k * n * b.itemsize
    b_copy = b.copy()
    b[...] = 0  # the weights hold their own copy
    for m in (1, 5, 48, 100):
        a_values = RNG.integers(0 if dtype == "s8" else -3, 4, size=(m, k))
        a = {"f32": a_values.astype(np.float32), "f64": a_values.astype(np.float64),
             "bf16": bf16_bits(a_values.astype(np.float32)),
             "s8": a_values.astype(np.uint8)}[dtype]
        want = a_values @ small
        c = rt.matmul(a, weights)
        assert c.shape == (m, n)
        np.testing.assert_array_equal(c, want.astype(c.dtype), err_msg=f"M = {m}")
        assert np.array_equal(rt.matmul(a, b_copy), c)
    weights.close()
    with pytest.raises(ValueError, match="closed"):
        rt.matmul(a, weights)


def test_packed_weights_refuse_mismatches(rt):
    weights = rt.pack_weights(np.ones((6, 4), dtype=np.float32), rows=2)
    with pytest.raises(TypeError, match="float32"):
        rt.matmul(np.ones((2, 6), dtype=np.float64), weights)
    with pytest.raises(ValueError, match="do not multiply"):
        rt.matmul(np.ones((2, 5), dtype=np.float32), weights)
    with pytest.raises(ValueError, match="unit column stride"):
        rt.matmul(np.ones((2, 6), dtype=np.float32), weights,
                  out=np.empty((2, 4), dtype=np.float32, order="F"))
    with pytest.raises(TypeError, match="no packed weights"):
        rt.pack_weights(np.ones((3, 3), dtype=np.int32), rows=1)
    with pytest.raises(mmtune.Error, match="rows the weights are packed for"):
        rt.pack_weights(np.ones((3, 3), dtype=np.float32), rows=0)
    out = np.full((3, 4), np.nan, dtype=np.float32)
    assert rt.matmul(np.ones((3, 6), dtype=np.float32), weights, out=out) is out
    assert np.all(out == 6.0)


def batch_views(x):
    """A stack of matrices as itself, with Fortran-ordered items, as transposed items, and as
    every other item of a bigger stack."""
    yield "C", x
    yield "F-items", np.asfortranarray(x.transpose(1, 2, 0)).transpose(2, 0, 1)
    yield "T-items", np.ascontiguousarray(x.transpose(0, 2, 1)).transpose(0, 2, 1)
    wide = np.zeros((2 * x.shape[0],) + x.shape[1:], dtype=x.dtype)
    wide[::2] = x
    yield "every-other", wide[::2]


@pytest.mark.parametrize("dtype", ["f32", "f64", "bf16", "s8"])
def test_batched_matmul_in_every_dtype_and_layout(rt, dtype):
    count, m, n, k = 5, 9, 7, 13
    a_values = RNG.integers(0 if dtype == "s8" else -3, 4, size=(count, m, k))
    b_values = RNG.integers(-3, 4, size=(count, k, n))

    def typed(values, is_b):
        if dtype == "s8":
            return values.astype(np.int8 if is_b else np.uint8)
        return {"f32": values.astype(np.float32), "f64": values.astype(np.float64),
                "bf16": bf16_bits(values.astype(np.float32))}[dtype]

    a, b = typed(a_values, False), typed(b_values, True)
    want = a_values @ b_values
    for a_name, a_view in batch_views(a):
        for b_name, b_view in batch_views(b):
            c = rt.matmul(a_view, b_view)
            assert c.shape == (count, m, n)
            np.testing.assert_array_equal(c, want.astype(c.dtype),
                                          err_msg=f"A {a_name}, B {b_name}")
    # One operand shared by every item, as numpy broadcasts it.
    np.testing.assert_array_equal(rt.matmul(a, b[2]), (a_values @ b_values[2]).astype(c.dtype))
    np.testing.assert_array_equal(rt.matmul(a[1], b), (a_values[1] @ b_values).astype(c.dtype))


def test_batched_matmul_out_and_errors(rt):
    a = RNG.standard_normal((4, 6, 5)).astype(np.float32)
    b = RNG.standard_normal((4, 5, 3)).astype(np.float32)
    want = a.astype(np.float64) @ b.astype(np.float64)
    # Column-major items inside a bigger buffer, with canaries between them.
    big = np.full((4, 8, 7), -7.0, dtype=np.float32).transpose(0, 2, 1)  # items 7 x 8, F order
    out = big[:, 1:7, 2:5]
    assert rt.matmul(a, b, out=out) is out
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    untouched = np.ones(big.shape, dtype=bool)
    untouched[:, 1:7, 2:5] = False
    assert np.all(big[untouched] == -7.0)
    assert rt.matmul(a[:0], b[:0]).shape == (0, 6, 3)
    with pytest.raises(ValueError, match="do not multiply"):
        rt.matmul(a, b[:3])
    with pytest.raises(TypeError, match="no mmtune batched GEMM"):
        rt.matmul(np.ones((2, 3, 3), np.int8), np.ones((2, 3, 3), np.int8))
    with pytest.raises(mmtune.Error, match="overlap"):  # every item of out at one place
        rt.matmul(a, b, out=np.lib.stride_tricks.as_strided(
            np.empty((6, 3), np.float32), (4, 6, 3), (0, 12, 4), writeable=True))


def reference_activation(x, activation):
    """The activations in double; gelu's tanh form written x / (1 + e^(-2u)) (e^z may overflow
    to inf for very negative x: the quotient is then the right 0)."""
    with np.errstate(over="ignore"):
        if activation == "relu":
            return np.maximum(x, 0)
        if activation == "gelu":
            u = np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)
            return x / (1 + np.exp(-2 * u))
        if activation == "silu":
            return x / (1 + np.exp(-x))
        return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64, "bf16"])
@pytest.mark.parametrize("activation", [None, "relu", "gelu", "silu"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_matmul_with_bias_and_activation(rt, dtype, activation, order):
    m, n, k = 37, 45, 29
    a = RNG.standard_normal((m, k)).astype(np.float32)
    b = RNG.standard_normal((k, n)).astype(np.float32)
    bias = RNG.standard_normal(n)
    if dtype == "bf16":
        a, b = bf16_bits(a), bf16_bits(b)
        product = bf16_value(a).astype(np.float64) @ bf16_value(b).astype(np.float64)
    else:
        a, b = a.astype(dtype), b.astype(dtype)
        product = a.astype(np.float64) @ b.astype(np.float64)
    c_dtype = np.float64 if dtype == np.float64 else np.float32
    bias = bias.astype(c_dtype)
    want = reference_activation(product + bias, activation)
    out = np.full((m, n), np.nan, dtype=c_dtype, order=order)
    got = rt.matmul(np.asarray(a, order=order), b, out=out, bias=bias, activation=activation)
    assert got is out
    tol = 1e-4 if c_dtype == np.float32 else 1e-11
    np.testing.assert_allclose(out, want, rtol=tol, atol=tol * np.sqrt(k))
    if activation is not None:  # an activation alone, without a bias
        np.testing.assert_allclose(rt.matmul(a, b, activation=activation),
                                   reference_activation(product, activation),
                                   rtol=tol, atol=tol * np.sqrt(k))


def test_int8_matmul_with_bias_and_relu_is_exact(rt):
    a = RNG.integers(0, 256, (13, 70)).astype(np.uint8)
    b = RNG.integers(-128, 128, (70, 9)).astype(np.int8)
    bias = RNG.integers(-50000, 50000, 9)
    want = np.maximum(a.astype(np.int64) @ b.astype(np.int64) + bias, 0)
    np.testing.assert_array_equal(rt.matmul(a, b, bias=bias, activation="relu"), want)


@pytest.mark.parametrize("a_dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("activation", [None, "relu", "gelu"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_matmul_dequantized(rt, a_dtype, activation, order):
    m, n, k = 33, 70, 90
    low, high = (0, 256) if a_dtype == np.uint8 else (-128, 128)
    a = RNG.integers(low, high, (m, k)).astype(a_dtype)
    b = RNG.integers(-128, 128, (k, n)).astype(np.int8)
    zero_point = 9 if a_dtype == np.uint8 else -3
    b_scales = RNG.uniform(0.001, 0.01, n).astype(np.float32)
    bias = RNG.standard_normal(n).astype(np.float32)
    product = (a.astype(np.float64) - zero_point) @ b.astype(np.float64)
    want = reference_activation(0.05 * b_scales.astype(np.float64) * product + bias, activation)
    out = np.full((m, n), np.nan, dtype=np.float32, order=order)
    got = rt.matmul_dequantized(np.asarray(a, order=order), b, 0.05, b_scales, zero_point,
                                bias=bias, activation=activation, out=out)
    assert got is out
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    # One scale for every column, no bias: a new C-ordered float32 array.
    plain = rt.matmul_dequantized(a, b, 0.05, 0.25, zero_point)
    assert plain.dtype == np.float32 and plain.flags.c_contiguous
    np.testing.assert_allclose(plain, 0.05 * 0.25 * product, rtol=1e-5, atol=1e-5)
    # The same layer with its weights packed (overwritten afterwards): the same floats.
    b_kept = b.copy()
    weights = rt.pack_weights(b, rows=m)
    b[...] = 0
    want_c = rt.matmul_dequantized(a, b_kept, 0.05, b_scales, zero_point, bias=bias,
                                   activation=activation)
    packed = rt.matmul_dequantized(np.asarray(a, order=order), weights, 0.05, b_scales,
                                   zero_point, bias=bias, activation=activation)
    np.testing.assert_array_equal(packed, want_c)
    np.testing.assert_array_equal(rt.matmul_dequantized(a, weights, 0.05, 0.25, zero_point),
                                  plain)


def test_matmul_dequantized_errors(rt):
    a = np.ones((4, 3), dtype=np.uint8)
    b = np.ones((3, 5), dtype=np.int8)
    with pytest.raises(TypeError, match="uint8 or int8 x int8"):
        rt.matmul_dequantized(a.astype(np.float32), b, 1.0, 1.0)
    with pytest.raises(ValueError, match="b_scales must be one value or 1-D with 5 values"):
        rt.matmul_dequantized(a, b, 1.0, np.ones(4))
    with pytest.raises(ValueError, match="bias must be 1-D with 5 values"):
        rt.matmul_dequantized(a, b, 1.0, 1.0, bias=np.ones(3))
    with pytest.raises(ValueError, match="unknown activation 'tanh'"):
        rt.matmul_dequantized(a, b, 1.0, 1.0, activation="tanh")
    with pytest.raises(ValueError, match="K 3 != 4"):
        rt.matmul_dequantized(a, np.ones((4, 5), dtype=np.int8), 1.0, 1.0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, "bf16"])
@pytest.mark.parametrize("activation", [None, "relu", "gelu", "silu"])
def test_packed_weights_with_bias_and_activation(rt, dtype, activation):
    n, k = 45, 29
    b = RNG.standard_normal((k, n)).astype(np.float32)
    b = bf16_bits(b) if dtype == "bf16" else b.astype(dtype)
    b_values = (bf16_value(b) if dtype == "bf16" else b).astype(np.float64)
    c_dtype = np.float64 if dtype == np.float64 else np.float32
    bias = RNG.standard_normal(n).astype(c_dtype)
    weights = rt.pack_weights(b, rows=16)
    b[...] = 0
    tol = 1e-4 if c_dtype == np.float32 else 1e-11
    for m in (1, 16, 37):
        a = RNG.standard_normal((m, k)).astype(np.float32)
        a = bf16_bits(a) if dtype == "bf16" else a.astype(dtype)
        a_values = (bf16_value(a) if dtype == "bf16" else a).astype(np.float64)
        want = reference_activation(a_values @ b_values + bias, activation)
        out = np.full((m, n), np.nan, dtype=c_dtype)
        assert rt.matmul(a, weights, out=out, bias=bias, activation=activation) is out
        np.testing.assert_allclose(out, want, rtol=tol, atol=tol * np.sqrt(k), err_msg=f"M {m}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64, "bf16", "u8s8"])
@pytest.mark.parametrize("activation", [None, "relu", "gelu"])
def test_batches_with_bias_and_activation(rt, dtype, activation):
    if dtype == "u8s8" and activation == "gelu":
        return  # int32 results take relu only (test_epilogue_errors)
    count, m, n, k = 5, 7, 19, 23
    if dtype == "u8s8":
        a = RNG.integers(0, 5, size=(count, m, k)).astype(np.uint8)
        b = RNG.integers(-4, 5, size=(count, k, n)).astype(np.int8)
        bias = RNG.integers(-50, 50, size=n).astype(np.int32)
        want = reference_activation(a.astype(np.int64) @ b + bias, activation)
        np.testing.assert_array_equal(rt.matmul(a, b, bias=bias, activation=activation), want)
        return
    a = RNG.standard_normal((count, m, k)).astype(np.float32)
    b = RNG.standard_normal((k, n)).astype(np.float32)  # shared by every item
    if dtype == "bf16":
        a, b = bf16_bits(a), bf16_bits(b)
        values = [bf16_value(x).astype(np.float64) for x in (a, b)]
    else:
        a, b = a.astype(dtype), b.astype(dtype)
        values = [x.astype(np.float64) for x in (a, b)]
    c_dtype = np.float64 if dtype == np.float64 else np.float32
    bias = RNG.standard_normal(n).astype(c_dtype)
    want = reference_activation(values[0] @ values[1] + bias, activation)
    tol = 1e-4 if c_dtype == np.float32 else 1e-11
    out = np.full((count, m, n), np.nan, dtype=c_dtype)
    assert rt.matmul(a, b, out=out, bias=bias, activation=activation) is out
    np.testing.assert_allclose(out, want, rtol=tol, atol=tol * np.sqrt(k))


def test_packed_weights_epilogue_and_dequantization_errors(rt):
    floats = rt.pack_weights(np.ones((3, 5), dtype=np.float32), rows=4)
    with pytest.raises(TypeError, match="uint8 or int8 x int8"):
        rt.matmul_dequantized(np.ones((4, 3), dtype=np.uint8), floats, 1.0, 1.0)
    with pytest.raises(ValueError, match="bias must be 1-D with 5 values"):
        rt.matmul(np.ones((4, 3), dtype=np.float32), floats, bias=np.ones(4))
    int8 = rt.pack_weights(np.ones((3, 5), dtype=np.int8), rows=4)
    with pytest.raises(mmtune.Error, match="gelu needs a floating-point C"):
        rt.matmul(np.ones((4, 3), dtype=np.uint8), int8, activation="gelu")
    with pytest.raises(ValueError, match="K 4 != 3"):
        rt.matmul_dequantized(np.ones((2, 4), dtype=np.uint8), int8, 1.0, 1.0)
    with pytest.raises(ValueError, match="unit column stride"):
        rt.matmul_dequantized(np.ones((2, 3), dtype=np.uint8), int8, 1.0, 1.0,
                              out=np.empty((2, 5), dtype=np.float32, order="F"))
    np.testing.assert_array_equal(
        rt.matmul(np.ones((2, 3), dtype=np.uint8), int8, bias=np.arange(5), activation="relu"),
        np.tile(np.arange(5) + 3, (2, 1)))


def test_epilogue_errors(rt):
    a = np.ones((4, 3), dtype=np.float32)
    b = np.ones((3, 5), dtype=np.float32)
    with pytest.raises(ValueError, match="unknown activation 'tanh'"):
        rt.matmul(a, b, activation="tanh")
    with pytest.raises(ValueError, match="bias must be 1-D with 5 values"):
        rt.matmul(a, b, bias=np.ones(4))
    with pytest.raises(ValueError, match="bias must be 1-D with 5 values"):
        rt.matmul(np.ones((2, 4, 3), dtype=np.float32), b, bias=np.ones(4))
    with pytest.raises(TypeError, match="no fused epilogue"):
        rt.matmul(np.ones((4, 3), dtype=np.int8), np.ones((3, 5), dtype=np.int8), bias=np.ones(5))
    with pytest.raises(mmtune.Error, match="gelu needs a floating-point C"):
        rt.matmul(np.ones((4, 3), dtype=np.uint8), np.ones((3, 5), dtype=np.int8),
                  activation="gelu")
