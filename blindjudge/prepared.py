"""Querysets compiled once per process and run again with new values (issue 32).

Every judge request starts with the same lookups (the judge row with their session and run, by
the guard), differing only in their values. Django builds and compiles a queryset's SQL on every
evaluation, and for the guard's `select_related` query that took longer than the database took
to answer it: profiled at a third of the item page's server CPU. A `PreparedQuery` builds its
queryset once per database connection alias, with a sentinel in place of each value that
changes, keeps the SQL and the compiler's column map, and then only substitutes the values,
executes, and turns the row into model instances through Django's own converters and
`select_related` populators — the same objects the queryset gives (tests/test_prepared.py
compares them field by field).

Only values Django passes to the database unchanged may be sentinels (ints and strings: primary
keys, codes, URL ids; an int the backend wraps, as PostgreSQL's wraps an IntegerField's in
psycopg's Int4, is wrapped the same way); each must appear in the compiled parameters (every
place it appears takes the value), or the query is refused at its first use. `first()` gives a
model instance (with its annotations); `rows()` the rows of a `values_list()` queryset,
converted as Django converts them.
"""

import threading
from dataclasses import dataclass

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models.query import get_related_populators


@dataclass(frozen=True)
class _Compiled:
    query: object  # the sql.Query, to make a compiler bound to the connection in use
    sql: str
    params: tuple
    slots: dict  # sentinel name -> its indexes in params
    select: list
    converters: dict  # column index -> (converters, expression), as the compiler made them
    klass_info: dict | None
    annotation_col_map: dict
    init_list: list
    fields_start: int
    fields_end: int
    populators: list


class PreparedQuery:
    """`build(**values)` returns the queryset; `sentinels` names a stand-in for each value (an int
    or string no real call passes). `first(**values)`: the first model instance, or None."""

    def __init__(self, build, **sentinels):
        for name, sentinel in sentinels.items():
            if type(sentinel) not in (int, str):
                raise TypeError(f"sentinel {name}: only ints and strings reach the database as given")
        self._build = build
        self._sentinels = sentinels
        self._compiled: dict[str, _Compiled] = {}
        self._lock = threading.Lock()

    def _compile(self, alias: str) -> _Compiled:
        queryset = self._build(**self._sentinels).using(alias)
        compiler = queryset.query.get_compiler(using=alias)
        sql, params = compiler.as_sql()
        slots = {}
        for name, sentinel in self._sentinels.items():
            # PostgreSQL's backend hands integers over wrapped (psycopg's Int4 for an
            # IntegerField): a subclass of int, kept for the value put in its place.
            found = [index for index, param in enumerate(params)
                     if isinstance(param, type(sentinel)) and not isinstance(param, bool)
                     and param == sentinel]
            if not found:
                raise RuntimeError(f"{name}: its sentinel is not among the query's parameters")
            slots[name] = tuple(found)
        klass_info, select = compiler.klass_info, compiler.select
        # Django's converters for each column (dates from SQLite's text, JSON, booleans). Those
        # of the backend are bound to the connection compiled on; they read only what every
        # connection of the alias shares (its settings: USE_TZ, the time zone), and each is
        # given the connection in use when it runs, as Django gives it.
        converters = compiler.get_converters([column[0] for column in select])
        if klass_info is None or queryset._fields is not None:  # values() / values_list()
            return _Compiled(query=queryset.query, sql=sql, params=tuple(params), slots=slots,
                             select=select, converters=converters, klass_info=None,
                             annotation_col_map={}, init_list=[], fields_start=0, fields_end=0,
                             populators=[])
        start, end = klass_info["select_fields"][0], klass_info["select_fields"][-1] + 1
        return _Compiled(
            query=queryset.query, sql=sql, params=tuple(params), slots=slots, select=select,
            converters=converters,
            klass_info=klass_info, annotation_col_map=compiler.annotation_col_map,
            init_list=[column[0].target.attname for column in select[start:end]],
            fields_start=start, fields_end=end,
            populators=get_related_populators(klass_info, select, alias))

    def _run(self, using: str, values: dict, *, one: bool):
        compiled = self._compiled.get(using)
        if compiled is None:
            with self._lock:
                compiled = self._compiled.get(using) or self._compile(using)
                self._compiled[using] = compiled
        if values.keys() != compiled.slots.keys():
            raise TypeError(f"values for {sorted(compiled.slots)} expected, got {sorted(values)}")
        params = list(compiled.params)
        for name, value in values.items():
            if type(value) is not type(self._sentinels[name]):
                raise TypeError(f"{name}: {type(self._sentinels[name]).__name__} expected")
            for index in compiled.slots[name]:
                wrapper = type(compiled.params[index])
                params[index] = value if wrapper is type(value) else wrapper(value)
        connection = connections[using]
        with connection.cursor() as cursor:
            cursor.execute(compiled.sql, params)
            rows = cursor.fetchmany(1) if one else cursor.fetchall()
        if not rows or not compiled.converters:
            return compiled, [tuple(row) for row in rows]
        converted = []
        for row in rows:  # SQLCompiler.apply_converters, with the converters made once
            row = list(row)
            for position, (functions, expression) in compiled.converters.items():
                value = row[position]
                for function in functions:
                    value = function(value, expression, connection)
                row[position] = value
            converted.append(tuple(row))
        return compiled, converted

    def first(self, *, using: str = DEFAULT_DB_ALIAS, **values):
        """The first row as a model instance (select_related objects and annotations set), or
        None."""
        compiled, rows = self._run(using, values, one=True)
        if not rows:
            return None
        row = rows[0]
        if compiled.klass_info is None:
            raise TypeError("first() makes model instances: use rows() for values_list()")
        model = compiled.klass_info["model"]
        instance = model.from_db(using, compiled.init_list,
                                 row[compiled.fields_start:compiled.fields_end])
        for populator in compiled.populators:
            populator.populate(row, instance)
        for name, position in (compiled.annotation_col_map or {}).items():
            setattr(instance, name, row[position])
        return instance

    def rows(self, *, using: str = DEFAULT_DB_ALIAS, **values) -> list[tuple]:
        """Every row of a values_list() queryset, as tuples."""
        return self._run(using, values, one=False)[1]
