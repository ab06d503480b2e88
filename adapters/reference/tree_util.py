"""`jax.tree_util`: pytrees of tuples, lists, dicts, namedtuples and None, with JAX's PyTreeDef repr."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class PyTreeDef:
    """The structure of a pytree; `repr` matches JAX's (`PyTreeDef((*, *))`), as error messages show it."""

    kind: str  # leaf | none | tuple | list | dict | namedtuple
    meta: Any = None  # dict keys or the namedtuple class
    children: tuple[PyTreeDef, ...] = ()

    @property
    def num_leaves(self) -> int:
        return 1 if self.kind == "leaf" else sum(c.num_leaves for c in self.children)

    def _text(self) -> str:
        inner = [c._text() for c in self.children]
        if self.kind == "leaf":
            return "*"
        if self.kind == "none":
            return "None"
        if self.kind == "tuple":
            return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
        if self.kind == "list":
            return "[" + ", ".join(inner) + "]"
        if self.kind == "dict":
            return (
                "{" + ", ".join(f"{k!r}: {t}" for k, t in zip(self.meta, inner, strict=True)) + "}"
            )
        return f"CustomNode(namedtuple[{self.meta.__name__}], [{', '.join(inner)}])"

    def __repr__(self) -> str:
        return f"PyTreeDef({self._text()})"


LEAF = PyTreeDef("leaf")


def tree_flatten(
    tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> tuple[list[Any], PyTreeDef]:
    """(leaves, treedef); None is an empty subtree, as in JAX."""
    leaves: list[Any] = []
    return leaves, _flatten(tree, leaves, is_leaf)


def _flatten(x: Any, leaves: list[Any], is_leaf: Callable[[Any], bool] | None) -> PyTreeDef:
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return LEAF
    if x is None:
        return PyTreeDef("none")
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return PyTreeDef("namedtuple", type(x), tuple(_flatten(c, leaves, is_leaf) for c in x))
    if isinstance(x, (tuple, list)):
        return PyTreeDef(
            type(x).__name__ if type(x) in (tuple, list) else "tuple",
            None,
            tuple(_flatten(c, leaves, is_leaf) for c in x),
        )
    if isinstance(x, dict):
        keys = tuple(sorted(x))
        return PyTreeDef("dict", keys, tuple(_flatten(x[k], leaves, is_leaf) for k in keys))
    leaves.append(x)
    return LEAF


def tree_unflatten(treedef: PyTreeDef, leaves: Any) -> Any:
    """The tree of this structure with these leaves."""
    it = iter(leaves)
    out = _build(treedef, it)
    return out


def _build(t: PyTreeDef, it: Any) -> Any:
    if t.kind == "leaf":
        return next(it)
    if t.kind == "none":
        return None
    kids = [_build(c, it) for c in t.children]
    if t.kind == "tuple":
        return tuple(kids)
    if t.kind == "list":
        return kids
    if t.kind == "dict":
        return dict(zip(t.meta, kids, strict=True))
    return t.meta(*kids)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    return tree_flatten(tree, is_leaf)[1]


def tree_map(
    f: Callable[..., Any], tree: Any, *rest: Any, is_leaf: Callable[[Any], bool] | None = None
) -> Any:
    """f over the leaves of `tree` (and the same-structured `rest`)."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = [treedef_leaves_like(treedef, r) for r in rest]
    return tree_unflatten(treedef, [f(x, *xs) for x, *xs in zip(leaves, *others, strict=True)])


def treedef_leaves_like(treedef: PyTreeDef, tree: Any) -> list[Any]:
    leaves, other = tree_flatten(tree)
    if other != treedef:
        raise ValueError(f"Custom node type mismatch; expected {treedef}, got {other}")
    return leaves


def build_tree_module() -> Any:
    """`jax.tree`: JAX's short names for the functions above (`jax.tree.map` is `tree_util.tree_map`)."""
    import types

    tree = types.ModuleType("jax.tree", "jax.tree: map, leaves, structure, flatten, unflatten.")
    tree.__dict__.update(
        map=tree_map,
        leaves=tree_leaves,
        structure=tree_structure,
        flatten=tree_flatten,
        unflatten=tree_unflatten,
    )
    return tree
