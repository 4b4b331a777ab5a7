"""The tool catalog: the allowlist, the schemas, and forgiving name lookup.

Models drift on names (``search_memory`` for ``memory_search``, ``HassTurnOn``
for ``intent__HassTurnOn``) and on argument keys (``q`` for ``query``). The
catalog resolves that drift, but only ever to a tool that is really exposed:
an alias (``aliases.py``, declared by whoever builds the catalog) whose
targets are all absent resolves to nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .aliases import NO_ALIASES, Aliases, fold
from .reading.schema import coerce_arguments

__all__ = ["Catalog", "ToolSpec", "fold"]

_UNSEEN: Any = object()

# Prefixes some formats glue onto a name (harmony, Gemma, Llama built-ins).
_PREFIXES = ("functions.", "function.", "default_api.", "tools.", "tool.", "api.")

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

    def __init__(
        self,
        tools: list[ToolSpec] | tuple[ToolSpec, ...] = (),
        aliases: Aliases = NO_ALIASES,
    ) -> None:
        """The tools, and the other names the host gives them (none by default)."""
        self._aliases = aliases
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
        # Each tool's schema properties, looked up once (None: none to map onto).
        self._props: dict[str, dict[str, Any] | None] = {}

    @classmethod
    def from_openai(
        cls, tools: list[Any] | None, aliases: Aliases = NO_ALIASES
    ) -> Catalog:
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
        return cls(specs, aliases)

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
        then a name of the same meaning (the catalog's ``Aliases``); never
        resolves to a tool that is not exposed.
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
            for target in self._aliases.same_meaning(cand):
                key = fold(target)
                if key in self._folded:
                    return self._folded[key]
                matches = self._short.get(key)
                if matches and len(matches) == 1:
                    return matches[0]
        return None

    def implied_arguments(self, called: str, resolved: str) -> dict[str, str]:
        """The arguments an alias implies (``memorize``: action store), or {}."""
        return self._aliases.implied_arguments(called, resolved)

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
        props = self._props.get(name, _UNSEEN)
        if props is _UNSEEN:
            schema = self.schema(name)
            props = schema.get("properties") if isinstance(schema, dict) else None
            props = self._props[name] = props if isinstance(props, dict) else None
        if not props or not isinstance(args, dict):
            return dict(args) if isinstance(args, dict) else {}
        if props.keys() >= args.keys():  # every key is the schema's own: nothing to map
            return (
                coerce_arguments(self.schema(name), dict(args))
                if coerce
                else dict(args)
            )
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
            result = coerce_arguments(self.schema(name), result)
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
