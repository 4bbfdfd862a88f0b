"""The assistant in Home Assistant: ``ask`` with HA-backed tools, the OpenAI-compatible model and its services."""
