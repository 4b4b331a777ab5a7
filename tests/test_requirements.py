"""Our manifest requirements install next to every supported HA's own pins.

HA installs a custom integration's requirements with its
``package_constraints.txt`` as constraints: a range that excludes a version HA
pins, directly or through what our requirements pull in, makes HA refuse to
set Toolbelt up. The constraint files of the HA versions we support are kept
as fixtures, so this runs offline with ``packaging``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
import importlib.metadata
import json
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version
import pytest

ROOT = Path(__file__).parents[1]
CONSTRAINTS = ROOT / "tests" / "fixtures" / "ha_constraints"
# The supported HA versions whose pins we keep, and the Python each runs on.
HA_PYTHON = {"2026.2.3": "3.13", "2026.10.4": "3.14", "2026.11.0": "3.14"}
MANIFEST = json.loads(
    (ROOT / "custom_components" / "toolbelt" / "manifest.json").read_text()
)["requirements"]


def ha_constraints(text: str) -> dict[str, Requirement]:
    """The constraints of one package_constraints.txt, by canonical name."""
    found: dict[str, Requirement] = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        found[canonicalize_name(req.name)] = req
    return found


def pinned(req: Requirement) -> Version | None:
    """The version of an exact ``==`` pin, else None."""
    exact = [spec for spec in req.specifier if spec.operator == "=="]
    return Version(exact[0].version) if len(exact) == 1 else None


def _dependencies(name: str, python: str) -> Iterable[Requirement]:
    """What the installed distribution `name` requires on that Python, no extras."""
    env = {**default_environment(), "python_version": python, "extra": ""}
    for line in importlib.metadata.requires(name) or ():
        req = Requirement(line)
        if req.marker is None or req.marker.evaluate(env):
            yield req


def conflicts(
    requirements: Iterable[str], constraints: Mapping[str, Requirement], python: str
) -> list[str]:
    """Every way these requirements, and what they pull in, fight HA's pins."""
    problems = []
    seen: set[str] = set()
    todo = [(Requirement(r), "manifest") for r in requirements]
    while todo:
        req, via = todo.pop()
        name = canonicalize_name(req.name)
        ha = constraints.get(name)
        if ha is not None and (version := pinned(ha)) is not None:
            if not req.specifier.contains(version, prereleases=True):
                problems.append(f"{req} (from {via}) excludes HA's {ha}")
            # HA pins it: HA's own pins agree with what it pulls in.
            continue
        if name in seen:
            continue
        seen.add(name)
        todo.extend((dep, req.name) for dep in _dependencies(name, python))
    return problems


@pytest.mark.parametrize("ha", sorted(HA_PYTHON))
def test_manifest_requirements_install_with_ha_pins(ha: str) -> None:
    constraints = ha_constraints((CONSTRAINTS / f"{ha}.txt").read_text())
    assert constraints["openai"]  # the files are real constraint files
    assert conflicts(MANIFEST, constraints, HA_PYTHON[ha]) == []


def test_a_range_that_excludes_an_ha_pin_is_caught() -> None:
    """The check fails for the range that locked HA 2026.3+ users out."""
    constraints = ha_constraints((CONSTRAINTS / "2026.10.4.txt").read_text())
    assert conflicts(["openai>=2.15.0,<3"], constraints, "3.14") == [
        "openai<3,>=2.15.0 (from manifest) excludes HA's openai==3.10.0"
    ]


def test_what_our_requirements_pull_in_is_checked_too() -> None:
    """trafilatura's charset-normalizer need is held against HA's pin."""
    constraints = {
        "charset-normalizer": Requirement("charset-normalizer==3.3.0"),
    }
    problems = conflicts(["trafilatura>=2.1.0,<3"], constraints, "3.14")
    # trafilatura asks for it, and so does htmldate, which trafilatura pulls in.
    assert sorted(problems) == [
        "charset_normalizer>=3.4.0 (from htmldate) excludes HA's "
        "charset-normalizer==3.3.0",
        "charset_normalizer>=3.4.0 (from trafilatura) excludes HA's "
        "charset-normalizer==3.3.0",
    ]


def test_this_lane_runs_what_its_ha_pins() -> None:
    """The test venv holds HA's own pins: openai, and conversation's requirements."""
    import homeassistant
    from homeassistant.components import conversation

    ha_dir = Path(homeassistant.__file__).parent
    constraints = ha_constraints((ha_dir / "package_constraints.txt").read_text())
    conversation_reqs = json.loads(
        (Path(conversation.__file__).parent / "manifest.json").read_text()
    )["requirements"]
    wanted = [str(constraints["openai"]), *conversation_reqs]
    for line in wanted:
        req = Requirement(line)
        installed = importlib.metadata.version(req.name)
        assert req.specifier.contains(installed), (line, installed)
