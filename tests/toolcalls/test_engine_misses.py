"""Issue 9's dialect misses, as engine test-suite cases adapted to our tools.

Same schema as the dev corpus; every case goes through ``auto``.
"""

from __future__ import annotations

from typing import Any

import pytest

from custom_components.toolbelt.toolcalls import resolve_dialect

from .dialect_helpers import engine_cases
from .test_corpus import CATALOG, _check

CASES = engine_cases()


def _params() -> list[Any]:
    return [pytest.param(case, id=case["id"]) for case in CASES]


@pytest.mark.parametrize("case", _params())
def test_engine_miss(case: dict[str, Any]) -> None:
    _check(case, resolve_dialect("auto").parse(case["raw"], CATALOG))
