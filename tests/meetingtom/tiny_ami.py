"""A tiny AMI manual-annotations folder (NXT XML, same layout and markup as the release) for tests.

Meeting ``TS9999a``, 120 s, speakers A, B, C (meetings.xml). Timeline:

* 10.0-11.8  A: "Hi, can you check this?"  (inf, addressee B; "you" is you_11)
* 12.0-12.5  A: laugh; 13.0 A: disfluency marker
* 12.6-13.9  B: "Yeah sure you know"       (ass; "you" is you_3, discourse marker)
* 60.0-61.5  A: "We could use rubber."     (sug, addressees B and C)
* 61.6-61.9  C: "Mm-hmm"                   (bck)
* 62.0-62.8  B: "Okay good"                (ass; answers A's suggestion: adjacency pair POS)
* decision: A's suggestion and B's answer (60.0-62.8); topics: one with a sub-topic.

Tests change single files with :func:`write` after :func:`make_ami`.
"""

from __future__ import annotations

from pathlib import Path

MEETING = "TS9999a"
HEAD = '<?xml version="1.0" encoding="ISO-8859-1" standalone="yes"?>\n'
NS = 'xmlns:nite="http://nite.sourceforge.net/"'


def root(nid: str, body: str) -> str:
    return f'{HEAD}<nite:root nite:id="{nid}" {NS}>\n{body}</nite:root>\n'


def w(letter: str, i: int, start, end, text: str = "", *, tag: str = "w", extra: str = "") -> str:
    times = "" if start is None else f' starttime="{start}" endtime="{end}"'
    nid = f"{MEETING}.{letter}.words{i}"
    if tag == "w":
        return f'   <w nite:id="{nid}"{times}{extra}>{text}</w>\n'
    return f'   <{tag} nite:id="{nid}"{times}{extra}/>\n'


def words_ref(letter: str, a: int, b: int | None = None) -> str:
    f = f"{MEETING}.{letter}.words.xml#id({MEETING}.{letter}.words{a})"
    return f if b is None else f + f"..id({MEETING}.{letter}.words{b})"


def child(href: str) -> str:
    return f'      <nite:child href="{href}"/>\n'


def pointer(role: str, href: str) -> str:
    return f'      <nite:pointer role="{role}" href="{href}"/>\n'


WORDS = {
    "A": [
        (10.0, 10.5, "Hi"),
        (10.5, 10.5, ",", ' punc="true"'),
        (10.5, 10.8, "can"),
        (10.8, 11.0, "you"),
        (11.0, 11.4, "check"),
        (11.4, 11.8, "this"),
        (11.8, 11.8, "?", ' punc="true"'),
        ("vocalsound", 12.0, 12.5, ' type="laugh"'),
        ("disfmarker", 13.0, 13.0, ""),
        (60.0, 60.3, "We"),
        (60.3, 60.6, "could"),
        (60.6, 60.9, "use"),
        (60.9, 61.5, "rubber"),
        (61.5, 61.5, ".", ' punc="true"'),
    ],
    "B": [
        (12.6, 13.0, "Yeah"),
        (13.0, 13.4, "sure"),
        (13.4, 13.6, "you"),
        (13.6, 13.9, "know"),
        (62.0, 62.4, "Okay"),
        (62.4, 62.8, "good"),
    ],
    "C": [(61.6, 61.9, "Mm-hmm")],
}


def words_xml(letter: str, items=None) -> str:
    body = ""
    for i, it in enumerate(items if items is not None else WORDS[letter]):
        if isinstance(it[0], str):  # (tag, start, end, extra)
            body += w(letter, i, it[1], it[2], tag=it[0], extra=it[3])
        else:
            body += w(letter, i, it[0], it[1], it[2], extra=it[3] if len(it) > 3 else "")
    return root(f"{MEETING}.{letter}.words", body)


def dact(letter: str, n: int, da_type: str, a: int, b: int, addressee: str | None = None) -> str:
    attr = f' addressee="{addressee}"' if addressee else ""
    return (
        f'   <dact nite:id="{MEETING}.{letter}.dialog-act.t.{n}"{attr}>\n'
        + pointer("da-aspect", f"da-types.xml#id({da_type})")
        + child(words_ref(letter, a, b))
        + "   </dact>\n"
    )


DACTS = {
    "A": dact("A", 1, "ami_da_4", 0, 6, "B") + dact("A", 2, "ami_da_6", 9, 13, "B,C"),
    "B": dact("B", 1, "ami_da_9", 0, 3) + dact("B", 2, "ami_da_9", 4, 5),
    "C": dact("C", 1, "ami_da_1", 0, 0),
}


def act_ref(letter: str, n: int) -> str:
    return f"{MEETING}.{letter}.dialog-act.xml#id({MEETING}.{letter}.dialog-act.t.{n})"


def pair(n: int, ap_type: str, source: str | None, target: str) -> str:
    src = pointer("source", source) if source else ""
    return (
        f'   <adjacency-pair nite:id="{MEETING}.adjacency-pairs.t.{n}">\n'
        + pointer("type", f"ap-types.xml#id({ap_type})")
        + src
        + pointer("target", target)
        + "   </adjacency-pair>\n"
    )


PAIRS = pair(1, "apt_1", act_ref("A", 2), act_ref("B", 2)) + pair(2, "apt_1", act_ref("A", 1), act_ref("B", 1))


def you(letter: str, n: int, you_type: str, i: int, unsure: str = "false") -> str:
    return (
        f'   <you-usage nite:id="{MEETING}.{letter}.you.{n}" unsure="{unsure}">\n'
        + pointer("type", f"you-types.xml#id({you_type})")
        + child(words_ref(letter, i))
        + "   </you-usage>\n"
    )


YOUS = {"A": you("A", 1, "you_11", 3), "B": you("B", 1, "you_3", 2)}

DECISIONS = (
    f'   <decision nite:id="{MEETING}.decision.t.1" external="true">\n'
    + child(words_ref("A", 9, 13))
    + child(words_ref("B", 4, 5))
    + "   </decision>\n"
)

TOPICS = (
    f'   <topic nite:id="{MEETING}.topic.t.1" other_description="greetings">\n'
    + pointer("scenario_topic_type", "default-topics.xml#id(top.11)")
    + child(words_ref("A", 0, 8))
    + f'      <topic nite:id="{MEETING}.topic.t.2">\n'
    + child(words_ref("B", 0, 3))
    + "      </topic>\n   </topic>\n"
)


def segment(letter: str, n: int, a: int, b: int, start: float, end: float) -> str:
    return (
        f'   <segment nite:id="{MEETING}.sync.{letter}{n}" channel="0"'
        f' transcriber_start="{start}" transcriber_end="{end}">\n' + child(words_ref(letter, a, b)) + "   </segment>\n"
    )


SEGMENTS = {
    "A": segment("A", 1, 0, 8, 9.9, 13.1) + segment("A", 2, 9, 13, 59.9, 61.6),
    "B": segment("B", 1, 0, 3, 12.5, 14.0) + segment("B", 2, 4, 5, 61.9, 62.9),
    "C": segment("C", 1, 0, 0, 61.5, 62.0),
}

ROLE = (
    f'<?xml version="1.0" encoding="UTF-8"?>\n<nite:root {NS} nite:id="tim_{MEETING}_A.nite:root.1">\n'
    f'    <role endtime="60.0" starttime="0.0" type="Neutral" nite:id="tim_{MEETING}_A.role.1"/>\n'
    f'    <role endtime="120.0" starttime="60.0" type="Protagonist" nite:id="tim_{MEETING}_A.role.2"/>\n</nite:root>\n'
)

ONTOLOGIES = {
    "da-types.xml": '<da-type nite:id="cmrda" name="da-type" {ns}>\n <da-type nite:id="ami_daclass_0" name="minor">\n'
    '  <da-type nite:id="ami_da_1" name="bck" gloss="Backchannel"/>\n'
    '  <da-type nite:id="ami_da_2" name="stl" gloss="Stall"/>\n'
    '  <da-type nite:id="ami_da_3" name="fra" gloss="Fragment"/>\n'
    ' </da-type>\n <da-type nite:id="ami_daclass_1" name="task">\n'
    '  <da-type nite:id="ami_da_4" name="inf" gloss="Inform"/>\n'
    '  <da-type nite:id="ami_da_6" name="sug" gloss="Suggest"/>\n'
    '  <da-type nite:id="ami_da_9" name="ass" gloss="Assess"/>\n </da-type>\n</da-type>\n',
    "ap-types.xml": '<ap-type nite:id="apt_0" name="ap-type-root" {ns}>\n <ap-type nite:id="apt_1" name="POS"/>\n'
    ' <ap-type nite:id="apt_2" name="NEG"/>\n</ap-type>\n',
    "you-types.xml": '<you-type nite:id="you_0" name="you-root" {ns}>\n <you-type nite:id="you_1" name="DEICTIC">\n'
    '  <you-type nite:id="you_11" name="SINGULAR"/>\n  <you-type nite:id="you_12" name="PLURAL"/>\n </you-type>\n'
    ' <you-type nite:id="you_2" name="GENERIC"/>\n <you-type nite:id="you_3" name="DISCOURSE"/>\n</you-type>\n',
    "default-topics.xml": (
        '<topicname nite:id="top.0" name="te" {ns}>\n <topicname nite:id="top.11" name="opening"/>\n</topicname>\n'
    ),
}


def meetings_xml(letters: str = "ABC", duration: str = "120") -> str:
    speakers = "".join(
        f'      <speaker nite:id="{MEETING}_{i}" channel="{i}" nxt_agent="{x}"'
        f' camera="Closeup{i + 1}" global_name="P00{i}" role="{r}"/>\n'
        for i, (x, r) in enumerate(zip(letters, ["PM", "ME", "UI", "ID"]))
    )
    return root(
        "meet.00",
        f'   <meeting nite:id="meet_9" type="scenario" observation="{MEETING}"'
        f' duration="{duration}">\n{speakers}   </meeting>\n',
    )


def write(base: Path, rel: str, text: str) -> Path:
    path = base / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="latin-1")
    return path


def make_ami(base: Path) -> Path:
    """Write the tiny folder under ``base`` and return it."""
    for name, text in ONTOLOGIES.items():
        write(base, f"ontologies/{name}", HEAD + text.format(ns=NS))
    write(base, "corpusResources/meetings.xml", meetings_xml())
    for x in "ABC":
        write(base, f"words/{MEETING}.{x}.words.xml", words_xml(x))
        write(base, f"dialogueActs/{MEETING}.{x}.dialog-act.xml", root(f"{MEETING}.{x}.dialog-act", DACTS[x]))
        write(base, f"segments/{MEETING}.{x}.segments.xml", root(f"{MEETING}.{x}.segs", SEGMENTS[x]))
    for x, body in YOUS.items():
        write(base, f"youUsages/{MEETING}.{x}.you.xml", root(f"{MEETING}.{x}.you", body))
    write(base, f"dialogueActs/{MEETING}.adjacency-pairs.xml", root(f"{MEETING}.adjacency-pairs", PAIRS))
    write(base, f"decision/manual/{MEETING}.decision.xml", root(f"{MEETING}.decision", DECISIONS))
    write(base, f"topics/{MEETING}.topic.xml", root(f"{MEETING}.topic", TOPICS))
    write(base, f"participantRoles/{MEETING}.A.role.xml", ROLE)
    return base
