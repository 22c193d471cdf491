"""meeting-summarizer 1.1.0: the extractive summarizer, with two changes.

* New: sentences written as "Action item: <who> to <what>" count as follow-ups
  (fixes the case ``action-items``).
* Changed: at most three sentences are kept, to stay short. A meeting with
  four decisions loses the last one: the case ``long-retro`` regresses.
"""

import re
import sys

KEEP = re.compile(r"\b(decided|agreed|will|moves? to|action item)\b", re.IGNORECASE)
MAX_SENTENCES = 3

text = sys.stdin.read()
notes = text.split("Notes:", 1)[-1]
sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", notes) if s.strip()]
kept = [s for s in sentences if KEEP.search(s)][:MAX_SENTENCES]
print(" ".join(kept))
