"""The overview's stacked bar chart as geometry (SPEC §8): pure, no database."""

from datetime import UTC, datetime, timedelta

import pytest

from contextquery import charts

START = datetime(2025, 3, 1, tzinfo=UTC)
HOUR = timedelta(hours=1)
BUCKETS = [(START + i * HOUR, START + (i + 1) * HOUR) for i in range(4)]


def chart(counts, categories=("rate_limit", "auth")):
    return charts.stacked_bars(
        buckets=BUCKETS,
        counts=counts,
        categories=list(categories),
        href=lambda category, start, end: f"/visits/?category={category}&from={start:%H}&to={end:%H}",
        label=str.upper,
        time_label=lambda i, start: start.strftime("%H:%M") if i % 2 == 0 else None,
    )


@pytest.mark.parametrize("value, expected", [(0, (1, 1)), (1, (1, 1)), (5, (5, 1)), (7, (8, 2)), (42, (50, 10))])
def test_the_axis_top_is_a_round_number_with_few_steps(value, expected):
    assert charts.nice_ceiling(value) == expected


def test_segments_stack_from_the_bottom_in_the_order_given():
    drawn = chart({(1, "rate_limit"): 3, (1, "auth"): 1})
    lower, upper = drawn.bars[1].segments
    assert (lower.category, upper.category) == ("rate_limit", "auth")
    assert lower.y + lower.height == pytest.approx(drawn.plot_bottom, abs=0.1)
    assert upper.y + upper.height == pytest.approx(lower.y, abs=0.1)
    assert lower.height == pytest.approx(3 * upper.height, abs=0.2)


def test_the_tallest_bar_reaches_the_top_of_a_round_axis():
    drawn = chart({(0, "rate_limit"): 4})
    (segment,) = drawn.bars[0].segments
    assert drawn.maximum == 4 and segment.y == pytest.approx(drawn.plot_top, abs=0.1)
    assert [t.text for t in drawn.y_ticks] == ["0", "1", "2", "3", "4"]


def test_each_segment_links_to_its_category_and_bucket_and_is_named():
    segment = chart({(2, "auth"): 2}).bars[2].segments[0]
    assert segment.href == "/visits/?category=auth&from=02&to=03"
    assert (segment.label, segment.count, segment.start) == ("AUTH", 2, BUCKETS[2][0])


def test_an_empty_bucket_has_no_segment_and_an_empty_chart_says_so():
    drawn = chart({})
    assert drawn.empty and all(bar.segments == [] for bar in drawn.bars)
    assert not chart({(3, "auth"): 1}).empty


def test_time_labels_go_under_the_buckets_that_have_one():
    assert [t.text for t in chart({}).x_ticks] == ["00:00", "02:00"]
