"""Patterns of text that asks for what must stay hidden: the system prompt and credentials."""

from __future__ import annotations

from .pattern_terms import (
    APIKEY,
    CREDENTIAL_LEAK,
    GAP,
    PROMPTINJECT,
    REVEAL_TERMS,
    SECRET_TERMS,
    SYSPROMPT,
    SYSTEM_PROMPT_LEAK,
    WRITTEN,
    PatternEntry,
)

PROMPT_LEAK_PATTERNS: tuple[PatternEntry, ...] = (
    (
        SYSTEM_PROMPT_LEAK,
        (
            rf"\b{REVEAL_TERMS}\b{GAP}\b(system|initial|original|hidden|secret|internal|starting|developer|pre-?)[\s_-]?"
            rf"(prompts?|instructions?|messages?|directives?|configuration|context)\b"
        ),
        (),
    ),
    (
        SYSTEM_PROMPT_LEAK,
        (
            rf"\b{REVEAL_TERMS}\b{GAP}\b(previous|prior|preceding)[\s_-]?(prompts?|instructions?|messages?|directives?"
            rf"|configuration|context)\b"
        ),
        (PROMPTINJECT,),
    ),
    (
        SYSTEM_PROMPT_LEAK,
        (
            r"\b(system[\s_-]?prompt|systemprompt|initial prompt|system instructions?|my instructions (are|were)"
            r"|i was (instructed|told|programmed) to|initiali[sz]ation (string|text|prompt)|(not|never) supposed to "
            r"(tell|say|reveal|share))\b"
        ),
        (SYSPROMPT,),
    ),
    (
        SYSTEM_PROMPT_LEAK,
        (
            r"\b(repeat|print|output|copy|echo|recite|write out)\b[^.]{0,30}?\b(entire|whole|full|complete) "
            r"(conversation|chat|prompt|context|history)\b|\b(above|previous|preceding|prior) (text|words|content"
            r"|message)\b"
        ),
        (SYSPROMPT,),
    ),
    (
        SYSTEM_PROMPT_LEAK,
        (
            r"\b(everything|all|the text|what) (that )?(came|was written|was said|comes) before (my|this|the) "
            r"(first )?(message|question|request|prompt)\b"
        ),
        (WRITTEN,),
    ),
    (
        SYSTEM_PROMPT_LEAK,
        (
            r"\b(rules|instructions|guidelines|directives) (the|your) (developers?|creators?|admins?|operators?"
            r"|makers?|programmers?) (gave|wrote|set|told|give)\b|\b(deine[nmr]?|ihre[nmr]?) (ursprünglichen?|ersten"
            r"|geheimen|versteckten|eigentlichen|system)?\s?(anweisungen|instruktionen|vorgaben|prompts?"
            r"|systemprompt)\b"
        ),
        (WRITTEN,),
    ),
    (SYSTEM_PROMPT_LEAK, rf"\b{REVEAL_TERMS}\b{GAP}\byour (instructions?|prompts?|rules|guidelines|directives?)\b", ()),
    (
        SYSTEM_PROMPT_LEAK,
        (
            r"\b(what|which) (are|were) (your|the) (initial |original |first |exact |hidden |system )?(instructions?"
            r"|rules|directives?|guidelines|prompts?)\b"
        ),
        (),
    ),
    (SYSTEM_PROMPT_LEAK, r"\bwhat (were|was) you (told|given|instructed|programmed)\b", (SYSPROMPT,)),
    (
        SYSTEM_PROMPT_LEAK,
        r"\bwhat (exactly |precisely )?(were|was|have) you (been )?(told|given|instructed|programmed)\b",
        (WRITTEN,),
    ),
    (
        SYSTEM_PROMPT_LEAK,
        (
            r"\b(repeat|output|print|copy|echo|recite|return|spell check|translate)\b[^.]{0,30}?\b(text|words"
            r"|everything|all|content|message|instructions?) (above|before|prior|preceding)\b"
        ),
        (),
    ),
    (
        SYSTEM_PROMPT_LEAK,
        (
            r"\b(text|words|everything|instructions?) (you were given|given to you|you received|at the (beginning"
            r"|start|top))\b"
        ),
        (),
    ),
    (SYSTEM_PROMPT_LEAK, r"\b(beginning|start) of (this|the|our) (conversation|chat|session|prompt)\b", ()),
    (
        SYSTEM_PROMPT_LEAK,
        (
            r"\b(how (were|are) you (configured|set up|programmed|prompted)|your (configuration|system settings"
            r"|initiali[sz]ation))\b"
        ),
        (),
    ),
    (
        SYSTEM_PROMPT_LEAK,
        (
            r"\b(zeig\w*|verrat\w*|gib|wiederhol\w*|nenne?)\b[^.]{0,30}?\b(system-?prompt|systemanweisung\w*"
            r"|anweisungen|deine instruktion\w*)\b"
        ),
        (),
    ),
    (
        SYSTEM_PROMPT_LEAK,
        (
            r"\b(first|initial|opening) (line|lines|sentence|message|words) of (your|the) (prompt|instructions?"
            r"|conversation|system)\b"
        ),
        (),
    ),
)

CREDENTIAL_PATTERNS: tuple[PatternEntry, ...] = (
    (CREDENTIAL_LEAK, rf"\b{REVEAL_TERMS}\b{GAP}\b{SECRET_TERMS}", ()),
    (CREDENTIAL_LEAK, rf"\b{REVEAL_TERMS}\b(?:\W+[\w-]+){{0,5}}?\W+{SECRET_TERMS}", (WRITTEN,)),
    (
        CREDENTIAL_LEAK,
        (
            r"\b(generate|create|make|produce|give me|provide|invent|fabricate)\b (a |an |me |some )?(new |valid "
            r"|working |real |fresh |random |live |sample )?(?:[\w.-]+ ){0,6}?(api[\s_-]?key|key|token|secret|webhook"
            r"|client[\s_-]?id|oauth\w*|connection[\s_-]?string|access[\s_-]?key|credentials?|password|uri|url|dsn"
            r"|certificate|serpapi|topic|id)\b"
        ),
        (APIKEY,),
    ),
    (
        CREDENTIAL_LEAK,
        (
            r"\b(which|what) (\w+ ){0,2}(token|key|password|secret|credentials?|login) (do|does|did) (you|u|it"
            r"|the system) use\b"
        ),
        (WRITTEN,),
    ),
    (
        CREDENTIAL_LEAK,
        (
            r"\b(complete|finish|fill in|reconstruct|recover|guess|restore)\b[^.]{0,20}?\b(the|this|my|a) "
            r"([\w-]+ ){0,3}?(key|token|secret|password|credentials?)\b|\blost (part|some|half) of my\b"
        ),
        (APIKEY,),
    ),
    (
        CREDENTIAL_LEAK,
        (
            r"\b(wie lautet|was ist|zeig\w*|nenn\w*|gib|verrat\w*)\b[^.]{0,30}?\b(passwort|kennwort|api-?schlüssel"
            r"|zugangsdaten|token|schlüssel|secret)\b"
        ),
        (WRITTEN,),
    ),
    (CREDENTIAL_LEAK, rf"\b(what|which) (is|are)\b{GAP}\b{SECRET_TERMS}", ()),
    (
        CREDENTIAL_LEAK,
        (
            rf"\b(generate|create|make|produce|provide|need|want|find|get)\b{GAP}\b(valid|working|real|new|live|secret"
            rf"|random)?\s?{SECRET_TERMS}"
        ),
        (APIKEY,),
    ),
    (
        CREDENTIAL_LEAK,
        (
            r"\b(entsoe|openai|openrouter|cerebras|home ?assistant|ha|hass|mqtt|github|aws|google|azure|stripe)[\s_-]?"
            r"(api[\s_-]?)?(key|token|secret|password)\b"
        ),
        (),
    ),
    (CREDENTIAL_LEAK, r"\b(long[\s-]?lived|access|refresh|bearer|session) tokens?\b", ()),
    (
        CREDENTIAL_LEAK,
        r"\b(cat|type|read|open|print)\b[^.]{0,20}?(secrets\.yaml|\.env|\.storage|auth|id_rsa|passwd|shadow)\b",
        (),
    ),
    (
        CREDENTIAL_LEAK,
        (
            r"\b(zeig\w*|verrat\w*|gib|nenne?)\b[^.]{0,30}?\b(api-?schlüssel|passw(ort|örter)|zugangsdaten|token"
            r"|schlüssel)\b"
        ),
        (),
    ),
)
