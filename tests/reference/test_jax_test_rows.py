"""Rows C1-C9 of JAX's custom_vjp3 tests as the reference models them (each checked against JAX 0.10.2):
a custom rule closing over a vmap Tracer under differentiation, jvp of a symbolic_zeros custom_vjp,
Python scalars through jax.jvp, and `jax.tree` / `lax.broadcast`."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.reference.conftest import with_mutant


def _h(jax: Any, kind: str) -> Any:
    """JAX's test_closure_with_vmap2: the sum over a vmap of x of a custom g(z) = x*z closing over the mapped x."""
    jnp = jax.numpy

    def h(z: Any) -> Any:
        def f(x: Any) -> Any:
            if kind == "jvp":

                @jax.custom_jvp
                def g(y: Any) -> Any:
                    return x * y

                g.defjvp(lambda p, t: (g(*p), x * t[0]))
            else:

                @jax.custom_vjp
                def g(y: Any) -> Any:
                    return x * y

                g.defvjp(lambda y: (x * y, (x,)), lambda res, w: (res[0] * w,))
            return g(z)

        return jax.vmap(f)(jnp.arange(3.0, dtype="float32")).sum()

    return h


def test_jvp_of_a_custom_jvp_closing_over_a_vmap_tracer(ref: Any) -> None:
    p, t = ref.jvp(_h(ref, "jvp"), (ref.numpy.float32(3.14),), (ref.numpy.float32(1.0),))
    assert (p.dtype, t.dtype) == (np.float32, np.float32)
    assert np.allclose([float(p), float(t)], [9.42, 3.0])


def test_grad_of_a_custom_vjp_closing_over_a_vmap_tracer(ref: Any) -> None:
    assert float(ref.grad(_h(ref, "vjp"))(ref.numpy.float32(3.14))) == 3.0  # bwd's sum of x


def test_grad_of_a_custom_jvp_closing_over_a_vmap_tracer(ref: Any) -> None:
    assert (
        float(ref.grad(_h(ref, "jvp"))(ref.numpy.float32(3.14))) == 3.0
    )  # the rule transposed, batched


@pytest.mark.parametrize("kind", ["jvp", "vjp"])
def test_without_batching_the_closed_over_call_the_tracer_escapes(
    monkeypatch: pytest.MonkeyPatch, ref: Any, kind: str
) -> None:
    jax = with_mutant(monkeypatch, "closure-over-vmap-tracer-unbatched")
    run = (
        (lambda: jax.jvp(_h(jax, kind), (3.0,), (1.0,)))
        if kind == "jvp"
        else (lambda: jax.grad(_h(jax, kind))(3.0))
    )
    with pytest.raises(jax.errors.UnexpectedTracerError, match="unexpected tracer"):
        run()


def test_under_custom_vjp3_the_closure_is_an_error(ref: Any) -> None:
    ref.config.update("jax_custom_vjp3", True)
    with pytest.raises(
        ref.errors.UnexpectedTracerError,
        match=r"closed over a BatchTracer of type float32\[\], but custom_vjp functions can't close over Tracers",
    ):
        ref.grad(_h(ref, "vjp"))(ref.numpy.float32(3.14))


def _fs(jax: Any, fwd_calls_f: bool = True) -> Any:
    @jax.custom_vjp
    def fs(x: Any) -> Any:
        return jax.numpy.sin(x)

    def fwd(x: Any) -> Any:
        seen.append(x)
        return (fs(x) if fwd_calls_f else jax.numpy.sin(x.value)), None

    seen: list[Any] = []
    fs.defvjp(fwd, lambda _, g: (g.value,), symbolic_zeros=True)
    fs.seen = seen
    return fs


def test_jvp_of_a_symbolic_zeros_custom_vjp_runs_fwd_first(ref: Any) -> None:
    # fwd gets the Python scalar as it was given, wrapped; calling fs on the wrapper fails as in JAX
    with pytest.raises(
        TypeError,
        match=r"Argument 'CustomVJPPrimal\(value=3\.0, perturbed=True\)' of type "
        r"'<class 'jax\._src\.custom_derivatives\.CustomVJPPrimal'>' is not a valid JAX type",
    ):
        ref.jvp(_fs(ref), (3.0,), (1.0,))
    fs = _fs(ref, fwd_calls_f=False)  # a fwd that runs: then the jvp itself is refused
    with pytest.raises(
        TypeError, match=r"can't apply forward-mode autodiff \(jvp\) to a custom_vjp function"
    ):
        ref.jvp(fs, (3.0,), (1.0,))
    assert [repr(x) for x in fs.seen] == ["CustomVJPPrimal(value=3.0, perturbed=True)"]


def test_under_custom_vjp3_jvp_of_a_symbolic_zeros_rule_fails_before_fwd(ref: Any) -> None:
    ref.config.update("jax_custom_vjp3", True)
    fs = _fs(ref)
    with pytest.raises(NotImplementedError):
        ref.jvp(fs, (3.0,), (1.0,))
    assert fs.seen == []


def test_jvp_of_a_custom_vjp_with_only_zero_tangents_calls_the_function(ref: Any) -> None:
    @ref.custom_vjp
    def f(k: Any) -> Any:
        return k * 2

    f.defvjp(lambda k: (_ for _ in ()).throw(AssertionError("fwd ran")), lambda _, g: (None,))
    p, t = ref.jvp(f, (3,), (np.zeros((), ref.dtypes.float0),))
    assert int(p) == 6 and t.dtype == ref.dtypes.float0


def test_a_custom_vjp_argument_must_be_a_jax_type(ref: Any) -> None:
    @ref.custom_vjp
    def f(x: Any) -> Any:
        return x

    f.defvjp(lambda x: (x, None), lambda _, g: (g,))
    with pytest.raises(
        TypeError, match=r"Argument 'abc' of type <class 'str'> is not a valid JAX type"
    ):
        f("abc")
    with pytest.raises(TypeError, match=r"of type '<class 'object'>' is not a valid JAX type"):
        f(object())


def test_jvp_keeps_python_scalars_that_pass_through(ref: Any) -> None:
    assert ref.jvp(lambda x: x, (4.0,), (1.0,)) == (4.0, 1.0)
    p, t = ref.jvp(lambda x: x * 2, (4.0,), (1.0,))  # a primitive makes weak arrays
    assert isinstance(p, ref.Array) and (p.dtype, p.weak_type, float(p), float(t)) == (
        np.float32,
        True,
        8.0,
        2.0,
    )

    @ref.custom_jvp
    def f(x: Any) -> Any:
        return x + 1.0

    f.defjvp(lambda p, t: (p[0] + 1.0, t[0] + 2.0))  # Python arithmetic on the Python scalars
    assert ref.jvp(f, (4.0,), (1.0,)) == (5.0, 3.0)


def test_jax_tree_and_lax_broadcast(ref: Any) -> None:
    jnp = ref.numpy
    tree = (1.0, {"a": jnp.array([2.0, 3.0])})
    out = ref.tree.map(lambda x: ref.lax.broadcast(x, (1,)), tree)
    assert ref.tree.structure(out) == ref.tree_util.tree_structure(tree)
    s, a = out[0], out[1]["a"]
    assert (s.shape, s.dtype, s.weak_type) == (
        (1,),
        np.float32,
        True,
    )  # a Python scalar becomes a weak array first
    assert (a.shape, a.tolist()) == ((1, 2), [[2.0, 3.0]])
    leaves, treedef = ref.tree.flatten(tree)
    assert leaves[0] == 1.0 and ref.tree.leaves(tree)[1] is leaves[1] is tree[1]["a"]
    assert ref.tree.unflatten(treedef, [0, 1]) == (0, {"a": 1})
    assert ref.tree.map(lambda x, y: x + y, (1, 2), (10, 20)) == (11, 22)
