"""Name resolution (folding, aliases, HA namespacing) and argument keys."""

from __future__ import annotations

import pytest

from custom_components.toolbelt.toolcalls import parse
from custom_components.toolbelt.toolcalls.aliases import Alias, Aliases
from custom_components.toolbelt.toolcalls.catalog import Catalog
from custom_components.toolbelt.tools.definitions import ALIASES


def _tool(name: str, props: dict | None = None, required: list | None = None) -> dict:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{name} tool",
            "parameters": {
                "type": "object",
                "properties": props or {},
                "required": required or [],
            },
        },
    }


CATALOG = Catalog.from_openai(
    [
        _tool(
            "memory_search",
            {"query": {"type": "string"}, "limit": {"type": "integer"}},
            ["query"],
        ),
        _tool("memory_store", {"content": {"type": "string"}}, ["content"]),
        _tool(
            "web_search",
            {"query": {"type": "string"}, "max_results": {"type": "integer"}},
            ["query"],
        ),
        _tool("web_fetch", {"url": {"type": "string"}}, ["url"]),
        _tool("get_current_time"),
        _tool("HassTurnOn", {"name": {"type": "string"}}),
        _tool("light__HassLightSet", {"brightness": {"type": "integer"}}),
    ],
    ALIASES,
)


def test_names_in_catalog_order() -> None:
    assert CATALOG.names[:2] == ("memory_search", "memory_store")
    assert "HassTurnOn" in CATALOG


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("memory_search", "memory_search"),
        ("Memory-Search", "memory_search"),
        ("MEMORY SEARCH", "memory_search"),
        ("memory.search", "memory_search"),
        ("search_memory", "memory_search"),
        ("search_memories", "memory_search"),
        ("recall", "memory_search"),
        ("store_memory", "memory_store"),
        ("save_memory", "memory_store"),
        ("remember", "memory_store"),
        ("google", "web_search"),
        ("internet_search", "web_search"),
        ("search_web", "web_search"),
        ("brave_search", "web_search"),
        ("bing", "web_search"),
        ("current_time", "get_current_time"),
        ("get_time", "get_current_time"),
        ("time", "get_current_time"),
        ("fetch_url", "web_fetch"),
        ("browse", "web_fetch"),
        ("open_url", "web_fetch"),
        ("read_url", "web_fetch"),
        ("intent__HassTurnOn", "HassTurnOn"),
        ("functions.HassTurnOn", "HassTurnOn"),
        ("default_api.HassTurnOn", "HassTurnOn"),
        ("hassturnon", "HassTurnOn"),
        ("HassLightSet", "light__HassLightSet"),
        ("switch__HassLightSet", "light__HassLightSet"),
    ],
)
def test_resolve(given: str, expected: str) -> None:
    assert CATALOG.resolve(given) == expected


@pytest.mark.parametrize(
    "given",
    ["delete_all_automations", "", "HassTurnOff", "weather", None, 5, "x" * 500],
)
def test_unknown_names_resolve_to_nothing(given: object) -> None:
    assert CATALOG.resolve(given) is None


def test_alias_only_resolves_to_an_exposed_tool() -> None:
    small = Catalog.from_openai([_tool("HassTurnOn")], ALIASES)
    assert small.resolve("google") is None
    assert small.resolve("search_memory") is None


def test_exact_name_wins_over_alias() -> None:
    both = Catalog.from_openai([_tool("web_search"), _tool("brave_search")], ALIASES)
    assert both.resolve("brave_search") == "brave_search"


def test_a_catalog_knows_only_the_aliases_its_builder_gives() -> None:
    """The parser names no tool: without aliases an other name reaches nothing."""
    tools = [_tool("web_search"), _tool("lamp", {"mode": {"type": "string"}})]
    assert Catalog.from_openai(tools).resolve("google") is None
    lamp = Alias("lamp", ("light_up", "glow"), {"mode": "on"})
    own = Catalog.from_openai(tools, Aliases([lamp]))
    assert own.resolve("google") is None
    reply = '<tool_call>{"name": "Light-Up", "arguments": {"mode": "off"}}</tool_call>'
    (call,) = parse(reply, own, "hermes").calls
    assert (call.name, call.arguments) == ("lamp", {"mode": "on"})
    (call,) = parse(reply.replace("Light-Up", "lamp"), own, "hermes").calls
    assert (call.name, call.arguments) == ("lamp", {"mode": "off"})


def test_ambiguous_namespaced_short_name_is_not_guessed() -> None:
    two = Catalog.from_openai([_tool("light__HassTurnOn"), _tool("switch__HassTurnOn")])
    assert two.resolve("HassTurnOn") is None
    assert two.resolve("light__HassTurnOn") == "light__HassTurnOn"


@pytest.mark.parametrize(
    ("tool", "args", "expected"),
    [
        ("web_search", {"q": "sunset"}, {"query": "sunset"}),
        ("web_search", {"search_query": "sunset"}, {"query": "sunset"}),
        (
            "memory_search",
            {"search": "filter", "k": 3},
            {"query": "filter", "limit": 3},
        ),
        ("memory_store", {"text": "likes tea"}, {"content": "likes tea"}),
        ("memory_store", {"fact": "likes tea"}, {"content": "likes tea"}),
        ("memory_store", {"memory": "likes tea"}, {"content": "likes tea"}),
        ("web_fetch", {"link": "https://x"}, {"url": "https://x"}),
        ("web_fetch", {"href": "https://x"}, {"url": "https://x"}),
        ("web_fetch", {"URL": "https://x"}, {"url": "https://x"}),
        (
            "web_search",
            {"Max-Results": 2, "query": "a"},
            {"max_results": 2, "query": "a"},
        ),
        # The real key wins; the invented one is kept for validation to name.
        ("web_search", {"query": "a", "q": "b"}, {"query": "a", "q": "b"}),
        ("web_search", {"topic": "a"}, {"topic": "a"}),
    ],
)
def test_argument_keys(tool: str, args: dict, expected: dict) -> None:
    assert CATALOG.normalize_arguments(tool, args) == expected


def test_values_keep_json_types_unless_asked() -> None:
    assert CATALOG.normalize_arguments(
        "memory_search", {"query": "a", "limit": "3"}
    ) == {
        "query": "a",
        "limit": "3",
    }
    coerced = CATALOG.normalize_arguments(
        "memory_search", {"query": "a", "limit": "3"}, coerce=True
    )
    assert coerced == {"query": "a", "limit": 3}


def test_schema_and_first_required_string() -> None:
    assert CATALOG.schema("web_fetch")["required"] == ["url"]
    assert CATALOG.schema("nope") == {}
    assert CATALOG.first_required_string("web_search") == "query"
    assert CATALOG.first_required_string("get_current_time") is None


def test_bare_function_dicts_and_junk_are_accepted() -> None:
    cat = Catalog.from_openai(
        [{"name": "x", "parameters": {}}, "junk", {"function": {}}]
    )
    assert cat.names == ("x",)
