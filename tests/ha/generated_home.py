"""A home of many real, exposed entities, quick to build: for large-home tests and bench.

Lights, switches and covers of a small test platform (real entity classes that
keep their state in memory, so HA's intents switch them), with unique ids, in
areas on floors. Lights, switches and covers are exposed to Assist by default,
as in a user's home. 1,000 of them set up in about a second, where template
entities on input helpers take far longer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from itertools import cycle
from typing import Any

from homeassistant.components.cover import CoverEntity, CoverEntityFeature
from homeassistant.components.light import ColorMode, LightEntity
from homeassistant.components.switch import SwitchEntity
from homeassistant.core import HomeAssistant
from homeassistant.helpers import (
    area_registry as ar,
    entity_registry as er,
    floor_registry as fr,
)
from homeassistant.helpers.discovery import async_load_platform
from homeassistant.helpers.entity import Entity
from pytest_homeassistant_custom_component.common import (
    MockModule,
    MockPlatform,
    mock_integration,
    mock_platform,
)

PLATFORM = "toolbelt_test_home"
# Floors (level, name) and their rooms: 41 areas in all.
FLOORS: dict[str, tuple[int, tuple[str, ...]]] = {
    "Basement": (
        -1,
        ("Cellar", "Laundry", "Workshop", "Boiler room", "Gym", "Wine cellar"),
    ),
    "Ground floor": (
        0,
        (
            "Kitchen",
            "Living Room",
            "Dining room",
            "Hallway",
            "Guest toilet",
            "Pantry",
            "Conservatory",
            "Porch",
            "Garage",
            "Utility room",
            "Library",
            "Music room",
        ),
    ),
    "First floor": (
        1,
        (
            "Bedroom",
            "Master bathroom",
            "Nursery",
            "Kids room",
            "Bathroom",
            "Landing",
            "Guest bedroom",
            "Dressing room",
            "Playroom",
            "Office",
            "Linen room",
            "Study",
        ),
    ),
    "Attic": (
        2,
        (
            "Loft",
            "Attic bedroom",
            "Attic bathroom",
            "Storage",
            "Studio",
            "Cinema",
            "Sauna",
            "Roof terrace",
            "Den",
            "Hobby room",
            "Attic office",
        ),
    ),
}
# What a room holds, in the order rooms fill up, and its device class.
FIXTURES = (
    ("light", "ceiling light"),
    ("switch", "socket"),
    ("light", "lamp"),
    ("cover", "blind"),
    ("light", "spots"),
    ("switch", "fan"),
    ("light", "strip"),
    ("switch", "heater"),
    ("light", "wall light"),
    ("cover", "curtain"),
)
DEVICE_CLASSES = {"socket": "outlet", "blind": "blind", "curtain": "curtain"}


class _OnOff(Entity):
    """An entity that keeps its on/off state in memory."""

    _attr_should_poll = False

    def __init__(self, unique_id: str, name: str) -> None:
        self._attr_unique_id = unique_id
        self._attr_name = name
        self._attr_device_class = next(
            (c for f, c in DEVICE_CLASSES.items() if f" {f}" in name), None
        )
        self._on = False

    async def _async_set(self, on: bool) -> None:
        self._on = on
        self.async_write_ha_state()


class _Switchable(_OnOff):
    """Turned on and off: a light or a switch."""

    @property
    def is_on(self) -> bool:
        """On or off."""
        return self._on

    async def async_turn_on(self, **kwargs: Any) -> None:
        """Switch on."""
        await self._async_set(True)

    async def async_turn_off(self, **kwargs: Any) -> None:
        """Switch off."""
        await self._async_set(False)


class HomeLight(_Switchable, LightEntity):
    """An on/off light."""

    _attr_color_mode = ColorMode.ONOFF
    _attr_supported_color_modes = frozenset({ColorMode.ONOFF})


class HomeSwitch(_Switchable, SwitchEntity):
    """An on/off switch."""


class HomeCover(_OnOff, CoverEntity):
    """A cover that opens and closes (on = open)."""

    _attr_supported_features = CoverEntityFeature.OPEN | CoverEntityFeature.CLOSE

    @property
    def is_closed(self) -> bool:
        """Closed unless opened."""
        return not self._on

    async def async_open_cover(self, **kwargs: Any) -> None:
        """Open."""
        await self._async_set(True)

    async def async_close_cover(self, **kwargs: Any) -> None:
        """Close."""
        await self._async_set(False)


_CLASSES: dict[str, type[_OnOff]] = {
    "light": HomeLight,
    "switch": HomeSwitch,
    "cover": HomeCover,
}


def home_devices(count: int) -> list[tuple[str, str, str]]:
    """``count`` devices as (domain, name, area): about six a room, as homes have.

    Rooms are taken from every floor in turn; a big home fills all of them.
    """
    by_floor = [rooms for _level, rooms in FLOORS.values()]
    rooms = [
        floor[i]
        for i in range(max(map(len, by_floor)))
        for floor in by_floor
        if i < len(floor)
    ]
    rooms = rooms[: max(1, min(len(rooms), -(-count // 6)))]
    filled: dict[str, int] = {}
    devices = []
    for room in cycle(rooms):
        if len(devices) >= count:
            break
        n = filled.get(room, 0)
        filled[room] = n + 1
        domain, fixture = FIXTURES[n % len(FIXTURES)]
        number = f" {n // len(FIXTURES) + 1}" if n >= len(FIXTURES) else ""
        devices.append((domain, f"{room} {fixture}{number}", room))
    return devices


async def async_setup_generated_home(
    hass: HomeAssistant,
    count: int,
    extra: Sequence[tuple[str, str, str]] = (),
) -> dict[str, str]:
    """``count`` generated devices plus ``extra`` (domain, name, area) ones.

    Areas are created on their floors (an existing area of the same name is
    put on its floor). Returns each device's entity id by name.
    """
    loop = asyncio.get_running_loop()
    debug = loop.get_debug()
    # asyncio's debug mode records a stack per task: 1,000 entities take 5 s
    # with it, 0.x s without. Only the home's setup goes without it.
    loop.set_debug(False)
    try:
        return await _async_setup(hass, [*home_devices(count), *extra])
    finally:
        loop.set_debug(debug)


async def _async_setup(
    hass: HomeAssistant, devices: list[tuple[str, str, str]]
) -> dict[str, str]:
    area_ids = _areas(hass, {room for _domain, _name, room in devices})
    # Registry entries first, in their areas: the entities then start there,
    # with no registry update per entity (which costs a task each).
    registry = er.async_get(hass)
    entities: dict[str, list[_OnOff]] = {domain: [] for domain in _CLASSES}
    by_name = {}
    for i, (domain, name, room) in enumerate(devices):
        entry = registry.async_get_or_create(
            domain, PLATFORM, f"{PLATFORM}_{i}", original_name=name
        )
        registry.async_update_entity(entry.entity_id, area_id=area_ids[room])
        entities[domain].append(_CLASSES[domain](f"{PLATFORM}_{i}", name))
        by_name[name] = entry.entity_id
    mock_integration(hass, MockModule(PLATFORM))
    for domain, found in entities.items():

        async def setup(
            hass: HomeAssistant, config: Any, add: Any, info: Any = None, found=found
        ) -> None:
            add(found)

        mock_platform(
            hass, f"{PLATFORM}.{domain}", MockPlatform(async_setup_platform=setup)
        )
        # Discovery sets the platform up whether or not the domain already is.
        await async_load_platform(hass, domain, PLATFORM, {}, {})
    await hass.async_block_till_done()
    return by_name


def _areas(hass: HomeAssistant, rooms: set[str]) -> dict[str, str]:
    """Each room's area id; areas are created on their floors."""
    floor_of = {
        room: floor for floor, (_level, names) in FLOORS.items() for room in names
    }
    areas, floors = ar.async_get(hass), fr.async_get(hass)
    area_ids = {}
    for room in sorted(rooms):
        floor_id = None
        if (floor_name := floor_of.get(room)) is not None:
            floor = floors.async_get_floor_by_name(floor_name) or floors.async_create(
                floor_name, level=FLOORS[floor_name][0]
            )
            floor_id = floor.floor_id
        area = areas.async_get_area_by_name(room) or areas.async_create(room)
        area_ids[room] = areas.async_update(area.id, floor_id=floor_id).id
    return area_ids
