"""Patterns of smuggled syntax: chat delimiters, shell and code, HA templates and actions, encoded payloads."""

from __future__ import annotations

from .pattern_terms import (
    COMMAND_INJECTION,
    DELIMITER_INJECTION,
    ENCODED_PAYLOAD,
    LATENT,
    SERVICE_SMUGGLING,
    TEMPLATE_INJECTION,
    PatternEntry,
)

DELIMITER_PATTERNS: tuple[PatternEntry, ...] = (
    (
        DELIMITER_INJECTION,
        r"<\|?(im_start|im_end|system|assistant|user|endoftext|eot_id|start_header_id|end_header_id|begin_of_text)\|?>",
        (),
    ),
    (DELIMITER_INJECTION, r"\[/?(inst|sys|system|user|assistant|ai|human)\]|<</?sys>>", ()),
    (
        DELIMITER_INJECTION,
        (
            r"\[(admin|system|developer|root) (request|message|override|command)|\b(system|admin|developer) (message"
            r"|notice|override|command)\s*:|\[(user|system|assistant|admin|developer) (left|joined|has left"
            r"|entered)[^\]]{0,30}\]"
        ),
        (LATENT,),
    ),
    (DELIMITER_INJECTION, r"(^|\s)#{2,}\s*(system|assistant|user|instruction|human|ai|response)\b", ()),
    (DELIMITER_INJECTION, r"(^|[\n.;])\s*(system|assistant|user|human|ai)\s*:", ()),
    (DELIMITER_INJECTION, r"</?\s*(user_request|system|instructions?|prompt|context|tool|assistant)\s*>", ()),
    (DELIMITER_INJECTION, r"(^|\s)(-{3,}|={3,}|\*{3,}|_{3,})\s*(end|begin|start|new|system)\b", ()),
    (
        DELIMITER_INJECTION,
        (
            r"\b(end of (user )?(input|request|prompt|instructions?)|begin(ning)? of (system|new) (prompt"
            r"|instructions?))\b"
        ),
        (),
    ),
    (DELIMITER_INJECTION, r"```\s*(system|instructions?|prompt)\b", ()),
)

SMUGGLING_PATTERNS: tuple[PatternEntry, ...] = (
    (
        COMMAND_INJECTION,
        r"(;|&&|\|\|)\s*(rm|curl|wget|sh|bash|nc|python3?|chmod|sudo)\b|\$\(|\$\{|`[^`]{1,200}`|\brm\s+-rf\b",
        (),
    ),
    (COMMAND_INJECTION, r"\b(curl|wget)\s+\S+|\bhttps?://", (LATENT,)),
    (COMMAND_INJECTION, r"\.\./|\.\.\\", ()),
    (COMMAND_INJECTION, r"\b(__import__|eval|exec|os\.system|subprocess)\s*\(|\bimport\s+os\b", ()),
    (COMMAND_INJECTION, r"'\s*(;|or\s+'?1'?\s*=\s*'?1)|\b(drop|truncate)\s+table\b|\bunion\s+select\b", ()),
    (COMMAND_INJECTION, r"<\s*(script|iframe|object|embed)\b|\bjavascript:|\bon(error|load)\s*=", ()),
    (TEMPLATE_INJECTION, r"\{\{|\{%|\{#|\}\}|%\}", ()),  # any Jinja delimiter (HA templates)
    (
        SERVICE_SMUGGLING,
        (
            r"\b(shell_command|python_script|rest_command|pyscript|hassio|homeassistant\.(stop|restart|reload\w*))\b"
            r"|\bservice\s*:|\baction\s*:\s*\w+\.\w+|\bentity_id\s*:"
            r"|\b(lock|cover|switch|light|climate|alarm_control_panel|valve|fan|script|automation|input_boolean"
            r"|button)\."
            r"(open|close|unlock|lock|turn_on|turn_off|toggle|press|trigger|set_\w+|alarm_\w+|stop)\w*\b"
        ),
        (),
    ),
    # the orchestrator's own action format smuggled into a request
    (
        SERVICE_SMUGGLING,
        (
            r"\baction\s*:\s*(finish|schedule|evaluate_command|call_agent|get_prices|get_calendar_constraint"
            r"|calculate_window_sums)\b"
        ),
        (),
    ),
    (ENCODED_PAYLOAD, r"(\\x[0-9a-f]{2}){4,}|(%[0-9a-f]{2}){4,}|(\\u[0-9a-f]{4}){3,}", ()),
)
