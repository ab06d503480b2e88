"""The contract's items written down (no JAX, nothing run): each says the JAX promise it checks
and its basis, the numerics ones are those that compare with finite differences, and
docs/check.md's table of them is the code's."""

from __future__ import annotations

from jax_conformance import CHECKOUT
from jax_conformance.contract.items import BASES, ITEMS, NUMERICS_SECTION, markdown_table


def test_every_item_says_the_jax_promise_it_checks():
    """Each item: a source (a docs page and section, or a JAX test Class.test_name), a basis; an
    item that compares with finite differences is numerics and cites api_compatibility.md."""
    for item in ITEMS:
        assert item.sources, f"{item.id} has no source"
        assert item.basis in BASES, f"{item.id}: basis {item.basis!r}"
        for source in item.sources:
            doc = source.doc.startswith("docs/") and source.section
            test = source.file.startswith("tests/") and ".test_" in source.function
            assert doc or test, f"{item.id}: {source}"
        finite = "finite differences" in item.statement
        assert item.numerics == finite, f"{item.id}: numerics {item.numerics}"
        assert (NUMERICS_SECTION in item.sources) == item.numerics, item.id


def test_docs_table_of_items_is_the_code_s():
    """docs/check.md's items table is `check --items --markdown`'s, made from ITEMS."""
    text = (CHECKOUT / "docs" / "check.md").read_text(encoding="utf-8")
    assert markdown_table() in text, "docs/check.md: run `jax-conformance check --items --markdown`"
