"""Column descriptions of the DuckDB tables, from docs/schema.md (made by
``python -m tests.support.schema_doc``; a test checks they agree)."""

COMMON = '*'

COLUMN_DESCRIPTIONS: dict[str, dict[str, str]] = {
    '*': {
        'eval_date':
            'the evaluation date partition, `YYYY-MM-DD` (UTC); nightly runs add a new date, so history is kept',
        'skill_version':
            'the skill-version partition key, `name@version`',
        'skill':
            'the skill name (front matter `name`)',
        'version':
            "the version (front matter `version`, else `h-` + 10 hex digits of the package's content hash)",
        'run_id':
            'the Dagster run id (or `cli-<timestamp>` for `eval-pipelines run`)',
        'suite':
            "the suite's name (metadata `name`, else the suite file's stem or the skill folder)",
    },
    'suites': {
        'format':
            '`eval-yaml` (seed 001), `skill-tests-v1`, `skill-tests-v2` (seed 000)',
        'source_file':
            'the suite file that was loaded',
        'profile':
            'seed 000 profile (`deterministic`, `structured`, ...) or NULL',
        'package_hash':
            'SHA-256 of the package (folder contents or zip bytes)',
        'package_root':
            'folder holding `SKILL.md` (extracted folder for zips); command and replay targets run relative to it',
        'n_tests':
            'number of test cases after datasets and `file://` references are expanded',
        'targets':
            'settings of the targets the suite runs against (environment variable *names* only, never secrets)',
        'trials':
            '`execution.trials.count`',
        'thresholds':
            'the suite\'s gates, e.g. `{"required_pass_rate": 0.8}`',
        'warnings':
            'load warnings (deprecated aliases, v1 conversion, `accepted, not used: FIELD: reason` for fields that load without an effect); shown in every report',
        'spec':
            'the whole typed suite (`Suite` model) as loaded: later stages read it back from here',
        'loaded_at':
            'when the suite was loaded (UTC)',
    },
    'test_cases': {
        'test_id':
            'the case id (unique within the suite)',
        'name':
            'human-readable name, if given',
        'category':
            '`category` field or `metadata.category`',
        'input':
            'the user message(s) as text (a non-text content part as a placeholder line)',
        'messages':
            'the full input as chat messages `[{role, content}]`; a message written as content parts (an image, an audio clip) also has `parts`: `[{type: text, text}, {type: image_url, image_url: {url, detail?}}, {type: input_audio, input_audio: {data, format}}]`, what OpenAI-compatible targets were sent (its `content` is the text view, with `[image: URL]` / `[audio: mp3, N bytes]` placeholders)',
        'expected':
            '`expected_output` (JSON-encoded; NULL when absent)',
        'criteria':
            'natural-language criteria (`criteria` / `expected_outcome`)',
        'assertions':
            'the effective assertion list (suite defaults appended unless `skip_defaults`)',
        'tags':
            'list of tags',
        'metadata':
            "the case's metadata (seed 000 cases also record their `strategy`)",
        'source_file':
            'where the case was defined (inline or dataset row)',
        'source_line':
            'where the case was defined (inline or dataset row)',
    },
    'model_outputs': {
        'test_id':
            'which case, on which named target, which trial (0-based)',
        'target':
            'which case, on which named target, which trial (0-based)',
        'trial':
            'which case, on which named target, which trial (0-based)',
        'configuration':
            '`with_skill` (the skill installed) or `without_skill` (the same target, prompts and files, the skill not installed: the baseline of the skill\'s uplift); see [skill-creator.md](skill-creator.md), "With and without the skill". Rows stored before the column existed read `with_skill`',
        'output':
            'the text the target produced; NULL on error',
        'error':
            'why there is no output (HTTP status, timeout, exit code, missing recording, ...); NULL on success',
        'latency_ms':
            'wall time of the call including retries',
        'prompt_tokens':
            'token usage reported by the server (NULL when unknown)',
        'completion_tokens':
            'token usage reported by the server (NULL when unknown)',
        'cost_usd':
            "tokens × the target's price per million tokens",
        'cached':
            'served from the response cache instead of a new call',
        'attempts':
            'calls made, retries included',
        'llm_calls':
            'model calls and tool calls behind this output',
        'tool_calls':
            'model calls and tool calls behind this output',
        'trace':
            'tool-call trajectory `[{tool, args, result}]` (empty when none)',
        'created_at':
            'when the row was written (UTC)',
        'finish_reason':
            "the provider's finish reason as sent (`stop`, `length`, `content_filter`, `tool_calls`, ...; of the last model call of a tool loop); NULL when it sent none (command targets, errors) or the row predates the column (added by `ALTER TABLE`)",
        'logprobs':
            "the answer's token log-probabilities (a list; of the last model call of a tool loop), stored only when a case asked for them (a `perplexity` / `perplexity_score` assertion); NULL otherwise",
        'trace_id':
            "the output's OpenTelemetry trace id (32 hex) when the suite is traced (promptfoo `tracing.enabled`); NULL otherwise",
        'spans':
            'the spans recorded under `trace_id` (a list of `{trace_id, span_id, parent_span_id, name, start_ns, end_ns, attributes, status_code, status_message}`; `tracing.otlp.http.redactAttributes` applied); NULL when not traced',
        'trace_error':
            "why a traced output's spans could not be collected (a script's receiver got a body it could not decode); NULL otherwise",
        'files':
            "agent targets (`agent`, `claude_code`: docs/agent-targets.md, docs/claude-code.md): every file the agent created or changed in its workspace, `[{path, size, sha256, status (created/changed), binary, text, truncated}]`; `text` is the UTF-8 content up to 100,000 characters (1,000,000 for all of a run's files), NULL for binary files; NULL for other targets",
        'transcript':
            "agent targets: the run's messages in order, `[{role, kind (instructions/text/thinking/tool_call/tool_result/retry), step, text or tool+args, call_id, truncated}]`, each text, argument list and tool result cut at 4,000 characters; NULL for other targets",
        'run_metrics':
            'agent targets: `{turns, tool_calls, tool_calls_by_tool, input_tokens, output_tokens, cost_usd, wall_time_ms, errors, commands, stopped, files_created, files_deleted, output_chars, transcript_chars, input_files}` (`claude_code`: no `commands`; also `cache_read_input_tokens`, `cache_creation_input_tokens`, `tool_errors` and `claude_code`, what the CLI reported); NULL for other targets',
        'limits':
            'agent targets: the limits the case ran under, `{max_turns, max_tool_calls, timeout_s, command_timeout_s, command_cpu_s, memory_mb, network}` (`claude_code`: `{max_turns, timeout_s, memory_mb, cpu_s, network, allowed_tools}`); NULL for other targets',
    },
    'grades': {
        'test_id':
            'the output graded',
        'target':
            'the output graded',
        'trial':
            'the output graded',
        'assertion_index':
            "position in the case's effective assertion list",
        'assertion_type':
            'canonical type (`equals`, `contains`, `regex`, `is_json`, `json_schema`, ...)',
        'assertion_name':
            "the assertion's `name`, else its type",
        'weight':
            'outer weight in the case score',
        'required':
            'JSON `false`, `true` (gate at 0.8) or a number (its own minimum)',
        'score':
            "0..1 (after `negate`): the score the grader gave (a judge's rubric score of 0.625 is 0.625)",
        'passed':
            'score reached the gate minimum (or 0.8 for non-gates) and status is `graded`; for a grader with its own threshold, its verdict (decided on `calibrated_score`)',
        'status':
            '`graded`, `error` (grader failed), `not_evaluated`, `pending_human`',
        'reason':
            'one line a person can read',
        'details':
            'type-specific details: expected/actual, matched patterns, captures, schema errors with JSON paths, ...',
        'configuration':
            "the output's configuration (`with_skill` / `without_skill`, as in `model_outputs`)",
        'calibrated_score':
            'for a grader judged against its own `threshold` (`llm_judge`, `model`, `agent_judge`, `semantic_sim`, `bleu`, `gleu`, `meteor`, `rouge_n`, `tool_call_f1`, ...): `score` mapped so the threshold lands on the pass mark 0.8 (see docs/assertions.md, "The judge"); `passed`, gates and the case\'s verdict are decided on it. NULL for graders without a threshold of their own',
    },
    'test_results': {
        'test_id':
            'which case, on which named target, which trial (0-based)',
        'target':
            'which case, on which named target, which trial (0-based)',
        'trial':
            'which case, on which named target, which trial (0-based)',
        'configuration':
            '`with_skill` (the skill installed) or `without_skill` (the same target, prompts and files, the skill not installed: the baseline of the skill\'s uplift); see [skill-creator.md](skill-creator.md), "With and without the skill". Rows stored before the column existed read `with_skill`',
        'category':
            "the case's category",
        'score':
            "gated weighted mean of the grades' `score` (the graders' own scores; 0 when a required gate fails or on error; NULL when not evaluated); `mean_score` averages it",
        'verdict':
            "`pass` (≥ 0.8), `borderline` (≥ 0.6), `fail`, on the weighted mean of the grades' `calibrated_score` (their `score` where it is NULL), so a grader's own threshold decides as it does for the grade; NULL when not evaluated or pending human review",
        'status':
            '`graded`, `not_evaluated` (nothing to evaluate: never a pass or a fail), `error` (no output or a grader failed: counts as a non-pass), `pending_human`',
        'reason':
            'the failing gate or assertions, or the error',
    },
    'metrics': {
        'target':
            'a target name, or `*` for all targets together',
        'configuration':
            '`with_skill` or `without_skill`: the runs the metric is over',
        'metric':
            "the metric's name: `pass_rate`, `mean_score`, `cost_usd`, ... (all listed below), or a suite's derived metric",
        'value':
            "the metric's value",
    },
    'datasets': {
        'path':
            'the dataset file (JSONL, CSV or YAML test rows)',
        'sha256':
            "SHA-256 of the file's bytes, so a changed dataset shows between versions",
        'bytes':
            "the file's size",
        'test_cases':
            'test cases the file contributed',
    },
    'regressions': {
        'comparison':
            "`previous_version` (the skill's previous version) or `previous_night` (the same version, the previous evaluation date)",
        'baseline_skill_version':
            'the baseline partition compared with',
        'baseline_eval_date':
            'the baseline partition compared with',
        'level':
            '`case`, `target` or `breakage`',
        'target':
            'the target; the case (NULL on target and breakage rows)',
        'test_id':
            'the target; the case (NULL on target and breakage rows)',
        'change':
            'case: `regressed`/`improved` (only when `q_value` <= `case_fdr`), `unchanged`, `changed`, `flaky`, `new` or `removed`; target: `regressed`, `small_drop`, `improved`, `no_regression`, `inconclusive`; breakage: `broken` or `within_chance`',
        'baseline_pass_rate':
            'pass rates of the two runs and current minus baseline',
        'current_pass_rate':
            'pass rates of the two runs and current minus baseline',
        'pass_rate_delta':
            'pass rates of the two runs and current minus baseline',
        'baseline_score':
            'mean scores of the two runs',
        'current_score':
            'mean scores of the two runs',
        'p_value':
            "the test's p-value and its Holm-adjusted value (the previous-version and previous-night comparisons corrected together)",
        'adjusted_p':
            "the test's p-value and its Holm-adjusted value (the previous-version and previous-night comparisons corrected together)",
        'ci_low':
            '95% interval of the pass-rate change',
        'ci_high':
            '95% interval of the pass-rate change',
        'detail':
            "the test's inputs: trials per side, discordant pairs, the policy (`alpha`, `min_effect`, `effect_rule`, `case_fdr`), the drivers",
        'q_value':
            "a case row's false-discovery q-value (its label needs q <= `case_fdr`)",
        'significant':
            "a target row's statistical and practical significance",
        'large_enough':
            "a target row's statistical and practical significance",
        'verdict':
            "the target's or breakage row's verdict as a sentence with its numbers",
        'configuration':
            "the configuration compared: always `with_skill` (the skill as shipped against its baselines' `with_skill` rows)",
    },
    'uplifts': {
        'target':
            'a target name, or `*` for all targets together',
        'value':
            "what is compared: `run_pass_rate`, each run's share of expectations met (1/0 for a case without expectations)",
        'cases_compared':
            'cases that ran in both configurations (the pairs)',
        'with_skill':
            "mean over cases of the case's mean value over its trials, in each configuration",
        'without_skill':
            "mean over cases of the case's mean value over its trials, in each configuration",
        'delta':
            'with minus without: the mean of the per-case differences',
        'ci_low':
            '95% Student-t interval of `delta`',
        'ci_high':
            '95% Student-t interval of `delta`',
        'p_rise':
            'exact one-sided sign-flip p-values of a rise and of a drop, each judged at alpha/2',
        'p_drop':
            'exact one-sided sign-flip p-values of a rise and of a drop, each judged at alpha/2',
        'significant':
            "statistical significance; practical significance (the suite's `min_effect` under its `effect_rule`)",
        'large_enough':
            "statistical significance; practical significance (the suite's `min_effect` under its `effect_rule`)",
        'verdict':
            '`helps`, `no_measurable_effect` or `hurts`',
        'wording':
            'the verdict as a sentence with its numbers',
        'detail':
            'the policy (`alpha`, `min_effect`, `effect_rule`, `interval_level`), the test and the pairing',
    },
    'trigger_results': {
        'target':
            'the agent target that answered',
        'source_file':
            'the trigger set file, relative to the package',
        'query_number':
            "the query's 1-based position in the file and its text",
        'query':
            "the query's 1-based position in the file and its text",
        'should_trigger':
            'whether the file says the skill should be loaded for it',
        'run':
            'the run of the query, 0-based (`triggers.runs` per query, default 3)',
        'triggered':
            "whether a recorded tool call of the run read the skill's SKILL.md",
        'loaded_by':
            'that tool call, `{"tool", "args", "step"}` (`read_file` of `skills/<name>/SKILL.md`, or a `run_command` naming it); NULL when not loaded',
        'skills_read':
            'every skill whose SKILL.md the run read (a distractor chosen instead shows here)',
        'offered':
            'the skills the agent was offered, in the order its instructions listed them',
        'seed':
            'what that order was shuffled from (`<seed>:<query>:<run>`)',
        'threshold':
            'the trigger rate at which a query counts as triggering (`triggers.threshold`, default 0.5)',
        'turns':
            "the run's model turns and tool calls (it stops at the first SKILL.md read or `triggers.max_turns`)",
        'tool_calls':
            "the run's model turns and tool calls (it stops at the first SKILL.md read or `triggers.max_turns`)",
        'stopped':
            '`skill_read`, `max_turns`, `max_tool_calls`, or NULL when the model answered',
        'error':
            'why the run failed (such runs are left out of the rates)',
        'latency_ms':
            "the run's wall time and tokens (NULL when the model reported none)",
        'prompt_tokens':
            "the run's wall time and tokens (NULL when the model reported none)",
        'completion_tokens':
            "the run's wall time and tokens (NULL when the model reported none)",
    },
    'blind_comparisons': {
        'target':
            'the output compared',
        'test_id':
            'the output compared',
        'trial':
            'the output compared',
        'baseline_skill_version':
            'the baseline run whose output it was compared with',
        'baseline_eval_date':
            'the baseline run whose output it was compared with',
        'seed':
            'what the A/B order was drawn from (`<seed>:<test_id>:<target>:<trial>`)',
        'a_is':
            'which output was shown as A: `current` or `baseline`',
        'winner_label':
            "the judge's answer: `A`, `B` or `TIE`",
        'winner':
            'what it means: `current`, `baseline` or `tie` (NULL when the judge failed)',
        'reasoning':
            "the judge's reasoning",
        'current_score':
            "the rubric's `overall_score` (1-10) of each output, unblinded",
        'baseline_score':
            "the rubric's `overall_score` (1-10) of each output, unblinded",
        'rubric':
            "the comparator's rubric and output quality as the judge returned them (keyed by `A`/`B`)",
        'output_quality':
            "the comparator's rubric and output quality as the judge returned them (keyed by `A`/`B`)",
        'judge_model':
            "the judge's model",
        'error':
            'why the judge gave no verdict',
    },
}
