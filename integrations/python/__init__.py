"""ParaAgent ToolEnv: a standard-library Python client for the HTTP server (`npm run serve`)."""
