"""What `jax-conformance diff --adapters jax,reference` found the reference doing differently from
JAX 0.10.2, each pinned here as JAX does it (seen on JAX 0.10.2 with the diff's --program runs)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

from .conftest import with_mutant


def test_python_numbers_make_weak_arrays(ref: Any) -> None:
    jnp = ref.numpy
    assert [jnp.array(1).weak_type, jnp.asarray(2.5).weak_type, jnp.array(1 + 2j).weak_type] == [
        True
    ] * 3
    assert [
        jnp.array(True).weak_type,
        jnp.array([1, 2]).weak_type,
        jnp.array(1, dtype="int32").weak_type,
        jnp.array(np.int32(1)).weak_type,
    ] == [False] * 4
    w = jnp.array(1.5)
    assert jnp.array(w).weak_type and not jnp.array(w, dtype="float32").weak_type
    assert jnp.full((2,), 2).weak_type and not jnp.full((2,), 2.0, dtype="float32").weak_type
    assert (
        jnp.zeros_like(w).weak_type
        and jnp.ones_like(3).weak_type
        and not jnp.zeros_like(w, dtype="float32").weak_type
    )
    assert not jnp.full_like(jnp.ones(2), 3).weak_type


def test_weak_types_through_comparisons_reductions_and_grad(ref: Any) -> None:
    jax, jnp = ref, ref.numpy
    assert (jnp.array(2) == jnp.array(2)).weak_type and (jnp.array(2.0) < 3.0).weak_type
    assert not jnp.sum(2.0).weak_type and not jnp.max(jnp.array(2.0)).weak_type
    g = jax.grad(lambda x: x * 2.0)(1.5)
    assert (g.dtype, g.weak_type) == (np.float32, True)
    assert not jax.grad(lambda x: x * 2.0)(jnp.float32(3.0)).weak_type
    (ct,) = jax.vjp(lambda x: x * 2, 1.5)[1](1.0)
    assert (ct.dtype, ct.weak_type) == (
        np.float32,
        True,
    )  # a Python float cotangent is canonicalized


def test_like_functions_refuse_lists(ref: Any) -> None:
    with pytest.raises(TypeError, match="ones_like requires ndarray or scalar arguments"):
        ref.numpy.ones_like([1, 2])


def test_result_type_of_dtypes(ref: Any) -> None:
    jnp = ref.numpy
    assert jnp.result_type(int) == np.int32 and jnp.result_type(int, "int8") == np.int8
    assert (
        jnp.result_type("uint32", int) == np.uint32
        and jnp.result_type(complex, "float16") == np.complex64
    )
    assert jnp.result_type("bfloat16", "float16") == np.float32
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert (
            jnp.result_type(jnp.float64) == np.float32
        )  # a JAX scalar type is canonicalized silently
    with pytest.warns(UserWarning, match="dtype uint64 requested in dtype is not available"):
        assert jnp.result_type("uint8", "uint64") == np.uint32


def test_floor_divide_remainder_bitwise(ref: Any) -> None:
    jax, jnp = ref, ref.numpy
    assert (
        int(jnp.array(-7) // 2) == -4
        and int(jnp.array(-7) % 3) == 2
        and float(jnp.array(-7.5) % 2) == 0.5
    )
    assert (jnp.array(True) // jnp.array(True)).dtype == np.int32
    assert int(jnp.array(5) & 3) == 1 and (jnp.array(True) & False).dtype == np.bool_
    with pytest.raises(TypeError, match="does not accept dtype float32"):
        jnp.array(1.5) & 1
    assert float(jax.jit(lambda a, b: a // b)(jnp.array(7), 2.0)) == 3.0
    assert (
        float(jax.grad(lambda x: x % 2.0)(3.5)) == 1.0
        and float(jax.grad(lambda x: x // 2.0)(3.5)) == 0.0
    )
    with pytest.raises(TypeError, match="Integers cannot be raised to negative powers"):
        jnp.array(2) ** -1


def test_broadcast_error_is_a_type_error(ref: Any) -> None:
    with pytest.raises(TypeError, match="incompatible shapes for broadcasting"):
        ref.numpy.arange(3) - ref.numpy.ones(2)


def test_bfloat16_is_differentiable(ref: Any) -> None:
    jax, jnp = ref, ref.numpy
    x = jnp.ones((), dtype="bfloat16")
    assert jax.grad(lambda x: x * 2)(x).dtype == x.dtype
    _, t = jax.jvp(lambda x: x * 2, (x,), (x,))
    assert t.dtype == x.dtype


def test_float0_cotangents_are_numpy_arrays(ref: Any) -> None:
    ct = ref.vjp(lambda x, y: x * y, 1.0, 3)[1](1.0)[1]
    assert type(ct) is np.ndarray and ct.dtype == ref.dtypes.float0


def test_jvp_checks_tangents_against_primals(ref: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    jax, jnp = ref, ref.numpy
    with pytest.raises(
        TypeError, match="expected tangent dtype .*float0.*but got tangent dtype float32"
    ):
        jax.jvp(lambda x: x * 2, (2,), (1.0,))
    with pytest.raises(TypeError, match="Got primal dtype float16"):
        jax.jvp(lambda x: x * 2, (jnp.ones(2, dtype="float16"),), (jnp.ones(2),))
    with pytest.raises(ValueError, match="different primal and tangent shapes"):
        jax.jvp(lambda x: x * 2, (1.5,), (jnp.ones(2),))
    _, t = jax.jvp(lambda x: x * 2, (1.5,), (jnp.ones(()),))
    assert t.weak_type  # the tangent takes its primal's weak type
    broken = with_mutant(monkeypatch, "jvp-tangents-unchecked")
    broken.jvp(lambda x: x * 2, (2,), (1.0,))  # the mutant lets it through


def test_custom_vjp_residuals_must_be_jax_types(ref: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    def make(jax: Any) -> Any:
        @jax.custom_vjp
        def f(x: Any) -> Any:
            return x * 2

        f.defvjp(lambda x: (f(x), (x, "text")), lambda res, g: (g * 2,))
        return f

    with pytest.raises(TypeError, match="'text' of type <class 'str'> is not a valid JAX type"):
        ref.grad(make(ref))(1.5)
    assert float(make(ref)(1.5)) == 3.0  # called without differentiation, fwd does not run
    broken = with_mutant(monkeypatch, "fwd-residuals-unchecked")
    assert float(broken.grad(make(broken))(1.5)) == 2.0


def test_promote_types_can_cast_iinfo_finfo(ref: Any) -> None:
    jnp = ref.numpy
    assert jnp.promote_types("int32", "float64") == np.float64  # never canonicalized
    assert (
        jnp.promote_types(float, "int8") == np.float64
        and jnp.promote_types(int, "float32") == np.float32
    )
    assert (
        jnp.promote_types(complex, "float32") == np.complex64
        and jnp.promote_types("uint64", "int64") == np.float64
    )
    assert jnp.promote_types("bfloat16", "float16") == np.float32
    assert jnp.can_cast("int32", "float64") is True and jnp.can_cast(float, "float32") is False
    assert jnp.iinfo("int64").max == 2**63 - 1 and jnp.finfo("bfloat16").eps == 0.0078125


def test_reverse_mode_weak_types(ref: Any) -> None:
    jax, jnp = ref, ref.numpy
    assert jax.grad(lambda x: jnp.sum(jnp.tanh(x) - x))(
        1.5
    ).weak_type  # through jnp.sum's cotangent
    assert not jax.value_and_grad(lambda x: jnp.sum(x**2))(jnp.array(2.0))[0].weak_type

    @jax.custom_vjp
    def f(x: Any, y: Any) -> Any:
        return jnp.sum(x * y)

    f.defvjp(lambda x, y: (f(x, y), (x, y)), lambda res, g: (g * res[1], g * res[0]))
    assert not jax.grad(f)(1.5, 1.5).weak_type  # bwd's outputs are left as bwd made them


def test_integers_become_floats_by_width(ref: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    jnp = ref.numpy
    ref.config.update("jax_enable_x64", True)
    assert (
        jnp.sin(jnp.array(1, dtype="int32")).dtype == np.float32
        and jnp.sin(jnp.array(True)).dtype == np.float32
    )
    assert (jnp.array(3, dtype="int16") / 2).dtype == np.float32 and jnp.sin(
        jnp.array(1, dtype="int64")
    ).dtype == np.float64
    out = jnp.array(1, dtype="int64") + jnp.array(1, dtype="uint64")
    assert (out.dtype, out.weak_type) == (np.float64, True)  # no integer holds both: a weak float


def test_x64_arrays_used_after_the_block_meet_the_policy(ref: Any) -> None:
    jnp = ref.numpy
    with ref.enable_x64(True):
        a, b = jnp.array(2), jnp.arange(3)
    with pytest.warns(UserWarning, match="int64 requested in dtype is not available") as caught:
        out = (
            b > 0
        )  # int64 meets an int32 (weak): the promotion is computed, the int64 checked once
    assert len(caught) == 1 and out.dtype == np.bool_
    with pytest.warns(UserWarning, match="int64 requested in dtype"):
        assert (a < a).weak_type  # two weak int64: a weak result, checked
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert (
            a * b
        ).dtype == np.int64  # weak and strong int64: a strong result of the one dtype, unchecked
    with ref.enable_x64(True):
        x = jnp.array([0.5, 1.5], dtype="float64")
    with pytest.warns(UserWarning, match="float64 requested in dtype"):
        assert (x + 1).dtype == np.float32
    with ref.enable_x64(True):
        r = jnp.sin(jnp.array(5.0, dtype="float64"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert (r * r).dtype == np.float64  # one dtype, none weak: JAX's fast path checks nothing


def test_power_complex_and_arange_bool(ref: Any) -> None:
    jax, jnp = ref, ref.numpy
    out = jnp.array([2, 3, 0, -1, 5, -2]) ** jnp.array(
        [-1, -2, -1, -3, 3, 5]
    )  # JAX's binary exponentiation
    assert np.asarray(out).tolist() == [0, 703701817, 0, -1, 125, -32]
    assert not jax.jit(lambda a, b: a**b)(0, 0).weak_type  # an integer power is strongly typed
    assert np.isnan(complex(jax.jit(lambda a, b: a**b)(0, 1 + 2j)).real)
    z = jnp.ones(2) * (1 + 2j)
    assert (z.dtype, z.weak_type) == (
        np.complex64,
        False,
    )  # a Python complex meeting float32: strong complex64
    assert jnp.result_type("complex64", "float16") == np.complex64
    with pytest.raises(TypeError, match="iota does not accept dtype bool"):
        jnp.arange(0, dtype=bool)
    assert (
        1 ** jnp.array(2)
    ).weak_type  # a concrete integer scalar exponent goes through integer_pow
    assert (jnp.array(2, dtype="int8") ** jnp.array(3)).dtype == np.int8
    with pytest.raises(TypeError, match="Integers cannot be raised to negative powers"):
        jnp.array(2) ** jnp.array(-1)


def test_true_division_converts_each_operand_from_its_value(ref: Any) -> None:
    jnp = ref.numpy
    out = jnp.array(1, dtype="uint8") / -2  # not 1 / uint8(-2)
    assert (out.dtype, float(out)) == (np.float32, -0.5)


def test_more_dtype_paths(ref: Any) -> None:
    jax, jnp = ref, ref.numpy
    assert jnp.promote_types(jnp.int64, "int32") == np.int64  # jnp.int64 is not Python's int
    assert (jnp.array(True) ** jnp.array(True)).dtype == np.int32 and (
        jnp.array(True) ** 2
    ).dtype == np.int32
    assert jnp.issubdtype(jnp.bfloat16, jnp.floating)
    with pytest.raises(OverflowError, match="Python integer -1 out of bounds for uint32"):
        jnp.array(-1.25, dtype="uint32")
    assert (
        jnp.array([jnp.array(1.5), 2]).dtype == np.float32
    )  # a list's elements promote as JAX promotes them
    x = jnp.array(0.5, dtype="bfloat16")
    assert jnp.array([x, x]).dtype == x.dtype
    _, t = jax.jvp(lambda x: jnp.where(x > 0, x, 0.0), (jnp.array(2.0),), (jnp.ones(()),))
    assert t.weak_type  # the zero tangent of the weak 0.0 branch is weak
    with ref.enable_x64(True):
        a = jnp.array(1.5)
    with pytest.warns(UserWarning, match="complex128 requested in dtype"):
        a < 1 + 2j  # noqa: B015 - the promotion is what is checked
