"""The model phase: targets, the engine, the response cache, workspaces and the sandbox."""
