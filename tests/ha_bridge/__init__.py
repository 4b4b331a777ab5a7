"""A bridge: pytest-homeassistant-custom-component 0.13.375 on HA 2026.11.0.

pytest-homeassistant-custom-component (phcc) publishes one release per HA
release; the newest, 0.13.375, is made for HA 2026.10.4 and pins it. Until a
release for 2026.11 appears, the current lane runs it on 2026.11.0 with two
mends, and nothing else:

1. Install order. ``requirements_nodeps.txt`` is installed with ``--no-deps``
   (``script/setup``), so phcc's ``homeassistant==2026.10.4`` pin does not
   replace 2026.11.0; its other dependencies are listed, at its own pins, in
   ``requirements_test.txt``.
2. Import order and one moved name (``plugin.py``, loaded with ``-p`` from
   ``pyproject.toml`` before any installed pytest plugin):
   - HA 2026.11 aliases ``httpx`` to ``httpx2`` when ``homeassistant`` is first
     imported, which must happen before anything imports ``httpx``; phcc's own
     plugin imports ``respx`` (and so ``httpx``) first. The bridge imports
     ``homeassistant`` before every other plugin.
   - ``_clear_logger_overwrites`` moved to
     ``homeassistant.components.logger.helpers``; phcc imports it from
     ``homeassistant.components.logger``. The bridge puts the name back there.

Both mends detect what they fix, so on 2026.10.4 and 2026.2.3 the plugin does
nothing. When phcc publishes a release for 2026.11: pin it in
``requirements_test.txt``, delete this folder, its ``-p`` line in
``pyproject.toml`` and the ``nodeps`` argument in ``script/setup``.
"""
