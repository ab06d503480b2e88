"""`check --package`: a library's rules swept, on the small library tests/fixtures/sweeplib.

sweeplib holds good rules (one exposed from a private module, a custom_gradient, one given its
arguments by the library's [tool.jax-conformance] table), the five kinds of fault `check` found in
real libraries (issue #39), a rule no tried shape fits and one that needs a function (listed, not
checked), an optional submodule that does not import and an excluded one. The whole sweep runs once
(`sweep`, in two modes side by side: one process per mode for every rule); each fault must be
caught in its modes, and nothing else fail.
"""

from __future__ import annotations

import pytest
from jax_conformance.cli import main as cli_main
from jax_conformance.contract.engine import contract_modes
from jax_conformance.contract.items import BY_ID, FAIL
from jax_conformance.contract.package import lines, read_table, sweep_data, sweep_package
from jax_conformance.contract.save import save_data
from jax_conformance.errors import UsageError
from jax_conformance.records import read_check
from jax_conformance.report.contract_section import render_section

from tests.test_contract import ROOT

pytestmark = pytest.mark.slow
LIB = ROOT / "tests" / "fixtures" / "sweeplib"

# rule -> (the item its fault fails, the modes it fails in)
FAULTS = {
    "sweeplib.faults:normalize_by_count": ("rule.fwd-pair", ["on"]),  # optax projection_simplex
    "sweeplib.faults:softmin": (
        "derivatives.finite-differences",
        ["off-warn", "on"],
    ),  # ott softmin
    "sweeplib.faults:warns_in_rule": (
        "x64.no-extra-warning",
        ["off-warn", "on"],
    ),  # jaxopt isotonic
    "sweeplib.faults:scan_carry": ("rule.fwd-pair", ["on"]),  # ott sqrtm: the primal raises
    "sweeplib._native.dtypes:float64_cotangent": ("grad.dtype", ["on"]),  # in a namespace package
}
GOOD = [
    "sweeplib._impl:smooth_relu",
    "sweeplib.ops:softplus",
    "sweeplib.ops:cube",
    "sweeplib.ops:quaternion_norm",
    "sweeplib.ops:scaled_gradient",
]


@pytest.fixture(scope="module")
def sweep():
    return sweep_package("sweeplib", contract_modes(["off-warn,on"]), pythonpath=[str(LIB)])


def test_every_rule_found_once_where_it_is_defined(sweep):
    checked = {r["target"]: r["kind"] for r in sweep.checked}
    assert set(checked) == set(FAULTS) | set(GOOD)  # smooth_relu once, not as public_relu
    assert checked["sweeplib.ops:cube"] == "custom_gradient"
    assert sweep.pyproject == LIB / "pyproject.toml"
    how = {r["target"]: r["how"] for r in sweep.checked}
    assert how["sweeplib.ops:quaternion_norm"] == "[tool.jax-conformance.rules]"
    assert how["sweeplib.ops:softplus"] == "found by trying: float32 arrays of shape (3,)"


@pytest.mark.parametrize("rule", list(FAULTS))
def test_each_fault_is_caught_in_its_modes(sweep, rule):
    item, modes = FAULTS[rule]
    target = next(t for t in sweep.result.targets if t.label == rule)
    assert not target.errors, target.errors
    assert target.failing_items().get(item) == modes, "\n".join(sweep.result.failure_lines())
    assert all(target.status(i.id, "off-warn") != FAIL for i in _items() if "off-warn" not in modes)
    # the four dtype / structure / warning faults stay contract failures; softmin's zero gradient
    # (finite differences) is a numerics failure, listed apart and counted by --strict-numerics
    assert target.contract_ok == BY_ID[item].numerics and not target.ok


@pytest.mark.parametrize("rule", GOOD)
def test_good_rules_hold(sweep, rule):
    target = next(t for t in sweep.result.targets if t.label == rule)
    assert target.ok, "\n".join(sweep.result.failure_lines())


def test_what_was_not_checked_is_listed_with_what_it_needs(sweep):
    needs = {r["target"]: r["needs"] for r in sweep.unchecked}
    assert set(needs) == {"sweeplib.ops:Solver.fixed_point", "sweeplib.ops:clip_gradient"}
    assert "give them in [tool.jax-conformance.rules]" in needs["sweeplib.ops:Solver.fixed_point"]
    assert "skipped" in needs["sweeplib.ops:clip_gradient"]
    assert [name for name, _ in sweep.import_errors] == ["sweeplib.optional_gpu"]
    assert "sweeplib.experimental" not in sweep.modules  # excluded by the table
    printed = "\n".join(lines(sweep))
    assert "sweeplib.optional_gpu: ModuleNotFoundError" in printed
    assert "FAIL grad.dtype [on]" in printed
    assert "numerics FAIL derivatives.finite-differences [off-warn,on]" in printed
    contract, numerics = printed.split("\nnumerics failures (")
    assert "sweeplib.faults:softmin: FAIL" in numerics and "softmin: FAIL" not in contract
    assert not sweep.holds() and not sweep.holds(strict_numerics=True)


def test_report_has_a_section_for_the_package(sweep, tmp_path):
    data = sweep_data(sweep, "jax-conformance check --package sweeplib", [])
    back = read_check(save_data(data, tmp_path, "package-sweeplib"))
    assert back is not None and back["package"] == data["package"]
    page = render_section([back])
    assert "Package sweeplib" in page and "sweeplib.optional_gpu" in page
    assert "Solver.fixed_point" in page and "sweeplib.faults:softmin" in page


def test_table_mistakes_are_usage_errors(tmp_path):
    path = tmp_path / "pyproject.toml"
    for text, said in [
        ('[tool.jax-conformance]\nexclud = ["x"]', "no key 'exclud'"),
        ('[tool.jax-conformance.rules."m:f"]\nargs = ["jnp.ones(("]', "not a Python expression"),
        ('[tool.jax-conformance.rules."m:f"]\nskip = ["no.item"]', "is no item"),
        ('[tool.jax-conformance.rules."m"]\nargs = []', "MODULE:FUNCTION"),
    ]:
        path.write_text(text)
        with pytest.raises(UsageError, match=said):
            read_table(path)


def test_package_takes_no_target_or_arguments(capsys):
    assert cli_main(["check", "--package", "sweeplib", "--args", "1.0"]) == 2
    assert "--package takes no --args" in capsys.readouterr().err


def _items():
    from jax_conformance.contract.items import ITEMS

    return ITEMS
