"""The gate pipeline between a proposed device command and Home Assistant.

Pure core (no ``homeassistant`` imports): ``models`` (types), ``tables`` (intent vocabulary, risk, default policy),
``view`` (the ``HaView`` protocol the shell implements), one module per gate (``input_guard``, ``schema``,
``device_resolved``, ``capability``, ``freshness``, ``policy``, ``dry_run``, ``execution``), ``pipeline`` (gates 1-7,
ordered, fail-stop, traced), ``keeper`` (gate 8 with confirmations, expiry and the idempotency ledger) and ``redact``.
The HA adapter, trace storage, events and services live in the shell's ``control`` package.
"""
