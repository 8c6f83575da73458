"""The simulator's invented music library: tracks, jingles and a live show."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class LibraryItem:
    """One thing the simulated station can put on air. ``seconds`` is the unscaled length."""

    artist: str
    title: str
    seconds: float
    album: str = ""
    year: str = ""
    genre: str = ""
    kind: str = "track"  # track | jingle | live
    language: str = "English"

    @property
    def cast_title(self) -> str:
        return f"{self.artist} - {self.title}" if self.artist else self.title

    @property
    def filename(self) -> str:
        folder = {"track": "Music", "jingle": "Jingles", "live": "Live"}[self.kind]
        safe = self.cast_title.replace("\\", "_").replace("/", "_")
        return f"~files\\{folder}\\{safe}.mp3"


def _t(
    artist: str, title: str, length: str, album: str, year: str, genre: str, **kw: str
) -> LibraryItem:
    minutes, seconds = length.split(":")
    return LibraryItem(artist, title, int(minutes) * 60 + int(seconds), album, year, genre, **kw)


TRACKS: tuple[LibraryItem, ...] = (
    _t("The Lanterns", "Harbour Lights", "3:42", "Low Tide", "2019", "Indie"),
    _t(
        "Mira Solène",
        "Café des Étoiles",
        "4:05",
        "Rue Lumière",
        "2021",
        "Chanson",
        language="French",
    ),
    _t("Northbound Static", "Signal Fire", "3:18", "Frequencies", "2016", "Rock"),
    _t("Kaito & The Wires", "Neon Umbrella", "3:57", "Rain City", "2022", "Synthpop"),
    _t("Ada Okafor", "Sunday Market", "4:21", "Lagos Morning", "2020", "Afrobeat"),
    _t("Velvet Orbit", "Slow Satellites", "5:12", "Low Earth", "2018", "Dream Pop"),
    _t("Bruno Castell", "Last Tram Home", "3:33", "Night Lines", "2015", "Jazz"),
    _t("Дарья Лесная", "Северный ветер", "3:49", "Зима", "2017", "Folk", language="Russian"),
    _t("Copper Fields", "Dust & Gold", "4:02", "Prairie Songs", "2014", "Country"),
    _t("Lumen Drift", "Aurora Loop", "6:30", "Polar Nights", "2023", "Ambient"),
    _t("The Paper Kites Club", "Folded Letters", "3:11", "Origami", "2012", "Indie Folk"),
    _t("Sofía Ríos", "Marea Alta", "3:38", "Costa", "2021", "Latin Pop", language="Spanish"),
    _t("Grayscale Avenue", "Monochrome", "2:59", "Shades", "2019", "Post-Punk"),
    _t("DJ Parallax", "Midnight Protocol", "7:45", "Club Nights Vol. 3", "2022", "House"),
    _t("Hollow Pines", "Cabin Fever", "4:14", "Timberline", "2013", "Americana"),
    _t("نور الهدى", "ليل المدينة", "4:40", "أضواء", "2020", "Arabic Pop", language="Arabic"),
    _t("Quartz Choir", "Glass Cathedral", "5:01", "Resonance", "2018", "Choral"),
    _t("Mellow Machines", "Circuit Lullaby", "3:27", "Soft Logic", "2024", "Lo-fi"),
    _t("Ruby Hartmann", "Borrowed Time", "3:52", "Clockwork Heart", "2011", "Soul"),
    _t("Static Bloom", "Paper Moon Radio", "3:05", "Broadcasts", "2017", "Indie Pop"),
    _t("Ivo Marinov", "Balkan Express", "4:33", "Eastbound", "2016", "Balkan Brass"),
    _t("Tidal Youth", "Undertow", "3:44", "Swell", "2020", "Alt Rock"),
    _t(
        "Hana Mori",
        "Sakura Station",
        "3:58",
        "Spring Platform",
        "2021",
        "City Pop",
        language="Japanese",
    ),
    _t("The Cartographers", "Uncharted", "4:48", "Maps & Legends", "2015", "Progressive"),
    _t("Blue Hour Trio", "Twilight Standard", "5:36", "After Hours", "2010", "Jazz"),
    _t("Sunny Okoye", "Golden Coast", "3:21", "Harmattan", "2019", "Highlife"),
    _t("Frostline", "White Noise Winter", "4:09", "Cold Front", "2022", "Electronica"),
    _t("Lena Vogt", "Sternenstaub", "3:36", "Nachtflug", "2018", "Pop", language="German"),
    _t("Rust & Honey", "Porch Light", "3:15", "Back Roads", "2014", "Blues"),
    _t("Echo Parade", "Marching Echoes", "3:50", "Parade", "2023", "Indie Rock"),
    _t("Oceanic Drift", "Deep Blue Hour (Extended Mix)", "61:05", "Depths", "2024", "Chillout"),
    _t("Pixel Hearts", "8-Bit Romance", "2:47", "Cartridge", "2021", "Chiptune"),
)

JINGLES: tuple[LibraryItem, ...] = (
    LibraryItem("OnAir Radio", "Station ID", 6, kind="jingle", genre="Jingle"),
    LibraryItem("OnAir Radio", "You're Tuned In", 9, kind="jingle", genre="Jingle"),
    LibraryItem("OnAir Radio", "Weather Break Sweeper", 12, kind="jingle", genre="Jingle"),
)

LIVE_SHOW = LibraryItem(
    "DJ Nova", "Friday Night Live Mix", 900, kind="live", genre="Live", album="Live on air"
)

MORNING_SHOW = LibraryItem(
    "Ada & Bruno", "The Morning Call-In", 1800, kind="live", genre="Talk", album="Live on air"
)

# Live shows of unknown length (``len`` 0); each has a usual length that varies from one airing to
# the next (see ``Programme.crossfaded``).
LIVE_SHOWS: tuple[LibraryItem, ...] = (LIVE_SHOW, MORNING_SHOW)
