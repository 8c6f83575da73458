"""The services a bot runs, built by the composition root and handed to the bot whole."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..announcer.service import AnnouncerService
    from ..catalog.languages import GuildLanguages
    from ..catalog.onboarding import StationOnboarding
    from ..history.likes import LikeService
    from ..requests.service import RequestService
    from ..scheduled.alert_service import AlertService
    from ..scheduled.outbox import PostOutbox
    from ..scheduled.recap_service import RecapService
    from ..shows.service import ShowsService
    from ..songlinks import SongLinks
    from ..voice.service import VoiceService
    from ..votes.service import VoteService


@dataclass(frozen=True)
class Services:
    """Each is started and stopped by its cog (announcer, scheduled, voice) or by setup_hook."""

    announcer: AnnouncerService
    onboarding: StationOnboarding  # the setup commands
    voice: VoiceService
    posts: PostOutbox  # alerts and recaps, sent once
    alerts: AlertService
    recaps: RecapService
    shows: ShowsService  # voice channel status, live-show events
    likes: LikeService  # the ❤ button and /top
    requests: RequestService  # /request, /requests, /onair requests
    languages: GuildLanguages  # each guild's language, cached
    votes: VoteService  # /onair vote: song polls, their winners requested
    links: SongLinks  # "Find this song": one search per song for the fleet
