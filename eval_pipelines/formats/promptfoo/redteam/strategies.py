"""promptfoo's deterministic red-team strategies: each turns every plugin test into a copy whose
injected variable is transformed, whose assertions' metrics get a suffix, and whose metadata names
the strategy, as promptfoo's src/redteam/strategies/*.ts do (base64.ts, rot13.ts, leetspeak.ts,
hex.ts, homoglyph.ts, otherEncodings.ts for morse, piglatin, camelcase and emoji; encoding.ts for
the shared shape). ``basic`` keeps the plugin tests themselves (on unless ``enabled: false``).

Strategies that call a model (jailbreak*, crescendo, goat, best-of-n, multilingual, citation,
math-prompt, ...) or act at run time (layer, retry, custom, file://) are not here: generation
refuses them (``refusal``).
"""

from __future__ import annotations

import base64
import copy
import re
from dataclasses import dataclass
from typing import Any, Callable

# promptfoo's DEFAULT_STRATEGIES (src/redteam/constants/strategies.ts): used when a recipe has no
# `strategies` at all.
DEFAULT_STRATEGIES = ("basic", "jailbreak:meta", "jailbreak:composite")
# promptfoo's STRATEGY_COLLECTION_MAPPINGS.
COLLECTIONS = {"other-encodings": ("camelcase", "morse", "piglatin", "emoji")}

LEET = {"a": "4", "e": "3", "i": "1", "o": "0", "s": "5", "t": "7", "l": "1",
        "A": "4", "E": "3", "I": "1", "O": "0", "S": "5", "T": "7", "L": "1"}
HOMOGLYPHS = dict(zip(
    "abcdeghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
    "аƄсԁеɡһіјκӏｍոорԛгѕτυνԝхуżΑВСᎠЕϜԌНΙЈКᏞМΝОРԚЯЅТՍѴԜХΥᏃ𝟶𝟷𝟸𝟹𝟺𝟻𝟼𝟽𝟾𝟿", strict=True))
MORSE = {
    "a": ".-", "b": "-...", "c": "-.-.", "d": "-..", "e": ".", "f": "..-.", "g": "--.", "h": "....",
    "i": "..", "j": ".---", "k": "-.-", "l": ".-..", "m": "--", "n": "-.", "o": "---", "p": ".--.",
    "q": "--.-", "r": ".-.", "s": "...", "t": "-", "u": "..-", "v": "...-", "w": ".--", "x": "-..-",
    "y": "-.--", "z": "--..", "0": "-----", "1": ".----", "2": "..---", "3": "...--", "4": "....-",
    "5": ".....", "6": "-....", "7": "--...", "8": "---..", "9": "----.", ".": ".-.-.-", ",": "--..--",
    "?": "..--..", "'": ".----.", "!": "-.-.--", "/": "-..-.", "(": "-.--.", ")": "-.--.-", "&": ".-...",
    ":": "---...", ";": "-.-.-.", "=": "-...-", "+": ".-.-.", "-": "-....-", "_": "..--.-", '"': ".-..-.",
    "$": "...-..-", "@": ".--.-.",
}


def to_base64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def to_rot13(text: str) -> str:
    def shift(match: re.Match[str]) -> str:
        char = match.group(0)
        start = ord("a") if char.islower() else ord("A")
        return chr((ord(char) - start + 13) % 26 + start)

    return re.sub(r"[a-zA-Z]", shift, text)


def to_leetspeak(text: str) -> str:
    return "".join(LEET.get(c, c) for c in text)


def to_hex(text: str) -> str:
    return " ".join(f"{byte:02X}" for byte in text.encode("utf-8"))


def to_homoglyphs(text: str) -> str:
    return "".join(HOMOGLYPHS.get(c, c) for c in text)


def to_morse(text: str) -> str:
    return " ".join("/" if c == " " else MORSE.get(c, c) for c in _js_chars(text.lower()))


def _js_chars(text: str) -> list[str]:
    """``text.split('')`` in JavaScript: UTF-16 code units (a character outside the BMP is two)."""
    units = text.encode("utf-16-le")
    return [units[i:i + 2].decode("utf-16-le", "surrogatepass") for i in range(0, len(units), 2)]


def _pig_latin_word(word: str) -> str:
    if not re.match(r"[a-zA-Z]", word):
        return word
    if re.match(r"[aeiouAEIOU]", word):
        return word + "way"
    vowel = re.search(r"[aeiouAEIOU]", word)
    if vowel is None:
        return word + "ay"
    return word[vowel.start():] + word[:vowel.start()] + "ay"


def to_pig_latin(text: str) -> str:
    return re.sub(r"[a-zA-Z0-9]+", lambda m: _pig_latin_word(m.group(0)), text)


def to_camel_case(text: str) -> str:
    out = []
    for index, word in enumerate(re.split(r"\s+", text.strip())):
        match = re.match(r"^([a-zA-Z0-9]+)(.*)$", word, re.DOTALL)
        if not match:
            out.append(word)
            continue
        base, rest = match.groups()
        out.append((base.lower() if index == 0 else base[:1].upper() + base[1:].lower()) + rest)
    return "".join(out)


def to_emoji(text: str, carrier: str = "😊") -> str:
    """Each UTF-8 byte as an invisible variation selector after a carrier emoji."""
    return carrier + "".join(chr(0xFE00 + b if b < 16 else 0xE0100 + b - 16) for b in text.encode("utf-8"))


@dataclass(frozen=True)
class Strategy:
    id: str
    transform: Callable[[str], str]
    metric_suffix: str
    # encoding.ts (and rot13.ts, leetspeak.ts) keep the original text in metadata; base64.ts and
    # homoglyph.ts do not.
    keeps_original: bool = True


STRATEGIES = {s.id: s for s in (
    Strategy("base64", to_base64, "Base64", keeps_original=False),
    Strategy("rot13", to_rot13, "Rot13"),
    Strategy("leetspeak", to_leetspeak, "Leetspeak"),
    Strategy("hex", to_hex, "Hex"),
    Strategy("homoglyph", to_homoglyphs, "Homoglyph", keeps_original=False),
    Strategy("morse", to_morse, "Morse"),
    Strategy("piglatin", to_pig_latin, "PigLatin"),
    Strategy("camelcase", to_camel_case, "CamelCase"),
    Strategy("emoji", to_emoji, "Emoji"),
)}
# Read by the generator itself, not a transform.
CONFIG_KEYS = {"plugins"}


def refusal(strategy_id: str) -> str:
    """Why a strategy we do not apply is refused (one clause)."""
    if strategy_id.startswith("file://") or strategy_id == "custom" or strategy_id.startswith("custom:"):
        return "custom strategies (promptfoo runs their code or an LLM) are not applied here"
    return (f"generation here applies only basic and the text transforms {', '.join(sorted(STRATEGIES))} "
            "(strategies that call a model or attack at run time are not generated)")


def apply(strategy: Strategy, tests: list[dict[str, Any]], inject_var: str) -> list[dict[str, Any]]:
    """The transformed copies of ``tests``."""
    out = []
    for test in tests:
        original = str(test["vars"][inject_var])
        new = copy.deepcopy(test)
        new["vars"][inject_var] = strategy.transform(original)
        for assertion in new.get("assert") or []:
            if assertion.get("metric"):
                assertion["metric"] = f"{assertion['metric']}/{strategy.metric_suffix}"
        new["metadata"] = {**new.get("metadata", {}), "strategyId": strategy.id}
        if strategy.keeps_original:
            new["metadata"]["originalText"] = original
        out.append(new)
    return out
