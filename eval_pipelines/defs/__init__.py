"""The Dagster layer: partitions, resources, assets, checks, jobs, sensors, schedules."""
