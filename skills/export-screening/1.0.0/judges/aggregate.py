"""Aggregator for the `compliance` composite (a `code_judge` aggregator).

The children's results arrive in config.results as
[{"name", "type", "score", "passed", "status", "reason"}, ...].
A wrong decision scores 0; otherwise decision and policy rules count 60/40.
"""

import json
import sys

results = {r["name"]: r for r in json.load(sys.stdin)["config"]["results"]}
decision, rules = results["decision"], results["policy-rules"]
if not decision["passed"]:
    score, why = 0.0, "wrong decision: " + decision["reason"]
else:
    score = 0.6 * decision["score"] + 0.4 * rules["score"]
    why = f"decision {decision['score']:.2f}, policy rules {rules['score']:.2f}"
print(json.dumps({"score": round(score, 4), "passed": score >= 0.8, "reasoning": why}))
