"""The HTML report's plots: dots (estimates) and bars (95% intervals), one table row per thing
measured, drawn as inline SVG beside HTML text.

Each plot is an HTML table: the label in a header cell (so the browser sizes the label column to
its labels, and a long model name wraps instead of being clipped), then a cell holding one small
SVG with the row's marks, then each series' figures as text ("64% (32/50) [50–76%]"), so every
number a mark stands for is also written out. The SVG's horizontal coordinates are percentages of
its own width (its scale runs from 0% to 100% of the cell, whatever the screen), its vertical ones
pixels; it is aria-hidden, the text beside it being what it shows. Each series has a colour and a
shape, both named in the column's heading ("blue circle"), so the plot reads without colour.

Marks carry data-row, data-series and data-value, and data-x (the percentage the value sits at),
for a reader or a test to find them. Everything is built from numbers and escaped labels with
format_html; nothing here loads numpy.

The page follows its reader's colour scheme. Every colour is drawn in its light-scheme value as a
presentation attribute (fill, stroke: what a reader of the file sees whatever their style), and
each mark, bar and key names its colour in data-colour; `dark_style()` is the CSS that recolours
them by name for a reader in the dark scheme, which reports/html.py puts in the page's one
hashed style block (CSS rules win over presentation attributes; no style attribute is needed).
"""

from dataclasses import dataclass, field

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from reports import numbers

# Every colour a plot draws with: name -> (light scheme, dark scheme). The dark ones stand 3:1 or
# more against the dark page (#0d1117) as the light ones do against white (WCAG 1.4.11), the
# scale's labels 4.5:1 (text).
COLOURS = {
    "blue": ("#0969da", "#4493f8"),
    "orange": ("#bc4c00", "#f0883e"),
    # near-black on white, near-white on the dark page: named for what it is in both, the text's
    # own colour
    "text-coloured": ("#24292f", "#e6edf3"),
    "green": ("#1a7f37", "#3fb950"),
    "purple": ("#8250df", "#ab7df8"),
}
GRID_COLOURS = ("#d8dee4", "#30363d")
ZERO_COLOURS = ("#6e7781", "#848d97")
AXIS_TEXT_COLOURS = ("#57606a", "#9198a1")
GRID, ZERO, AXIS_TEXT = GRID_COLOURS[0], ZERO_COLOURS[0], AXIS_TEXT_COLOURS[0]
ROW_STEP = 20  # pixels between the series' marks in a row: one line of the figures' text
MARK = 4.5  # a mark's half-width in pixels


@dataclass(frozen=True)
class Series:
    key: str
    name: str  # what it measures, as a column heading: "Phase 1, alone"
    colour: str  # hex
    colour_name: str  # "blue"
    shape: str  # circle | square | diamond | triangle

    @property
    def legend(self) -> str:
        return f"{self.colour_name} {self.shape}"


PHASE1 = Series("1", "Phase 1, alone", COLOURS["blue"][0], "blue", "circle")
PHASE2 = Series("2", "Phase 2, beside the models", COLOURS["orange"][0], "orange", "square")
TRUTH = Series("truth", "By the tests", COLOURS["text-coloured"][0], "text-coloured", "diamond")
VALUE = Series("value", "Estimate", COLOURS["text-coloured"][0], "text-coloured", "circle")
RECALL = Series("recall", "Recall", COLOURS["green"][0], "green", "triangle")
TNR = Series("tnr", "True-negative rate", COLOURS["purple"][0], "purple", "diamond")


def dark_style() -> str:
    """CSS, for inside the page's dark-scheme block: each plot colour by name (data-colour) in its
    dark value, shapes filled and bars stroked; the grid, the zero line and the scale's labels."""
    rules = [f'  :not(g)[data-colour="{name}"] {{ fill: {dark}; }} '
             f'g[data-colour="{name}"] {{ stroke: {dark}; }}'
             for name, (_, dark) in COLOURS.items()]
    rules += [f"  svg.marks > line {{ stroke: {GRID_COLOURS[1]}; }} "
              f'svg.marks > line[data-colour="zero"] {{ stroke: {ZERO_COLOURS[1]}; }}',
              f"  svg.axis text {{ fill: {AXIS_TEXT_COLOURS[1]}; }}"]
    return "\n".join(rules)


@dataclass(frozen=True)
class Scale:
    """The plotted range: proportions 0–100%, or differences in percentage points ±limit."""
    kind: str  # "percent" | "points"
    lo: float = 0.0
    hi: float = 1.0

    def x(self, value: float) -> float:
        """Where a value sits, in percent of the plot's width (two decimals), kept on the scale."""
        x = (value - self.lo) / (self.hi - self.lo) * 100
        return round(min(max(x, 0.0), 100.0), 2)

    def ticks(self) -> list[tuple[float, str]]:
        """Five gridlines; the ends and the middle labelled (three labels fit a narrow plot)."""
        values = [self.lo + (self.hi - self.lo) * k / 4 for k in range(5)]
        if self.kind == "percent":
            texts = [f"{round(v * 100)}%" for v in values]
        else:
            texts = [numbers.signed_whole(v) for v in values]  # in points: the caption says so
        return [(self.x(v), text if k % 2 == 0 else "")
                for k, (v, text) in enumerate(zip(values, texts, strict=True))]

    @property
    def words(self) -> str:
        if self.kind == "percent":
            return "scale 0% to 100%"
        return (f"scale {numbers.signed_whole(self.lo)} to {numbers.signed_whole(self.hi)} "
                "percentage points, 0 marked")


PERCENT = Scale("percent")
NICE_LIMITS = (0.05, 0.1, 0.2, 0.25, 0.5, 1.0)


def points_scale(values) -> Scale:
    """A symmetric scale in percentage points wide enough for every value and bound given (at
    least ±5 pp, at most ±100 pp), so small differences are not drawn as dots on a line."""
    largest = max((abs(v) for v in values if not numbers.missing(v)), default=0.0)
    limit = next((n for n in NICE_LIMITS if largest <= n + 1e-12), 1.0)
    return Scale("points", -limit, limit)


@dataclass
class Row:
    label: str
    note: str = ""  # a second, smaller line under the label: a family, a bundle id, a group
    values: list = field(default_factory=list)  # per series: (value, low, high) or None
    texts: list = field(default_factory=list)  # per series: the figure as text


def _shape(series: Series, x: float, y: float) -> SafeString:
    colour, name = series.colour, series.colour_name
    if series.shape == "circle":
        return format_html('<circle cx="{}%" cy="{}" r="{}" fill="{}" data-colour="{}"/>', x, y,
                           MARK, colour, name)
    if series.shape == "square":
        side = MARK * 1.7
        return format_html('<rect x="{}%" y="{}" width="{}" height="{}" fill="{}" data-colour="{}" '
                           'transform="translate({} 0)"/>', x, round(y - side / 2, 2), side, side,
                           colour, name, -side / 2)
    points = {"diamond": "0,-5.5 5.5,0 0,5.5 -5.5,0", "triangle": "0,-5.5 5.5,4.5 -5.5,4.5"}
    return format_html('<svg x="{}%" y="{}" overflow="visible"><polygon points="{}" fill="{}" '
                       'data-colour="{}"/></svg>', x, y, points[series.shape], colour, name)


def _grid(scale: Scale, height: int) -> SafeString:
    lines = []
    for x, _ in scale.ticks():
        zero = scale.kind == "points" and x == 50.0
        named = mark_safe(' data-colour="zero"' if zero else "")  # noqa: S308 - a literal
        lines.append(format_html('<line x1="{}%" y1="0" x2="{}%" y2="{}" stroke="{}" '
                                 'stroke-width="1"{}/>', x, x, height, ZERO if zero else GRID, named))
    return mark_safe("".join(lines))  # noqa: S308 - every part is format_html'd


def row_svg(row: Row, series: list[Series], scale: Scale) -> SafeString:
    """One row's marks: for each series with a value, its bar (with end caps) and its mark."""
    height = ROW_STEP * len(series)
    parts = [format_html('<svg class="marks" width="100%" height="{}" overflow="visible" '
                         'aria-hidden="true" focusable="false" xmlns="http://www.w3.org/2000/svg">',
                         height), _grid(scale, height)]
    for index, (s, value) in enumerate(zip(series, row.values, strict=True)):
        y = ROW_STEP * index + ROW_STEP // 2
        if value is None or numbers.missing(value[0]):
            continue
        point, low, high = value
        if not numbers.missing(low) and not numbers.missing(high):
            x1, x2 = scale.x(low), scale.x(high)
            parts.append(format_html(
                '<g class="bar" data-row="{}" data-series="{}" stroke="{}" data-colour="{}" '
                'stroke-width="2"><line x1="{}%" y1="{}" x2="{}%" y2="{}"/>'
                '<line x1="{}%" y1="{}" x2="{}%" y2="{}"/><line x1="{}%" y1="{}" x2="{}%" y2="{}"/>'
                '</g>', row.label, s.key, s.colour, s.colour_name, x1, y, x2, y, x1, y - 3, x1,
                y + 3, x2, y - 3, x2, y + 3))
        x = scale.x(point)
        parts.append(format_html('<g class="mark" data-row="{}" data-series="{}" data-value="{}" '
                                 'data-x="{}">{}</g>', row.label, s.key, repr(float(point)), x,
                                 _shape(s, x, y)))
    parts.append(mark_safe("</svg>"))  # noqa: S308 - a literal closing tag
    return mark_safe("".join(parts))  # noqa: S308 - every part is format_html'd


def key_svg(series: Series) -> SafeString:
    """The series' mark alone, for its column heading."""
    return format_html('<svg class="key" width="14" height="14" aria-hidden="true" '
                       'focusable="false" xmlns="http://www.w3.org/2000/svg">{}</svg>',
                       _shape(series, 50, 7))


def axis_svg(scale: Scale) -> SafeString:
    ticks = scale.ticks()
    # The middle label is class "mid": a narrow screen's style hides it, the ends stay.
    labels = format_html_join(
        "", '<text x="{}%" y="12" font-size="11" text-anchor="{}" fill="{}"{}>{}</text>',
        ((x, "start" if i == 0 else "end" if i == len(ticks) - 1 else "middle", AXIS_TEXT,
          mark_safe("" if i in (0, len(ticks) - 1) else ' class="mid"'), text)  # noqa: S308 - literal
         for i, (x, text) in enumerate(ticks) if text))
    return format_html('<svg class="marks axis" width="100%" height="16" overflow="visible" '
                       'aria-hidden="true" focusable="false" xmlns="http://www.w3.org/2000/svg">'
                       '{}</svg>', labels)


def dot_plot(*, plot_id: str, caption: str, label_header: str, series: list[Series],
             rows: list[Row], scale: Scale = PERCENT, note: str = "") -> dict:
    """The context of templates/reports/_plot.html for one plot."""
    keys = [key_svg(s) for s in series]
    return {
        "id": plot_id, "caption": caption, "label_header": label_header, "note": note,
        "scale_words": scale.words, "axis": axis_svg(scale),
        "series": [{"name": s.name, "legend": s.legend, "key": key}
                   for s, key in zip(series, keys, strict=True)],
        "rows": [{"label": r.label, "note": r.note, "svg": row_svg(r, series, scale),
                  "lines": [{"key": key, "name": s.name, "text": text}
                            for s, key, text in zip(series, keys, r.texts, strict=True)]}
                 for r in rows],
    }
