"""support-triage 2.0.0: learns refunds, but reports priority as P1/P2/P3.

Refund requests are now billing (an improvement); the new priority labels break
the documented schema (a regression the json_schema assertion catches).
"""

import json
import sys

KEYWORDS = {
    "billing": ("invoice", "charged", "charge", "payment", "bill", "refund", "money back"),
    "technical": ("error", "crash", "bug", "timeout", "500", "broken"),
    "account": ("password", "login", "log in", "account", "2fa"),
}
URGENT = ("urgent", "immediately", "down", "asap", "outage")


def triage(ticket: str) -> dict:
    text = ticket.lower()
    category = next((c for c, words in KEYWORDS.items() if any(w in text for w in words)), "other")
    priority = "P1" if any(w in text for w in URGENT) else "P2" if category != "other" else "P3"
    return {"category": category, "priority": priority, "summary": ticket.strip().split(".")[0][:120]}


print(json.dumps(triage(sys.stdin.read())))
