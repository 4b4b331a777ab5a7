"""The tool catalog: the allowlist, the schemas, and forgiving name lookup.

Models drift on names (``search_memory`` for ``memory_search``, ``HassTurnOn``
for ``intent__HassTurnOn``) and on argument keys (``q`` for ``query``). The
catalog resolves that drift, but only ever to a tool that is really exposed:
an alias whose targets are all absent resolves to nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .schema import coerce_arguments

__all__ = ["Catalog", "ToolSpec", "fold"]

# Prefixes some formats glue onto a name (harmony, Gemma, Llama built-ins).
_PREFIXES = ("functions.", "function.", "default_api.", "tools.", "tool.", "api.")

_FOLD_TABLE = str.maketrans("", "", " \t\r\n_-.")


def fold(name: str) -> str:
    """Case- and separator-insensitive key: ``Search-Memory`` -> ``searchmemory``."""
    return name.lower().translate(_FOLD_TABLE)


# Names models invent -> candidate real names, first present wins. Keys and
# candidates are compared folded, so "Search-Memory" matches "search_memory".
_NAME_ALIASES: dict[str, tuple[str, ...]] = {}


def _alias(targets: tuple[str, ...], *names: str) -> None:
    for name in names:
        _NAME_ALIASES[fold(name)] = targets


_MEMORY_SEARCH = ("memory_search", "search_memory", "memory_recall", "recall", "memory")
_MEMORY_STORE = ("memory_store", "store_memory", "save_memory", "remember", "memory")
_WEB_SEARCH = ("web_search", "search_web", "search", "brave_search", "internet_search")
_WEB_FETCH = ("web_fetch", "fetch_url", "fetch", "browse", "open_url")
_TIME = ("get_current_time", "current_time", "get_time", "time", "GetDateTime")

_alias(
    _MEMORY_SEARCH,
    "search_memory",
    "memory_search",
    "search_memories",
    "memories_search",
    "recall",
    "recall_memory",
    "memory_recall",
    "query_memory",
    "lookup_memory",
    "find_memory",
    "get_memory",
    "get_memories",
    "retrieve_memory",
    "retrieve_memories",
)
# Past conversations: the history tool where offered, else what memory can recall.
_alias(
    ("history", *_MEMORY_SEARCH),
    "retrieve_conversation_history",
    "search_history",
)
_alias(
    ("history",),
    "history_search",
    "search_conversations",
    "get_recent_history",
    "recent_history",
    "get_conversation_history",
    "forget_history",
    "delete_history",
    "history_forget",
)
_alias(
    ("profile",),
    "get_user_profile",
    "get_profile",
    "user_profile",
    "set_user_attribute",
    "set_profile",
    "update_profile",
    "delete_user_attribute",
    "delete_profile_attribute",
)
_alias(
    ("self",),
    "bot_trait",
    "set_my_trait",
    "add_trait",
    "get_my_traits",
    "get_persona",
)
_alias(
    ("model",),
    "list_models",
    "get_models",
    "available_models",
    "get_current_model",
    "current_model",
    "switch_model",
    "change_model",
    "set_model",
)
_alias(("search",), "reddit_search", "search_reddit", "reddit")
_alias(
    _MEMORY_STORE,
    "store_memory",
    "memory_store",
    "save_memory",
    "memory_save",
    "add_memory",
    "memory_add",
    "remember",
    "create_memory",
    "write_memory",
    "memorize",
    "save_fact",
    "store_fact",
)
_alias(
    _WEB_SEARCH,
    "google",
    "google_search",
    "internet_search",
    "search_web",
    "web_search",
    "search_internet",
    "online_search",
    "brave_search",
    "bing",
    "bing_search",
    "duckduckgo",
    "duckduckgo_search",
    "ddg_search",
    "tavily_search",
    "search_online",
)
_alias(
    _WEB_FETCH,
    "fetch_url",
    "web_fetch",
    "fetch",
    "fetch_page",
    "fetch_webpage",
    "browse",
    "browse_url",
    "open_url",
    "read_url",
    "get_url",
    "visit_url",
    "read_webpage",
    "get_webpage",
    "scrape_url",
)
_alias(
    _TIME,
    "get_current_time",
    "current_time",
    "get_time",
    "time",
    "now",
    "get_date",
    "get_datetime",
    "get_date_time",
    "current_datetime",
    "get_current_date",
    "date_time",
)

# Argument keys models invent -> the schema key they mean (only applied when
# the schema has the target and not the invented key).
_KEY_ALIASES: dict[str, tuple[str, ...]] = {
    "q": ("query",),
    "searchquery": ("query",),
    "search": ("query",),
    "searchterm": ("query",),
    "searchterms": ("query",),
    "querytext": ("query",),
    "keywords": ("query",),
    "keyword": ("query",),
    "term": ("query",),
    "question": ("query",),
    "prompt": ("query",),
    "text": ("content", "message", "query"),
    "memory": ("content",),
    "fact": ("content",),
    "note": ("content",),
    "info": ("content",),
    "information": ("content",),
    "body": ("content", "message"),
    "msg": ("message",),
    "link": ("url",),
    "href": ("url",),
    "uri": ("url",),
    "website": ("url",),
    "webpage": ("url",),
    "pageurl": ("url",),
    "numresults": ("max_results", "limit"),
    "count": ("max_results", "limit"),
    "n": ("max_results", "limit"),
    "k": ("limit", "max_results"),
    "topk": ("limit", "max_results"),
    "maxresults": ("max_results", "limit"),
    "limit": ("max_results", "limit"),
}


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One exposed tool: its exact name, description and JSON schema."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=dict)


class Catalog:
    """The tools exposed for one request, with name and argument-key resolution."""

    def __init__(self, tools: list[ToolSpec] | tuple[ToolSpec, ...] = ()) -> None:
        self._tools: dict[str, ToolSpec] = {}
        for tool in tools:
            self._tools.setdefault(tool.name, tool)
        self._folded: dict[str, str] = {}
        self._short: dict[str, list[str]] = {}
        for name in self._tools:
            self._folded.setdefault(fold(name), name)
            if "__" in name:
                self._short.setdefault(fold(name.rsplit("__", 1)[1]), []).append(name)
        self._cache: dict[str, str | None] = {}
        self._folded_props: dict[str, dict[str, str]] = {}

    @classmethod
    def from_openai(cls, tools: list[Any] | None) -> Catalog:
        """Build from an OpenAI ``tools=[...]`` list (bare function dicts also work)."""
        specs: list[ToolSpec] = []
        for item in tools or ():
            if not isinstance(item, dict):
                continue
            func = item.get("function")
            if not isinstance(func, dict):
                func = item
            name = func.get("name")
            if not isinstance(name, str) or not name:
                continue
            params = func.get("parameters")
            specs.append(
                ToolSpec(
                    name=name,
                    description=str(func.get("description") or ""),
                    parameters=params if isinstance(params, dict) else {},
                )
            )
        return cls(specs)

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self):
        return iter(self._tools.values())

    @property
    def names(self) -> tuple[str, ...]:
        """Exact tool names, in catalog order."""
        return tuple(self._tools)

    def spec(self, name: str) -> ToolSpec | None:
        """The tool with this exact name, if exposed."""
        return self._tools.get(name)

    def schema(self, name: str) -> dict[str, Any]:
        """The parameters schema of an exposed tool ({} when unknown)."""
        tool = self._tools.get(name)
        return tool.parameters if tool else {}

    def resolve(self, name: object) -> str | None:
        """The exposed tool a model meant by ``name``, or None.

        Tries the exact name, then case/separator folding, then HA's plain and
        namespaced forms both ways (``HassTurnOn`` <-> ``intent__HassTurnOn``),
        then the alias table; never resolves to a tool that is not exposed.
        """
        if not isinstance(name, str):
            return None
        if name in self._tools:
            return name
        if name in self._cache:
            return self._cache[name]
        found = self._resolve(name.strip())
        if len(self._cache) < 4096:
            self._cache[name] = found
        return found

    def _resolve(self, name: str) -> str | None:
        if not name or len(name) > 200:
            return None
        candidates = [name]
        low = name.lower()
        for prefix in _PREFIXES:
            if low.startswith(prefix) and len(name) > len(prefix):
                candidates.append(name[len(prefix) :])
        for cand in candidates:
            if cand in self._tools:
                return cand
            key = fold(cand)
            if key in self._folded:
                return self._folded[key]
            # Namespaced from the model, plain in the catalog: intent__HassTurnOn.
            if "__" in cand:
                short = fold(cand.rsplit("__", 1)[1])
                if short in self._folded:
                    return self._folded[short]
                # Namespaced on both sides, namespace invented: switch__X -> light__X.
                matches = self._short.get(short)
                if matches and len(matches) == 1:
                    return matches[0]
            # Plain from the model, namespaced in the catalog: light__HassLightSet.
            matches = self._short.get(key)
            if matches and len(matches) == 1:
                return matches[0]
        for cand in candidates:
            targets = _NAME_ALIASES.get(fold(cand))
            if not targets:
                continue
            for target in targets:
                key = fold(target)
                if key in self._folded:
                    return self._folded[key]
                matches = self._short.get(key)
                if matches and len(matches) == 1:
                    return matches[0]
        return None

    def normalize_arguments(
        self, name: str, args: dict[Any, Any], *, coerce: bool = False
    ) -> dict[str, Any]:
        """Map invented argument keys onto the schema's keys.

        Keys are matched exactly, then case/separator-folded, then through a
        small alias table (``q``/``search_query`` -> ``query``, ``text``/``fact``
        -> ``content``, ``link``/``href`` -> ``url``). Unknown keys are kept
        so validation can name them to the model. Values keep
        their JSON types unless ``coerce`` is set (text-only formats): a
        string the model wrote stays a string here; the loop coerces at
        dispatch through ``schema.validate_arguments``.
        """
        schema = self.schema(name)
        props = schema.get("properties") if isinstance(schema, dict) else None
        if not isinstance(props, dict) or not props or not isinstance(args, dict):
            return dict(args) if isinstance(args, dict) else {}
        folded_props = self._folded_props.get(name)
        if folded_props is None:
            folded_props = self._folded_props[name] = {fold(key): key for key in props}
        result: dict[str, Any] = {}
        unknown: dict[str, Any] = {}
        for key, value in args.items():
            if not isinstance(key, str):
                key = str(key)
            if key in props:
                result[key] = value
                continue
            target = folded_props.get(fold(key))
            if target is None:
                for option in _KEY_ALIASES.get(fold(key), ()):
                    if option in props:
                        target = option
                        break
            if target is not None and target not in args and target not in result:
                result[target] = value
            else:
                unknown[key] = value
        result.update(unknown)
        if coerce:
            result = coerce_arguments(schema, result)
        return result

    def first_required_string(self, name: str) -> str | None:
        """The parameter a bare-text input (ReAct ``Action Input: foo``) fills."""
        schema = self.schema(name)
        props = schema.get("properties") if isinstance(schema, dict) else None
        if not isinstance(props, dict):
            return None
        for key in schema.get("required") or ():
            prop = props.get(key)
            if isinstance(prop, dict) and "string" in _as_list(prop.get("type")):
                return key
        for key, prop in props.items():
            if isinstance(prop, dict) and "string" in _as_list(prop.get("type")):
                return key
        return None


def _as_list(kind: Any) -> list[Any]:
    return kind if isinstance(kind, list) else [kind]
