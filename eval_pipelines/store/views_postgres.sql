-- The views of views.sql in PostgreSQL's dialect, for the Postgres results store
-- (eval_pipelines/store/postgres.py). Same names, columns and rows as DuckDB's
-- (tests/store/test_backends.py compares them); keep the two files in step.
-- DuckDB-only syntax translated: QUALIFY -> a filtered subquery, GROUP BY ALL ->
-- the columns, SELECT * EXCLUDE -> the columns, json_extract_string -> ->>,
-- regexp_full_match / regexp_extract -> ~ / substring(... from ...); text is
-- ordered with COLLATE "C" (byte order, as DuckDB orders it).
-- Statements are separated by a line holding only ';;'.

-- version_order: every (skill, version) with results, ranked in semantic-version
-- order (the order of eval_pipelines/analysis/versions.py: versions that are not semver
-- sort first, by name; a pre-release sorts before its release; build metadata
-- is ignored). version_rank 1 is the oldest version of the skill.
CREATE OR REPLACE VIEW version_order AS
WITH v AS (
    SELECT DISTINCT skill, version FROM test_results
), parsed AS (
    SELECT skill, version,
           version ~ '^v?[0-9]+(\.[0-9]+)?(\.[0-9]+)?(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$' AS is_semver,
           CAST(substring(version from '^v?([0-9]+)') AS BIGINT) AS major,
           coalesce(CAST(substring(version from '^v?[0-9]+\.([0-9]+)') AS BIGINT), 0) AS minor,
           coalesce(CAST(substring(version from '^v?[0-9]+\.[0-9]+\.([0-9]+)') AS BIGINT), 0) AS patch,
           nullif(substring(version from '^v?[0-9]+(?:\.[0-9]+)?(?:\.[0-9]+)?-([0-9A-Za-z.-]+)'), '') AS pre_release
    FROM v
)
SELECT skill, version, skill || '@' || version AS skill_version, is_semver,
       CASE WHEN is_semver THEN major END AS major,
       CASE WHEN is_semver THEN minor END AS minor,
       CASE WHEN is_semver THEN patch END AS patch,
       CASE WHEN is_semver THEN pre_release END AS pre_release,
       row_number() OVER (
           PARTITION BY skill
           ORDER BY is_semver,
                    CASE WHEN is_semver THEN major END, CASE WHEN is_semver THEN minor END,
                    CASE WHEN is_semver THEN patch END,
                    CASE WHEN is_semver THEN pre_release IS NULL END,
                    CASE WHEN is_semver THEN pre_release END COLLATE "C",
                    version COLLATE "C"
       ) AS version_rank
FROM parsed
;;

-- latest_results: one row per skill version, case, target and trial, taken from
-- the latest evaluation date (nightly run) that has that case, with the case's
-- input and the target's output beside the verdict.
CREATE OR REPLACE VIEW latest_results AS
SELECT eval_date, skill_version, skill, version, run_id, suite, test_id, case_name, category,
       target, configuration, trial, verdict, status, score, reason, input, expected, output, error, latency_ms,
       prompt_tokens, completion_tokens, cost_usd, cached
FROM (
SELECT r.eval_date, r.skill_version, r.skill, r.version, r.run_id, r.suite,
       r.test_id, c.name AS case_name,
       coalesce(r.category, c.category, c.metadata ->> 'eval_type') AS category,
       r.target, r.configuration, r.trial, r.verdict, r.status, r.score, r.reason,
       c.input, c.expected, o.output, o.error, o.latency_ms,
       o.prompt_tokens, o.completion_tokens, o.cost_usd, o.cached,
       max(r.eval_date) OVER (PARTITION BY r.skill_version, r.test_id, r.target, r.configuration, r.trial) AS latest_eval_date
FROM test_results r
LEFT JOIN test_cases c
       ON c.eval_date = r.eval_date AND c.skill_version = r.skill_version AND c.test_id = r.test_id
LEFT JOIN model_outputs o
       ON o.eval_date = r.eval_date AND o.skill_version = r.skill_version AND o.test_id = r.test_id
      AND o.target = r.target AND o.trial = r.trial AND o.configuration = r.configuration
) ranked
WHERE eval_date = latest_eval_date
;;

-- version_baselines: the version each skill version is compared with: the
-- suite's pinned `baseline` when that version has results, else the previous
-- version with results in semantic-version order (eval_pipelines/analysis/baselines.py).
CREATE OR REPLACE VIEW version_baselines AS
WITH pinned AS (
    SELECT skill_version,
           regexp_replace(spec ->> 'baseline', '^.*@', '') AS pinned_version
    FROM (SELECT skill_version, spec, eval_date,
                 max(eval_date) OVER (PARTITION BY skill_version) AS latest_eval_date
          FROM suites) s
    WHERE eval_date = latest_eval_date
), previous AS (
    SELECT o.skill, o.version, o.skill_version, o.version_rank,
           lag(o.version) OVER (PARTITION BY o.skill ORDER BY o.version_rank) AS previous_version
    FROM version_order o
)
SELECT p.skill, p.version, p.skill_version,
       CASE WHEN pin.pinned_version IS NOT NULL THEN
                (SELECT vo.version FROM version_order vo
                 WHERE vo.skill = p.skill AND vo.version = pin.pinned_version AND vo.version <> p.version)
            ELSE p.previous_version END AS baseline_version
FROM previous p
LEFT JOIN pinned pin ON pin.skill_version = p.skill_version
;;

-- version_comparison: case-level changes between each skill version and its
-- baseline, both at their latest evaluation date. `change` is
--   regressed  passed in the baseline, does not pass now (fail, borderline, error)
--   fixed      did not pass in the baseline, passes now
--   changed    another verdict/status change (fail -> borderline, fail -> not evaluated, ...)
--   same       same verdict and status
--   new        no baseline row for this case, target and trial
--   removed    the baseline has the case, this version does not
CREATE OR REPLACE VIEW version_comparison AS
WITH pairs AS (
    SELECT skill, version, skill_version, baseline_version,
           skill || '@' || baseline_version AS baseline_skill_version
    FROM version_baselines WHERE baseline_version IS NOT NULL
), cur AS (
    SELECT p.skill, p.version, p.skill_version, p.baseline_version, r.test_id, r.case_name, r.category,
           r.target, r.configuration, r.trial, r.eval_date, r.verdict, r.status, r.score, r.reason, r.output, r.error
    FROM pairs p JOIN latest_results r ON r.skill_version = p.skill_version
), base AS (
    SELECT p.skill, p.version, p.skill_version, p.baseline_version, r.test_id, r.case_name, r.category,
           r.target, r.configuration, r.trial, r.eval_date, r.verdict, r.status, r.score, r.reason, r.output, r.error
    FROM pairs p JOIN latest_results r ON r.skill_version = p.baseline_skill_version
), joined AS (
    SELECT coalesce(c.skill, b.skill) AS skill,
           coalesce(c.version, b.version) AS version,
           coalesce(c.skill_version, b.skill_version) AS skill_version,
           coalesce(c.baseline_version, b.baseline_version) AS baseline_version,
           coalesce(c.test_id, b.test_id) AS test_id,
           coalesce(c.case_name, b.case_name) AS case_name,
           coalesce(c.category, b.category) AS category,
           coalesce(c.target, b.target) AS target,
           coalesce(c.configuration, b.configuration) AS configuration,
           coalesce(c.trial, b.trial) AS trial,
           b.eval_date AS baseline_eval_date, c.eval_date AS eval_date,
           b.verdict AS baseline_verdict, c.verdict AS verdict,
           b.status AS baseline_status, c.status AS status,
           b.score AS baseline_score, c.score AS score,
           c.score - b.score AS score_delta,
           b.reason AS baseline_reason, c.reason AS reason,
           b.output AS baseline_output, c.output AS output,
           b.error AS baseline_error, c.error AS error,
           b.test_id IS NOT NULL AS in_baseline, c.test_id IS NOT NULL AS in_version
    FROM cur c
    FULL OUTER JOIN base b
      ON b.skill_version = c.skill_version AND b.test_id = c.test_id
     AND b.target = c.target AND b.trial = c.trial AND b.configuration = c.configuration
)
SELECT skill, version, skill_version, baseline_version, test_id, case_name, category, target, configuration, trial,
       baseline_eval_date, eval_date, baseline_verdict, verdict, baseline_status, status,
       baseline_score, score, score_delta, baseline_reason, reason, baseline_output, output,
       baseline_error, error,
       CASE
           WHEN NOT in_baseline THEN 'new'
           WHEN NOT in_version THEN 'removed'
           WHEN baseline_verdict = 'pass' AND status IN ('graded', 'error') AND verdict IS DISTINCT FROM 'pass'
               THEN 'now_failing'
           WHEN verdict = 'pass' AND baseline_status IN ('graded', 'error')
                AND baseline_verdict IS DISTINCT FROM 'pass'
               THEN 'now_passing'
           WHEN verdict IS DISTINCT FROM baseline_verdict OR status IS DISTINCT FROM baseline_status
               THEN 'changed'
           ELSE 'same'
       END AS change
FROM joined
;;

-- metric_history: every metric of every skill version per evaluation date
-- (one row per night, target and metric), with the previous night's value of the
-- same skill version and the change since then. target '*' is all targets together.
CREATE OR REPLACE VIEW metric_history AS
SELECT m.eval_date, m.skill, m.version, m.skill_version, m.run_id, m.suite, m.target, m.configuration, m.metric,
       m.value,
       lag(m.value) OVER w AS previous_value,
       lag(m.eval_date) OVER w AS previous_eval_date,
       m.value - lag(m.value) OVER w AS delta
FROM metrics m
WINDOW w AS (PARTITION BY m.skill_version, m.target, m.configuration, m.metric ORDER BY m.eval_date)
;;

-- failures: every result that did not pass (fail, borderline or error), one row
-- per failing assertion (grade not passed, graded or errored); a result with no
-- failing grade (an output error, a failed gate without grades) has one row with
-- NULL assertion columns. Every evaluation date is kept: join latest_results or
-- filter on eval_date for the current state.
CREATE OR REPLACE VIEW failures AS
SELECT r.eval_date, r.skill_version, r.skill, r.version, r.run_id, r.suite,
       r.test_id, c.name AS case_name,
       coalesce(r.category, c.category, c.metadata ->> 'eval_type') AS category,
       r.target, r.configuration, r.trial, r.verdict, r.status, r.score, r.reason,
       g.assertion_index, g.assertion_type, g.assertion_name,
       g.score AS assertion_score, g.calibrated_score AS assertion_calibrated_score, g.status AS assertion_status,
       g.reason AS assertion_reason, g.details AS assertion_details,
       c.input, c.expected, o.output, o.error, o.latency_ms
FROM test_results r
LEFT JOIN test_cases c
       ON c.eval_date = r.eval_date AND c.skill_version = r.skill_version AND c.test_id = r.test_id
LEFT JOIN model_outputs o
       ON o.eval_date = r.eval_date AND o.skill_version = r.skill_version AND o.test_id = r.test_id
      AND o.target = r.target AND o.trial = r.trial AND o.configuration = r.configuration
LEFT JOIN grades g
       ON g.eval_date = r.eval_date AND g.skill_version = r.skill_version AND g.test_id = r.test_id
      AND g.target = r.target AND g.trial = r.trial AND g.configuration = r.configuration
      AND NOT g.passed AND g.status IN ('graded', 'error')
WHERE r.status IN ('graded', 'error') AND r.verdict IS DISTINCT FROM 'pass'
;;

-- flaky_cases: cases whose trials disagree (some passed, some did not) on an
-- evaluation date, from case_metrics.flaky, with the trial counts.
CREATE OR REPLACE VIEW flaky_cases AS
SELECT eval_date, skill_version, skill, version, run_id, suite, test_id, target, configuration,
       CAST(max(value) FILTER (WHERE metric = 'trials') AS INTEGER) AS trials,
       CAST(max(value) FILTER (WHERE metric = 'passes') AS INTEGER) AS passes,
       max(value) FILTER (WHERE metric = 'pass_rate') AS pass_rate,
       max(value) FILTER (WHERE metric = 'mean_score') AS mean_score
FROM case_metrics
GROUP BY eval_date, skill_version, skill, version, run_id, suite, test_id, target, configuration
HAVING max(value) FILTER (WHERE metric = 'flaky') = 1
;;

-- flaky_across_nights: cases of one skill version whose verdict changed between
-- evaluation dates (the model drifted or the case is noisy). A case counts as
-- passing on a night when at least half of its trials passed.
CREATE OR REPLACE VIEW flaky_across_nights AS
WITH nightly AS (
    SELECT skill_version, skill, version, target, configuration, test_id, eval_date,
           avg(CASE WHEN verdict = 'pass' THEN 1.0 ELSE 0.0 END) >= 0.5 AS passed
    FROM test_results
    WHERE status IN ('graded', 'error')
    GROUP BY skill_version, skill, version, target, configuration, test_id, eval_date
)
SELECT skill_version, skill, version, target, configuration, test_id,
       count(*) AS nights,
       count(*) FILTER (WHERE passed) AS nights_passed,
       min(eval_date) AS first_night,
       max(eval_date) AS last_night
FROM nightly
GROUP BY skill_version, skill, version, target, configuration, test_id
HAVING count(*) >= 2 AND count(*) FILTER (WHERE passed) NOT IN (0, count(*))
;;

-- expectation_results: one row per expectation of a case × target × trial, from the
-- `expectations` grades (as views.sql; json_each -> json_array_elements WITH ORDINALITY).
CREATE OR REPLACE VIEW expectation_results AS
SELECT g.eval_date, g.skill_version, g.skill, g.version, g.run_id, g.suite,
       g.target, g.configuration, g.test_id, g.trial, g.assertion_index,
       CAST(e.ordinality AS INTEGER) AS expectation,
       e.value ->> 'text' AS expectation_text,
       CAST(e.value ->> 'passed' AS BOOLEAN) AS passed,
       e.value ->> 'evidence' AS evidence
FROM grades g, json_array_elements(g.details -> 'expectations') WITH ORDINALITY AS e(value, ordinality)
WHERE g.assertion_type = 'expectations' AND g.status = 'graded'
;;

-- trigger_rates: one row per query of a trigger set and evaluation date (table trigger_results): the
-- runs that ended without an error, how many loaded the skill, the trigger rate, and whether the
-- query passed (it triggers when its rate reaches the threshold, and should it?), as skill-creator's
-- run_eval.py decides.
CREATE OR REPLACE VIEW trigger_rates AS
WITH q AS (
    SELECT eval_date, skill_version, skill, version, run_id, suite, target, source_file,
           query_number, query, should_trigger, max(threshold) AS threshold,
           count(*) FILTER (WHERE error IS NULL) AS runs,
           count(*) FILTER (WHERE error IS NULL AND triggered) AS triggered_runs,
           count(*) FILTER (WHERE error IS NOT NULL) AS errors
    FROM trigger_results
    GROUP BY eval_date, skill_version, skill, version, run_id, suite, target, source_file,
             query_number, query, should_trigger
)
SELECT *, CAST(triggered_runs AS DOUBLE PRECISION) / nullif(runs, 0) AS trigger_rate,
       CASE WHEN runs > 0 THEN (CAST(triggered_runs AS DOUBLE PRECISION) / runs >= threshold) = should_trigger END AS passed
FROM q
;;

-- trigger_accuracy: per skill version, target and evaluation date, the queries of trigger_rates that
-- ran, counted as true/false positives/negatives (a query is positive when it triggers), with
-- precision = TP / (TP + FP), recall = TP / (TP + FN), accuracy = (TP + TN) / queries
-- (NULL when undefined), as analysis/triggers.py computes them.
CREATE OR REPLACE VIEW trigger_accuracy AS
WITH c AS (
    SELECT eval_date, skill_version, skill, version, run_id, suite, target,
           count(*) AS queries,
           count(*) FILTER (WHERE should_trigger AND trigger_rate >= threshold) AS true_positives,
           count(*) FILTER (WHERE NOT should_trigger AND trigger_rate >= threshold) AS false_positives,
           count(*) FILTER (WHERE should_trigger AND trigger_rate < threshold) AS false_negatives,
           count(*) FILTER (WHERE NOT should_trigger AND trigger_rate < threshold) AS true_negatives
    FROM trigger_rates
    WHERE runs > 0
    GROUP BY eval_date, skill_version, skill, version, run_id, suite, target
)
SELECT *,
       CAST(true_positives AS DOUBLE PRECISION) / nullif(true_positives + false_positives, 0) AS precision,
       CAST(true_positives AS DOUBLE PRECISION) / nullif(true_positives + false_negatives, 0) AS recall,
       CAST(true_positives + true_negatives AS DOUBLE PRECISION) / queries AS accuracy
FROM c
;;

-- skill_uplift: does the skill help? One row per skill version, evaluation date and target
-- ('*' = all targets together), from the uplifts table the metrics stage writes (analysis/uplift.py):
-- the mean over cases of each run's share of expectations met (1/0 for a case without expectations)
-- with_skill and without_skill, the paired difference (delta) with its interval (ci_low, ci_high), the
-- one-sided p-values of a rise and of a drop (exact sign-flip tests, alpha/2 each), and the verdict:
-- helps, no_measurable_effect or hurts (wording says why, with the numbers).
CREATE OR REPLACE VIEW skill_uplift AS
SELECT u.eval_date, u.skill_version, u.skill, u.version, u.run_id, u.suite, u.target, u.value,
       u.cases_compared, u.with_skill, u.without_skill, u.delta, u.ci_low, u.ci_high,
       u.p_rise, u.p_drop, least(u.p_rise, u.p_drop) AS p_value,
       u.significant, u.large_enough, u.verdict, u.wording
FROM uplifts u
