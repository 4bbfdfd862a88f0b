"""Patterns of text that steers the model: instruction override, role manipulation and behaviour modification."""

from __future__ import annotations

from .pattern_terms import (
    BEHAVIOUR_MODIFICATION,
    GAP,
    INSTRUCTION_OVERRIDE,
    INSTRUCTION_TERMS,
    LATENT,
    OVERRIDE_TERMS,
    PREVIOUS_TERMS,
    PROMPTINJECT,
    ROLE_MANIPULATION,
    WRITTEN,
    PatternEntry,
)

OVERRIDE_PATTERNS: tuple[PatternEntry, ...] = (
    (INSTRUCTION_OVERRIDE, rf"\b{OVERRIDE_TERMS}\b{GAP}\b{PREVIOUS_TERMS}\b{GAP}\b{INSTRUCTION_TERMS}\b", ()),
    (
        INSTRUCTION_OVERRIDE,
        rf"\b{OVERRIDE_TERMS}\b[^.!?\n]{{0,40}}?\b{PREVIOUS_TERMS}\b{GAP}\b{INSTRUCTION_TERMS}\b",
        (WRITTEN,),
    ),
    (
        INSTRUCTION_OVERRIDE,
        (
            rf"\b{OVERRIDE_TERMS}\b{GAP}\b(everything|anything|all)\b{GAP}\b(above|before|previously|earlier|said|told|you "
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
    (INSTRUCTION_OVERRIDE, r"\bcore (instructions?|task|prompt|directive|objective)\s*[:=]", (LATENT,)),
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
        (LATENT,),
    ),
    (
        INSTRUCTION_OVERRIDE,
        (
            r"\b(note|message|instruction) (to|for) (the )?(automated|ai|llm|language model|assistant|analysis"
            r"|screening)\b|\bcore instruction\b|\boverride (manual|the) (scoring|review|analysis|evaluation)\b"
        ),
        (LATENT,),
    ),
    (
        INSTRUCTION_OVERRIDE,
        r"\b(just|only|instead) (say|print|output|write|respond with|reply with|answer with)\b\s*[\"'“«]",
        (PROMPTINJECT,),
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
        (WRITTEN,),
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
)

ROLE_PATTERNS: tuple[PatternEntry, ...] = (
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
        (WRITTEN,),
    ),
    (
        ROLE_MANIPULATION,
        (
            r"\blet'?s play a game\b|\b(have|with|without) (any |no )?(limitations|limits|restrictions|filters"
            r"|boundaries|ethics|morals|censorship)\b|\byou are \w*gpt\b"
        ),
        (WRITTEN,),
    ),
    (ROLE_MANIPULATION, r"\btu so,? als (ob )?(wärst|wärest|bist|wärst du)\b|\bals wärst du\b", (WRITTEN,)),
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
)

BEHAVIOUR_PATTERNS: tuple[PatternEntry, ...] = (
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
        (WRITTEN,),
    ),
    (
        BEHAVIOUR_MODIFICATION,
        (
            r"\b(secretly|covertly|without telling (anyone|the user|the owner|me|them)|without (informing|notifying) "
            r"(anyone|the user|the owner))\b|\b(never|don'?t|do not) (tell|inform|notify|warn) (the user|anyone"
            r"|the owner|the admin)\b"
        ),
        (WRITTEN,),
    ),
    (
        BEHAVIOUR_MODIFICATION,
        (
            r"\b(immer|nur)\b[^.]{0,30}?\b(teuerst\w*|höchst\w*|spitzenzeit\w*|spitzenpreis\w*)\b|\b(nie|nicht)( mehr"
            r"| wieder)? (nach (einer )?)?(bestätigung|erlaubnis) (fragen|frag\w*)\b|\bfrag\w* nie (wieder"
            r"|mehr)?\s?nach\b|\b(optimier\w*) (nie|nicht) (mehr|wieder)\b|\bnie (mehr|wieder) optimier\w*"
        ),
        (WRITTEN,),
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
)
