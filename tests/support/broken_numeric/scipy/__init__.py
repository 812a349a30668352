"""A scipy that refuses to import: put on PYTHONPATH by tests/e2e/test_report_download_server.py to
break the report builder (which needs scipy) and not the server (which must never import it)."""

raise ImportError("broken_numeric: scipy refuses to import (tests/support/broken_numeric)")
