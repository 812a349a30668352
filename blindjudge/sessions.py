"""Django's database session store, its one read per request written out (issue 32).

Every judge request reads its browser session (the judge it was admitted as) with
`Session.objects.get(session_key=..., expire_date__gt=now)`; building and compiling that
queryset cost several times the database's answer. This store reads the same row by the same
two conditions in a statement written once, and is otherwise Django's own (saving, cycling
keys, clearing expired rows: `SESSION_ENGINE = "blindjudge.sessions"`).
"""

from django.contrib.sessions.backends import db
from django.db import connections, router
from django.utils import timezone


class SessionStore(db.SessionStore):
    def _get_session_from_db(self):
        model = self.model
        alias = router.db_for_read(model)
        connection = connections[alias]
        quote = connection.ops.quote_name
        column = lambda name: quote(model._meta.get_field(name).column)  # noqa: E731
        # Only the model's own table and column names are formatted in; the values are parameters.
        sql = (f"SELECT {column('session_data')} FROM {quote(model._meta.db_table)} "  # noqa: S608
               f"WHERE {column('session_key')} = %s AND {column('expire_date')} > %s")
        now = connection.ops.adapt_datetimefield_value(timezone.now())
        with connection.cursor() as cursor:
            cursor.execute(sql, [self.session_key, now])
            row = cursor.fetchone()
        if row is None:
            self._session_key = None  # as Django's store: a new key when this one is saved
            return None
        return model(session_key=self.session_key, session_data=row[0])
