"""A fake Discord voice server (websocket v8 over TLS + UDP) on loopback for discord.py voice.

How a test uses it
------------------
``FakeDiscord`` owns one ``FakeVoiceServer`` as ``fake.voice`` (started by the bot's first op 4)::

    from tests.support.fakediscord import CONNECT, MUTE_MEMBERS, SPEAK, FakeDiscord
    fake = FakeDiscord()
    guild = fake.guilds[0]
    radio = fake.add_voice_channel(guild, "Radio")          # type 2; stage=True gives type 13
    await fake.start()
    await fake.set_member_voice(guild, 4242, radio)         # before READY: in GUILD_CREATE
    async with running_bot(sim, fake=fake) as env:          # tests.support.botenv (the real bot)
        await fake.set_member_voice(guild, 4343, radio)     # after READY: VOICE_STATE_UPDATE
        ...the bot joins (e.g. a /join from user 4242 via fake.slash(..., user_id=4242))...
        await wait_for(lambda: fake.bot_voice.get(guild.id) == radio)
        await wait_for(lambda: fake.voice.stats(guild.id).audio >= 150, within=15)
        stats = fake.voice.stats(guild.id)                  # a snapshot, all SSRCs of the guild
        assert stats.gaps == 0 and stats.rate(window=2.0) >= 45  # frames/s the player kept to
        moment = time.monotonic(); ...; stats.audio_after(moment)  # audio frames since then
        await fake.voice.close(guild.id, 4006)              # inject a voice close code
        await fake.disconnect_bot(guild)                    # a moderator kicks the bot (4014)
        await fake.set_member_voice(guild, 4242, None)      # the listener leaves
        fake.voice.opcodes(guild.id)                        # every client opcode, in order

``fake.bot_voice`` is {guild id: channel id} of where the bot is; ``fake.bot_voice_state(guild)``
its voice state (``suppress``, ``request_to_speak_timestamp`` on a stage). The bot must identify
with the GUILD_VOICE_STATES intent or it sees no voice state and its joins time out.
``fake.voice.leaks(caplog.text)`` says which voice secrets ("token", "secret_key") a log holds
(discord.py's own DEBUG records in ``discord.gateway`` hold both). ``fake.voice.violations`` lists
protocol errors of the client, ``key_packages``/``dave_offered`` what it did for DAVE.

Permissions: ``add_voice_channel(..., bot_deny=CONNECT)`` (or ``SPEAK``; ``bot_allow=MUTE_MEMBERS``
on a stage) writes a member overwrite for the bot into the channel payload, so discord.py's
``channel.permissions_for(guild.me)`` shows it. Like Discord, the fake ignores an op 4 into a
channel without Connect (no answer: ``connect()`` times out; listed in ``fake.voice_rejections``).
On a stage the bot joins suppressed; PATCH ``/guilds/{id}/voice-states/@me`` with ``suppress``
false needs Mute Members (else 403/50013), ``request_to_speak_timestamp`` needs Request to Speak
(@everyone has it); either dispatches the bot's new VOICE_STATE_UPDATE. Bad shapes: 400/50035.
An op 4 of another shape closes the main gateway with 4002 (discord.py resumes).

What discord.py 2.7.1 does with each close code (tests/test_fake_voice.py proves each):
- 4006 / 4017 (and any code without a branch): after a backoff (~0.4-2 s) it sends op 4 leave and
  op 4 join, IDENTIFYs a new session (new SSRC) and the player plays on; the VoiceClient survives.
- 4015: it "attempts a resume" by sending op 4 again, then waits for both voice events in a state
  the second one cannot complete; after ``connect(timeout=...)`` seconds it leaves voice (op 4
  leave) and the VoiceClient is gone. No RESUME is sent. The bot must rejoin itself.
- 4014 alone: it waits ``timeout`` for a VOICE_SERVER_UPDATE (a move) and then leaves as above.
  After VOICE_STATE_UPDATE with no channel (``disconnect_bot``) it leaves at once.
- A move (``vc.move_to``): the fake answers op 4 with both events and closes the old websocket with
  4014, on which discord.py connects to the new one.

The wire
--------
HELLO (8) on connect; IDENTIFY (0) → READY (2) {ssrc, ip, port, modes}; the client's 74-byte UDP
IP discovery is answered; SELECT_PROTOCOL (1) → SESSION_DESCRIPTION (4) {mode, secret_key,
dave_protocol_version}; HEARTBEAT (3) {t, seq_ack} → HEARTBEAT_ACK (6); SPEAKING (5); RESUME (7)
→ RESUMED (9). Server messages carry ``seq`` (v8); binary server frames are ``[seq:2][op:1]
[payload]``, binary client frames ``[op:1][payload]`` (DAVE op 26, the MLS key package, is
counted in ``key_packages``). Every RTP packet is decrypted (aead_xchacha20_poly1305_rtpsize: the
12-byte header is the associated data, the last 4 bytes the start of the 24-byte nonce) in a
thread of its own, so counting never competes with the bot's event loop; arrival times are the
kernel's receive stamps (SO_TIMESTAMPNS), so a loaded machine that is slow to run that thread does
not skew them, and ``FrameStats.rate`` reads the pace from the punctual frames (a stalled sender's
catch-up burst does not count as speed). ``FrameStats.steps`` holds the RTP timestamp advances.
RTP of a closed connection is not counted (``rejected``). The server sends an RTCP receiver report
to each sender every ``rtcp_interval`` seconds as Discord does; without them discord.py's socket
reader can sit up to 30 s in select() on a socket it already closed, which delays its reconnect
after 4006 by that much.

``fake.voice.dave_version`` (0 or 1, default 1 as Discord since March 2026) is what
SESSION_DESCRIPTION announces; a client that offers less is closed with 4017. The server is the
MLS external sender of every call (``dave.py``, bytes in ``mls.py``): on the client's key package
(op 26) it sends op 25. Without DAVE listeners no group forms (the bot is alone in the call) and
discord.py sends Opus with transport encryption only (passthrough)::

    await fake.voice.add_listener(guild.id, 4242, radio)   # a DAVE member of the call
    call = fake.voice.dave_call(guild.id)                  # the gateway's view of the group
    await wait_for(lambda: len(call.executed) == 1)        # op 22 sent (monotonic times)
    fake.voice.stats(guild.id).verdicts(call.executed[-1]) # Counter: opus / plain / failed
    await fake.voice.propose_stranger(guild.id, 99)        # an Add for a user not in the call
    fake.hold_voice_states()                               # the gateway's VOICE_STATE_UPDATEs
    await fake.release_voice_states()                      # ... late: op 27 comes before them

A listener is a ``davey`` session of its own. The group forms as on Discord: op 11 (users in the
call), op 27 (Adds signed by the external sender, the same to every member), the bot's op 28
(commit and welcome: the first of an epoch wins, while a transition is pending others are
dropped), op 29 (transition id and commit) to the bot, the welcome to the new listener, the
bot's op 23, op 22. The bot's key package with a group already there (a reconnect) makes a
listener commit the bot's removal and re-add; the bot gets op 30. The UDP thread hands each
audio frame (after the transport decryption) to the member listeners: "opus" when each
decrypted it (``Listener.decrypted``), "failed" when one could not, "plain" when it has no
DAVE. ``call.welcomed`` lists who a welcome let in, ``call.commits`` the bot's commits taken.
``call.held = True`` keeps the next commit from the listeners (a slow member) and the transition
from executing until ``await fake.voice.release_commit(guild.id)``. Frames with the DAVE trailer
(0xFAFA) are counted in ``dave_frames``. Not played: removing a
listener (and the sole member reset, op 24), revoking proposals, protocol downgrades (op 21).

Voice states reach the bot only with the GUILD_VOICE_STATES intent (as on Discord; without it a
join times out). The bot's own voice state survives a new IDENTIFY of the main gateway (a ghost in
GUILD_CREATE, as Discord keeps a restarted bot in its channel for a while); op 4 into that channel
is answered as a fresh join.

Secrets (voice tokens, secret keys) are kept out of every repr, log line and close reason.

The package: ``server`` (``FakeVoiceServer``: lifecycle, readouts, the websocket), ``udp`` (its
UDP thread), ``frames`` (``FrameStats``), ``protocol`` (opcodes, close codes, sessions), ``dave``
(Discord's part in DAVE, the listeners) and ``mls`` (the MLS bytes).
"""

from .frames import FrameStats
from .server import FakeVoiceServer

__all__ = ["FakeVoiceServer", "FrameStats"]
