"""Tests that run against a Home Assistant instance (the ``hass`` fixture)."""
