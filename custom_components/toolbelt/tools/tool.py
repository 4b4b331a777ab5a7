"""Define a tool once, as a typed async function with a docstring.

The JSON schema comes from the signature (Literal -> enum, ``X | None`` -> optional,
str/int/float/bool/list/dict), descriptions from the docstring's ``Args:`` block. A
call is coerced and validated by the shared ``toolcalls.schema`` rules, and whatever
happens comes back as text the model can read: the result, or
``ERROR: <Type>: <message>`` (``toolcalls.prompting``). Only cancellation escapes.

A parameter whose annotation class sets ``__tool_injected__ = True`` (our
ToolContext) is filled by the caller, never by the model, and is not in the schema.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Collection, Mapping
import enum
import inspect
import logging
import types
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from ..loop.executor import ToolOutcome
from ..toolcalls.aliases import Alias
from ..toolcalls.prompting.render import error_text, result_text
from ..toolcalls.reading.schema import ArgumentError, validate_arguments
from ..toolcalls.text.surrogates import mend_all
from .errors import ToolError

_LOGGER = logging.getLogger(__name__)
_SECTION_HEADERS = ("args:", "arguments:", "parameters:", "params:")
_END_HEADERS = ("returns:", "return:", "raises:", "yields:", "examples:", "example:")
_SIMPLE_TYPES: Mapping[type, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
}


class Tool:
    """A Python async function exposed to a model through a JSON schema."""

    def __init__(
        self,
        fn: Callable[..., Awaitable[Any]],
        *,
        name: str | None = None,
        description: str | None = None,
        arg_aliases: Mapping[str, str] | None = None,
        timeout: float | None = None,
        reads: bool | Collection[str] = False,
        erases: Collection[str] = (),
        open_world: bool = False,
        personal: bool = True,
        returns_outside_data: bool = True,
        prompt: str = "",
        aliases: Collection[str] = (),
        action_aliases: Mapping[str, Collection[str]] | None = None,
    ) -> None:
        """Introspect fn; arg_aliases renames keys models often use (q -> query).

        The tool's facts, declared here once (every table of them is derived):
        reads: True when every call only reads; else the ``action`` values
        that only read. Any other call writes (it never runs beside another
        call); undeclared, every call writes, the safe side.
        erases: the actions that erase what the user said or stored (such a
        turn is not recorded in the history).
        open_world: whether it reaches outside the home (HA's annotation).
        personal: whether its arguments hold what people say about themselves
        (diagnostics show only their length); undeclared, they do.
        returns_outside_data: whether a result or an error may carry text from
        outside the home (a page, a search result, a stored memory, a server's
        words) inside an outside-data block. A call whose answer holds one marks
        its conversation (``outside_readers``). Undeclared, a tool is taken to
        return outside data; only one that never does says False.
        prompt: its line in the API prompt, said when the tool is offered.
        aliases: other names models call it by (``fetch_url`` for
        ``web_fetch``); action_aliases: other names for one of its actions
        (``memorize`` stores a memory). The parser and our LLM API resolve
        them, and the action a name implies wins over one the model sent.
        """
        self.fn = fn
        self.name = name or fn.__name__
        doc = inspect.getdoc(fn) or ""
        self.description = description or _summary(doc)
        self.arg_aliases = dict(arg_aliases or {})
        self.timeout = timeout
        self.reads: bool | frozenset[str] = (
            reads if isinstance(reads, bool) else frozenset(reads)
        )
        self.erases = frozenset(erases)
        self.open_world = open_world
        self.personal = personal
        self.returns_outside_data = returns_outside_data
        self.prompt = prompt
        self.aliases = tuple(aliases)
        self.action_aliases = {
            action: tuple(names) for action, names in (action_aliases or {}).items()
        }
        self.schema, self._injected = _build_schema(fn, _arg_descriptions(doc))
        self._enums = _enum_params(fn)

    @property
    def read_only(self) -> bool:
        """Whether every call only reads (HA's read-only annotation)."""
        return self.reads is True

    def only_reads(self, arguments: Mapping[str, Any] | None) -> bool:
        """Whether this call only reads, so that it may run beside others."""
        if isinstance(self.reads, bool):
            return self.reads
        action = (arguments or {}).get("action")
        # No action fails validation before it touches anything.
        return action is None or _action(action) in self.reads

    def erases_with(self, action: Any) -> bool:
        """Whether a call with this ``action`` erases what the user said or stored."""
        return action is not None and _action(action) in self.erases

    @property
    def alias_groups(self) -> tuple[Alias, ...]:
        """Its other names as the parser takes them: each with what it implies."""
        groups = [
            Alias(self.name, names, {"action": action})
            for action, names in self.action_aliases.items()
        ]
        if self.aliases:
            groups.append(Alias(self.name, self.aliases))
        return tuple(groups)

    @property
    def openai_schema(self) -> dict[str, Any]:
        """The OpenAI function-calling entry for this tool."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.schema,
            },
        }

    def validate_args(self, args: Mapping[str, Any] | None) -> dict[str, Any]:
        """Rename aliases, drop unknown keys, coerce and check; ArgumentError if bad."""
        if args is None:
            args = {}
        if not isinstance(args, Mapping):
            return validate_arguments(self.schema, args)  # raises: not an object
        props = self.schema["properties"]
        required = self.schema.get("required", ())
        renamed: dict[str, Any] = {}
        for key, value in args.items():
            key = self.arg_aliases.get(key, key)
            if value is None and key not in required:
                continue  # an optional argument sent as null means "not given"
            if key in props and key not in renamed:
                renamed[key] = _match_enum_case(props[key], mend_all(value))
        return validate_arguments(self.schema, renamed)

    async def invoke(
        self, args: Mapping[str, Any] | None, context: Any = None
    ) -> ToolOutcome:
        """Validate, run and stringify; every failure becomes a failed ERROR text."""
        try:
            kwargs = self.validate_args(args)
            for param, enum_cls in self._enums.items():
                if param in kwargs:
                    kwargs[param] = enum_cls(kwargs[param])
            for param in self._injected:
                kwargs[param] = context
            call = self.fn(**kwargs)
            if self.timeout is not None:
                async with asyncio.timeout(self.timeout):
                    result = await call
            else:
                result = await call
        except asyncio.CancelledError:
            raise
        except Exception as err:  # the model must get text, not a crash
            if not isinstance(err, (ArgumentError, ToolError)):
                _LOGGER.exception("Tool %s failed unexpectedly", self.name)
            hint = ""
            if isinstance(err, ArgumentError):
                hint = f"{self.name} takes: {_signature_hint(self.schema)}"
            return ToolOutcome(error_text(err, hint), failed=True)
        return ToolOutcome("OK" if result is None else result_text(result))

    async def call(self, args: Mapping[str, Any] | None, context: Any = None) -> str:
        """Like invoke(), text only."""
        return str((await self.invoke(args, context)).data)

    def __repr__(self) -> str:
        """Show the tool's name."""
        return f"<Tool {self.name}>"


def _action(action: Any) -> str:
    return str(action).strip().lower()


def _signature_hint(schema: Mapping[str, Any]) -> str:
    required = set(schema.get("required", []))
    parts = []
    for key, prop in schema["properties"].items():
        kind = "|".join(map(str, prop["enum"])) if "enum" in prop else prop.get("type")
        parts.append(f"{key}{'' if key in required else '?'}: {kind}")
    return ", ".join(parts)


def _match_enum_case(prop: Mapping[str, Any], value: Any) -> Any:
    """'Search' -> 'search' when the enum has exactly that word in another case."""
    enum_values = prop.get("enum")
    if not enum_values or not isinstance(value, str) or value in enum_values:
        return value
    folded = value.strip().lower()
    for option in enum_values:
        if isinstance(option, str) and option.lower() == folded:
            return option
    return value


def _build_schema(
    fn: Callable[..., Any], descriptions: Mapping[str, str]
) -> tuple[dict[str, Any], list[str]]:
    hints = get_type_hints(fn)
    properties: dict[str, Any] = {}
    required: list[str] = []
    injected: list[str] = []
    for param in inspect.signature(fn).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        annotation = hints.get(param.name, Any)
        if getattr(annotation, "__tool_injected__", False):
            injected.append(param.name)
            continue
        optional, inner = _unwrap_optional(annotation)
        prop = annotation_schema(inner)
        if param.name in descriptions:
            prop["description"] = descriptions[param.name]
        has_default = param.default is not inspect.Parameter.empty
        if has_default and param.default is not None:
            prop["default"] = _plain(param.default)
        if not has_default and not optional:
            required.append(param.name)
        properties[param.name] = prop
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema, injected


def _enum_params(fn: Callable[..., Any]) -> dict[str, type[enum.Enum]]:
    """Parameters annotated with an Enum: the model's value becomes the member."""
    found = {}
    for name, annotation in get_type_hints(fn).items():
        inner = _unwrap_optional(annotation)[1]
        if isinstance(inner, type) and issubclass(inner, enum.Enum):
            found[name] = inner
    return found


def _plain(value: Any) -> Any:
    return value.value if isinstance(value, enum.Enum) else value


def _unwrap_optional(annotation: Any) -> tuple[bool, Any]:
    """(True, X) for ``X | None`` / ``Optional[X]``, else (False, annotation)."""
    if get_origin(annotation) in (Union, types.UnionType):
        members = [a for a in get_args(annotation) if a is not type(None)]
        if len(members) < len(get_args(annotation)):
            if len(members) == 1:
                return True, members[0]
            return True, Union[tuple(members)]  # noqa: UP007 - built at runtime
    return False, annotation


def annotation_schema(annotation: Any) -> dict[str, Any]:
    """JSON schema for one annotation; unknown types become an unconstrained {}."""
    if annotation in _SIMPLE_TYPES:
        return {"type": _SIMPLE_TYPES[annotation]}
    origin = get_origin(annotation)
    if origin is Literal:
        values = list(get_args(annotation))
        kinds = {_SIMPLE_TYPES.get(type(v)) for v in values}
        prop: dict[str, Any] = {"enum": values}
        if len(kinds) == 1 and None not in kinds:
            prop["type"] = kinds.pop()
        return prop
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return annotation_schema(Literal[tuple(m.value for m in annotation)])
    if annotation in (list, tuple, set) or origin in (list, tuple, set):
        args = get_args(annotation)
        prop = {"type": "array"}
        if args and args[0] is not Ellipsis:
            prop["items"] = annotation_schema(args[0])
        return prop
    if annotation is dict or origin is dict:
        return {"type": "object"}
    if origin in (Union, types.UnionType):
        return {"anyOf": [annotation_schema(a) for a in get_args(annotation)]}
    return {}


def _summary(doc: str) -> str:
    """Docstring text before the Args:/Returns: sections, paragraphs kept."""
    paragraphs: list[str] = []
    current: list[str] = []
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped.lower() in _SECTION_HEADERS + _END_HEADERS:
            break
        if not stripped:
            if current:
                paragraphs.append(" ".join(current))
                current = []
            continue
        current.append(stripped)
    if current:
        paragraphs.append(" ".join(current))
    return "\n".join(paragraphs)


def _arg_descriptions(doc: str) -> dict[str, str]:
    """Google-style ``name (type): text`` entries; indented lines continue them."""
    descriptions: dict[str, str] = {}
    in_args = False
    base_indent: int | None = None
    current: str | None = None
    for line in doc.splitlines():
        stripped = line.strip()
        lowered = stripped.lower()
        if lowered in _SECTION_HEADERS:
            in_args, base_indent, current = True, None, None
            continue
        if not in_args:
            continue
        if lowered in _END_HEADERS:
            break
        if not stripped:
            continue
        indent = len(line) - len(line.lstrip())
        if base_indent is None:
            base_indent = indent
        if indent <= base_indent and ":" in stripped:
            head, _, text = stripped.partition(":")
            current = head.split("(")[0].strip()
            descriptions[current] = text.strip()
        elif indent > base_indent and current is not None:
            descriptions[current] = f"{descriptions[current]} {stripped}".strip()
        elif indent < base_indent:
            break
    return descriptions
