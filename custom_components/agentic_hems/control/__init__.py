"""Device control in Home Assistant: the gatekeeper on HA's registries, the actuator and the gate service actions."""
