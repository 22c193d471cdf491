-- eval-pipelines results schema. Every table is keyed by the partition it was
-- written for: (eval_date, skill_version). docs/schema.md documents each column.
CREATE TABLE IF NOT EXISTS suites (
    eval_date      VARCHAR NOT NULL,
    skill_version  VARCHAR NOT NULL,
    skill          VARCHAR NOT NULL,
    version        VARCHAR NOT NULL,
    run_id         VARCHAR,
    suite          VARCHAR NOT NULL,
    format         VARCHAR NOT NULL,
    source_file    VARCHAR NOT NULL,
    profile        VARCHAR,
    package_hash   VARCHAR NOT NULL,
    package_root   VARCHAR NOT NULL,
    n_tests        INTEGER NOT NULL,
    targets        JSON NOT NULL,
    trials         INTEGER NOT NULL,
    thresholds     JSON NOT NULL,
    warnings       JSON NOT NULL,
    spec           JSON NOT NULL,
    loaded_at      TIMESTAMP NOT NULL
);

CREATE TABLE IF NOT EXISTS test_cases (
    eval_date      VARCHAR NOT NULL,
    skill_version  VARCHAR NOT NULL,
    skill          VARCHAR NOT NULL,
    version        VARCHAR NOT NULL,
    run_id         VARCHAR,
    suite          VARCHAR NOT NULL,
    test_id        VARCHAR NOT NULL,
    name           VARCHAR,
    category       VARCHAR,
    input          VARCHAR NOT NULL,
    messages       JSON NOT NULL,
    expected       JSON,
    criteria       VARCHAR,
    assertions     JSON NOT NULL,
    tags           JSON NOT NULL,
    metadata       JSON NOT NULL,
    source_file    VARCHAR,
    source_line    INTEGER
);

CREATE TABLE IF NOT EXISTS model_outputs (
    eval_date         VARCHAR NOT NULL,
    skill_version     VARCHAR NOT NULL,
    skill             VARCHAR NOT NULL,
    version           VARCHAR NOT NULL,
    run_id            VARCHAR,
    suite             VARCHAR NOT NULL,
    test_id           VARCHAR NOT NULL,
    target            VARCHAR NOT NULL,
    trial             INTEGER NOT NULL,
    output            VARCHAR,
    error             VARCHAR,
    latency_ms        DOUBLE,
    prompt_tokens     INTEGER,
    completion_tokens INTEGER,
    cost_usd          DOUBLE,
    cached            BOOLEAN NOT NULL,
    attempts          INTEGER NOT NULL,
    llm_calls         INTEGER NOT NULL,
    tool_calls        INTEGER NOT NULL,
    trace             JSON NOT NULL,
    created_at        TIMESTAMP NOT NULL
);

CREATE TABLE IF NOT EXISTS grades (
    eval_date        VARCHAR NOT NULL,
    skill_version    VARCHAR NOT NULL,
    skill            VARCHAR NOT NULL,
    version          VARCHAR NOT NULL,
    run_id           VARCHAR,
    suite            VARCHAR NOT NULL,
    test_id          VARCHAR NOT NULL,
    target           VARCHAR NOT NULL,
    trial            INTEGER NOT NULL,
    assertion_index  INTEGER NOT NULL,
    assertion_type   VARCHAR NOT NULL,
    assertion_name   VARCHAR NOT NULL,
    weight           DOUBLE NOT NULL,
    required         VARCHAR NOT NULL,
    score            DOUBLE NOT NULL,
    passed           BOOLEAN NOT NULL,
    status           VARCHAR NOT NULL,
    reason           VARCHAR NOT NULL,
    details          JSON NOT NULL
);

CREATE TABLE IF NOT EXISTS test_results (
    eval_date      VARCHAR NOT NULL,
    skill_version  VARCHAR NOT NULL,
    skill          VARCHAR NOT NULL,
    version        VARCHAR NOT NULL,
    run_id         VARCHAR,
    suite          VARCHAR NOT NULL,
    test_id        VARCHAR NOT NULL,
    target         VARCHAR NOT NULL,
    trial          INTEGER NOT NULL,
    category       VARCHAR,
    score          DOUBLE,
    verdict        VARCHAR,
    status         VARCHAR NOT NULL,
    reason         VARCHAR NOT NULL
);

CREATE TABLE IF NOT EXISTS metrics (
    eval_date      VARCHAR NOT NULL,
    skill_version  VARCHAR NOT NULL,
    skill          VARCHAR NOT NULL,
    version        VARCHAR NOT NULL,
    run_id         VARCHAR,
    suite          VARCHAR NOT NULL,
    target         VARCHAR NOT NULL,
    metric         VARCHAR NOT NULL,
    value          DOUBLE NOT NULL
);

-- Ratings people gave to outputs waiting for human review (seed 003 human
-- grader). Not partitioned: a rating belongs to an exact output (output_hash),
-- so it applies to every run that produced that same output.
CREATE TABLE IF NOT EXISTS human_ratings (
    review_id      VARCHAR NOT NULL,
    skill_version  VARCHAR NOT NULL,
    test_id        VARCHAR NOT NULL,
    target         VARCHAR NOT NULL,
    trial          INTEGER NOT NULL,
    output_hash    VARCHAR NOT NULL,
    rater          VARCHAR NOT NULL,
    rating         DOUBLE NOT NULL,
    comment        VARCHAR,
    imported_at    TIMESTAMP NOT NULL,
    PRIMARY KEY (review_id, rater)
);

-- Content-addressed response cache: the key hashes the target's settings and
-- the exact request (trial included), never a secret. Not partitioned, so it
-- survives partition rewrites and killed runs.
CREATE TABLE IF NOT EXISTS response_cache (
    request_hash      VARCHAR PRIMARY KEY,
    target            VARCHAR NOT NULL,
    model             VARCHAR,
    output            VARCHAR NOT NULL,
    latency_ms        DOUBLE,
    prompt_tokens     INTEGER,
    completion_tokens INTEGER,
    cost_usd          DOUBLE,
    llm_calls         INTEGER NOT NULL,
    tool_calls        INTEGER NOT NULL,
    trace             JSON NOT NULL,
    created_at        TIMESTAMP NOT NULL
);

-- Per case (and target) over its trials: pass@k / pass^k and the trial strategy's verdict.
CREATE TABLE IF NOT EXISTS case_metrics (
    eval_date      VARCHAR NOT NULL,
    skill_version  VARCHAR NOT NULL,
    skill          VARCHAR NOT NULL,
    version        VARCHAR NOT NULL,
    run_id         VARCHAR,
    suite          VARCHAR NOT NULL,
    test_id        VARCHAR NOT NULL,
    target         VARCHAR NOT NULL,
    metric         VARCHAR NOT NULL,
    value          DOUBLE NOT NULL
);

-- Regression report: the partition compared with its baselines (the previous
-- version, and the previous night of the same version). One row per case, one
-- per target (test_id NULL, level 'target': the suite-level verdict) and one
-- per target for the breakage signal (test_id NULL, level 'breakage') for each
-- comparison. Case change: regressed/improved only when q_value <= case_fdr;
-- target change: regressed, small_drop, improved, no_regression, inconclusive;
-- breakage change: broken or within_chance (docs/regression-detection.md).
CREATE TABLE IF NOT EXISTS regressions (
    eval_date               VARCHAR NOT NULL,
    skill_version           VARCHAR NOT NULL,
    skill                   VARCHAR NOT NULL,
    version                 VARCHAR NOT NULL,
    run_id                  VARCHAR,
    suite                   VARCHAR NOT NULL,
    comparison              VARCHAR NOT NULL,
    baseline_skill_version  VARCHAR NOT NULL,
    baseline_eval_date      VARCHAR NOT NULL,
    level                   VARCHAR NOT NULL,
    target                  VARCHAR NOT NULL,
    test_id                 VARCHAR,
    change                  VARCHAR NOT NULL,
    baseline_pass_rate      DOUBLE,
    current_pass_rate       DOUBLE,
    pass_rate_delta         DOUBLE,
    baseline_score          DOUBLE,
    current_score           DOUBLE,
    p_value                 DOUBLE,
    adjusted_p              DOUBLE,
    ci_low                  DOUBLE,
    ci_high                 DOUBLE,
    detail                  JSON NOT NULL,
    q_value                 DOUBLE,
    significant             BOOLEAN,
    large_enough            BOOLEAN,
    verdict                 VARCHAR
);
-- Added after the first release (stores made before get them here; older rows keep NULL):
-- q_value - a case row's false-discovery q-value (its label needs q <= case_fdr);
-- significant / large_enough - a target row's statistical and practical significance;
-- verdict - the target's or breakage row's verdict as a sentence with its numbers.
ALTER TABLE regressions ADD COLUMN IF NOT EXISTS q_value DOUBLE;
ALTER TABLE regressions ADD COLUMN IF NOT EXISTS significant BOOLEAN;
ALTER TABLE regressions ADD COLUMN IF NOT EXISTS large_enough BOOLEAN;
ALTER TABLE regressions ADD COLUMN IF NOT EXISTS verdict VARCHAR;
-- finish_reason - the provider's finish reason of an output (promptfoo's finish-reason reads it),
-- as it sent it; NULL when it sent none (command targets, replays, rows stored before).
ALTER TABLE model_outputs ADD COLUMN IF NOT EXISTS finish_reason VARCHAR;
ALTER TABLE response_cache ADD COLUMN IF NOT EXISTS finish_reason VARCHAR;
-- logprobs - the answer's token log-probabilities (a JSON list), stored only when they were
-- asked for (a case with a perplexity assertion); NULL otherwise.
ALTER TABLE model_outputs ADD COLUMN IF NOT EXISTS logprobs JSON;
ALTER TABLE response_cache ADD COLUMN IF NOT EXISTS logprobs JSON;
-- trace_id / spans / trace_error - a traced suite's (promptfoo `tracing.enabled`) OpenTelemetry
-- trace of the output: its trace id, its spans (a JSON list; redactAttributes applied) and why
-- spans could not be collected; NULL when the suite is not traced.
ALTER TABLE model_outputs ADD COLUMN IF NOT EXISTS trace_id VARCHAR;
ALTER TABLE model_outputs ADD COLUMN IF NOT EXISTS spans JSON;
ALTER TABLE model_outputs ADD COLUMN IF NOT EXISTS trace_error VARCHAR;
-- files / transcript / run_metrics / limits - an agent target's run (run/targets/agent/): the files it
-- created or changed in its workspace (path, size, sha256, text up to a limit), its transcript (messages
-- and tool calls, each cut at a limit), its metrics (turns, tool calls per tool, tokens, cost, wall time,
-- errors) and the limits it ran under; NULL for other targets.
ALTER TABLE model_outputs ADD COLUMN IF NOT EXISTS files JSON;
ALTER TABLE model_outputs ADD COLUMN IF NOT EXISTS transcript JSON;
ALTER TABLE model_outputs ADD COLUMN IF NOT EXISTS run_metrics JSON;
ALTER TABLE model_outputs ADD COLUMN IF NOT EXISTS limits JSON;
-- calibrated_score - for a grader judged against its own threshold (llm_judge, model, semantic_sim,
-- bleu, ...): its score mapped so the threshold lands on the pass mark 0.8, which the verdicts are
-- decided on; `score` is the score the grader gave. NULL for graders without a threshold.
ALTER TABLE grades ADD COLUMN IF NOT EXISTS calibrated_score DOUBLE;

-- External datasets a suite read (JSONL/CSV/YAML test rows), with a content hash
-- so a changed dataset is visible between runs.
CREATE TABLE IF NOT EXISTS datasets (
    eval_date      VARCHAR NOT NULL,
    skill_version  VARCHAR NOT NULL,
    skill          VARCHAR NOT NULL,
    version        VARCHAR NOT NULL,
    run_id         VARCHAR,
    suite          VARCHAR NOT NULL,
    path           VARCHAR NOT NULL,
    sha256         VARCHAR NOT NULL,
    bytes          BIGINT NOT NULL,
    test_cases     INTEGER NOT NULL
);

-- Trigger evaluation (issue 32; pipeline/triggers.py): one row per query of a package's trigger set
-- × run, the agent given the skill among others by name and description only; `triggered` when a
-- recorded tool call read the skill's SKILL.md (`loaded_by` is that call).
CREATE TABLE IF NOT EXISTS trigger_results (
    eval_date          VARCHAR NOT NULL,
    skill_version      VARCHAR NOT NULL,
    skill              VARCHAR NOT NULL,
    version            VARCHAR NOT NULL,
    run_id             VARCHAR,
    suite              VARCHAR NOT NULL,
    target             VARCHAR NOT NULL,
    source_file        VARCHAR NOT NULL,
    query_number       INTEGER NOT NULL,
    query              VARCHAR NOT NULL,
    should_trigger     BOOLEAN NOT NULL,
    run                INTEGER NOT NULL,
    triggered          BOOLEAN NOT NULL,
    loaded_by          JSON,
    skills_read        JSON NOT NULL,
    offered            JSON NOT NULL,
    seed               VARCHAR NOT NULL,
    threshold          DOUBLE NOT NULL,
    turns              INTEGER NOT NULL,
    tool_calls         INTEGER NOT NULL,
    stopped            VARCHAR,
    error              VARCHAR,
    latency_ms         DOUBLE,
    prompt_tokens      BIGINT,
    completion_tokens  BIGINT
);

-- Blind comparison with another version (issue 32; opt-in, pipeline/blind.py): one row per output
-- of the run that the baseline also has, judged A against B without the judge knowing which is which.
CREATE TABLE IF NOT EXISTS blind_comparisons (
    eval_date               VARCHAR NOT NULL,
    skill_version           VARCHAR NOT NULL,
    skill                   VARCHAR NOT NULL,
    version                 VARCHAR NOT NULL,
    run_id                  VARCHAR,
    suite                   VARCHAR NOT NULL,
    target                  VARCHAR NOT NULL,
    test_id                 VARCHAR NOT NULL,
    trial                   INTEGER NOT NULL,
    baseline_skill_version  VARCHAR NOT NULL,
    baseline_eval_date      VARCHAR NOT NULL,
    seed                    VARCHAR NOT NULL,
    a_is                    VARCHAR NOT NULL,
    winner_label            VARCHAR,
    winner                  VARCHAR,
    reasoning               VARCHAR,
    current_score           DOUBLE,
    baseline_score          DOUBLE,
    rubric                  JSON,
    output_quality          JSON,
    judge_model             VARCHAR,
    error                   VARCHAR
);

-- configuration - with_skill or without_skill (issue 32): the skill installed for the output or not
-- (suite/models.py `Execution.configurations`). Rows stored before it existed were all with the skill.
ALTER TABLE model_outputs ADD COLUMN IF NOT EXISTS configuration VARCHAR DEFAULT 'with_skill';
ALTER TABLE grades ADD COLUMN IF NOT EXISTS configuration VARCHAR DEFAULT 'with_skill';
ALTER TABLE test_results ADD COLUMN IF NOT EXISTS configuration VARCHAR DEFAULT 'with_skill';
ALTER TABLE metrics ADD COLUMN IF NOT EXISTS configuration VARCHAR DEFAULT 'with_skill';
ALTER TABLE case_metrics ADD COLUMN IF NOT EXISTS configuration VARCHAR DEFAULT 'with_skill';
ALTER TABLE regressions ADD COLUMN IF NOT EXISTS configuration VARCHAR DEFAULT 'with_skill';

-- The skill's uplift (analysis/uplift.py): with_skill minus without_skill, paired by case, per target
-- ('*' = all targets together), with its interval, one-sided p-values and verdict. Read it through
-- the view skill_uplift (views.sql).
CREATE TABLE IF NOT EXISTS uplifts (
    eval_date       VARCHAR NOT NULL,
    skill_version   VARCHAR NOT NULL,
    skill           VARCHAR NOT NULL,
    version         VARCHAR NOT NULL,
    run_id          VARCHAR,
    suite           VARCHAR NOT NULL,
    target          VARCHAR NOT NULL,
    value           VARCHAR NOT NULL,
    cases_compared  INTEGER NOT NULL,
    with_skill      DOUBLE NOT NULL,
    without_skill   DOUBLE NOT NULL,
    delta           DOUBLE NOT NULL,
    ci_low          DOUBLE NOT NULL,
    ci_high         DOUBLE NOT NULL,
    p_rise          DOUBLE NOT NULL,
    p_drop          DOUBLE NOT NULL,
    significant     BOOLEAN NOT NULL,
    large_enough    BOOLEAN NOT NULL,
    verdict         VARCHAR NOT NULL,
    wording         VARCHAR NOT NULL,
    detail          JSON NOT NULL
);
