"""A numpy that refuses to import: put on PYTHONPATH by tests/e2e/test_report_download_server.py to
break the report builder (which needs numpy) and not the server (which must never import it)."""

raise ImportError("broken_numeric: numpy refuses to import (tests/support/broken_numeric)")
