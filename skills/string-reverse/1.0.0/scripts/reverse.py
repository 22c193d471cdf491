"""string-reverse 1.0.0: the skill's own implementation (run by the `command` target)."""

import sys

text = sys.stdin.read().strip()
payload = text.split(":", 1)[1].strip() if ":" in text else text
if len(payload) >= 2 and payload[0] == payload[-1] and payload[0] in "'\"":
    payload = payload[1:-1]
print(payload[::-1])
