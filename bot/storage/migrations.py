"""The schema as an append-only list of migrations, one script per version."""

from __future__ import annotations

# Migrations, with {id} (auto-increment key), {real} and {blob} filled per dialect.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE subscriptions (
        id {id},
        guild_id BIGINT NOT NULL,
        channel_id BIGINT NOT NULL,
        station TEXT NOT NULL,
        mode TEXT NOT NULL DEFAULT 'post',
        mention_role BIGINT NOT NULL DEFAULT 0,
        min_seconds {real} NOT NULL DEFAULT 0,
        skip_item_types TEXT NOT NULL DEFAULT '[]',
        skip_pattern TEXT NOT NULL DEFAULT '',
        announce_live INTEGER NOT NULL DEFAULT 1,
        paused_reason TEXT,
        card_message_id BIGINT,
        last_play TEXT,
        UNIQUE (channel_id, station)
    );
    CREATE TABLE plays (
        id {id},
        station TEXT NOT NULL,
        started {real} NOT NULL,
        title TEXT NOT NULL,
        artist TEXT,
        album TEXT,
        duration {real},
        listeners INTEGER,
        live INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX plays_station_started ON plays (station, started);
    """,
    """
    CREATE TABLE claims (
        subscription_id BIGINT NOT NULL,
        play_key TEXT NOT NULL,
        claimed_at {real} NOT NULL,
        PRIMARY KEY (subscription_id, play_key)
    );
    CREATE TABLE guild_stations (
        guild_id BIGINT NOT NULL,
        slug TEXT NOT NULL,
        name TEXT NOT NULL,
        base_url TEXT NOT NULL,
        station_id BIGINT NOT NULL,
        key_cipher {blob},
        timezone TEXT NOT NULL DEFAULT 'UTC',
        PRIMARY KEY (guild_id, slug)
    );
    CREATE TABLE guild_settings (
        guild_id BIGINT PRIMARY KEY,
        timezone TEXT NOT NULL DEFAULT 'UTC',
        default_station TEXT NOT NULL DEFAULT ''
    );
    """,
    # Every play's fan-out looks subscriptions up by station, status and purges by guild.
    """
    CREATE INDEX subscriptions_station ON subscriptions (station);
    CREATE INDEX subscriptions_guild ON subscriptions (guild_id);
    """,
    # The delivery outbox (replaces claims): a detected play is recorded once (announcements)
    # with one row per channel it goes to (deliveries), in one transaction, before any send. A
    # delivery is a lease (owner + lease_until): one that is not renewed expires and is taken up
    # again, by the next run or by another process, until the announcement's expires_at.
    """
    DROP TABLE claims;
    CREATE TABLE announcements (
        id {id},
        station TEXT NOT NULL,
        play_key TEXT NOT NULL,
        payload TEXT NOT NULL,
        detected_at {real} NOT NULL,
        expires_at {real} NOT NULL,
        UNIQUE (station, play_key)
    );
    CREATE TABLE deliveries (
        announcement_id BIGINT NOT NULL,
        subscription_id BIGINT NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending',
        owner TEXT,
        lease_until {real},
        attempts INTEGER NOT NULL DEFAULT 0,
        message_id BIGINT,
        updated_at {real} NOT NULL,
        PRIMARY KEY (announcement_id, subscription_id)
    );
    CREATE INDEX deliveries_state ON deliveries (state, lease_until);
    CREATE INDEX deliveries_subscription ON deliveries (subscription_id);
    CREATE INDEX announcements_detected ON announcements (detected_at);
    """,
    # Announcement style per channel: 'compact', 'full' or '' (by mode: post compact, card full).
    """
    ALTER TABLE subscriptions ADD COLUMN style TEXT NOT NULL DEFAULT '';
    """,
    # PostgreSQL fleets: which process polls each station (a lease on the watch's job id), and
    # the poller's last station info, which the other processes answer commands from.
    """
    CREATE TABLE watch_leases (
        job_id TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        lease_until {real} NOT NULL
    );
    CREATE TABLE station_state (
        job_id TEXT PRIMARY KEY,
        payload TEXT NOT NULL,
        fetched_at {real} NOT NULL
    );
    """,
    # Random values the processes of one deployment share (the watch job-id HMAC key: every
    # process must name a station's watch alike, and a log reader must not be able to guess it).
    """
    CREATE TABLE shared_secrets (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );
    """,
    # Voice: the channel each guild's player is in (rejoined after a restart), each guild's voice
    # settings (24/7 home channel, empty-channel timeout, station) and whether a guild-added
    # station may be played in voice (the guild's admin opts in) and from which stream.
    """
    CREATE TABLE voice_sessions (
        guild_id BIGINT PRIMARY KEY,
        channel_id BIGINT NOT NULL,
        station TEXT NOT NULL,
        updated_at {real} NOT NULL
    );
    CREATE TABLE guild_voice (
        guild_id BIGINT PRIMARY KEY,
        home_channel BIGINT NOT NULL DEFAULT 0,
        leave_when_empty {real} NOT NULL DEFAULT 300,
        station TEXT NOT NULL DEFAULT ''
    );
    ALTER TABLE guild_stations ADD COLUMN voice INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE guild_stations ADD COLUMN stream_url TEXT NOT NULL DEFAULT '';
    """,
    # Scheduled posts (live and offline alerts, weekly recaps): each recorded under a key that
    # names its event (the same in every process and run) before it is sent, then claimed with a
    # lease like a delivery; alert settings and each station's alert state (which outage or live
    # show was seen, whether it was posted), and each guild's recap settings.
    """
    CREATE TABLE scheduled_posts (
        post_key TEXT PRIMARY KEY,
        guild_id BIGINT NOT NULL,
        channel_id BIGINT NOT NULL,
        kind TEXT NOT NULL,
        payload TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending',
        owner TEXT,
        lease_until {real},
        attempts INTEGER NOT NULL DEFAULT 0,
        message_id BIGINT,
        created_at {real} NOT NULL,
        expires_at {real} NOT NULL,
        updated_at {real} NOT NULL
    );
    CREATE INDEX scheduled_posts_state ON scheduled_posts (state, lease_until);
    CREATE INDEX scheduled_posts_guild ON scheduled_posts (guild_id);
    CREATE TABLE alert_subscriptions (
        guild_id BIGINT NOT NULL,
        station TEXT NOT NULL,
        channel_id BIGINT NOT NULL,
        role_id BIGINT NOT NULL DEFAULT 0,
        PRIMARY KEY (guild_id, station)
    );
    CREATE TABLE station_alert_state (
        station TEXT PRIMARY KEY,
        payload TEXT NOT NULL,
        updated_at {real} NOT NULL
    );
    CREATE TABLE recaps (
        guild_id BIGINT PRIMARY KEY,
        channel_id BIGINT NOT NULL,
        station TEXT NOT NULL,
        weekday INTEGER NOT NULL,
        hour INTEGER NOT NULL,
        since {real} NOT NULL
    );
    """,
    # Shows: whether a guild lets OnAir set its voice channel's status (on unless turned off),
    # the status (or stage topic) OnAir last wrote in each channel (it replaces and clears only
    # its own, also after a restart), the stations whose live shows become a guild's Discord
    # Scheduled Events, and each event OnAir made (one per airing: the row is claimed first).
    """
    ALTER TABLE guild_voice ADD COLUMN channel_status INTEGER NOT NULL DEFAULT 1;
    CREATE TABLE voice_status (
        channel_id BIGINT PRIMARY KEY,
        guild_id BIGINT NOT NULL,
        text TEXT NOT NULL
    );
    CREATE TABLE guild_show_events (
        guild_id BIGINT NOT NULL,
        station TEXT NOT NULL,
        PRIMARY KEY (guild_id, station)
    );
    CREATE TABLE show_events (
        guild_id BIGINT NOT NULL,
        station TEXT NOT NULL,
        show_key TEXT NOT NULL,
        event_id BIGINT NOT NULL DEFAULT 0,
        state TEXT NOT NULL DEFAULT 'claimed',
        created_at {real} NOT NULL,
        PRIMARY KEY (guild_id, station, show_key)
    );
    """,
    # Community: a subscription's announcement templates (JSON; NULL = none) and listeners'
    # likes, one row per (play of the history, Discord user): the primary key makes a like
    # count once however many processes receive the click.
    """
    ALTER TABLE subscriptions ADD COLUMN templates TEXT;
    CREATE TABLE likes (
        play_id BIGINT NOT NULL,
        user_id BIGINT NOT NULL,
        liked_at {real} NOT NULL,
        PRIMARY KEY (play_id, user_id)
    );
    CREATE INDEX likes_liked_at ON likes (liked_at);
    """,
    # Alerts: the version of a station's alert state, so a save is a compare-and-set.
    """
    ALTER TABLE station_alert_state ADD COLUMN version BIGINT NOT NULL DEFAULT 0;
    """,
    # Song requests: each listener's request (reserved before the station is asked, so the
    # cooldown and the hourly cap count once across a fleet; credited once, to the play whose
    # title it matches), each guild's request settings (its row is also the lock that
    # serialises one guild's reservations) and which stations take requests in which guild.
    """
    CREATE TABLE song_requests (
        id {id},
        token TEXT NOT NULL UNIQUE,
        guild_id BIGINT NOT NULL,
        station TEXT NOT NULL,
        user_id BIGINT NOT NULL,
        display_name TEXT NOT NULL,
        ping INTEGER NOT NULL DEFAULT 0,
        track_id TEXT NOT NULL,
        title TEXT NOT NULL,
        title_key TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'asking',
        requested_at {real} NOT NULL,
        play_key TEXT,
        credited_at {real}
    );
    CREATE INDEX song_requests_station ON song_requests (station, title_key, requested_at);
    CREATE INDEX song_requests_guild ON song_requests (guild_id, requested_at);
    CREATE TABLE guild_requests (
        guild_id BIGINT PRIMARY KEY,
        role_id BIGINT NOT NULL DEFAULT 0,
        cooldown {real} NOT NULL DEFAULT 600,
        hourly_cap INTEGER NOT NULL DEFAULT 30,
        channel_id BIGINT NOT NULL DEFAULT 0,
        locked_at {real} NOT NULL DEFAULT 0
    );
    CREATE TABLE guild_request_stations (
        guild_id BIGINT NOT NULL,
        station TEXT NOT NULL,
        enabled INTEGER NOT NULL,
        PRIMARY KEY (guild_id, station)
    );
    """,
    # The guild's language for its public posts: '' = Discord's preferred locale.
    """
    ALTER TABLE guild_settings ADD COLUMN language TEXT NOT NULL DEFAULT '';
    """,
    # Song searches a fleet sends a station: the station's current window of the
    # rate and the tokens taken in it, one row per station (search_tokens.py). SQLite, one
    # process, counts in memory and leaves the table empty.
    """
    CREATE TABLE search_tokens (
        station TEXT PRIMARY KEY,
        window_start {real} NOT NULL,
        taken INTEGER NOT NULL
    );
    """,
    # The station each listener last chose where OnAir answers them personally (a user install,
    # a DM): their default there, as a server's default station is in a server (users.py).
    """
    CREATE TABLE user_stations (
        user_id BIGINT PRIMARY KEY,
        station TEXT NOT NULL,
        chosen_at {real} NOT NULL
    );
    """,
    # Song votes: each guild's schedule, and one row per (guild, slot) claimed once by the
    # fleet: its poll's message, answers and state (votes.py).
    """
    CREATE TABLE song_votes (
        guild_id BIGINT PRIMARY KEY,
        channel_id BIGINT NOT NULL,
        station TEXT NOT NULL,
        every {real} NOT NULL,
        length {real} NOT NULL,
        since {real} NOT NULL
    );
    CREATE TABLE vote_polls (
        poll_key TEXT PRIMARY KEY,
        guild_id BIGINT NOT NULL,
        channel_id BIGINT NOT NULL,
        station TEXT NOT NULL,
        opens_at {real} NOT NULL,
        ends_at {real} NOT NULL,
        answers TEXT NOT NULL,
        message_id BIGINT NOT NULL DEFAULT 0,
        state TEXT NOT NULL,
        owner TEXT,
        lease_until {real},
        outcome TEXT NOT NULL DEFAULT '',
        updated_at {real} NOT NULL
    );
    CREATE INDEX vote_polls_state ON vote_polls (state, ends_at);
    """,
    # Guild stations of every host kind: the kind, and the station's name on its host as text
    # (a number, an AzuraCast shortcode, an Icecast mount); station_id keeps the number of a
    # numbered station (0 for the others), so rows written before read as they did.
    """
    ALTER TABLE guild_stations ADD COLUMN kind TEXT NOT NULL DEFAULT 'radioboss';
    ALTER TABLE guild_stations ADD COLUMN station_ref TEXT NOT NULL DEFAULT '';
    UPDATE guild_stations SET station_ref = CAST(station_id AS TEXT);
    """,
    # A station's schedule as a guild's upcoming events: each slot's event row keeps the slot's
    # times (a moved slot moves its event), and one fetch of each station's schedule is shared
    # by the fleet (claimed by time, stored as JSON).
    """
    ALTER TABLE show_events ADD COLUMN starts_at {real};
    ALTER TABLE show_events ADD COLUMN ends_at {real};
    CREATE TABLE station_schedules (
        station TEXT PRIMARY KEY,
        claimed_at {real} NOT NULL,
        fetched_at {real} NOT NULL DEFAULT 0,
        shows TEXT NOT NULL DEFAULT ''
    );
    """,
    # Song links: one search per song for a whole fleet (song_links.py). A row per song key:
    # the answer (found with its track id, or not found) until expires_at, and the claim of
    # the process looking it up meanwhile. Each guild may hide the button.
    """
    CREATE TABLE song_links (
        song_key TEXT PRIMARY KEY,
        found INTEGER NOT NULL DEFAULT 0,
        track_id BIGINT NOT NULL DEFAULT 0,
        artwork TEXT NOT NULL DEFAULT '',
        expires_at {real} NOT NULL DEFAULT 0,
        claimed_by TEXT NOT NULL DEFAULT '',
        claim_until {real} NOT NULL DEFAULT 0
    );
    CREATE INDEX song_links_expires ON song_links (expires_at);
    ALTER TABLE guild_settings ADD COLUMN song_links INTEGER NOT NULL DEFAULT 1;
    """,
    # A guild's preferred locale as the process serving its shard saw it (GUILD_CREATE, UPDATE):
    # every process of a fleet renders the guild's public posts in it, whether or not its
    # discord.py cache holds the guild.
    """
    ALTER TABLE guild_settings ADD COLUMN preferred_locale TEXT NOT NULL DEFAULT '';
    """,
    # A guild's song votes paused because Discord refuses its polls for good (the reason, in
    # English, shown by /onair status): no slot is tried until /onair vote is run again.
    """
    ALTER TABLE song_votes ADD COLUMN paused_reason TEXT;
    """,
)
