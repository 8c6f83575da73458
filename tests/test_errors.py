"""One table of user-facing error texts: the commands' error handler and the add-station flow
word each situation the same way (bot.errors), and the add flow keeps the client's detail."""

from __future__ import annotations

import pytest

from bot import errors
from bot.runtime.core import user_message
from bot.station import (
    StationAuthError,
    StationError,
    StationNotFound,
    StationResponseError,
    StationUnavailable,
)


@pytest.mark.parametrize(
    ("error", "text"),
    [
        (StationAuthError(), errors.STATION_KEY_REFUSED),
        (StationNotFound("The server knows neither playlist path."), errors.STATION_NOT_FOUND),
        (StationUnavailable(), errors.STATION_UNAVAILABLE),
        (
            StationUnavailable("The station server refused the connection."),
            errors.STATION_UNAVAILABLE,
        ),
    ],
)
def test_commands_and_the_add_flow_share_one_wording(error: StationError, text: str) -> None:
    assert user_message(error) == text
    assert errors.station_problem(error) == text
    assert errors.station_problem(error, detail=True).startswith(text)


def test_the_add_flow_names_what_the_client_saw_when_it_says_more() -> None:
    refused = StationUnavailable("The station server refused the connection.")
    assert errors.station_problem(refused, detail=True) == (
        f"{errors.STATION_UNAVAILABLE} (The station server refused the connection.)"
    )
    assert errors.station_problem(StationUnavailable(), detail=True) == errors.STATION_UNAVAILABLE
    unreadable = StationResponseError("The station sent an empty answer; try again later.")
    assert user_message(unreadable) == errors.station_problem(unreadable, detail=True)
    assert user_message(unreadable) == (
        f"{errors.STATION_UNREADABLE} (The station sent an empty answer; try again later.)"
    )
