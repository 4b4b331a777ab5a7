"""Old single-purpose tool names, routed to the action-based catalog.

Prompts, fine-tunes and small models still emit ``store_memory`` or ``web_search``;
each maps to one of our tools plus the action its name implies.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..toolcalls.legacy import LEGACY_TOOL_NAMES
from .const import API_NAME

CANONICAL_NAMES = frozenset(
    {"memory", "history", "profile", "self", "search", "web_fetch", "model", "time"}
)
# HA's merged API prefixes tool names with the slugified API name and "__".
NAMESPACE_PREFIX = API_NAME.lower().replace(" ", "-") + "__"


def normalise_name(name: str) -> str:
    """'Store-Memory ' -> 'store_memory'; strips our HA namespace prefix only."""
    name = name.strip()
    if name.lower().startswith(NAMESPACE_PREFIX):
        name = name[len(NAMESPACE_PREFIX) :]
    return name.lower().replace("-", "_").replace(" ", "_")


def resolve_tool_call(
    name: str, arguments: Mapping[str, Any] | None
) -> tuple[str, dict[str, Any]] | None:
    """Map a called name to (our tool, arguments with the implied action).

    Returns None when the name is none of ours. The action a legacy name implies
    wins over one the model also sent, because the name is the clearer signal.
    """
    args = dict(arguments or {})
    key = normalise_name(name)
    if key in CANONICAL_NAMES:
        return key, args
    if (target := LEGACY_TOOL_NAMES.get(key)) is None:
        return None
    tool, fixed = target
    return tool, {**args, **fixed}


def should_offer_time(other_tool_names: Iterable[str]) -> bool:
    """Offer our 'time' tool only when HA's own GetDateTime is not in the list.

    Names may be namespaced by HA's merged API ('assist__GetDateTime').
    """
    return not any(
        name == "GetDateTime" or name.endswith("__GetDateTime")
        for name in other_tool_names
    )


def route_call(
    name: str, arguments: Mapping[str, Any] | None, offered: Iterable[str]
) -> tuple[str, dict[str, Any]] | None:
    """Map a call to the name of one of our tools that is actually offered.

    For a loop that sees 'store_memory' while the catalog has 'memory' (or, next to
    Assist, 'toolbelt-tools__memory'). Call it only when ``name`` itself is not
    offered, so a user's script that happens to be called 'remember' still wins.
    """
    resolved = resolve_tool_call(name, arguments)
    if resolved is None:
        return None
    tool, args = resolved
    names = set(offered)
    for candidate in (tool, NAMESPACE_PREFIX + tool):
        if candidate in names:
            return candidate, args
    return None
