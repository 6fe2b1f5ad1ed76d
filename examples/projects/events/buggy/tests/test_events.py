from datetime import datetime

from dateutil import tz

from events import Event, upcoming

NOW = datetime(2026, 3, 1, 0, 0, tzinfo=tz.UTC)


def test_past_events_are_left_out():
    events = [Event("retro", "2026-02-27T15:00:00Z"), Event("launch", "2026-03-02T09:00:00Z")]
    assert [event.title for event in upcoming(events, NOW)] == ["launch"]


def test_a_time_without_zone_is_utc():
    assert Event("standup", "2026-03-01T09:30:00").start_time == datetime(2026, 3, 1, 9, 30, tzinfo=tz.UTC)


def test_soonest_first_across_time_zones():
    events = [Event("london", "2026-03-01T09:00:00Z"), Event("berlin", "2026-03-01T10:00:00+02:00")]
    assert [event.title for event in upcoming(events, NOW)] == ["berlin", "london"]


def test_soonest_first_in_one_zone():
    events = [Event("b", "2026-03-03T08:00:00Z"), Event("a", "2026-03-02T08:00:00Z")]
    assert [event.title for event in upcoming(events, NOW)] == ["a", "b"]
