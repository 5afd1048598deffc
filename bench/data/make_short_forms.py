"""Writes bench/data/short_forms.jsonl from the documents below (run it after editing them):

    .venv/bin/python bench/data/make_short_forms.py

Each document is its text and, per name a perfect extractor would report, the name as
written, its type and the real-world entity it refers to there (a label shared across
documents). Spans are every whole-word occurrence of the name that is not inside a longer
listed name (longest first), exactly as a perfect extractor would mark them. Everything is
fictional.

Line format: {"id", "text", "entities": [{"name", "type", "spans": [[start, end], ...]}],
"gold": {label: [names]}}.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

P, ORG, L, PR, T = "person", "organization", "location", "product", "technology"

# (id, text, [(name, type, gold label)])
DOCUMENTS: list[tuple[str, str, list[tuple[str, str, str]]]] = [
    (
        "d01",
        "Kestrel Dynamics Ltd today unveiled the Kestrel Navigation System (KNS), a "
        "satellite-independent positioning unit for inland shipping. According to chief "
        "executive Jonas Lindqvist, the KNS has been tested on barges along the Port Aldric "
        'canal since March. "Kestrel works where GPS fails," Lindqvist said. The company '
        "expects the first deliveries of Kestrel units next spring.",
        [
            ("Kestrel Dynamics Ltd", ORG, "kestrel_dynamics"),
            ("Kestrel Navigation System", PR, "kns"),
            ("KNS", PR, "kns"),
            ("Jonas Lindqvist", P, "jonas_lindqvist"),
            ("Port Aldric", L, "port_aldric"),
            ("Kestrel", PR, "kns"),
            ("GPS", T, "gps"),
            ("Lindqvist", P, "jonas_lindqvist"),
        ],
    ),
    (
        "d02",
        "Helios Robotics Inc. has closed a 40 million euro funding round led by Helios "
        "Capital. Helios said the money would pay for a second assembly line in New Halden. "
        "Maria Okafor, who runs operations at the robot maker, called the round a vote of "
        "confidence. Okafor declined to name the other investors.",
        [
            ("Helios Robotics Inc.", ORG, "helios_robotics"),
            ("Helios Capital", ORG, "helios_capital"),
            ("Helios", ORG, "helios_robotics"),
            ("New Halden", L, "new_halden"),
            ("Maria Okafor", P, "maria_okafor"),
            ("Okafor", P, "maria_okafor"),
        ],
    ),
    (
        "d03",
        "Helios Robotics Inc. opened its new plant in New Halden on Monday. Helios will "
        "employ 300 people there by the end of next year, said Maria Okafor, head of "
        "operations. The plant builds the warehouse robots Helios sells to logistics firms "
        "such as Blue Harbor Logistics. Okafor said Blue Harbor had already ordered 120 units.",
        [
            ("Helios Robotics Inc.", ORG, "helios_robotics"),
            ("Helios", ORG, "helios_robotics"),
            ("New Halden", L, "new_halden"),
            ("Maria Okafor", P, "maria_okafor"),
            ("Blue Harbor Logistics", ORG, "blue_harbor"),
            ("Okafor", P, "maria_okafor"),
            ("Blue Harbor", ORG, "blue_harbor"),
        ],
    ),
    (
        "d04",
        "Helios Capital, the venture firm founded by Daniel Roth, has raised a third fund. "
        "Helios has backed Corvid Labs and Tessellate Software, among others. Roth said the "
        "new fund would focus on industrial software. Corvid, which makes sensors for wind "
        "turbines, is its best-known investment.",
        [
            ("Helios Capital", ORG, "helios_capital"),
            ("Daniel Roth", P, "daniel_roth"),
            ("Helios", ORG, "helios_capital"),
            ("Corvid Labs", ORG, "corvid_labs"),
            ("Tessellate Software", ORG, "tessellate"),
            ("Roth", P, "daniel_roth"),
            ("Corvid", ORG, "corvid_labs"),
        ],
    ),
    (
        "d05",
        "The siblings Jonas Lindqvist and Hannah Lindqvist founded Kestrel Dynamics Ltd in a "
        "garage in Port Aldric. Jonas wrote the first navigation software; Hannah built the "
        "hardware. Lindqvist later said that neither of them expected the company to grow "
        "this fast.",
        [
            ("Jonas Lindqvist", P, "jonas_lindqvist"),
            ("Hannah Lindqvist", P, "hannah_lindqvist"),
            ("Kestrel Dynamics Ltd", ORG, "kestrel_dynamics"),
            ("Port Aldric", L, "port_aldric"),
            ("Jonas", P, "jonas_lindqvist"),
            ("Hannah", P, "hannah_lindqvist"),
            ("Lindqvist", P, "jonas_lindqvist"),
        ],
    ),
    (
        "d06",
        "Dr. Priya Raman of Meridian Health Partners presented the results of the trial at "
        "the conference in Vessen. Raman's team followed 1,200 patients for two years. "
        "Meridian will publish the full data set in the autumn, Dr. Raman said.",
        [
            ("Dr. Priya Raman", P, "priya_raman"),
            ("Meridian Health Partners", ORG, "meridian_health"),
            ("Vessen", L, "vessen"),
            ("Raman", P, "priya_raman"),
            ("Meridian", ORG, "meridian_health"),
            ("Dr. Raman", P, "priya_raman"),
        ],
    ),
    (
        "d07",
        "The European Grid Coordination Agency published its winter outlook on Tuesday. The "
        "EGCA expects demand to peak in January and asked Arcturus Energy AG to keep two gas "
        "plants in reserve. Arcturus said it would comply. The EGCA also warned of low "
        "water levels in Lake Vessen.",
        [
            ("European Grid Coordination Agency", ORG, "egca"),
            ("EGCA", ORG, "egca"),
            ("Arcturus Energy AG", ORG, "arcturus"),
            ("Arcturus", ORG, "arcturus"),
            ("Lake Vessen", L, "lake_vessen"),
        ],
    ),
    (
        "d08",
        "Blue Harbor Logistics is replacing its Automated Dispatch Protocol with the Atlas "
        "Data Platform from Atlas Logistics. The switch from ADP is expected to take nine "
        "months, said Grace Whitfield, who leads the project. Whitfield said the old system "
        "would run in parallel until then.",
        [
            ("Blue Harbor Logistics", ORG, "blue_harbor"),
            ("Automated Dispatch Protocol", PR, "automated_dispatch"),
            ("Atlas Data Platform", PR, "atlas_data_platform"),
            ("Atlas Logistics", ORG, "atlas_logistics"),
            ("ADP", PR, "automated_dispatch"),
            ("Grace Whitfield", P, "grace_whitfield"),
            ("Whitfield", P, "grace_whitfield"),
        ],
    ),
    (
        "d09",
        "Vantage Aerospace Corporation (VAC) has won a contract to supply guidance units to "
        "the Pacific Maritime Safety Board. VAC will deliver 40 units in the first year. "
        "Vantage shares rose 6 percent on the news, and chief executive Samuel Achebe said "
        "Vantage would hire 150 engineers. Achebe joined the company in 2019.",
        [
            ("Vantage Aerospace Corporation", ORG, "vantage"),
            ("VAC", ORG, "vantage"),
            ("Pacific Maritime Safety Board", ORG, "pmsb"),
            ("Vantage", ORG, "vantage"),
            ("Samuel Achebe", P, "samuel_achebe"),
            ("Achebe", P, "samuel_achebe"),
        ],
    ),
    (
        "d10",
        "Silverline Medical Devices Inc. launched the Halo Ultrasound Scanner 3, successor to "
        "the Halo Ultrasound Scanner 2. Silverline says the new model is half the weight of "
        "its predecessor. The Halo line has sold more than 20,000 units since 2018, according "
        "to Elena Varga, who heads product at the company. Varga expects the Halo Ultrasound "
        "Scanner 2 to stay on sale until 2027.",
        [
            ("Silverline Medical Devices Inc.", ORG, "silverline"),
            ("Halo Ultrasound Scanner 3", PR, "halo3"),
            ("Halo Ultrasound Scanner 2", PR, "halo2"),
            ("Silverline", ORG, "silverline"),
            ("Halo", PR, "halo_line"),
            ("Elena Varga", P, "elena_varga"),
            ("Varga", P, "elena_varga"),
        ],
    ),
    (
        "d11",
        "Atlas Logistics has moved its fleet planning onto the Atlas Data Platform. Atlas said "
        "the move cut planning time by a third. Ravi Menon, the company's chief technology "
        "officer, said Atlas would now offer the platform to smaller carriers. Menon did not "
        "give a price.",
        [
            ("Atlas Logistics", ORG, "atlas_logistics"),
            ("Atlas Data Platform", PR, "atlas_data_platform"),
            ("Atlas", ORG, "atlas_logistics"),
            ("Ravi Menon", P, "ravi_menon"),
            ("Menon", P, "ravi_menon"),
        ],
    ),
    (
        "d12",
        "Meridian Health Partners will open three clinics in Port Aldric next year. Meridian "
        "already runs eleven clinics in the region. The company's medical director, Dr. Priya "
        "Raman, said the new sites would focus on cardiology. Meridian expects to hire 90 "
        "nurses.",
        [
            ("Meridian Health Partners", ORG, "meridian_health"),
            ("Port Aldric", L, "port_aldric"),
            ("Meridian", ORG, "meridian_health"),
            ("Dr. Priya Raman", P, "priya_raman"),
        ],
    ),
    (
        "d13",
        "Northwind Analytics GmbH has hired Ingrid Solberg as its new chief executive. "
        "Solberg previously ran the data team at Tessellate Software. Northwind, which "
        "sells forecasting tools to utilities, has doubled its staff since 2022. Solberg "
        "starts in May.",
        [
            ("Northwind Analytics GmbH", ORG, "northwind"),
            ("Ingrid Solberg", P, "ingrid_solberg"),
            ("Solberg", P, "ingrid_solberg"),
            ("Tessellate Software", ORG, "tessellate"),
            ("Northwind", ORG, "northwind"),
        ],
    ),
    (
        "d14",
        "The Nordic Energy Research Council (NERC) has granted Arcturus Energy AG 12 million "
        "euros to test hydrogen storage near Lake Vessen. NERC chair Tomás Ferreira said the "
        "project was the largest the council had funded. Arcturus will build the test site "
        "with Northwind Analytics GmbH. Ferreira said results were expected in 2027.",
        [
            ("Nordic Energy Research Council", ORG, "nerc"),
            ("NERC", ORG, "nerc"),
            ("Arcturus Energy AG", ORG, "arcturus"),
            ("Lake Vessen", L, "lake_vessen"),
            ("Tomás Ferreira", P, "tomas_ferreira"),
            ("Arcturus", ORG, "arcturus"),
            ("Northwind Analytics GmbH", ORG, "northwind"),
            ("Ferreira", P, "tomas_ferreira"),
        ],
    ),
    (
        "d15",
        "Researchers at Corvid Labs have demonstrated Quantum Key Distribution over 80 "
        "kilometres of ordinary fibre. QKD lets two parties detect any eavesdropper on their "
        "link. Lucas Moreau, who led the work, said Corvid would publish the design. Moreau "
        "expects commercial QKD links within five years.",
        [
            ("Corvid Labs", ORG, "corvid_labs"),
            ("Quantum Key Distribution", T, "qkd"),
            ("QKD", T, "qkd"),
            ("Lucas Moreau", P, "lucas_moreau"),
            ("Corvid", ORG, "corvid_labs"),
            ("Moreau", P, "lucas_moreau"),
        ],
    ),
    (
        "d16",
        "The Pacific Maritime Safety Board (PMSB) has opened an inquiry into the grounding of "
        "a Blue Harbor Logistics container ship off Port Aldric. The PMSB said the crew had "
        "reported a navigation fault. Blue Harbor said it was cooperating fully. The ship "
        "used the Kestrel Navigation System, according to the PMSB.",
        [
            ("Pacific Maritime Safety Board", ORG, "pmsb"),
            ("PMSB", ORG, "pmsb"),
            ("Blue Harbor Logistics", ORG, "blue_harbor"),
            ("Port Aldric", L, "port_aldric"),
            ("Blue Harbor", ORG, "blue_harbor"),
            ("Kestrel Navigation System", PR, "kns"),
        ],
    ),
    (
        "d17",
        "Tessellate Software has released version 5 of its design tool. Tessellate says the "
        "release is twice as fast on large models. Kenji Watanabe, the company's founder, "
        "demonstrated the tool at a developer event in New Halden. Watanabe said a browser "
        "version would follow.",
        [
            ("Tessellate Software", ORG, "tessellate"),
            ("Tessellate", ORG, "tessellate"),
            ("Kenji Watanabe", P, "kenji_watanabe"),
            ("New Halden", L, "new_halden"),
            ("Watanabe", P, "kenji_watanabe"),
        ],
    ),
    (
        "d18",
        "Corvid Labs has appointed Amara Diallo as head of research. Diallo joins from "
        "Meridian Health Partners, where she built the imaging group. Corvid said Diallo "
        "would lead a new team working on medical sensors.",
        [
            ("Corvid Labs", ORG, "corvid_labs"),
            ("Amara Diallo", P, "amara_diallo"),
            ("Diallo", P, "amara_diallo"),
            ("Meridian Health Partners", ORG, "meridian_health"),
            ("Corvid", ORG, "corvid_labs"),
        ],
    ),
    (
        "d19",
        "Lindqvist to step down. Jonas Lindqvist, chief executive of Kestrel Dynamics Ltd, "
        "will leave the company at the end of the year. Lindqvist co-founded the firm with "
        "his sister. The board has asked Oliver Brandt to take over. Brandt ran the Kestrel "
        "Navigation System programme.",
        [
            ("Lindqvist", P, "jonas_lindqvist"),
            ("Jonas Lindqvist", P, "jonas_lindqvist"),
            ("Kestrel Dynamics Ltd", ORG, "kestrel_dynamics"),
            ("Oliver Brandt", P, "oliver_brandt"),
            ("Brandt", P, "oliver_brandt"),
            ("Kestrel Navigation System", PR, "kns"),
        ],
    ),
    (
        "d20",
        "Kestrel Dynamics Ltd reported record revenue for the third quarter. Sales of the "
        "Kestrel Navigation System doubled. Kestrel, as the company is known in the industry, "
        "now employs 800 people. Its chief financial officer, Hannah Lindqvist, said Kestrel "
        "would pay its first dividend.",
        [
            ("Kestrel Dynamics Ltd", ORG, "kestrel_dynamics"),
            ("Kestrel Navigation System", PR, "kns"),
            ("Kestrel", ORG, "kestrel_dynamics"),
            ("Hannah Lindqvist", P, "hannah_lindqvist"),
        ],
    ),
    (
        "d21",
        "Vantage Aerospace Corporation is testing Adaptive Beam Forming on its new radar. "
        "ABF steers the radar beam electronically instead of turning the antenna. Vantage "
        "engineer Grace Whitfield said ABF cut the radar's weight by a quarter.",
        [
            ("Vantage Aerospace Corporation", ORG, "vantage"),
            ("Adaptive Beam Forming", T, "abf"),
            ("ABF", T, "abf"),
            ("Vantage", ORG, "vantage"),
            ("Grace Whitfield", P, "grace_whitfield"),
        ],
    ),
    (
        "d22",
        "Maria Okafor and Maria Castellanos will co-chair the logistics summit in Port Aldric. "
        "Okafor runs operations at Helios Robotics Inc.; Castellanos is a partner at Helios "
        "Capital. Maria said the summit would focus on automation.",
        [
            ("Maria Okafor", P, "maria_okafor"),
            ("Maria Castellanos", P, "maria_castellanos"),
            ("Port Aldric", L, "port_aldric"),
            ("Okafor", P, "maria_okafor"),
            ("Helios Robotics Inc.", ORG, "helios_robotics"),
            ("Castellanos", P, "maria_castellanos"),
            ("Helios Capital", ORG, "helios_capital"),
            ("Maria", P, "maria_okafor"),
        ],
    ),
    (
        "d23",
        "The ferry from Halden to New Halden will stop running in October. Halden's mayor, "
        "Erna Solberg, said the town would lose its only direct link to New Halden. Solberg "
        "has asked the region to fund a bus service.",
        [
            ("Halden", L, "halden"),
            ("New Halden", L, "new_halden"),
            ("Erna Solberg", P, "erna_solberg"),
            ("Solberg", P, "erna_solberg"),
        ],
    ),
    (
        "d24",
        "Water levels in Lake Vessen have fallen to a 30-year low. The town of Vessen has "
        "banned watering gardens. Arcturus Energy AG, which draws cooling water from the "
        "lake, said its plant would run at reduced output.",
        [
            ("Lake Vessen", L, "lake_vessen"),
            ("Vessen", L, "vessen"),
            ("Arcturus Energy AG", ORG, "arcturus"),
        ],
    ),
    (
        "d25",
        "Northwind Analytics GmbH has launched the Nimbus Edge Gateway (NEG), a box that runs "
        "forecasting models inside substations. The NEG needs no cloud connection. Nimbus "
        "units are already installed at six Arcturus Energy AG sites, said Tomás Ferreira, "
        "who advises Northwind.",
        [
            ("Northwind Analytics GmbH", ORG, "northwind"),
            ("Nimbus Edge Gateway", PR, "nimbus"),
            ("NEG", PR, "nimbus"),
            ("Nimbus", PR, "nimbus"),
            ("Arcturus Energy AG", ORG, "arcturus"),
            ("Tomás Ferreira", P, "tomas_ferreira"),
            ("Northwind", ORG, "northwind"),
        ],
    ),
    (
        "d26",
        "Silverline Medical Devices Inc. has agreed to buy a 20 percent stake in Corvid Labs. "
        "Silverline wants Corvid's sensors for its next generation of scanners. Elena Varga "
        "will join Corvid's board. Varga said the deal would close in the spring.",
        [
            ("Silverline Medical Devices Inc.", ORG, "silverline"),
            ("Corvid Labs", ORG, "corvid_labs"),
            ("Silverline", ORG, "silverline"),
            ("Corvid", ORG, "corvid_labs"),
            ("Elena Varga", P, "elena_varga"),
            ("Varga", P, "elena_varga"),
        ],
    ),
    (
        "d27",
        "Grace Whitfield has left Blue Harbor Logistics to join Vantage Aerospace Corporation "
        "as director of systems engineering. Whitfield spent eight years at Blue Harbor. "
        "Sunil Menon, her former colleague, takes over her projects. Menon said the Atlas Data "
        "Platform migration was on schedule.",
        [
            ("Grace Whitfield", P, "grace_whitfield"),
            ("Blue Harbor Logistics", ORG, "blue_harbor"),
            ("Vantage Aerospace Corporation", ORG, "vantage"),
            ("Whitfield", P, "grace_whitfield"),
            ("Blue Harbor", ORG, "blue_harbor"),
            ("Sunil Menon", P, "sunil_menon"),
            ("Menon", P, "sunil_menon"),
            ("Atlas Data Platform", PR, "atlas_data_platform"),
        ],
    ),
    (
        "d28",
        "Oliver Brandt, the new chief executive of Kestrel Dynamics Ltd, has sold the "
        "company's stake in Brandt Engineering, a firm founded by his father. Brandt said he "
        "wanted to avoid any conflict of interest. Brandt Engineering makes hull sensors.",
        [
            ("Oliver Brandt", P, "oliver_brandt"),
            ("Kestrel Dynamics Ltd", ORG, "kestrel_dynamics"),
            ("Brandt Engineering", ORG, "brandt_engineering"),
            ("Brandt", P, "oliver_brandt"),
        ],
    ),
    (
        "d29",
        "The Moreau Foundation has given Corvid Labs 2 million euros for quantum research. "
        "Lucas Moreau, who leads quantum work at Corvid, is not related to the foundation's "
        "founders, the company said. Moreau will use the money to build a second test link.",
        [
            ("Moreau Foundation", ORG, "moreau_foundation"),
            ("Corvid Labs", ORG, "corvid_labs"),
            ("Lucas Moreau", P, "lucas_moreau"),
            ("Corvid", ORG, "corvid_labs"),
            ("Moreau", P, "lucas_moreau"),
        ],
    ),
    (
        "d30",
        "Samuel Achebe, chief executive of Vantage Aerospace Corporation, has joined the "
        "board of the Pacific Maritime Safety Board's advisory panel. Achebe said he would "
        "step back from any inquiry involving Vantage. The PMSB welcomed the appointment.",
        [
            ("Samuel Achebe", P, "samuel_achebe"),
            ("Vantage Aerospace Corporation", ORG, "vantage"),
            ("Pacific Maritime Safety Board", ORG, "pmsb"),
            ("Achebe", P, "samuel_achebe"),
            ("Vantage", ORG, "vantage"),
            ("PMSB", ORG, "pmsb"),
        ],
    ),
    (
        "d31",
        "Tomás Ferreira will step down as chair of the Nordic Energy Research Council in June. "
        "Ferreira has led the council for six years. His successor, Elena Varga, currently "
        "heads product at Silverline Medical Devices Inc. Varga said she would keep the "
        "council's focus on storage.",
        [
            ("Tomás Ferreira", P, "tomas_ferreira"),
            ("Nordic Energy Research Council", ORG, "nerc"),
            ("Ferreira", P, "tomas_ferreira"),
            ("Elena Varga", P, "elena_varga"),
            ("Silverline Medical Devices Inc.", ORG, "silverline"),
            ("Varga", P, "elena_varga"),
        ],
    ),
    (
        "d32",
        "Daniel Roth of Helios Capital has joined the board of Tessellate Software. Roth led "
        "Helios Capital's first investment in Tessellate in 2021. Kenji Watanabe, "
        "Tessellate's founder, said Roth would help the company expand abroad.",
        [
            ("Daniel Roth", P, "daniel_roth"),
            ("Helios Capital", ORG, "helios_capital"),
            ("Tessellate Software", ORG, "tessellate"),
            ("Roth", P, "daniel_roth"),
            ("Tessellate", ORG, "tessellate"),
            ("Kenji Watanabe", P, "kenji_watanabe"),
        ],
    ),
    (
        "d33",
        "Corvid Labs uses the Orion Imaging Suite to analyse pictures from the Orion capsule, "
        "the crewed spacecraft built by Vantage Aerospace Corporation. Orion will fly its "
        "first crewed mission next year. Amara Diallo said the Orion Imaging Suite had "
        "already flagged two heat-shield defects.",
        [
            ("Corvid Labs", ORG, "corvid_labs"),
            ("Orion Imaging Suite", PR, "orion_imaging"),
            ("Orion", PR, "orion_capsule"),
            ("Vantage Aerospace Corporation", ORG, "vantage"),
            ("Amara Diallo", P, "amara_diallo"),
        ],
    ),
    (
        "d34",
        "Helios robots now sort parcels at three Blue Harbor Logistics depots. Blue Harbor "
        "said the machines from Helios Robotics Inc. had cut sorting errors by half. Helios "
        "plans to deliver 200 more robots this year.",
        [
            ("Helios", ORG, "helios_robotics"),
            ("Blue Harbor Logistics", ORG, "blue_harbor"),
            ("Blue Harbor", ORG, "blue_harbor"),
            ("Helios Robotics Inc.", ORG, "helios_robotics"),
        ],
    ),
    (
        "d35",
        "General Kinetics Corporation (GKC) has agreed to buy Brandt Engineering. GKC makes "
        "industrial motors and wants Brandt's hull sensors for its marine range. The price "
        "was not disclosed. Brandt Engineering will keep its name.",
        [
            ("General Kinetics Corporation", ORG, "general_kinetics"),
            ("GKC", ORG, "general_kinetics"),
            ("Brandt Engineering", ORG, "brandt_engineering"),
            ("Brandt", ORG, "brandt_engineering"),
        ],
    ),
    (
        "d36",
        "Hannah Lindqvist will present the Kestrel Navigation System at the maritime fair in "
        "Port Aldric. Lindqvist said the KNS would get a new display this year. Jonas "
        "Lindqvist, her brother, has left the company.",
        [
            ("Hannah Lindqvist", P, "hannah_lindqvist"),
            ("Kestrel Navigation System", PR, "kns"),
            ("Port Aldric", L, "port_aldric"),
            ("Lindqvist", P, "hannah_lindqvist"),
            ("KNS", PR, "kns"),
            ("Jonas Lindqvist", P, "jonas_lindqvist"),
        ],
    ),
    (
        "d37",
        "Kestrel Dynamics Ltd will sell a cheaper product, the Kestrel Tracker, next to the "
        "Kestrel Navigation System. The Kestrel Tracker logs a boat's position for insurers. "
        "Oliver Brandt said Kestrel demand had never been higher.",
        [
            ("Kestrel Dynamics Ltd", ORG, "kestrel_dynamics"),
            ("Kestrel Tracker", PR, "kestrel_tracker"),
            ("Kestrel Navigation System", PR, "kns"),
            ("Oliver Brandt", P, "oliver_brandt"),
            ("Kestrel", PR, "kestrel_products"),
        ],
    ),
    (
        "d38",
        "Meridian Health Partners has chosen the Halo Ultrasound Scanner 3 for its new "
        "clinics. Meridian will buy 60 scanners from Silverline Medical Devices Inc. Dr. Priya "
        "Raman said the scanners' weight mattered for home visits. Raman expects the first "
        "units in March.",
        [
            ("Meridian Health Partners", ORG, "meridian_health"),
            ("Halo Ultrasound Scanner 3", PR, "halo3"),
            ("Meridian", ORG, "meridian_health"),
            ("Silverline Medical Devices Inc.", ORG, "silverline"),
            ("Dr. Priya Raman", P, "priya_raman"),
            ("Raman", P, "priya_raman"),
        ],
    ),
    (
        "d39",
        "Arcturus Energy AG and Northwind Analytics GmbH have formed a joint venture, "
        "Arcturus Northwind Storage, to run battery parks. Arcturus will own 60 percent. "
        "Ingrid Solberg, Northwind's chief executive, will chair the venture.",
        [
            ("Arcturus Energy AG", ORG, "arcturus"),
            ("Northwind Analytics GmbH", ORG, "northwind"),
            ("Arcturus Northwind Storage", ORG, "arcturus_northwind"),
            ("Arcturus", ORG, "arcturus"),
            ("Ingrid Solberg", P, "ingrid_solberg"),
            ("Northwind", ORG, "northwind"),
        ],
    ),
    (
        "d40",
        "The European Grid Coordination Agency (EGCA) has asked the Nordic Energy Research "
        "Council to study grid storage. The EGCA will share its load data with NERC "
        "researchers. Tomás Ferreira said NERC would report by the summer.",
        [
            ("European Grid Coordination Agency", ORG, "egca"),
            ("EGCA", ORG, "egca"),
            ("Nordic Energy Research Council", ORG, "nerc"),
            ("NERC", ORG, "nerc"),
            ("Tomás Ferreira", P, "tomas_ferreira"),
        ],
    ),
]


def spans_of(text: str, names: list[str]) -> dict[str, list[list[int]]]:
    """Every whole-word occurrence of each name not inside a longer one (longest first)."""
    taken = [False] * len(text)
    found: dict[str, list[list[int]]] = {}
    for name in sorted(names, key=len, reverse=True):
        pattern = rf"(?<![\w]){re.escape(name)}(?![\w])"
        for match in re.finditer(pattern, text):
            start, end = match.span()
            if any(taken[start:end]):
                continue
            for i in range(start, end):
                taken[i] = True
            found.setdefault(name, []).append([start, end])
    return found


def main() -> None:
    out = Path(__file__).with_name("short_forms.jsonl")
    lines = []
    for doc_id, text, names in DOCUMENTS:
        spans = spans_of(text, [n for n, _, _ in names])
        entities: list[dict[str, object]] = []
        gold: dict[str, list[str]] = {}
        for name, kind, label in names:
            if name not in spans:
                raise SystemExit(f"{doc_id}: {name!r} does not occur on its own")
            entities.append({"name": name, "type": kind, "spans": spans[name]})
            gold.setdefault(label, []).append(name)
        lines.append(
            json.dumps(
                {"id": doc_id, "text": text, "entities": entities, "gold": gold},
                ensure_ascii=False,
            )
        )
    out.write_text("\n".join(lines) + "\n")
    print(f"{len(lines)} documents -> {out}")


if __name__ == "__main__":
    main()
