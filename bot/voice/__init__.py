"""Voice: one FFmpeg decode per station, fanned out to every guild's player."""

from .broadcast import BroadcastStats, StationBroadcast
from .broadcasts import Broadcasts
from .ffmpeg import FFMPEG_ENV, FFmpegBinary, decode_args, find_ffmpeg
from .ogg import OggOpusParser
from .sender import Lane, VoiceSender
from .source import FRAME_SECONDS, OPUS_SILENCE, PacketQueue, StationAudio
from .stream import StreamUnreachable, UnsafeStreamUrl, probe_stream

__all__ = [
    "FFMPEG_ENV",
    "FRAME_SECONDS",
    "OPUS_SILENCE",
    "BroadcastStats",
    "Broadcasts",
    "FFmpegBinary",
    "Lane",
    "OggOpusParser",
    "PacketQueue",
    "StationAudio",
    "StationBroadcast",
    "StreamUnreachable",
    "UnsafeStreamUrl",
    "VoiceSender",
    "decode_args",
    "find_ffmpeg",
    "probe_stream",
]
