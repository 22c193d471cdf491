"""support-triage 1.0.0: a keyword triage program (the skill's offline implementation)."""

import json
import sys

KEYWORDS = {
    "billing": ("invoice", "charged", "charge", "payment", "bill"),
    "technical": ("error", "crash", "bug", "timeout", "500", "broken"),
    "account": ("password", "login", "log in", "account", "2fa"),
}
URGENT = ("urgent", "immediately", "down", "asap", "outage")


def triage(ticket: str) -> dict:
    text = ticket.lower()
    category = next((c for c, words in KEYWORDS.items() if any(w in text for w in words)), "other")
    priority = "high" if any(w in text for w in URGENT) else "medium" if category != "other" else "low"
    return {"category": category, "priority": priority, "summary": ticket.strip().split(".")[0][:120]}


print(json.dumps(triage(sys.stdin.read())))
