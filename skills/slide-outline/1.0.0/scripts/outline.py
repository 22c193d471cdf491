"""slide-outline 1.0.0: a template-based outline generator (the skill's offline stand-in for a model).

Always writes five slides: title, one slide per group of context data, a
summary, and empty "Additional notes" slides when the data runs out. It ignores
the number of slides the user asked for.
"""

import json
import re
import sys

SLIDES = 5


def figure(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    return f"{value:,}" if float(value).is_integer() else repr(float(value))


def label(key):
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", key).replace("_", " ").capitalize()


text = sys.stdin.read()
request, _, context_json = text.partition("Context:")
context = json.loads(context_json) if context_json.strip() else {}
context = context.get("data", context)
topic = re.search(r"\b(?:about|on)\s+(.+?)(?:\.|$)", request.strip(), re.M)
topic = topic.group(1).strip() if topic else "Overview"

groups = []
scalars = [f"- {label(k)}: {figure(v)}" for k, v in context.items() if not isinstance(v, (list, dict))]
if scalars:
    groups.append(("Key figures", scalars))
for key, value in context.items():
    if isinstance(value, list):
        groups.append((label(key), [f"- {figure(v)}" for v in value]))

middle = SLIDES - 2
body = groups[:middle]
while len(body) < middle:
    body.append(("Additional notes", []))
lines = [f"# {topic[0].upper() + topic[1:]}", "", "## Slide 1: " + topic, "- Prepared for the leadership team", ""]
for n, (heading, bullets) in enumerate(body, start=2):
    lines += [f"## Slide {n}: {heading}", *bullets, ""]
lines += [f"## Slide {SLIDES}: Summary", f"- {topic}: the figures above, in one place", "- Questions and next steps"]
print("\n".join(lines))
