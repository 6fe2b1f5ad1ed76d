"""Upcoming events from ISO 8601 start times (a time without a zone is UTC)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

import attrs
from dateutil import parser, tz


def _as_utc(moment: datetime) -> datetime:
    """The same moment, zone-aware (a moment without a zone is taken as UTC)."""
    return moment if moment.tzinfo else moment.replace(tzinfo=tz.UTC)


@attrs.frozen
class Event:
    title: str
    starts: str

    @property
    def start_time(self) -> datetime:
        return _as_utc(parser.isoparse(self.starts))


def upcoming(events: Iterable[Event], now: datetime) -> list[Event]:
    """The events starting at or after ``now``, soonest first."""
    now = _as_utc(now)
    # Order by the moment itself, not by the text: the same text order means nothing
    # across time zones. sorted() is stable, so events at the same moment keep their order.
    return sorted((event for event in events if event.start_time >= now), key=lambda event: event.start_time)
