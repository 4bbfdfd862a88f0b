"""The gate pipeline between a proposed device command and Home Assistant (seed 001; issue 3).

Pure core (no ``homeassistant`` imports): ``models`` (types), ``tables`` (intent vocabulary, risk, default policy),
``view`` (the ``HaView`` protocol the shell implements), one module per gate (``input_guard``, ``schema``,
``device_resolved``, ``capability``, ``freshness``, ``policy``, ``dry_run``) and ``pipeline`` (ordered, fail-stop,
traced). Execution, trace storage and the HA adapter live in the shell (next step of issue 3).
"""
