"""meeting-summarizer 1.0.0: an extractive summarizer (the skill's offline stand-in for a model).

Keeps every sentence that records a decision or a follow-up, in order, and
drops the rest.
"""

import re
import sys

KEEP = re.compile(r"\b(decided|agreed|will|moves? to)\b", re.IGNORECASE)

text = sys.stdin.read()
notes = text.split("Notes:", 1)[-1]
sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", notes) if s.strip()]
kept = [s for s in sentences if KEEP.search(s)]
print(" ".join(kept))
