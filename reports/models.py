# Reports are built from the judging and accounts tables; this app stores nothing of its own.
