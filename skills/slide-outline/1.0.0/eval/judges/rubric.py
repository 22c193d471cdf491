"""Creative-profile rubric as a code judge (seed 000 `custom` strategy).

Offline stand-in for the `llm_judge` rubric of seed 000's creative profile:
the same four criteria and weights, scored by rules instead of a model.

stdin : one JSON object {"input", "output", "expected", "criteria", "metadata", "config", "test_id", ...}
stdout: last line {"score", "passed", "reasoning", "details"}
"""

import json
import re
import sys

PASSING = 0.7  # seed 000: the creative rubric passes at 0.7
WEIGHTS = {"completeness": 0.30, "coherence": 0.25, "professionalism": 0.25, "accuracy": 0.20}


def slides(output):
    """(heading, bullets) per `## Slide n:` section."""
    parts = re.split(r"^## Slide \d+:\s*", output, flags=re.M)[1:]
    return [(p.splitlines()[0].strip(), [l for l in p.splitlines()[1:] if l.strip().startswith("-")]) for p in parts]


def numbers_in_context(text):
    """Numeric facts of the `Context:` JSON the prompt carries."""
    if "Context:" not in text:
        return []
    found = []

    def walk(value):
        if isinstance(value, bool):
            return
        if isinstance(value, (int, float)):
            found.append(value)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(json.loads(text.split("Context:", 1)[1]))
    return found


def renderings(number):
    if float(number).is_integer():
        n = int(number)
        return {str(n), f"{n:,}"}
    return {repr(float(number))}


def grade(payload):
    text, output = payload["input"], payload["output"]
    found = slides(output)
    wanted = re.search(r"(\d+)-slide", text)
    wanted = int(wanted.group(1)) if wanted else len(found)
    scores = {}
    scores["completeness"] = 1.0 if found and len(found) == wanted else 0.0
    coherence = [
        bool(found) and output.lstrip().startswith("# "),
        bool(found) and re.search(r"summary|conclusion|next steps", found[-1][0], re.I) is not None,
        bool(found) and all(bullets for _, bullets in found),
    ]
    scores["coherence"] = sum(coherence) / len(coherence)
    violations = len(re.findall(r"!", output)) + len(re.findall(r"[\U0001F300-\U0001FAFF]", output))
    scores["professionalism"] = max(0.0, 1.0 - 0.5 * violations)
    facts = numbers_in_context(text)
    hits = [n for n in facts if any(r in output for r in renderings(n))]
    scores["accuracy"] = len(hits) / len(facts) if facts else 1.0
    raw = sum(WEIGHTS[k] * scores[k] for k in WEIGHTS)
    # Map the rubric's 0.7 pass mark onto the pipeline's 0.8 (as graders with a threshold do).
    score = 0.8 * raw / PASSING if raw < PASSING else 0.8 + 0.2 * (raw - PASSING) / (1 - PASSING)
    missing = [n for n in facts if n not in hits]
    reasoning = (f"rubric {raw:.2f} (pass at {PASSING}): slides {len(found)}/{wanted}, "
                 f"coherence {scores['coherence']:.2f}, tone violations {violations}, "
                 f"figures {len(hits)}/{len(facts)}" + (f", missing {missing}" if missing else ""))
    return {"score": round(score, 4), "passed": raw >= PASSING, "reasoning": reasoning,
            "details": {"raw_score": round(raw, 4), "criteria": scores}}


if __name__ == "__main__":
    print(json.dumps(grade(json.load(sys.stdin))))
