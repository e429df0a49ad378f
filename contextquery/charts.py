"""The overview's chart of failed visits over time: stacked bars as SVG geometry (SPEC §8).

Pure: plain data in, plain data out, no Django import. :func:`stacked_bars`
places one bar per time bucket, one segment per category, with the y axis
rounded to a readable scale; the template
``contextquery/_failures_chart.svg.html`` draws it, so every text is
translated and escaped there, never here. Each segment carries the link the
caller made for it, so a bar opens the visits behind it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

WIDTH = 960
HEIGHT = 240
MARGIN_LEFT = 44  # room for the y-axis numbers
MARGIN_RIGHT = 8
MARGIN_TOP = 12
MARGIN_BOTTOM = 30  # room for the time labels
#: The part of a bucket's slot a bar fills; the rest is the gap between bars.
BAR_FILL = 0.72
#: At most this many labelled lines on the y axis.
MAX_TICKS = 5


@dataclass(frozen=True)
class Segment:
    """One category's part of a bar (pixels): ``count`` failed visits in ``[start, end)``."""

    category: str
    label: str
    count: int
    start: datetime
    end: datetime
    x: float
    y: float
    width: float
    height: float
    href: str


@dataclass(frozen=True)
class Bar:
    """One time bucket ``[start, end)``; ``total`` failed visits in ``segments``, bottom first."""

    start: datetime
    end: datetime
    total: int
    x: float
    width: float
    segments: list[Segment] = field(default_factory=list)


@dataclass(frozen=True)
class Tick:
    """A labelled line: ``value`` at ``y`` on the y axis, or ``text`` at ``x`` under the bars."""

    x: float
    y: float
    text: str


@dataclass(frozen=True)
class Chart:
    """Everything the template draws; ``plot_*`` bound the bar area."""

    width: int
    height: int
    plot_left: float
    plot_right: float
    plot_top: float
    plot_bottom: float
    bars: list[Bar]
    y_ticks: list[Tick]
    x_ticks: list[Tick]
    maximum: int

    @property
    def empty(self) -> bool:
        return self.maximum == 0

    @property
    def center(self) -> tuple[float, float]:
        """The middle of the bar area, where "nothing to show" is written."""
        return (self.plot_left + self.plot_right) / 2, (self.plot_top + self.plot_bottom) / 2


def nice_ceiling(value: int) -> tuple[int, int]:
    """``(top, step)``: the axis top ≥ ``value`` and a step of 1, 2 or 5 × 10ⁿ
    that divides it into at most :data:`MAX_TICKS` whole steps."""
    value = max(value, 1)
    magnitude = 1
    while True:
        for factor in (1, 2, 5):
            step = factor * magnitude
            top = -(-value // step) * step
            if top // step <= MAX_TICKS:
                return top, step
        magnitude *= 10


def stacked_bars(
    *,
    buckets: Sequence[tuple[datetime, datetime]],
    counts: Mapping[tuple[int, str], int],
    categories: Sequence[str],
    href: Callable[[str, datetime, datetime], str],
    label: Callable[[str], str],
    time_label: Callable[[int, datetime], str | None],
    width: int = WIDTH,
    height: int = HEIGHT,
) -> Chart:
    """Lay out a stacked bar chart.

    ``buckets`` are the time slots, oldest first; ``counts[(i, category)]``
    the failed visits of ``category`` in bucket ``i``; ``categories`` the
    stacking order, bottom first. ``href(category, start, end)`` is a
    segment's link, ``label(category)`` its name; ``time_label(i, start)`` the text under bucket ``i`` (None
    for no label). Returns a :class:`Chart` (pixels, y growing downwards).
    """
    left, right = MARGIN_LEFT, width - MARGIN_RIGHT
    top, bottom = MARGIN_TOP, height - MARGIN_BOTTOM
    totals = [sum(counts.get((i, c), 0) for c in categories) for i in range(len(buckets))]
    maximum = max(totals, default=0)
    axis_top, step = nice_ceiling(maximum)
    scale = (bottom - top) / axis_top
    slot = (right - left) / max(len(buckets), 1)
    bar_width = slot * BAR_FILL
    bars, x_ticks = [], []
    for i, (start, end) in enumerate(buckets):
        x = left + i * slot + (slot - bar_width) / 2
        segments, base = [], float(bottom)
        for category in categories:
            count = counts.get((i, category), 0)
            if not count:
                continue
            h = count * scale
            base -= h
            segments.append(
                Segment(
                    category=category,
                    label=label(category),
                    count=count,
                    start=start,
                    end=end,
                    x=round(x, 1),
                    y=round(base, 1),
                    width=round(bar_width, 1),
                    height=round(h, 1),
                    href=href(category, start, end),
                )
            )
        bars.append(
            Bar(start=start, end=end, total=totals[i], x=round(x, 1), width=round(bar_width, 1), segments=segments)
        )
        text = time_label(i, start)
        if text:
            x_ticks.append(Tick(x=round(left + i * slot, 1), y=bottom + 18, text=text))
    y_ticks = [
        Tick(x=left - 6, y=round(bottom - value * scale, 1), text=str(value)) for value in range(0, axis_top + 1, step)
    ]
    return Chart(
        width=width,
        height=height,
        plot_left=left,
        plot_right=right,
        plot_top=top,
        plot_bottom=bottom,
        bars=bars,
        y_ticks=y_ticks,
        x_ticks=x_ticks,
        maximum=maximum,
    )
