"""The small world the extraction benchmark's scripted model knows (no Django here: the
scripted server imports it in its own process)."""

from __future__ import annotations

from tests.llm_server import World

PEOPLE = [
    "Ada Lovelace", "Charles Babbage", "Grace Hopper", "Alan Turing", "Margaret Hamilton",
    "Claude Shannon", "Barbara Liskov", "Donald Knuth", "Edsger Dijkstra", "John McCarthy",
]  # fmt: skip
PLACES = ["London", "Cambridge", "Princeton", "Boston", "Zurich", "Edinburgh", "Paris"]
ORGS = ["IBM", "Bell Labs", "MIT", "Xerox PARC", "Stanford University", "NASA"]
WORLD = World(
    entities=dict.fromkeys(PEOPLE, "person")
    | dict.fromkeys(PLACES, "location")
    | dict.fromkeys(ORGS, "organization"),
    relations=[(p, o, "works_for") for p in PEOPLE[:5] for o in ORGS[:3]]
    + [(o, p, "located_in") for o in ORGS for p in PLACES[:3]],
)
