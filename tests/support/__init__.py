"""What the tests stand on that is not a test: the leak scanner, the deliberately unsafe pages
that prove it fires, the local GitHub stand-in, and the deployment harness (nginx, serve
processes, a private PostgreSQL)."""
