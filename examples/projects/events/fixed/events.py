"""Upcoming events from ISO 8601 start times (a time without a zone is UTC)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

import attrs
from dateutil import parser, tz


@attrs.frozen
class Event:
    title: str
    starts: str

    @property
    def start_time(self) -> datetime:
        moment = parser.isoparse(self.starts)
        return moment if moment.tzinfo else moment.replace(tzinfo=tz.UTC)


def upcoming(events: Iterable[Event], now: datetime) -> list[Event]:
    """The events starting at or after ``now``, soonest first."""
    return sorted((event for event in events if event.start_time >= now), key=lambda event: event.start_time)
