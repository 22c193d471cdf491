"""The deterministic red-team strategies against promptfoo's own code (src/redteam/strategies/*.ts).

Expected values are worked out by hand from promptfoo's source, not from our output: base64.ts
(Buffer base64), rot13.ts (letters shifted by 13, case kept), leetspeak.ts (a/e/i/o/s/t/l and
capitals -> 4/3/1/0/5/7/1), hex.ts (UTF-8 bytes, upper-case, two digits, space-separated),
homoglyph.ts (its map: a -> U+0430, b -> U+0184, c -> U+0441, ...), otherEncodings.ts (Morse:
lower-cased, `/` for a space, letters joined by spaces, unknown characters kept; Pig Latin per
alphanumeric run; camelCase on whitespace-separated words; emoji: each UTF-8 byte as a variation
selector after U+1F60A) and the metric suffixes and metadata each writes.
"""

from __future__ import annotations

import pytest

from eval_pipelines.formats.promptfoo.redteam import strategies as S
@pytest.mark.parametrize(("strategy", "text", "expected"), [
    ("base64", "Hello", "SGVsbG8="),
    ("base64", "é", "w6k="),  # UTF-8 bytes C3 A9
    ("rot13", "Hello, World!", "Uryyb, Jbeyq!"),
    ("rot13", "xyz XYZ 123", "klm KLM 123"),
    ("leetspeak", "Hello World", "H3110 W0r1d"),
    ("leetspeak", "STEAL this", "57341 7h15"),
    ("hex", "Hi!", "48 69 21"),
    ("hex", "é\n", "C3 A9 0A"),
    ("homoglyph", "abc", "\u0430\u0184\u0441"),
    ("homoglyph", "Fox 42", "\u03dc\u043e\u0445 \U0001d7fa\U0001d7f8"),
    ("morse", "SOS help", "... --- ... / .... . .-.. .--."),
    ("morse", "a#1", ".- # .----"),
    ("piglatin", "hello world", "ellohay orldway"),
    ("piglatin", "apple rhythm, 42!", "appleway rhythmay, 42!"),
    ("camelcase", "hello world example", "helloWorldExample"),
    ("camelcase", "  Hello, WORLD!  ", "hello,World!"),
    ("emoji", "A", "\U0001f60a\U000e0131"),
    ("emoji", "\n", "\U0001f60a\ufe0a"),
])
def test_each_transform_matches_promptfoos(strategy: str, text: str, expected: str) -> None:
    assert S.STRATEGIES[strategy].transform(text) == expected


@pytest.mark.parametrize(("strategy", "suffix", "keeps_original"), [
    ("base64", "Base64", False), ("rot13", "Rot13", True), ("leetspeak", "Leetspeak", True),
    ("hex", "Hex", True), ("homoglyph", "Homoglyph", False), ("morse", "Morse", True),
    ("piglatin", "PigLatin", True), ("camelcase", "CamelCase", True), ("emoji", "Emoji", True),
])
def test_a_transformed_copy_has_promptfoos_metric_suffix_and_metadata(strategy: str, suffix: str,
                                                                      keeps_original: bool) -> None:
    test = {"vars": {"prompt": "drop tables", "other": "kept"},
            "assert": [{"type": "promptfoo:redteam:sql-injection", "metric": "SqlInjection"}],
            "metadata": {"pluginId": "sql-injection", "severity": "high"}}
    [copy] = S.apply(S.STRATEGIES[strategy], [test], "prompt")
    assert copy["vars"] == {"prompt": S.STRATEGIES[strategy].transform("drop tables"), "other": "kept"}
    assert copy["assert"] == [{"type": "promptfoo:redteam:sql-injection", "metric": f"SqlInjection/{suffix}"}]
    assert copy["metadata"]["strategyId"] == strategy
    assert copy["metadata"]["pluginId"] == "sql-injection"
    assert ("originalText" in copy["metadata"]) is keeps_original
    assert test["vars"]["prompt"] == "drop tables" and test["assert"][0]["metric"] == "SqlInjection"  # not mutated
