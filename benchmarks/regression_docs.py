"""Placeholder replaced below."""
def summary_lines(cells):
    from benchmarks.regression_power import goal_rows
    return [f"{'met' if met else 'NOT MET'}: {text} [{mix}]: {value:.1%} ({runs} runs)" for text, mix, value, _, runs, met in goal_rows(cells)]
def render_docs(*a, **k):
    return ""
