"""Large homes: an index in the prompt, and a tool that finds devices by name.

HA's Assist prompt lists every exposed entity on every request (Toolbelt says
it shorter, ``assist_prompt.py``). In a home of hundreds of entities that list
is most of the prompt: 1,000 entities take over 20,000 characters even so,
more than many local models are run with, and a small server reads them all
before it says a word.

In large-home mode the list gives way to an index: how many devices of each
domain, and the areas on each floor. The agent then offers ``find_devices``,
which looks exposed entities up by words of their name, their area, floor or
domain, and gives their exact names and current state. Nothing is hidden: HA's
intent tools still reach every exposed entity by name, area or floor; a name
is only read when it is needed, at the cost of one more request then.

The mode is an agent option: automatic (on when more than
``LARGE_HOME_ENTITIES`` entities are exposed), on, or off. Like ``handoff``,
the tool belongs to the agent's turn, not to an LLM API: it is offered only
where it replaces HA's list (``conversation.py`` checks the index reached the
prompt), and it reads exactly what HA's list would have shown.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from homeassistant.components.homeassistant.exposed_entities import (
    async_should_expose,
)
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import (
    area_registry as ar,
    device_registry as dr,
    entity_registry as er,
    floor_registry as fr,
)

from ..loop.executor import ToolOutcome
from ..toolcalls.model import ToolCall
from . import compat

FIND_DEVICES_TOOL = "find_devices"
# The agent option (const.LARGE_HOME_MODES) "auto" is on above this many.
LARGE_HOME_ENTITIES = 100
# Devices per find_devices answer; the model pages on with ``offset``.
PAGE_SIZE = 20
# The index names areas up to about this many characters, then counts the rest.
_MAX_AREA_CHARS = 2000
# Conversations whose exposed devices an agent keeps (see ConversationHomes).
_KEPT_CONVERSATIONS = 8
# Domains HA's device list leaves out: they have tools of their own.
_OWN_TOOL_DOMAINS = frozenset({"calendar", "script"})


@dataclass(frozen=True, slots=True)
class ExposedDevice:
    """One exposed entity as HA's device list shows it, plus its floor."""

    entity_id: str
    names: tuple[str, ...]
    domain: str
    area: str | None = None
    area_aliases: tuple[str, ...] = ()
    floor: str | None = None
    floor_aliases: tuple[str, ...] = ()
    floor_level: int | None = None
    device_class: str | None = None

    @property
    def name(self) -> str:
        """The name HA's tools know it by first."""
        return self.names[0]

    def words(self) -> str:
        """Everything a search may match: names, area and floor, folded."""
        parts = (*self.names, *self._area_names(), *self._floor_names())
        return " ".join(parts).casefold()

    def _area_names(self) -> tuple[str, ...]:
        return (self.area, *self.area_aliases) if self.area else ()

    def _floor_names(self) -> tuple[str, ...]:
        return (self.floor, *self.floor_aliases) if self.floor else ()

    def in_area(self, area: str) -> bool:
        """The area (or an alias) is this name, or contains it."""
        return _matches(area, self._area_names())

    def on_floor(self, floor: str) -> bool:
        """The floor (or an alias) is this name, or contains it."""
        return _matches(floor, self._floor_names())


def _fold(text: str) -> str:
    return " ".join(text.casefold().split())


def _matches(wanted: str, names: Iterable[str]) -> bool:
    folded = _fold(wanted)
    return any(folded in _fold(name) for name in names)


@callback
def exposed_devices(hass: HomeAssistant, assistant: str) -> list[ExposedDevice]:
    """Every entity exposed to the assistant that HA's device list shows.

    Sorted by name, so the index built from it is the same on every turn.
    """
    entities, devices = er.async_get(hass), dr.async_get(hass)
    areas, floors = ar.async_get(hass), fr.async_get(hass)
    found = []
    for state in hass.states.async_all():
        if state.domain in _OWN_TOOL_DOMAINS or not async_should_expose(
            hass, assistant, state.entity_id
        ):
            continue
        entry = entities.async_get(state.entity_id)
        area_id = entry.area_id if entry else None
        if (
            area_id is None
            and entry is not None
            and entry.device_id
            and (device := devices.async_get(entry.device_id))
        ):
            area_id = compat.device_area_id(hass, device)
        area = areas.async_get_area(area_id) if area_id else None
        floor = (
            floors.async_get_floor(area.floor_id) if area and area.floor_id else None
        )
        names = [n for n in compat.entity_names(hass, entry, state) if n.strip()]
        found.append(
            ExposedDevice(
                entity_id=state.entity_id,
                names=tuple(names or [state.name]),
                domain=state.domain,
                area=area.name if area else None,
                area_aliases=tuple(sorted(area.aliases)) if area else (),
                floor=floor.name if floor else None,
                floor_aliases=tuple(sorted(floor.aliases)) if floor else (),
                floor_level=floor.level if floor else None,
                device_class=state.attributes.get("device_class"),
            )
        )
    found.sort(key=lambda d: (d.name.casefold(), d.entity_id))
    return found


class ConversationHomes:
    """The exposed devices each conversation of an agent read at its first turn.

    Reading 1,000 entities costs some 30 ms on the event loop; a conversation
    reads them once, as HA 2026.11 builds its prompt once per conversation,
    and its index and tool schemas stay byte-identical for the server's cache.
    """

    def __init__(self) -> None:
        """Keep the last few conversations' devices."""
        self._seen: OrderedDict[str, list[ExposedDevice]] = OrderedDict()

    def devices(
        self,
        hass: HomeAssistant,
        conversation_id: str,
        assistant: str | None,
        *,
        keep: bool = True,
    ) -> list[ExposedDevice]:
        """This conversation's exposed devices (none without an assistant);
        ``keep=False`` reads them without remembering them (a warm-up)."""
        if not assistant:
            return []
        if (devices := self._seen.get(conversation_id)) is None:
            devices = exposed_devices(hass, assistant)
            if not keep:
                return devices
            self._seen[conversation_id] = devices
            while len(self._seen) > _KEPT_CONVERSATIONS:
                self._seen.popitem(last=False)
        self._seen.move_to_end(conversation_id)
        return devices


@dataclass(frozen=True, slots=True)
class HomeShape:
    """What HA's intent tools can match in this home, for their schemas.

    A device class no exposed entity has, or a floor when no exposed entity is
    on one, matches nothing: ``assist_prompt.compact_tool`` leaves them out.
    """

    device_classes: frozenset[str]
    has_floors: bool

    @classmethod
    def of(cls, devices: Iterable[ExposedDevice]) -> HomeShape:
        """The shape of these exposed devices."""
        devices = list(devices)
        return cls(
            device_classes=frozenset(
                str(d.device_class) for d in devices if d.device_class
            ),
            has_floors=any(d.floor for d in devices),
        )


class LargeHome:
    """One turn's large-home mode: the prompt's index and the ``find_devices`` tool."""

    def __init__(self, hass: HomeAssistant, devices: list[ExposedDevice]) -> None:
        """Bind the tool to this turn's exposed devices."""
        self._hass = hass
        self._devices = devices

    @classmethod
    def for_turn(
        cls, hass: HomeAssistant, mode: str, devices: list[ExposedDevice]
    ) -> LargeHome | None:
        """The mode for this turn, or None when it is off for this home."""
        if mode == "off" or not devices:
            return None
        if mode != "on" and len(devices) <= LARGE_HOME_ENTITIES:
            return None
        return cls(hass, devices)

    @cached_property
    def index(self) -> str:
        """What the prompt says instead of the device list (no names, no states)."""
        domains = Counter(d.domain for d in self._devices)
        counts = ", ".join(
            f"{domain} {count:,}"
            for domain, count in sorted(domains.items(), key=lambda i: (-i[1], i[0]))
        )
        return (
            f"Devices: {len(self._devices):,} exposed ({counts}), names not"
            " listed. Use the name the user says; if no device has it, or to"
            f" list devices, call {FIND_DEVICES_TOOL}."
            + (f"\n{areas}" if (areas := self._areas_line()) else "")
        )

    def _areas_line(self) -> str:
        """The areas with exposed devices, grouped by floor, lowest floor first."""
        by_floor: dict[tuple[bool, int, str], list[str]] = {}
        no_area = 0
        for device in self._devices:
            if device.area is None:
                no_area += 1
                continue
            key = (device.floor is None, device.floor_level or 0, device.floor or "")
            names = by_floor.setdefault(key, [])
            if device.area not in names:
                names.append(device.area)
        has_floors = any(not no_floor for no_floor, _, _ in by_floor)
        groups, room, left = [], _MAX_AREA_CHARS, 0
        for (no_floor, _, floor), names in sorted(by_floor.items()):
            kept = []
            for name in sorted(names, key=str.casefold):
                if len(name) + 2 > room:
                    left += 1
                    continue
                room -= len(name) + 2
                kept.append(name)
            if kept and has_floors:
                groups.append(f"{'no floor' if no_floor else floor}: {', '.join(kept)}")
            elif kept:
                groups.append(", ".join(kept))
        parts = []
        if groups:
            prefix = "Areas by floor: " if has_floors else "Areas: "
            parts.append(prefix + "; ".join(groups))
        if left:
            parts.append(f"{left} more areas ({FIND_DEVICES_TOOL} finds them)")
        if no_area:
            has = "device has" if no_area == 1 else "devices have"
            parts.append(f"{no_area:,} {has} no area")
        return "; ".join(parts) + "." if parts else ""

    def openai_tool(self) -> dict[str, Any]:
        """The tool as the model sees it: the same on every turn."""
        return {
            "type": "function",
            "function": {
                "name": FIND_DEVICES_TOOL,
                "description": (
                    "Finds exposed devices by words of their name, area, floor or"
                    " domain: their exact names (for the other tools), domain,"
                    f" area, floor and state, {PAGE_SIZE} at a time."
                ),
                "parameters": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "area": {"type": "string"},
                        "floor": {"type": "string"},
                        "domain": {"type": "string", "description": "e.g. light"},
                        "offset": {"type": "integer", "minimum": 0},
                    },
                },
            },
        }

    def is_read_only(self, call: ToolCall) -> bool:
        """A lookup only reads; it may run beside other reads."""
        return True

    def is_device_command(self, call: ToolCall) -> bool:
        """Not a device command."""
        return False

    def validates_arguments(self, call: ToolCall) -> bool:
        """The loop checks the arguments against the schema above."""
        return False

    async def run(self, call: ToolCall) -> ToolOutcome:
        """The matching devices, best first, one page; an error names what missed."""
        args = call.arguments
        found = self.find(
            name=str(args.get("name") or ""),
            area=str(args.get("area") or ""),
            floor=str(args.get("floor") or ""),
            domain=str(args.get("domain") or ""),
        )
        offset = int(args.get("offset") or 0)
        if not found:
            raise LookupError(_no_match(args))
        page = found[offset : offset + PAGE_SIZE]
        if not page:
            raise LookupError(
                f"only {len(found)} match; use an offset below {len(found)}"
            )
        count = f"{len(found)} device{'s match' if len(found) > 1 else ' matches'}"
        if len(page) < len(found):
            count += f", {offset + 1}-{offset + len(page)} shown"
        head = f"{count} (name: domain, area, floor: state):"
        lines = [head, *(self._line(device) for device in page)]
        if offset + len(page) < len(found):
            lines.append(f"More: call again with offset {offset + len(page)}.")
        return ToolOutcome(data="\n".join(lines))

    def find(
        self, *, name: str = "", area: str = "", floor: str = "", domain: str = ""
    ) -> list[ExposedDevice]:
        """Devices that match every filter given; exact names first.

        Every word of ``name`` must appear in the device's names, area or floor
        ("study lamp" finds the Reading lamp in the Study); a plural word also
        matches its singular.
        """
        words = _fold(name).split()
        domains = {_fold(domain), _fold(domain).removesuffix("s")} - {""}
        found = []
        for device in self._devices:
            if domains and device.domain not in domains:
                continue
            if area and not device.in_area(area):
                continue
            if floor and not device.on_floor(floor):
                continue
            if words and not _has_words(device.words(), words):
                continue
            found.append(device)
        if words:
            wanted = " ".join(words)
            found.sort(key=lambda d: _rank(d, wanted, words))
        return found

    def _line(self, device: ExposedDevice) -> str:
        where = ", ".join(p for p in (device.area, device.floor) if p) or "no area"
        name = device.name
        if len(device.names) > 1:
            name += f" (also {', '.join(device.names[1:])})"
        state = self._hass.states.get(device.entity_id)
        value = state.state if state else "unknown"
        if state and (unit := state.attributes.get("unit_of_measurement")):
            value += f" {unit}"
        return f"- {name}: {device.domain}, {where}: {value}"


def _has_words(text: str, words: list[str]) -> bool:
    return all(
        word in text or (len(word) > 3 and word.endswith("s") and word[:-1] in text)
        for word in words
    )


def _rank(device: ExposedDevice, wanted: str, words: list[str]) -> int:
    """0: a name is the words; 1: a name holds them all; 2: area or floor helped."""
    names = [_fold(n) for n in device.names]
    if wanted in names:
        return 0
    return 1 if any(_has_words(n, words) for n in names) else 2


def _no_match(args: dict[str, Any]) -> str:
    given = ", ".join(
        f"{key} {args[key]!r}"
        for key in ("name", "area", "floor", "domain")
        if args.get(key)
    )
    return (
        f"no exposed device matches {given or 'anything'}; try fewer or other"
        " words, or only an area, floor or domain"
    )
