"""UI setup: the model-server connection, and one subentry per agent."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from homeassistant.config_entries import (
    ConfigEntry,
    ConfigEntryState,
    ConfigFlow,
    ConfigFlowResult,
    ConfigSubentryFlow,
    SubentryFlowResult,
)
from homeassistant.const import CONF_NAME
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import entity_registry as er, llm
from homeassistant.helpers.selector import (
    BooleanSelector,
    EntitySelector,
    EntitySelectorConfig,
    NumberSelector,
    NumberSelectorConfig,
    NumberSelectorMode,
    SelectOptionDict,
    SelectSelector,
    SelectSelectorConfig,
    SelectSelectorMode,
    TemplateSelector,
    TextSelector,
    TextSelectorConfig,
    TextSelectorType,
)
from homeassistant.helpers.typing import UNDEFINED
import voluptuous as vol

from .backend.errors import (
    BackendAuthError,
    BackendConnectionError,
    BackendError,
    BackendResponseError,
    BackendTimeoutError,
)
from .backend.servers import SERVER_KINDS, ServerKind
from .const import (
    CONF_API_KEY,
    CONF_BASE_URL,
    CONF_CHECK_AGAIN,
    CONF_CONSTRAINTS,
    CONF_HANDOFF_TARGETS,
    CONF_INSTANT_CONFIRMATIONS,
    CONF_KEEP_ALIVE,
    CONF_LARGE_HOME,
    CONF_LLM_HASS_API,
    CONF_MAX_DEVICE_COMMANDS,
    CONF_MAX_TOKENS,
    CONF_MAX_TOOL_CALLS,
    CONF_MODEL,
    CONF_PROMPT,
    CONF_REQUEST_TIMEOUT,
    CONF_RUN_RECOGNIZED,
    CONF_SERVER_KIND,
    CONF_STRICT_CALLS,
    CONF_TEMPERATURE,
    CONF_TOOL_CHOICE,
    CONF_TOOL_FORMAT,
    CONF_WARM_UP,
    CONNECT_TIMEOUT,
    DEFAULT_AGENT_NAME,
    DEFAULT_AI_TASK_NAME,
    DEFAULT_KEEP_ALIVE,
    DEFAULT_LARGE_HOME,
    DEFAULT_MAX_TOKENS,
    DEFAULT_REQUEST_TIMEOUT,
    DEFAULT_TEMPERATURE,
    DEFAULT_TOOL_CHOICE,
    DEFAULT_TOOL_FORMAT,
    DOMAIN,
    LARGE_HOME_MODES,
    LOGGER,
    MAX_DEVICE_COMMANDS_PER_TURN,
    MAX_TOOL_CALLS_PER_TURN,
    OPTION_DEFAULTS,
    SUBENTRY_AI_TASK,
    SUBENTRY_CONVERSATION,
)
from .ha import compat
from .ha.check import AgentCheck, async_check_agent, async_tool_names
from .ha.client import async_create_backend
from .ha.entry import ToolbeltRuntime
from .ha.intent_tools import PROBE_TOOL
from .ha.server_names import (
    address,
    default_title,
    spoken_name,
    url_for_form,
    url_from_form,
    without_credentials,
)
from .ha.settings import agent_settings, loop_settings, server_settings
from .loop.probe import async_probe_constraints
from .loop.tool_choice import POLICIES
from .toolcalls import dialect_names
from .tools.config_flow import SUBENTRY_TYPE_TOOLS, ToolBackendsSubentryFlowHandler


def normalize_url(url: str) -> str:
    """One spelling per server, so the same server can't be added twice."""
    return url.strip().rstrip("/")


def server_unique_id(url: str) -> str:
    """The server, whatever credentials reach it (and never the credentials)."""
    return without_credentials(normalize_url(url))


def entry_title(name: str | None, data: Mapping[str, Any], suggested: str) -> str:
    """The name the user typed, or a readable one when they kept the suggestion."""
    name = (name or "").strip()
    return default_title(data) if not name or name == suggested else name


async def async_validate_connection(
    hass: HomeAssistant, data: Mapping[str, Any]
) -> tuple[dict[str, str], list[str]]:
    """List the server's models; map failures to form errors."""
    server = server_settings(data)
    try:
        backend = await async_create_backend(hass, data)
        async with asyncio.timeout(CONNECT_TIMEOUT):
            models = await backend.list_models()
    except BackendAuthError:
        return {"base": "invalid_auth"}, []
    except BackendResponseError:
        return {"base": "not_openai_api"}, []
    except (BackendConnectionError, BackendTimeoutError, TimeoutError):
        return {"base": "cannot_connect"}, []
    except BackendError:
        LOGGER.exception("Unexpected answer from %s", address(server.base_url))
        return {"base": "cannot_connect"}, []
    except Exception:
        LOGGER.exception("Unexpected error validating %s", address(server.base_url))
        return {"base": "unknown"}, []
    return {}, models


def default_agent_options(models: list[str]) -> dict[str, Any]:
    """The options of the agent created with the entry."""
    options: dict[str, Any] = {
        CONF_PROMPT: llm.DEFAULT_INSTRUCTIONS_PROMPT,
        CONF_LLM_HASS_API: [llm.LLM_API_ASSIST],
        **OPTION_DEFAULTS,
    }
    if models:
        options[CONF_MODEL] = models[0]
    return options


class ToolbeltConfigFlow(ConfigFlow, domain=DOMAIN):
    """Connect Toolbelt to one model server."""

    VERSION = 1

    def __init__(self) -> None:
        """Start with no server kind chosen."""
        self._server_kind = "other"
        self._data: dict[str, Any] = {}
        self._title = ""
        self._agent: dict[str, Any] = {}
        self._models: list[str] = []
        self._usable: tuple[str, ...] = ()

    async def async_step_user(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Ask which kind of server, so the next form can suggest its address."""
        if user_input is not None:
            self._server_kind = user_input[CONF_SERVER_KIND]
            return await self.async_step_connect()
        return self.async_show_form(
            step_id="user",
            data_schema=vol.Schema(
                {
                    vol.Required(CONF_SERVER_KIND, default="ollama"): SelectSelector(
                        SelectSelectorConfig(
                            options=list(SERVER_KINDS),
                            mode=SelectSelectorMode.LIST,
                            translation_key=CONF_SERVER_KIND,
                        )
                    )
                }
            ),
        )

    def _connection_form(
        self,
        step_id: str,
        shown: Mapping[str, Any],
        errors: dict[str, str],
        server: str,
    ) -> ConfigFlowResult:
        """The address, key and name form, as adding and reconfiguring show it."""
        return self.async_show_form(
            step_id=step_id,
            data_schema=self.add_suggested_values_to_schema(
                _connection_schema(), shown
            ),
            errors=errors,
            description_placeholders={"server": server},
        )

    async def async_step_connect(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Base URL, optional key and a name; validated by listing the models."""
        kind = server_settings({CONF_SERVER_KIND: self._server_kind}).kind
        suggested_title = default_title(
            {CONF_SERVER_KIND: kind.key, CONF_BASE_URL: kind.default_base_url}
        )
        errors: dict[str, str] = {}
        if user_input is not None:
            data = {
                CONF_SERVER_KIND: self._server_kind,
                CONF_BASE_URL: normalize_url(user_input[CONF_BASE_URL]),
                CONF_API_KEY: user_input.get(CONF_API_KEY, "").strip(),
            }
            await self.async_set_unique_id(server_unique_id(data[CONF_BASE_URL]))
            self._abort_if_unique_id_configured()
            if kind.api_key_required and not data[CONF_API_KEY]:
                errors[CONF_API_KEY] = "api_key_required"
            else:
                errors, models = await async_validate_connection(self.hass, data)
            if not errors:
                self._data = data
                self._title = entry_title(
                    user_input.get(CONF_NAME), data, suggested_title
                )
                self._agent = default_agent_options(models)
                self._models = models
                return await self.async_step_agent()
        suggested = user_input or {
            CONF_BASE_URL: kind.default_base_url,
            CONF_NAME: suggested_title,
        }
        return self._connection_form("connect", suggested, errors, spoken_name(kind))

    async def async_step_agent(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """The model and tool-call format of the agent created with the server."""
        if user_input is not None:
            self._agent.update(_checked(user_input))
            return await self.async_step_check()
        return self.async_show_form(
            step_id="agent",
            data_schema=self.add_suggested_values_to_schema(
                _model_schema(self._models), self._agent
            ),
            description_placeholders={"server": self._title},
        )

    async def async_step_check(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """The capability check for the agent created with the server.

        Its form shows the model and format checked: changed, they are checked
        again; submitted as they are, the entry is created.
        """
        if user_input is not None and not _changes_check(user_input, self._agent):
            self._agent.update(_choices(user_input, self._usable))
            return self.async_create_entry(
                title=self._title,
                data=self._data,
                subentries=[
                    {
                        "subentry_type": SUBENTRY_CONVERSATION,
                        "data": self._agent,
                        # Named after its model, as an added agent is.
                        "title": agent_settings(self._agent).model
                        or DEFAULT_AGENT_NAME,
                        "unique_id": None,
                    },
                    # As HA's own LLM integrations do: an AI task comes with it,
                    # on the same model, schema-constrained if the check saw it work.
                    {
                        "subentry_type": SUBENTRY_AI_TASK,
                        "data": {
                            **{
                                key: self._agent[key]
                                for key in AI_TASK_OPTIONS
                                if key in self._agent
                            },
                            CONF_CONSTRAINTS: [
                                k for k in self._usable if k == "json_schema"
                            ],
                        },
                        "title": DEFAULT_AI_TASK_NAME,
                        "unique_id": None,
                    },
                ],
            )
        if user_input is not None:
            self._agent.update(_checked(user_input))
        backend = await async_create_backend(self.hass, self._data)
        check = await async_check_agent(self.hass, backend, self._data, self._agent)
        self._usable = check.constraints.honoured
        tools = await async_tool_names(self.hass, self._agent)
        return _show_check(self, check, self._agent, tools, self._models)

    async def async_step_reconfigure(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Change the address, key or name of a configured server."""
        entry = self._get_reconfigure_entry()
        stored = server_settings(entry.data)
        errors: dict[str, str] = {}
        if user_input is not None:
            url = url_from_form(user_input[CONF_BASE_URL], stored.base_url)
            data = {
                **entry.data,
                CONF_BASE_URL: normalize_url(url),
                # The stored key is never shown: an empty field keeps it.
                CONF_API_KEY: user_input.get(CONF_API_KEY, "").strip()
                or stored.api_key,
            }
            unique_id = server_unique_id(data[CONF_BASE_URL])
            await self.async_set_unique_id(unique_id)
            if unique_id != entry.unique_id:
                self._abort_if_unique_id_configured()
            errors, _models = await async_validate_connection(self.hass, data)
            if not errors:
                # A title that was our own suggestion follows the new address.
                suggested = default_title(entry.data)
                return self.async_update_reload_and_abort(
                    entry,
                    unique_id=unique_id,
                    title=entry_title(user_input.get(CONF_NAME), data, suggested),
                    data=data,
                )
        shown = user_input or {
            CONF_BASE_URL: url_for_form(stored.base_url),
            CONF_NAME: entry.title,
        }
        return self._connection_form("reconfigure", shown, errors, entry.title)

    async def async_step_reauth(
        self, entry_data: Mapping[str, Any]
    ) -> ConfigFlowResult:
        """The server answered 401: ask for a new key."""
        return await self.async_step_reauth_confirm()

    async def async_step_reauth_confirm(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Validate the new key before saving it."""
        entry = self._get_reauth_entry()
        errors: dict[str, str] = {}
        if user_input is not None:
            data = {**entry.data, CONF_API_KEY: user_input[CONF_API_KEY].strip()}
            errors, _models = await async_validate_connection(self.hass, data)
            if not errors:
                return self.async_update_reload_and_abort(entry, data=data)
        return self.async_show_form(
            step_id="reauth_confirm",
            data_schema=vol.Schema(
                {
                    vol.Required(CONF_API_KEY): TextSelector(
                        TextSelectorConfig(type=TextSelectorType.PASSWORD)
                    )
                }
            ),
            errors=errors,
            description_placeholders={"server": entry.title},
        )

    @classmethod
    @callback
    def async_get_supported_subentry_types(
        cls, config_entry: ConfigEntry
    ) -> dict[str, type[ConfigSubentryFlow]]:
        """Agents and AI tasks, plus the backends of our own tools."""
        return {
            SUBENTRY_CONVERSATION: AgentSubentryFlowHandler,
            SUBENTRY_AI_TASK: AITaskSubentryFlowHandler,
            SUBENTRY_TYPE_TOOLS: ToolBackendsSubentryFlowHandler,
        }


def _connection_schema() -> vol.Schema:
    return vol.Schema(
        {
            vol.Optional(CONF_NAME): str,
            vol.Required(CONF_BASE_URL): TextSelector(
                TextSelectorConfig(type=TextSelectorType.URL)
            ),
            vol.Optional(CONF_API_KEY, default=""): TextSelector(
                TextSelectorConfig(type=TextSelectorType.PASSWORD)
            ),
        }
    )


# Options that count things: HA's number selector hands back floats (1024.0).
WHOLE_NUMBER_OPTIONS = (
    CONF_MAX_TOKENS,
    CONF_MAX_TOOL_CALLS,
    CONF_MAX_DEVICE_COMMANDS,
    CONF_REQUEST_TIMEOUT,
)


def whole_numbers(options: dict[str, Any]) -> dict[str, Any]:
    """The options with counts stored as ints, as the server and the UI expect."""
    return {
        key: int(value)
        if key in WHOLE_NUMBER_OPTIONS and isinstance(value, float)
        else value
        for key, value in options.items()
    }


def api_label(api: llm.API) -> str:
    """An LLM API's name, saying when only administrators' turns may use it."""
    if compat.api_requires_admin(api):
        return f"{api.name} (administrators only)"
    return api.name


def valid_llm_apis(hass: HomeAssistant, selected: list[str] | str | None) -> list[str]:
    """Drop API ids that no longer exist (an uninstalled integration's API)."""
    if not selected:
        return []
    if isinstance(selected, str):
        selected = [selected]
    known = {api.id for api in llm.async_get_apis(hass)}
    return [api_id for api_id in selected if api_id in known]


class _OneFormSubentryFlow(ConfigSubentryFlow):
    """What the agent and AI task flows share: add and reconfigure with one form."""

    @property
    def _is_new(self) -> bool:
        return self.source == "user"

    async def async_step_user(
        self, user_input: dict[str, Any] | None = None
    ) -> SubentryFlowResult:
        """Add one: the same form as a change."""
        return await self.async_step_init(user_input)

    async def async_step_reconfigure(
        self, user_input: dict[str, Any] | None = None
    ) -> SubentryFlowResult:
        """Change one: the same form as an addition."""
        return await self.async_step_init(user_input)

    async def async_step_init(
        self, user_input: dict[str, Any] | None = None
    ) -> SubentryFlowResult:
        """The one form; each flow defines it."""
        raise NotImplementedError

    def _runtime(self) -> ToolbeltRuntime | None:
        """The server's runtime; None when the entry is not loaded."""
        entry = self._get_entry()
        return entry.runtime_data if entry.state is ConfigEntryState.LOADED else None

    async def _async_models(self, runtime: ToolbeltRuntime) -> list[str]:
        """The server's models now, else those it listed when the entry loaded."""
        try:
            async with asyncio.timeout(CONNECT_TIMEOUT):
                return await runtime.backend.list_models()
        except (BackendError, TimeoutError):
            return runtime.models

    def _async_save(
        self, title: str | None, options: dict[str, Any]
    ) -> SubentryFlowResult:
        """Create the subentry, or update the one being reconfigured.

        A new title renames the subentry; its device follows on the reload.
        """
        if self._is_new:
            return self.async_create_entry(title=title or "", data=options)
        return self.async_update_and_abort(
            self._get_entry(),
            self._get_reconfigure_subentry(),
            title=title or UNDEFINED,
            data=options,
        )


class AgentSubentryFlowHandler(_OneFormSubentryFlow):
    """Add or reconfigure one agent: name, model, prompt, tools and limits."""

    def __init__(self) -> None:
        """Nothing chosen yet."""
        super().__init__()
        self._options: dict[str, Any] = {}
        self._name = DEFAULT_AGENT_NAME
        # The name the form suggested while it follows the model (as a server's
        # name follows its host); None once it is the user's own.
        self._following: str | None = None
        self._usable: tuple[str, ...] = ()

    async def async_step_init(
        self, user_input: dict[str, Any] | None = None
    ) -> SubentryFlowResult:
        """One form with every option; the model list comes from the server."""
        if (runtime := self._runtime()) is None:
            return self.async_abort(reason="entry_not_loaded")
        if user_input is not None:
            typed = str(user_input.pop(CONF_NAME, "") or "").strip()
            check_again = user_input.pop(CONF_CHECK_AGAIN, False)
            user_input[CONF_LLM_HASS_API] = valid_llm_apis(
                self.hass, user_input.get(CONF_LLM_HASS_API)
            )
            stored = {} if self._is_new else self._get_reconfigure_subentry().data
            # What the last check chose stays unless the check runs again.
            kept = {k: stored[k] for k in CHECK_CHOICES if k in stored}
            self._options = {**kept, **whole_numbers(user_input)}
            self._name = self._name_for(typed, agent_settings(self._options).model)
            if self._is_new or check_again or _needs_check(self._options, stored):
                return await self.async_step_check()
            # Only options the check does not depend on changed (caps, instant
            # confirmations, the prompt...): no requests to the server.
            return self._async_save(self._name, self._options)

        if self._is_new:
            options = default_agent_options(runtime.models)
            name = self._free_name(agent_settings(options).model)
            self._following = name
        else:
            subentry = self._get_reconfigure_subentry()
            options = dict(subentry.data)
            name = subentry.title
            follows = name == self._free_name(agent_settings(options).model)
            self._following = name if follows else None
        self._name = name
        options[CONF_LLM_HASS_API] = valid_llm_apis(
            self.hass, list(agent_settings(options).llm_apis)
        )
        models = await self._async_models(runtime)
        own = (
            None
            if self._is_new
            else er.async_get(self.hass).async_get_entity_id(
                "conversation", DOMAIN, self._get_reconfigure_subentry().subentry_id
            )
        )
        schema = _agent_schema(self.hass, models, runtime.kind, named=True, own=own)
        if not self._is_new:
            schema = schema.extend(
                {vol.Optional(CONF_CHECK_AGAIN, default=False): BooleanSelector()}
            )
        return self.async_show_form(
            step_id="init",
            data_schema=self.add_suggested_values_to_schema(
                schema, {CONF_NAME: name, **options}
            ),
        )

    async def async_step_check(
        self, user_input: dict[str, Any] | None = None
    ) -> SubentryFlowResult:
        """Probe tool mode and constraints; offer the tool choices that work.

        The form shows the model and format checked: changed, they are checked
        again (an untouched name follows the model); unchanged, the agent is saved.
        """
        if user_input is not None and not _changes_check(user_input, self._options):
            self._options.update(_choices(user_input, self._usable))
            return self._async_save(self._name, self._options)
        if user_input is not None:
            self._options.update(_checked(user_input))
            if self._following is not None:
                self._name = self._name_for(
                    self._following, agent_settings(self._options).model
                )
        runtime = self._get_entry().runtime_data
        check = await async_check_agent(
            self.hass, runtime.backend, self._get_entry().data, self._options
        )
        self._usable = check.constraints.honoured
        tools = await async_tool_names(self.hass, self._options)
        models = await self._async_models(runtime)
        return _show_check(self, check, self._options, tools, models)

    def _name_for(self, typed: str, model: str | None) -> str:
        """The typed name; the model's while the suggestion was left as it was."""
        if self._following is not None and typed in ("", self._following):
            self._following = self._free_name(model)
            return self._following
        self._following = None
        return typed or self._name

    def _free_name(self, model: str | None) -> str:
        """A name no other agent of this server has: the model's, else the default."""
        own = None if self._is_new else self._get_reconfigure_subentry().subentry_id
        taken = {
            sub.title
            for sub_id, sub in self._get_entry().subentries.items()
            if sub_id != own
        }
        base = model or DEFAULT_AGENT_NAME
        name, number = base, 2
        while name in taken:
            name, number = f"{base} {number}", number + 1
        return name


def _choices(user_input: dict[str, Any], usable: tuple[str, ...]) -> dict[str, Any]:
    """The check form's answers as agent options."""
    return {
        CONF_TOOL_CHOICE: str(user_input.get(CONF_TOOL_CHOICE) or "").strip()
        or DEFAULT_TOOL_CHOICE,
        CONF_STRICT_CALLS: bool(user_input.get(CONF_STRICT_CALLS, False)),
        CONF_CONSTRAINTS: list(usable),
    }


# What the check depends on: changed, the agent is checked again.
CHECKED_OPTIONS = (CONF_MODEL, CONF_TOOL_FORMAT)
# What the check decides (the form's choices and the constraints found).
CHECK_CHOICES = (CONF_TOOL_CHOICE, CONF_STRICT_CALLS, CONF_CONSTRAINTS)


def _checked(user_input: dict[str, Any]) -> dict[str, Any]:
    """The model and format from a form that shows them."""
    return {key: user_input[key] for key in CHECKED_OPTIONS if key in user_input}


def _changes_check(user_input: dict[str, Any], options: dict[str, Any]) -> bool:
    """The check form came back with another model or format."""
    return any(value != options.get(key) for key, value in _checked(user_input).items())


def _needs_check(options: dict[str, Any], stored: Mapping[str, Any]) -> bool:
    """A reconfigured agent needs the check: what it depends on changed.

    The tools too: the check probes with the agent's own turn-on tool.
    """
    keys = (*CHECKED_OPTIONS, CONF_LLM_HASS_API)
    return CONF_CONSTRAINTS not in stored or any(
        options.get(key) != stored.get(key) for key in keys
    )


def _model_schema(models: list[str], *, required: bool = True) -> vol.Schema:
    """The model (one the server lists, or typed) and the tool-call format.

    Not required on the check's form: left out, they stay as checked.
    """
    field = vol.Required if required else vol.Optional
    return vol.Schema(
        {
            field(CONF_MODEL): SelectSelector(
                SelectSelectorConfig(
                    options=models,
                    custom_value=True,
                    mode=SelectSelectorMode.DROPDOWN,
                    sort=True,
                )
            ),
            field(
                CONF_TOOL_FORMAT,
                **({"default": DEFAULT_TOOL_FORMAT} if required else {}),
            ): SelectSelector(
                SelectSelectorConfig(
                    # auto and native first; labels (with the model families that
                    # write each format) come from the translations.
                    options=["auto", *dialect_names()],
                    mode=SelectSelectorMode.DROPDOWN,
                    translation_key=CONF_TOOL_FORMAT,
                )
            ),
        }
    )


def _show_check(
    flow: Any,
    check: AgentCheck,
    options: dict[str, Any],
    tools: list[str],
    models: list[str],
) -> Any:
    """The check step's form, the same in the server and the agent flows.

    It names the model checked and gives the verdict; the model and format
    can be changed on it, which checks again.
    """
    choices = _choice_schema(
        check.constraints.honoured,
        text_mode=check.text_mode,
        tools=tools,
        current=agent_settings(options).tool_choice,
    )
    return flow.async_show_form(
        step_id="check",
        data_schema=flow.add_suggested_values_to_schema(
            _model_schema(models, required=False).extend(choices.schema), options
        ),
        description_placeholders={
            "model": agent_settings(options).model,
            "result": check.verdict,
            "constraints": check.constraints.summary,
        },
    )


def _choice_schema(
    usable: tuple[str, ...],
    *,
    text_mode: bool,
    tools: list[str],
    current: str | None = None,
) -> vol.Schema:
    """Tool choice only with an honoured constraint; strict calls only in text.

    The policies are labelled by the translations; then one entry per tool of
    the agent (its name), to force that tool on the first request.
    """
    if not usable:
        return vol.Schema({})
    names = [*POLICIES, *(t for t in tools if t not in POLICIES)]
    if current and current not in names:
        names.append(current)  # a tool the agent no longer has: keep it visible
    schema: dict[Any, Any] = {
        vol.Optional(CONF_TOOL_CHOICE, default=DEFAULT_TOOL_CHOICE): SelectSelector(
            SelectSelectorConfig(
                options=[SelectOptionDict(value=name, label=name) for name in names],
                mode=SelectSelectorMode.DROPDOWN,
                translation_key=CONF_TOOL_CHOICE,
            )
        )
    }
    if text_mode:
        schema[vol.Optional(CONF_STRICT_CALLS, default=False)] = BooleanSelector()
    return vol.Schema(schema)


def _agent_schema(
    hass: HomeAssistant,
    models: list[str],
    kind: ServerKind,
    *,
    named: bool,
    own: str | None = None,
) -> vol.Schema:
    schema: dict[Any, Any] = {}
    if named:  # left empty, an agent is named after its model
        schema[vol.Optional(CONF_NAME)] = str
    model = _model_schema(models).schema
    schema.update(
        {
            **{k: v for k, v in model.items() if k == CONF_MODEL},
            vol.Optional(CONF_PROMPT): TemplateSelector(),
            vol.Optional(CONF_LLM_HASS_API): SelectSelector(
                SelectSelectorConfig(
                    options=[
                        SelectOptionDict(value=api.id, label=api_label(api))
                        for api in llm.async_get_apis(hass)
                    ],
                    multiple=True,
                )
            ),
            **{k: v for k, v in model.items() if k == CONF_TOOL_FORMAT},
            vol.Optional(CONF_TEMPERATURE, default=DEFAULT_TEMPERATURE): NumberSelector(
                NumberSelectorConfig(
                    min=0, max=2, step=0.05, mode=NumberSelectorMode.SLIDER
                )
            ),
            vol.Optional(CONF_MAX_TOKENS, default=DEFAULT_MAX_TOKENS): NumberSelector(
                NumberSelectorConfig(
                    min=16, max=32768, step=1, mode=NumberSelectorMode.BOX
                )
            ),
            vol.Optional(
                CONF_REQUEST_TIMEOUT, default=DEFAULT_REQUEST_TIMEOUT
            ): NumberSelector(
                NumberSelectorConfig(
                    min=1,
                    max=600,
                    step=1,
                    mode=NumberSelectorMode.BOX,
                    unit_of_measurement="s",
                )
            ),
            vol.Optional(
                CONF_MAX_TOOL_CALLS, default=MAX_TOOL_CALLS_PER_TURN
            ): NumberSelector(
                NumberSelectorConfig(
                    min=1, max=100, step=1, mode=NumberSelectorMode.BOX
                )
            ),
            vol.Optional(
                CONF_MAX_DEVICE_COMMANDS, default=MAX_DEVICE_COMMANDS_PER_TURN
            ): NumberSelector(
                NumberSelectorConfig(min=0, max=50, step=1, mode=NumberSelectorMode.BOX)
            ),
            vol.Optional(CONF_INSTANT_CONFIRMATIONS, default=False): BooleanSelector(),
            vol.Optional(CONF_RUN_RECOGNIZED, default=False): BooleanSelector(),
            vol.Optional(CONF_LARGE_HOME, default=DEFAULT_LARGE_HOME): SelectSelector(
                SelectSelectorConfig(
                    options=list(LARGE_HOME_MODES),
                    mode=SelectSelectorMode.DROPDOWN,
                    translation_key=CONF_LARGE_HOME,
                )
            ),
            vol.Optional(CONF_HANDOFF_TARGETS, default=[]): EntitySelector(
                EntitySelectorConfig(
                    domain="conversation",
                    multiple=True,
                    exclude_entities=[own] if own else [],
                )
            ),
        }
    )
    if kind.warm_up:
        schema[vol.Optional(CONF_WARM_UP, default=True)] = BooleanSelector()
    if kind.keep_alive_path:
        schema[vol.Optional(CONF_KEEP_ALIVE, default=DEFAULT_KEEP_ALIVE)] = (
            NumberSelector(
                NumberSelectorConfig(
                    min=-1,
                    max=1440,
                    step=1,
                    mode=NumberSelectorMode.BOX,
                    unit_of_measurement="min",
                )
            )
        )
    return vol.Schema(schema)


class AITaskSubentryFlowHandler(_OneFormSubentryFlow):
    """Add or reconfigure one AI Task entity: the model and how it is asked.

    On saving, one request checks whether the server constrains a reply to a
    JSON schema; if so, structured tasks are constrained, else checked after.
    """

    async def async_step_init(
        self, user_input: dict[str, Any] | None = None
    ) -> SubentryFlowResult:
        """One form; the JSON-schema check runs when it is submitted."""
        if (runtime := self._runtime()) is None:
            return self.async_abort(reason="entry_not_loaded")
        if user_input is not None:
            name = user_input.pop(CONF_NAME, None)  # only a new task has the field
            options = whole_numbers(user_input)
            kind = runtime.kind
            # A structured task goes without tools: a text-mode request holds
            # the schema as its request does.
            check = await async_probe_constraints(
                runtime.backend,
                loop_settings({**options, CONF_TOOL_FORMAT: "hermes"}, kind),
                kinds=tuple(k for k in kind.constraints if k == "json_schema"),
                tool=PROBE_TOOL,
            )
            options[CONF_CONSTRAINTS] = list(check.honoured)
            return self._async_save(name, options)
        options = (
            default_ai_task_options(runtime.models)
            if self._is_new
            else dict(self._get_reconfigure_subentry().data)
        )
        models = await self._async_models(runtime)
        schema: dict[Any, Any] = {}
        if self._is_new:
            schema[vol.Required(CONF_NAME)] = str
        schema.update(
            {
                key: value
                for key, value in _agent_schema(
                    self.hass, models, runtime.kind, named=False
                ).schema.items()
                if key in AI_TASK_OPTIONS
            }
        )
        return self.async_show_form(
            step_id="init",
            data_schema=self.add_suggested_values_to_schema(
                vol.Schema(schema), {CONF_NAME: DEFAULT_AI_TASK_NAME, **options}
            ),
        )


# What an AI task can be told: no prompt or tools of its own (the task brings
# them), no device caps (a task's tools are what its caller chose).
AI_TASK_OPTIONS = (
    CONF_MODEL,
    CONF_TOOL_FORMAT,
    CONF_TEMPERATURE,
    CONF_MAX_TOKENS,
    CONF_REQUEST_TIMEOUT,
)


def default_ai_task_options(models: list[str]) -> dict[str, Any]:
    """The options an AI task starts with."""
    defaults = default_agent_options(models)
    return {key: defaults[key] for key in AI_TASK_OPTIONS if key in defaults}
