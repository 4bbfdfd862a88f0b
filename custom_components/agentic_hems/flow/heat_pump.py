"""The heat pump subentry flow: add or reconfigure a heat pump of the whole-home plan.

Three steps: the name and what it heats (``user`` / ``reconfigure``), the device step of that store
(``space_heating`` or ``hot_water``: how it is controlled and measured, its power range, run times, comfort bands,
its phase, and for a tank its room and hot-water draw) and its model (``model``: the COP from rated points or a
Carnot fraction, the thermal model by hand or fitted from the recorder's history, a house's internal and solar
gains). A fit shows its result and error in the step's description and fills in UA, C and a house's gains;
submitting again stores them. Reconfigure pre-fills every step with the stored heat pump.

The form's numbers and the control entity's domains only guide the frontend; the validators check them with the
plan's own :data:`..planning.home_config.HEAT_PUMP_SCHEMA` and name each bad field in a translated error.
"""

from __future__ import annotations

from typing import Any

from homeassistant.config_entries import ConfigSubentryFlow, SubentryFlowResult
from homeassistant.helpers.selector import (
    EntitySelector,
    EntitySelectorConfig,
    NumberSelectorConfig,
    NumberSelectorMode,
    SelectOptionDict,
    SelectSelector,
    SelectSelectorConfig,
    SelectSelectorMode,
    TextSelector,
)

from ..const import (
    CONF_BATTERY_NAME,
    CONF_CAPACITY_KWH_PER_K,
    CONF_CARNOT_FRACTION,
    CONF_CONTROL_ENTITY,
    CONF_COP_MODE,
    CONF_DAY_END,
    CONF_DAY_HIGH_C,
    CONF_DAY_LOW_C,
    CONF_DAY_START,
    CONF_FIT_RMSE_C,
    CONF_FLOW_TEMP_C,
    CONF_GAINS_KW,
    CONF_HEAT_MAX_KW,
    CONF_HEAT_MIN_KW,
    CONF_HEAT_POWER_ENTITY,
    CONF_HEAT_STORE,
    CONF_HOT_WATER_HOURS,
    CONF_HOT_WATER_KWH,
    CONF_MIN_OFF_MIN,
    CONF_MIN_RUN_MIN,
    CONF_NIGHT_HIGH_C,
    CONF_NIGHT_LOW_C,
    CONF_OUTDOOR_ENTITY,
    CONF_PHASE,
    CONF_ROOM_TEMP_C,
    CONF_SOLAR_ENTITY,
    CONF_SOLAR_GAIN,
    CONF_TEMPERATURE_ENTITY,
    CONF_THERMAL_MODEL,
    CONF_UA_W_PER_K,
    CONF_WEATHER_ENTITY,
    COP_CARNOT,
    COP_POINTS,
    MODEL_FIT,
    MODEL_MANUAL,
    STORE_HOT_WATER,
    STORE_SPACE,
)
from ..planning.heat_config import HEAT_PUMP_SCHEMA
from ..planning.heat_inputs import async_fit
from ..validation import vol
from .devices import (
    ControlEntitySelector,
    LooseEntitySelector,
    device_errors,
    own_entity_ids,
    own_measurement_errors,
    taken_entities,
)
from .heat_pump_checks import (
    HEAT_NUMBERS,
    form_values,
    model_size_errors,
    validate_device,
    validate_model,
    validate_store,
)
from .schemas import LooseNumberSelector, MinutesTimeSelector, limit_placeholders, phase_selector
from .sg_ready import KEYS as SG_KEYS, SECTION, nested, sg_errors, sg_section


def _number(key: str) -> LooseNumberSelector:
    """Return the number box of ``key`` (limits and unit of :data:`HEAT_NUMBERS`)."""
    minimum, maximum, step, unit = HEAT_NUMBERS[key]
    config = NumberSelectorConfig(min=minimum, max=maximum, step=step, mode=NumberSelectorMode.BOX)
    if unit:
        config["unit_of_measurement"] = unit
    return LooseNumberSelector(config)


def store_schema() -> vol.Schema:
    """Return the first step: the name and what the heat pump heats (the next step's fields depend on it)."""
    return vol.Schema(
        {
            vol.Required(CONF_BATTERY_NAME): TextSelector(),
            vol.Required(CONF_HEAT_STORE, default=STORE_SPACE): SelectSelector(
                SelectSelectorConfig(options=[STORE_SPACE, STORE_HOT_WATER], translation_key="heat_store")
            ),
        }
    )


def _device_fields(
    band: tuple[float, float, float, float], controls: list[str], exclude: list[str], own: list[str]
) -> dict[Any, Any]:
    """Return the device fields of every store: entities, power range, run times, comfort bands, phase.

    ``controls`` are the domains the control entity may have, ``exclude`` the entities its picker leaves out (this
    integration's own and the other devices' controls), the measurement pickers those of ``own`` (this integration's
    planned temperature and power are no measurement); ``band`` holds the defaults of the day low and high and the night low and high edges (°C).
    The maximum power is optional to the frontend, which would otherwise pre-fill its minimum; the flow asks for it.
    """
    return {
        vol.Required(CONF_CONTROL_ENTITY): LooseEntitySelector(
            EntitySelectorConfig(domain=controls, exclude_entities=exclude)
        ),
        vol.Required(CONF_TEMPERATURE_ENTITY): ControlEntitySelector(
            EntitySelectorConfig(domain="sensor", device_class="temperature", exclude_entities=own)
        ),
        vol.Required(CONF_WEATHER_ENTITY): EntitySelector(EntitySelectorConfig(domain="weather")),
        vol.Optional(CONF_HEAT_POWER_ENTITY): ControlEntitySelector(
            EntitySelectorConfig(domain="sensor", device_class="power", exclude_entities=own)
        ),
        vol.Optional(CONF_OUTDOOR_ENTITY): ControlEntitySelector(
            EntitySelectorConfig(domain="sensor", device_class="temperature", exclude_entities=own)
        ),
        vol.Required(CONF_HEAT_MIN_KW, default=0.0): _number(CONF_HEAT_MIN_KW),
        vol.Optional(CONF_HEAT_MAX_KW): _number(CONF_HEAT_MAX_KW),
        vol.Required(CONF_MIN_RUN_MIN, default=0): _number(CONF_MIN_RUN_MIN),
        vol.Required(CONF_MIN_OFF_MIN, default=0): _number(CONF_MIN_OFF_MIN),
        vol.Required(CONF_DAY_START, default="06:00:00"): MinutesTimeSelector(),
        vol.Required(CONF_DAY_END, default="22:00:00"): MinutesTimeSelector(),
        vol.Required(CONF_DAY_LOW_C, default=band[0]): _number(CONF_DAY_LOW_C),
        vol.Required(CONF_DAY_HIGH_C, default=band[1]): _number(CONF_DAY_HIGH_C),
        vol.Required(CONF_NIGHT_LOW_C, default=band[2]): _number(CONF_NIGHT_LOW_C),
        vol.Required(CONF_NIGHT_HIGH_C, default=band[3]): _number(CONF_NIGHT_HIGH_C),
        vol.Optional(CONF_PHASE, description={"suggested_value": "three-phase"}): phase_selector(),
        vol.Optional(SECTION): sg_section(exclude),
    }


def space_schema(exclude: list[str], own: list[str]) -> vol.Schema:
    """Return the device step of space heating: the common fields with a house's comfort band (20-22 °C by day).

    The control entity's picker leaves out the entities ``exclude``, the sensors' pickers those of ``own``.
    """
    return vol.Schema(_device_fields((20.0, 22.0, 17.0, 22.0), ["climate", "switch", "input_boolean"], exclude, own))


def tank_schema(exclude: list[str], own: list[str]) -> vol.Schema:
    """Return the device step of a hot-water tank: the common fields, a tank's band, its room and hot-water draw.

    Its control entity may also be a water heater; its picker leaves out the entities ``exclude``, the sensors'
    pickers those of ``own``.
    """
    hours = [SelectOptionDict(value=str(h), label=f"{h:02d}:00") for h in range(24)]
    return vol.Schema(
        {
            **_device_fields(
                (45.0, 55.0, 40.0, 55.0), ["climate", "switch", "input_boolean", "water_heater"], exclude, own
            ),
            vol.Required(CONF_ROOM_TEMP_C, default=20.0): _number(CONF_ROOM_TEMP_C),
            vol.Required(CONF_HOT_WATER_KWH, default=0.0): _number(CONF_HOT_WATER_KWH),
            vol.Optional(CONF_HOT_WATER_HOURS): SelectSelector(
                SelectSelectorConfig(options=hours, multiple=True, mode=SelectSelectorMode.DROPDOWN)
            ),
        }
    )


def model_schema(house: bool) -> vol.Schema:
    """Return the model step: the COP (rated points or a Carnot fraction) and the thermal model (fit or by hand).

    The thermal model: UA and C; for a house (``house``) also its internal gains and solar gain and the PV power
    sensor a fit reads.
    """
    fields: dict[Any, Any] = {
        vol.Required(CONF_COP_MODE, default=COP_POINTS): SelectSelector(
            SelectSelectorConfig(options=[COP_POINTS, COP_CARNOT], translation_key="cop_mode")
        ),
        vol.Optional("cop_outdoor_1"): _number("cop_outdoor_1"),
        vol.Optional("cop_1"): _number("cop_1"),
        vol.Optional("cop_outdoor_2"): _number("cop_outdoor_2"),
        vol.Optional("cop_2"): _number("cop_2"),
        vol.Optional("cop_outdoor_3"): _number("cop_outdoor_3"),
        vol.Optional("cop_3"): _number("cop_3"),
        vol.Required(CONF_CARNOT_FRACTION, default=0.45): _number(CONF_CARNOT_FRACTION),
        vol.Required(CONF_FLOW_TEMP_C, default=35.0): _number(CONF_FLOW_TEMP_C),
        vol.Required(CONF_THERMAL_MODEL, default=MODEL_MANUAL): SelectSelector(
            SelectSelectorConfig(options=[MODEL_MANUAL, MODEL_FIT], translation_key="thermal_model")
        ),
        vol.Optional(CONF_UA_W_PER_K): _number(CONF_UA_W_PER_K),
        vol.Optional(CONF_CAPACITY_KWH_PER_K): _number(CONF_CAPACITY_KWH_PER_K),
    }
    if house:
        fields |= {
            vol.Optional(CONF_GAINS_KW, default=0.0): _number(CONF_GAINS_KW),
            vol.Optional(CONF_SOLAR_GAIN, default=0.0): _number(CONF_SOLAR_GAIN),
            vol.Optional(CONF_SOLAR_ENTITY): EntitySelector(
                EntitySelectorConfig(domain="sensor", device_class="power")
            ),
        }
    return vol.Schema(fields)


class HeatPumpSubentryFlow(ConfigSubentryFlow):
    """Add or reconfigure a heat pump of the whole-home plan: name and store, the store's device step, the model.

    Its name and control entity must be no other device's, checked on their steps and again right before the heat
    pump is stored: another flow may have stored a device with them in between.
    """

    def __init__(self) -> None:
        """Start with no device data, no fit and nothing typed."""
        super().__init__()
        self._device: dict[str, Any] = {}
        self._fit: dict[str, float] | None = None
        self._fit_text = ""
        self._typed: dict[str, dict[str, Any]] = {}  # each step's last submitted input, by step id

    def _own_id(self) -> str | None:
        """Return the reconfigured heat pump's subentry id; None when adding."""
        return self._get_reconfigure_subentry().subentry_id if self.source == "reconfigure" else None

    def _taken(self, data: dict[str, Any]) -> dict[str, str]:
        """Return the errors of ``data``'s name, control entity and sensors (each when given) among the devices."""
        errors = own_measurement_errors(
            self.hass, data, (CONF_TEMPERATURE_ENTITY, CONF_OUTDOOR_ENTITY, CONF_HEAT_POWER_ENTITY)
        )
        sg_ready_errors = sg_errors(self.hass, data)
        errors |= sg_ready_errors
        errors = device_errors(self.hass, self._get_entry(), self._own_id(), data, CONF_CONTROL_ENTITY) | errors
        return {SECTION if key in SG_KEYS else key: error for key, error in errors.items()}

    def _taken_entities(self) -> list[str]:
        """Return what the control picker leaves out: this integration's entities and the other devices' controls."""
        return taken_entities(self.hass, self._get_entry(), self._own_id())

    def _suggested(self, step_id: str, user_input: dict[str, Any] | None) -> dict[str, Any]:
        """Return the values step ``step_id`` shows: those just submitted, else typed before, else the stored ones."""
        return dict(user_input or self._typed.get(step_id) or self._stored())

    def _stored(self) -> dict[str, Any]:
        """Return the reconfigured heat pump's data as the forms show it; empty when adding.

        When the store was changed, the comfort bands are left out: the new store's defaults fit it better.
        """
        if self.source != "reconfigure":
            return {}
        stored = form_values(self._get_reconfigure_subentry().data)
        if self._device and stored.get(CONF_HEAT_STORE, STORE_SPACE) != self._device[CONF_HEAT_STORE]:
            bands = (CONF_DAY_LOW_C, CONF_DAY_HIGH_C, CONF_NIGHT_LOW_C, CONF_NIGHT_HIGH_C)
            return {k: v for k, v in stored.items() if k not in bands}
        return stored

    async def async_step_user(self, user_input: dict[str, Any] | None = None) -> SubentryFlowResult:
        """Add a heat pump: its name and store."""
        errors: dict[str, str] = {}
        if user_input is not None:
            self._typed["user"] = user_input
            errors, self._device = validate_store(user_input)
            errors = self._taken(self._device) | errors
            if not errors:
                return await self._next_device_step()
        return self.async_show_form(
            step_id="user",
            data_schema=self.add_suggested_values_to_schema(store_schema(), self._suggested("user", user_input)),
            errors=errors,
        )

    async def async_step_reconfigure(self, user_input: dict[str, Any] | None = None) -> SubentryFlowResult:
        """Change a heat pump: its name and store, pre-filled with the stored ones."""
        errors: dict[str, str] = {}
        if user_input is not None:
            self._typed["reconfigure"] = user_input
            errors, self._device = validate_store(user_input)
            errors = self._taken(self._device) | errors
            if not errors:
                return await self._next_device_step()
        return self.async_show_form(
            step_id="reconfigure",
            data_schema=self.add_suggested_values_to_schema(store_schema(), self._suggested("reconfigure", user_input)),
            errors=errors,
        )

    async def _next_device_step(self, user_input: dict[str, Any] | None = None) -> SubentryFlowResult:
        """Go on to the device step of the chosen store, with ``user_input`` as if submitted there."""
        if self._device[CONF_HEAT_STORE] == STORE_HOT_WATER:
            return await self.async_step_hot_water(user_input)
        return await self.async_step_space_heating(user_input)

    async def async_step_space_heating(self, user_input: dict[str, Any] | None = None) -> SubentryFlowResult:
        """Ask for a house's heat pump: entities, power range, run times, comfort bands, phase."""
        errors: dict[str, str] = {}
        if user_input is not None:
            self._typed["space_heating"] = user_input
            errors, device = validate_device(user_input, STORE_SPACE)
            errors = self._taken(device) | errors
            if not errors:
                self._device |= device
                return await self.async_step_model()
        return self.async_show_form(
            step_id="space_heating",
            data_schema=self.add_suggested_values_to_schema(
                space_schema(self._taken_entities(), own_entity_ids(self.hass)),
                nested(self._suggested("space_heating", user_input)),
            ),
            errors=errors,
            description_placeholders=limit_placeholders(HEAT_NUMBERS),
        )

    async def async_step_hot_water(self, user_input: dict[str, Any] | None = None) -> SubentryFlowResult:
        """Ask for a tank's heat pump: the house's fields plus the tank's room and hot-water draw."""
        errors: dict[str, str] = {}
        if user_input is not None:
            self._typed["hot_water"] = user_input
            errors, device = validate_device(user_input, STORE_HOT_WATER)
            errors = self._taken(device) | errors
            if not errors:
                self._device |= device
                return await self.async_step_model()
        return self.async_show_form(
            step_id="hot_water",
            data_schema=self.add_suggested_values_to_schema(
                tank_schema(self._taken_entities(), own_entity_ids(self.hass)),
                nested(self._suggested("hot_water", user_input)),
            ),
            errors=errors,
            description_placeholders=limit_placeholders(HEAT_NUMBERS),
        )

    async def async_step_model(self, user_input: dict[str, Any] | None = None) -> SubentryFlowResult:
        """Ask for the COP and the thermal model; a fit fills in UA and C and shows its result before they are stored."""
        errors: dict[str, str] = {}
        suggested = self._suggested("model", user_input)
        if user_input is not None:
            self._typed["model"] = user_input
            errors, data = validate_model(user_input, self._device)
            if not errors and data[CONF_THERMAL_MODEL] == MODEL_FIT and self._fit is None:
                self._fit, self._fit_text = await async_fit(self.hass, data)
                if self._fit is None:
                    errors[CONF_THERMAL_MODEL] = "fit_failed"
            elif not errors and self._fit is not None and data[CONF_THERMAL_MODEL] == MODEL_FIT:  # shown: store it
                errors = model_size_errors(data)
                if not errors:
                    return await self._finish(HEAT_PUMP_SCHEMA({**data, CONF_FIT_RMSE_C: self._fit["rmse_c"]}))
            elif not errors:
                return await self._finish(HEAT_PUMP_SCHEMA({**data, CONF_FIT_RMSE_C: None}))
            if self._fit is not None and not errors:  # a fit just ran: show it with UA, C and the gains filled in
                fitted = (CONF_UA_W_PER_K, CONF_CAPACITY_KWH_PER_K, CONF_GAINS_KW, CONF_SOLAR_GAIN)
                suggested |= {k: self._fit[k] for k in fitted}
        house = self._device[CONF_HEAT_STORE] == STORE_SPACE
        return self.async_show_form(
            step_id="model",
            data_schema=self.add_suggested_values_to_schema(model_schema(house), suggested),
            errors=errors,
            description_placeholders={**limit_placeholders(HEAT_NUMBERS), "fit_result": self._fit_text},
        )

    async def _finish(self, data: dict[str, Any]) -> SubentryFlowResult:
        """Store the heat pump: a new subentry, or the reconfigured one.

        When another flow stored a device with its name or control entity meanwhile, the step that asks for it is
        shown again with its error and what was typed there (the later steps keep theirs; a fit runs again).
        """
        taken = self._taken(data)
        if taken:
            self._fit, self._fit_text = None, ""
        if CONF_BATTERY_NAME in taken:
            if self.source == "reconfigure":
                return await self.async_step_reconfigure(self._typed["reconfigure"])
            return await self.async_step_user(self._typed["user"])
        if taken:
            return await self._next_device_step(self._typed[self._device[CONF_HEAT_STORE]])
        if self.source == "reconfigure":
            return self._finish_reconfigure(data)
        return self.async_create_entry(title=data[CONF_BATTERY_NAME], data=data)

    def _finish_reconfigure(self, data: dict[str, Any]) -> SubentryFlowResult:
        """Store the reconfigured heat pump and end the flow (reason ``reconfigure_successful``)."""
        return self.async_update_and_abort(
            self._get_entry(), self._get_reconfigure_subentry(), title=data[CONF_BATTERY_NAME], data=data
        )
