"""Upcoming events from ISO 8601 start times (a time without a zone is UTC)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

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


def _utc_key(moment: datetime) -> datetime:
    """The moment converted to UTC, so any two moments compare on one clock."""
    if moment.tzinfo is None or moment.tzinfo.utcoffset(moment) is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def upcoming(events: Iterable[Event], now: datetime) -> list[Event]:
    """The events starting at or after ``now``, soonest first."""
    threshold = _utc_key(now)
    keyed = []
    for position, event in enumerate(events):
        moment = _utc_key(event.start_time)
        if moment >= threshold:
            keyed.append((moment, position, event))
    keyed.sort(key=lambda item: (item[0], item[1]))
    return [event for _moment, _position, event in keyed]
