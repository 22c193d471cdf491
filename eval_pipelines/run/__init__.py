"""The model phase: the engine (cases × targets × trials), targets, the response cache, workspaces, the sandbox and traces."""
