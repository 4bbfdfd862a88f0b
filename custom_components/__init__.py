"""Custom integrations (keeps tests importing this package, not pytest-homeassistant-custom-component's)."""
