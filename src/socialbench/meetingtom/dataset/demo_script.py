"""The embedded demo release's meetings, scripted from the seed (pure): four participants, one scene per
55 s with an addressed "you", "you"s the event rules reject, a backchannel, a laugh and a disfluency, a
decision every second scene (``clips_per_task`` N: N lean scenes), written as the official NXT files so the
pipeline reads them with the real corpus's code. Same seed, same archive bytes."""

from __future__ import annotations

import io
import random
import re
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from socialbench.core.errors import ConfigError
from socialbench.meetingtom.schema.settings import SCENE_S, clips_per_task_problem

LETTERS = ("A", "B", "C", "D")
ROLES = ("PM", "ME", "UI", "ID")
WORD_S = 0.36  # length of a spoken word
GAP_S = 0.5  # silence between turns
HEAD = '<?xml version="1.0" encoding="ISO-8859-1" standalone="yes"?>\n'
NS = 'xmlns:nite="http://nite.sourceforge.net/"'
# Ontology type ids as in the AMI release (ap-types.xml, you-types.xml, default-topics.xml; da-types below).
YOU_IDS = {"singular": "you_11", "plural": "you_12", "generic": "you_2", "discourse": "you_3"}
AP_IDS = {"POS": "apt_1", "NEG": "apt_2", "UNC": "apt_3", "PART": "apt_4", "ELA": "apt_5"}
TOPICS = (("top.11", "opening"), ("top.28", "discussion"), ("top.211", "costing"), ("top.12", "closing"))
COLOURS = {"A": (46, 139, 150), "B": (214, 120, 48), "C": (130, 84, 170), "D": (86, 160, 72)}
TONES = {"A": 220.0, "B": 330.0, "C": 440.0, "D": 550.0}
# Seats around the table, clockwise from the top (the Corner view draws them there).
SEATS = {"A": (0.5, 0.18), "B": (0.82, 0.45), "C": (0.5, 0.72), "D": (0.18, 0.45)}

THINGS = ["battery", "case", "button layout", "scroll wheel", "colour scheme", "remote", "charger", "logo", "display"]
MATERIALS = ["rubber", "plastic", "wood", "titanium", "sponge"]
TASKS = [
    "check the battery costs",
    "draw the button layout",
    "ask the users about colours",
    "send the market figures",
    "test the scroll wheel",
    "price the titanium case",
]
DAYS = ["tomorrow", "on Friday", "after lunch", "next meeting"]


@dataclass(frozen=True)
class DemoConfig:
    seed: int
    corpus: tuple[str, ...] = ("ES9000a",)
    seconds: float = 110.0
    fps: int = 2
    size: tuple[int, int] = (160, 120)
    sample_rate: int = 16000
    # None: the demo's scenes (about 4.4 state windows, one "you" window per scene, a consensus window
    # every second scene); N: N lean scenes, one window of each task family each (module doc)
    clips_per_task: int | None = None

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> DemoConfig:
        d = params["meetingtom"]["demo"]
        per_task = d.get("clips_per_task")
        problem = clips_per_task_problem(float(d["seconds"]), per_task)
        if problem:
            raise ConfigError(f"meetingtom.{problem}")
        return cls(
            seed=int(params["seed"]),
            corpus=tuple(d["corpus"]),
            seconds=float(d["seconds"]),
            fps=int(d["fps"]),
            size=(int(d["size"][0]), int(d["size"][1])),
            sample_rate=int(d["sample_rate"]),
            clips_per_task=None if per_task is None else int(per_task),
        )


# ---- The script of a meeting (pure) ----
@dataclass
class DemoToken:
    kind: str  # w, vocalsound, disfmarker
    text: str
    start: float
    end: float
    punc: bool = False


@dataclass
class DemoAct:
    speaker: str
    type: str  # dialogue-act name (inf, sug, ass, bck, el.inf ...)
    addressee: tuple[str, ...] | None
    first: int  # token indices in the speaker's words file
    last: int
    start: float
    end: float
    yous: list[tuple[int, str]] = field(default_factory=list)  # (token index, you type key)
    n: int = 0  # number of the act within its speaker's file

    def act_id(self, meeting: str) -> str:
        return f"{meeting}.{self.speaker}.dialog-act.demo.{self.n}"


@dataclass
class Participant:
    letter: str
    role: str
    camera: str
    global_name: str


@dataclass
class MeetingScript:
    meeting: str
    seconds: float
    participants: list[Participant]
    tokens: dict[str, list[DemoToken]]
    acts: list[DemoAct]
    pairs: list[tuple[str, int, int]]  # (ap type, source act index, target act index) into acts
    decisions: list[list[int]]  # act indices whose words form each decision
    topics: list[tuple[str, str, float, float]]  # (type id, description, start, end)

    def letter_of_camera(self, camera: str) -> str:
        return next(p.letter for p in self.participants if p.camera == camera)


@dataclass
class _Turn:
    speaker: str
    type: str
    words: list[str]
    addressee: tuple[str, ...] | None = None
    yous: dict[int, str] = field(default_factory=dict)  # word position -> you type key
    at: float | None = None  # earliest start (seconds in the meeting)
    extra: tuple[str, float] | None = None  # a sound after the turn: ("laugh" | "disfmarker", length)


def _you_turn(speaker: str, type_: str, text: str, you_type: str, addressee: tuple[str, ...] | None, **kw) -> _Turn:
    words = text.split()
    pos = next(i for i, w in enumerate(words) if w.strip(",.?!").lower() == "you")
    return _Turn(speaker, type_, words, addressee, {pos: you_type}, **kw)


def _scene_turns(rng: random.Random, start: float, decide: bool) -> tuple[list[_Turn], dict[str, int]]:
    """The turns of a scene starting at ``start`` s and the positions of its key turns."""
    x, y, z, w = rng.sample(LETTERS, 4)  # x asks y; z and w are the others
    thing, other = rng.sample(THINGS, 2)
    task = rng.choice(TASKS)
    day = rng.choice(DAYS)
    material = rng.choice(MATERIALS)
    turns = [
        _Turn(z, "inf", f"Okay, the {thing} is next on the agenda.".split(), at=start + 2.0),
        _you_turn(w, "inf", f"I think you never know with a {other} like this.", "generic", None),
        _Turn(rng.choice([x, y]), "bck", ["Mm-hmm."]),
        _you_turn(z, "ass", f"Well, you know, the {other} matters less.", "discourse", None, extra=("laugh", 0.8)),
        # The addressed "you" sits in the middle of the scene, so each scene holds one 50 s window.
        _you_turn(
            x,
            rng.choice(["el.inf", "sug"]),
            f"{y_call(rng)} could you {task} {day}?",
            "singular",
            (y,),
            at=start + SCENE_S / 2 - 3.0,
        ),
        _Turn(y, "ass", f"Yeah, I can {task} {day}.".split(), (x,)),
        _Turn(x, "inf", "Great, thanks.".split(), extra=("disfmarker", 0.0)),
        _you_turn(w, "el.inf", f"Do you two agree on the {thing}?", "singular", tuple(sorted((y, z)))),
        _you_turn(z, "inf", f"I told you the {thing} was fine.", "singular", None),
    ]
    keys = {"ask": 4, "answer": 5}
    if decide:
        p, q, r = x, rng.choice([y, w]), z
        turns += [
            _Turn(p, "sug", f"So I suggest we go with a {material} case.".split(), at=start + 38.0),
            _Turn(q, "ass", "Yeah, that sounds good.".split()),
            _Turn(r, "ass", "Okay, fine with me.".split()),
        ]
        keys.update(proposal=len(turns) - 3, agree1=len(turns) - 2, agree2=len(turns) - 1)
    return turns, keys


def y_call(rng: random.Random) -> str:
    return rng.choice(["And", "So", "Then,", "Right,"])


def _paper_scene_turns(rng: random.Random, start: float) -> tuple[list[_Turn], dict[str, int]]:
    """A lean scene (``clips_per_task``) the default thresholds mine into one window of each task family: the
    addressed question (>= 8 words: >= 1.5 s of its state window), a backchannel and the answer within its
    5 s (their state windows overlap and are dropped), then a decision of a proposal and two agreements of at
    most three words (no speaker window). "You" and consensus windows are centred mid-scene, 55 s apart."""
    x, y, z, w = rng.sample(LETTERS, 4)  # x asks y and proposes; z and w agree
    task = rng.choice(TASKS)
    day = rng.choice(DAYS)
    material = rng.choice(MATERIALS)
    turns = [
        _you_turn(
            x,
            rng.choice(["el.inf", "sug"]),
            f"{y_call(rng)} could you {task} {day}?",
            "singular",
            (y,),
            at=start + SCENE_S / 2 - 3.0,
        ),
        _Turn(w, "bck", ["Mm-hmm."]),
        _Turn(y, "ass", f"Yeah, I can {task} {day}.".split(), (x,)),
        _Turn(x, "sug", f"Let's use {material}.".split()),
        _Turn(z, "ass", "Yeah, sounds good.".split()),
        _Turn(w, "ass", "Okay, fine.".split()),
    ]
    return turns, {"ask": 0, "answer": 2, "proposal": 3, "agree1": 4, "agree2": 5}


def plan_meeting(meeting: str, cfg: DemoConfig) -> MeetingScript:
    """The script of one demo meeting, from the seed and the meeting id (pure)."""
    rng = random.Random(f"{cfg.seed}:{meeting}:meetingtom-demo")
    roles = list(ROLES)
    rng.shuffle(roles)
    cameras = [f"Closeup{i}" for i in range(1, 5)]
    while True:  # a non-identity letter -> camera mapping, as in most real meetings
        rng.shuffle(cameras)
        if any(c != f"Closeup{i + 1}" for i, c in enumerate(cameras)):
            break
    participants = [
        Participant(x, r, c, f"DEM{hash_text(meeting + x) % 900 + 100:03d}") for x, r, c in zip(LETTERS, roles, cameras)
    ]
    problem = clips_per_task_problem(cfg.seconds, cfg.clips_per_task)
    if problem:
        raise ValueError(problem)
    n_scenes = cfg.clips_per_task or max(1, int(cfg.seconds // SCENE_S))
    script = MeetingScript(meeting, cfg.seconds, participants, {x: [] for x in LETTERS}, [], [], [], [])
    tokens, acts, pairs, decisions, topics = script.tokens, script.acts, script.pairs, script.decisions, script.topics
    cursor = 0.0
    for k in range(n_scenes):
        scene_start = k * SCENE_S
        if cfg.clips_per_task is None:
            turns, keys = _scene_turns(rng, scene_start, decide=k % 2 == 1 or n_scenes == 1)
        else:
            turns, keys = _paper_scene_turns(rng, scene_start)
        first_act = len(acts)
        for turn in turns:
            start = round(max(cursor, turn.at if turn.at is not None else cursor), 3)
            if turn.type == "bck":  # a backchannel overlaps the end of the previous turn
                start = round(max(scene_start, cursor - 0.4), 3)
            act = _lay_out(turn, start, tokens)
            acts.append(act)
            cursor = max(cursor, act.end + GAP_S) if turn.type != "bck" else cursor
            if turn.extra is not None:
                kind, length = turn.extra
                t0 = round(act.end + 0.05, 3)
                laugh = kind == "laugh"
                sound = DemoToken("vocalsound" if laugh else kind, kind if laugh else "", t0, round(t0 + length, 3))
                tokens[turn.speaker].append(sound)
                cursor = max(cursor, sound.end + GAP_S)
        if cursor > scene_start + SCENE_S:
            raise ValueError(f"demo scene {k} of {meeting} runs to {cursor:.2f} s, past its end")
        pairs.append(("POS", first_act + keys["ask"], first_act + keys["answer"]))
        if "proposal" in keys:
            pairs.append(("POS", first_act + keys["proposal"], first_act + keys["agree1"]))
            second = "PART" if rng.random() < 0.5 else "POS"
            pairs.append((second, first_act + keys["proposal"], first_act + keys["agree2"]))
            decisions.append([first_act + keys["proposal"], first_act + keys["agree1"]])
        type_id, desc = TOPICS[k % len(TOPICS)]
        topic_end = min(acts[-1].end, cfg.seconds)
        topics.append((type_id, f"{desc} (demo scene {k + 1})", acts[first_act].start, topic_end))
        cursor = max(cursor, (k + 1) * SCENE_S)
    counts: dict[str, int] = {}
    for act in acts:
        counts[act.speaker] = act.n = counts.get(act.speaker, 0) + 1
    return script


def hash_text(text: str) -> int:
    """A stable small hash (Python's hash() is salted per process)."""
    import hashlib

    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")


def _lay_out(turn: _Turn, start: float, tokens: dict[str, list[DemoToken]]) -> DemoAct:
    """Time the turn's words from ``start`` and append them (punctuation as its own token)."""
    toks = tokens[turn.speaker]
    first = len(toks)
    t = start
    yous = []
    for i, word in enumerate(turn.words):
        core = word.rstrip(",.?!")
        punct = word[len(core) :]
        if i in turn.yous:
            yous.append((len(toks), turn.yous[i]))
        toks.append(DemoToken("w", core, round(t, 3), round(t + WORD_S, 3)))
        t += WORD_S
        if punct:
            toks.append(DemoToken("w", punct, round(t, 3), round(t, 3), punc=True))
    return DemoAct(turn.speaker, turn.type, turn.addressee, first, len(toks) - 1, round(start, 3), round(t, 3), yous)


# ---- NXT XML (pure: file path -> text) ----
def _root(nid: str, body: str) -> str:
    return f"{HEAD}<nite:root nite:id={quoteattr(nid)} {NS}>\n{body}</nite:root>\n"


def _ref(meeting: str, letter: str, a: int, b: int | None = None) -> str:
    f = f"{meeting}.{letter}.words.xml#id({meeting}.{letter}.words{a})"
    return f if b is None or b == a else f + f"..id({meeting}.{letter}.words{b})"


def _child(href: str) -> str:
    return f'      <nite:child href="{href}"/>\n'


def _pointer(role: str, href: str) -> str:
    return f'      <nite:pointer role="{role}" href="{href}"/>\n'


def _element(opening: str, *children: str) -> str:
    """``<opening>``, the children (each a line of its own), the closing tag."""
    return f"   <{opening}>\n{''.join(children)}   </{opening.split(' ', 1)[0]}>\n"


ONTOLOGIES = {
    "da-types.xml": '<da-type nite:id="cmrda" name="da-type" {ns}>\n'
    '   <da-type nite:id="ami_daclass_0" name="minor" gloss="Minor">\n'
    '      <da-type nite:id="ami_da_1" name="bck" gloss="Backchannel"/>\n'
    '      <da-type nite:id="ami_da_2" name="stl" gloss="Stall"/>\n'
    '      <da-type nite:id="ami_da_3" name="fra" gloss="Fragment"/>\n   </da-type>\n'
    '   <da-type nite:id="ami_daclass_1" name="task" gloss="Task">\n'
    '      <da-type nite:id="ami_da_4" name="inf" gloss="Inform"/>\n'
    '      <da-type nite:id="ami_da_6" name="sug" gloss="Suggest"/>\n'
    '      <da-type nite:id="ami_da_9" name="ass" gloss="Assess"/>\n   </da-type>\n'
    '   <da-type nite:id="ami_daclass_2" name="elicit" gloss="Elicit">\n'
    '      <da-type nite:id="ami_da_5" name="el.inf" gloss="Elicit-Inform"/>\n'
    '      <da-type nite:id="ami_da_8" name="el.sug" gloss="Elicit-Offer-Or-Suggestion"/>\n'
    '      <da-type nite:id="ami_da_11" name="el.ass" gloss="Elicit-Assessment"/>\n   </da-type>\n'
    '   <da-type nite:id="ami_daclass_3" name="other" gloss="Other">\n'
    '      <da-type nite:id="ami_da_7" name="off" gloss="Offer"/>\n   </da-type>\n</da-type>\n',
    "ap-types.xml": '<ap-type nite:id="apt_0" name="ap-type-root" {ns}>\n'
    + "".join(f'   <ap-type nite:id="{i}" name="{n}"/>\n' for n, i in AP_IDS.items())
    + "</ap-type>\n",
    "you-types.xml": '<you-type nite:id="you_0" name="you-root" {ns}>\n'
    '    <you-type nite:id="you_1" name="DEICTIC" gloss="deictic referential">\n'
    '        <you-type nite:id="you_11" name="SINGULAR" gloss="singular"/>\n'
    '        <you-type nite:id="you_12" name="PLURAL" gloss="plural"/>\n    </you-type>\n'
    '    <you-type nite:id="you_2" name="GENERIC" gloss="general"/>\n'
    '    <you-type nite:id="you_3" name="DISCOURSE" gloss="discourse marker"/>\n</you-type>\n',
    "default-topics.xml": '<topicname nite:id="top.0" name="te" {ns}>\n'
    + "".join(f'   <topicname nite:id="{i}" name="{n}"/>\n' for i, n in TOPICS)
    + "</topicname>\n",
}


#: Dialogue-act name -> its type id in da-types.xml.
DA_IDS = {name: nid for nid, name in re.findall(r'nite:id="(ami_da_\d+)" name="([^"]+)"', ONTOLOGIES["da-types.xml"])}


def meetings_xml(scripts: list[MeetingScript]) -> str:
    body = ""
    for n, s in enumerate(scripts, 1):
        body += (
            f'   <meeting nite:id="meet_demo_{n}" type="scenario"'
            f' observation="{s.meeting}" name="socialbench demo meeting"'
            f' duration="{s.seconds:g}" visibility="seen">\n'
        )
        for i, p in enumerate(s.participants):
            body += (
                f'      <speaker nite:id="{s.meeting}_{i + 1}" channel="{i}" nxt_agent="{p.letter}" camera="{p.camera}"'
                f' global_name="{p.global_name}" role="{p.role}"/>\n'
            )
        body += "   </meeting>\n"
    return _root("meet.00", body)


def annotation_files(script: MeetingScript) -> dict[str, str]:
    """Every NXT file of one meeting: path relative to the release root -> XML text."""
    m = script.meeting
    files: dict[str, str] = {}
    for x in LETTERS:
        body = ""
        for i, t in enumerate(script.tokens[x]):
            nid = f"{m}.{x}.words{i}"
            times = f'starttime="{t.start:.3f}" endtime="{t.end:.3f}"'
            if t.kind == "w":
                punc = ' punc="true"' if t.punc else ""
                body += f'   <w nite:id="{nid}" {times}{punc}>{escape(t.text)}</w>\n'
            elif t.kind == "vocalsound":
                body += f'   <vocalsound nite:id="{nid}" {times} type="{t.text}"/>\n'
            else:
                body += f'   <{t.kind} nite:id="{nid}" {times}/>\n'
        files[f"words/{m}.{x}.words.xml"] = _root(f"{m}.{x}.words", body)
        acts = [a for a in script.acts if a.speaker == x]
        dacts = segs = yous = ""
        for a in acts:
            addr = f" addressee={quoteattr(','.join(a.addressee))}" if a.addressee else ""
            words = _child(_ref(m, x, a.first, a.last))
            da_type = _pointer("da-aspect", f"da-types.xml#id({DA_IDS[a.type]})")
            dacts += _element(f'dact nite:id="{a.act_id(m)}"{addr}', da_type, words)
            times = f'transcriber_start="{max(0.0, a.start - 0.1):.3f}" transcriber_end="{a.end + 0.1:.3f}"'
            segs += _element(f'segment nite:id="{m}.sync.{x}{a.n}" channel="{LETTERS.index(x)}" {times}', words)
            for idx, kind in a.yous:
                n_you = yous.count("<you-usage") + 1
                you_type = _pointer("type", f"you-types.xml#id({YOU_IDS[kind]})")
                yous += _element(
                    f'you-usage nite:id="{m}.{x}.you.{n_you}" unsure="false"', you_type, _child(_ref(m, x, idx))
                )
        files[f"dialogueActs/{m}.{x}.dialog-act.xml"] = _root(f"{m}.{x}.dialog-act", dacts)
        files[f"segments/{m}.{x}.segments.xml"] = _root(f"{m}.{x}.segs", segs)
        if yous:
            files[f"youUsages/{m}.{x}.you.xml"] = _root(f"{m}.{x}.you", yous)
        files[f"participantRoles/{m}.{x}.role.xml"] = _roles_xml(script, x)
    pairs = ""
    for n, (ap, s, t) in enumerate(script.pairs, 1):
        src, tgt = script.acts[s], script.acts[t]
        pairs += _element(
            f'adjacency-pair nite:id="{m}.adjacency-pairs.demo.{n}"',
            _pointer("source", f"{m}.{src.speaker}.dialog-act.xml#id({src.act_id(m)})"),
            _pointer("target", f"{m}.{tgt.speaker}.dialog-act.xml#id({tgt.act_id(m)})"),
            _pointer("type", f"ap-types.xml#id({AP_IDS[ap]})"),
        )
    files[f"dialogueActs/{m}.adjacency-pairs.xml"] = _root(f"{m}.adjacency-pairs", pairs)
    dec = ""
    for n, act_ids in enumerate(script.decisions, 1):
        kids = "".join(
            _child(_ref(m, script.acts[i].speaker, script.acts[i].first, script.acts[i].last)) for i in act_ids
        )
        dec += _element(f'decision nite:id="{m}.decision.demo.{n}" external="false"', kids)
    files[f"decision/manual/{m}.decision.xml"] = _root(f"{m}.decision", dec)
    top = ""
    for n, (type_id, desc, start, end) in enumerate(script.topics, 1):
        kids = ""
        for x in LETTERS:
            idx = [i for i, t in enumerate(script.tokens[x]) if start <= t.start < end + 1e-6]
            if idx:
                kids += _child(_ref(m, x, idx[0], idx[-1]))
        topic_type = _pointer("scenario_topic_type", f"default-topics.xml#id({type_id})")
        top += _element(f'topic nite:id="{m}.topic.demo.{n}" other_description={quoteattr(desc)}', topic_type, kids)
    files[f"topics/{m}.topic.xml"] = _root(f"{m}.topic", top)
    return files


def _roles_xml(script: MeetingScript, letter: str) -> str:
    """Participant-role spans: Neutral, except Protagonist from each of the letter's proposals on."""
    m = script.meeting
    cuts = sorted(script.acts[d[0]].start for d in script.decisions if script.acts[d[0]].speaker == letter)
    spans, t = [], 0.0
    for c in cuts:
        spans += [(t, c, "Neutral"), (c, min(c + 10.0, script.seconds), "Protagonist")]
        t = min(c + 10.0, script.seconds)
    spans.append((t, script.seconds, "Neutral"))
    body = "".join(
        f'    <role endtime="{e:.3f}" starttime="{s:.3f}" type="{kind}" nite:id="tim_{m}_{letter}.role.{i}"/>\n'
        for i, (s, e, kind) in enumerate((sp for sp in spans if sp[1] > sp[0]), 1)
    )
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<nite:root {NS}'
        f' nite:id="tim_{m}_{letter}.nite:root.1">\n{body}</nite:root>\n'
    )


def release_files(scripts: list[MeetingScript]) -> dict[str, str]:
    """The whole demo annotations release: ontologies, meetings.xml and every meeting's layers."""
    files = {f"ontologies/{name}": HEAD + text.format(ns=NS) for name, text in ONTOLOGIES.items()}
    files["corpusResources/meetings.xml"] = meetings_xml(scripts)
    files["00README_DEMO.txt"] = (
        "socialbench MeetingToM demo release: generated meetings in the layout of the AMI manual\n"
        "annotations (NXT XML). Not AMI data.\n"
    )
    for s in scripts:
        files.update(annotation_files(s))
    return dict(sorted(files.items()))


def zip_bytes(files: Mapping[str, str]) -> bytes:
    """A zip of ``files``, stored uncompressed with fixed timestamps: the same bytes on every machine."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.create_system = 3
            zf.writestr(info, files[name].encode("latin-1"))
    return buf.getvalue()
