"""Deterministic generator of a small MoCA-format demo benchmark: Pillow images and bit-exact ffmpeg clips
whose frames carry their index (socialbench.media.synth). The same seed gives byte-identical files."""

from __future__ import annotations

import io
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from socialbench.core.errors import ConfigError
from socialbench.core.io import write_jsonl
from socialbench.media.encode import EncodeSettings, encode_rgb_frames
from socialbench.media.synth import band_height, draw_index
from socialbench.moca.schema.taxonomy import Taxonomy

PEOPLE = (
    "the speaker, the manager, the new colleague, the customer, the teacher, the student, the mother, "
    "the older brother, the landlord, the tenant, the politician, the journalist, the team captain, "
    "the referee, the online commenter, the meme author, the neighbour, the doctor, the patient, "
    "the best friend, the partner, the audience, the company, the government, the fans of the rival team, "
    "the coworkers"
).split(", ")

# Cue phrases per label: an indirect cue, so a content-aware model can beat the chance and prior rows.
CUES: dict[str, list[str]] = {
    "happy": ["honestly this made my whole week", "cannot stop smiling about it"],
    "bad": ["well, that is just how things go I guess", "another long grey day, fine"],
    "angry": ["oh great, exactly what I needed today", "sure, keep interrupting, it is fine"],
    "disgusted": ["wow, what a lovely way to treat people", "how tasteful, really"],
    "sad": ["it is fine, I did not need it anyway", "I will just sit here then"],
    "fearful": ["haha nothing could possibly go wrong tomorrow", "totally calm about the results"],
    "mock": ["bold strategy, let us see how it works out", "a true genius at work"],
    "mitigate": ["maybe we were all a bit tired yesterday", "no harm meant, we can laugh about it"],
    "alienate": ["some of us actually belong here", "we will manage without certain people"],
    "provoke": ["go on then, prove me wrong", "I bet you cannot even answer that"],
    "dominate": ["let me explain how this really works", "I will decide when we are done"],
    "intimidate": ["it would be a shame if someone found out", "remember who signs your contract"],
    "condemn": ["this behaviour is simply unacceptable", "nobody decent would do such a thing"],
    "denounce": ["everyone should see what they did here", "sharing this so people know the truth"],
    "contemptuous": ["cute that they think this matters", "not even worth a proper reply"],
    "dismissive": ["whatever, next topic", "sure, if you say so"],
    "disapproving": ["I expected better from them", "that was not the right call"],
    "hostile": ["they are the real problem here", "we will fight this every step"],
    "concerned": ["are they really okay though", "someone should check on this"],
    "indifferent": ["does not affect me either way", "meh, their business"],
    "skeptical": ["I will believe it when I see it", "interesting numbers, where are they from"],
    "supportive": ["standing right behind them on this", "they deserve every bit of help"],
    "sympathetic": ["that must have been so hard for them", "nobody deserves to go through that"],
    "neutral": ["here is what was said at the meeting", "posting the schedule for reference"],
    "appreciative": ["huge thanks for all the quiet work", "this is what real effort looks like"],
}
SCENARIO_COLOURS = {"affection": (214, 96, 77), "intent": (66, 133, 180), "stance": (109, 170, 90)}


@dataclass(frozen=True)
class DemoConfig:
    seed: int
    n_test: int = 72
    n_dev: int = 24
    video_fraction: float = 0.33
    image_size: int = 192
    video_seconds: float = 3.0
    video_fps: int = 10
    video_size: tuple[int, int] = (160, 120)
    faults: bool = False  # add one invalid record and one truncated clip to the test split
    # Test instances per scenario (a paper's proportions); None: the scenarios in turn. Their sum is n_test.
    scenario_counts: tuple[tuple[str, int], ...] | None = None
    # Exactly this many video-text test instances, evenly spread; None: each with chance video_fraction.
    n_video: int | None = None

    def __post_init__(self) -> None:
        if self.scenario_counts is not None and sum(c for _, c in self.scenario_counts) != self.n_test:
            total = sum(c for _, c in self.scenario_counts)
            raise ConfigError(f"moca.demo.scenario_counts: they sum to {total}, but n_test is {self.n_test}")
        if self.n_video is not None and self.n_video > self.n_test:
            raise ConfigError(f"moca.demo.n_video: {self.n_video} is more than n_test ({self.n_test})")

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> DemoConfig:
        d = params["moca"]["demo"]
        plain = {k: d[k] for k in ("n_test", "n_dev", "video_fraction", "image_size", "video_seconds", "video_fps")}
        counts = tuple(d["scenario_counts"].items()) if d.get("scenario_counts") else None
        extra = {"video_size": tuple(d["video_size"]), "faults": d["faults"], "n_video": d.get("n_video")}
        return cls(int(params["seed"]), **plain, **extra, scenario_counts=counts)


def _weighted(rng: random.Random, names: list[str]) -> str:
    # A skewed distribution (first options more frequent), so a majority prior is informative.
    weights = [1.0 / (1 + i) ** 0.8 for i in range(len(names))]
    return rng.choices(names, weights=weights, k=1)[0]


def domain_tag(rng: random.Random) -> str:
    return rng.choice(["mondaymood", "justsaying", "noted", "reallife", "whatever", "dailylife"])


def scenario_plan(counts: tuple[tuple[str, int], ...]) -> list[str]:
    """The scenario of each test instance for ``counts`` ((scenario, n), ...), interleaved so any prefix
    keeps about the same proportions: the k-th of n sits at (k + 0.5) / n, ties in ``counts`` order."""
    slots = [((k + 0.5) / n, i, s) for i, (s, n) in enumerate(counts) for k in range(n)]
    return [s for _, _, s in sorted(slots)]


def is_video_slot(index: int, n_video: int, n: int) -> bool:
    """Whether test instance ``index`` of ``n`` is one of ``n_video`` evenly spread video-text ones."""
    return (index + 1) * n_video // n > index * n_video // n


def make_record(
    split: str, index: int, cfg: DemoConfig, tax: Taxonomy, plan: list[str] | None = None
) -> dict[str, Any]:
    """The annotation record of one demo instance (pure); ``plan``: the test split's scenarios, if given."""
    rng = random.Random(f"{cfg.seed}:{split}:{index}")
    scenarios = list(tax.scenarios)
    test = split == "test"
    if test and cfg.scenario_counts is not None:
        scenario = (plan or scenario_plan(cfg.scenario_counts))[index]
    else:
        scenario = scenarios[index % len(scenarios)]
    label = _weighted(rng, tax.label_names(scenario))
    mechanism = _weighted(rng, tax.mechanism_names(scenario))
    people = rng.sample(PEOPLE, 8)
    subject_options, target_options = people[:4], people[4:]
    subject, target = rng.choice(subject_options), rng.choice(target_options)
    cue = rng.choice(CUES.get(label, ["..."]))
    is_video = rng.random() < cfg.video_fraction  # drawn in any case: the draws after it stay the same
    if test and cfg.n_video is not None:
        is_video = is_video_slot(index, cfg.n_video, cfg.n_test)
    iid = f"demo-{split}-{index:04d}"
    ext = "mp4" if is_video else "png"
    # The subject is left implicit; the target is named half the time (recovery is not a string match).
    text = f'"{cue}"' + (f" (about {target})" if rng.random() < 0.5 else f" #{domain_tag(rng)}")
    transcript = None
    if is_video:
        transcript = (
            f"A ({subject}): {cue}.\nB ({target}): Sorry, what do you mean?\nA ({subject}): Nothing. Forget it."
        )
    return {
        "id": iid,
        "source": "socialbench-demo",
        "modality": "video_text" if is_video else "image_text",
        "text": text,
        "transcript": transcript,
        "media": [f"data/raw/moca_demo/media/{iid}.{ext}"],
        "scenario": scenario,
        "domain": rng.choice(list(tax.domains)),
        "culture": rng.choice(list(tax.cultures)),
        "subject_options": subject_options,
        "target_options": target_options,
        "subject": subject,
        "target": target,
        "mechanism": mechanism,
        "label": label,
    }


def draw_image(rec: dict[str, Any], size: int) -> bytes:
    """A PNG: scenario-coloured background, two figures (subject, target) and the caption."""
    rng = random.Random(rec["id"])
    img = Image.new("RGB", (size, size), SCENARIO_COLOURS[rec["scenario"]])
    d = ImageDraw.Draw(img)
    for k in range(2):
        x = int(size * (0.25 + 0.5 * k))
        r = size // 8
        fill = tuple(rng.randrange(40, 220) for _ in range(3))
        d.ellipse([x - r, size // 3 - r, x + r, size // 3 + r], fill=fill)
        d.rectangle([x - r, size // 3 + r, x + r, size // 3 + 3 * r], fill=fill)
    d.rectangle([0, size - size // 5, size, size], fill=(255, 255, 255))
    d.text((4, size - size // 5 + 4), rec["text"][: max(8, size // 7)], fill=(0, 0, 0))
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=False)
    return buf.getvalue()


def video_frames(rec: dict[str, Any], cfg: DemoConfig) -> bytes:
    """Raw RGB24 frames of a clip: a figure moving across the scene, the frame index in the bottom band."""
    w, h = cfg.video_size
    n = max(1, int(round(cfg.video_seconds * cfg.video_fps)))
    base = SCENARIO_COLOURS[rec["scenario"]]
    rng = random.Random(rec["id"])
    figure = tuple(rng.randrange(60, 250) for _ in range(3))
    y0 = rng.randrange(h // 4, max(h // 4 + 1, h - band_height(h) - 22))
    out = bytearray()
    for i in range(n):
        img = Image.new("RGB", (w, h), base)
        d = ImageDraw.Draw(img)
        draw_index(d, w, h, i)
        x = int((w - 20) * i / max(1, n - 1))
        d.ellipse([x, y0, x + 20, y0 + 20], fill=figure)
        out += img.tobytes()
    return bytes(out)


def encode_video(raw: bytes, path: Path, cfg: DemoConfig) -> None:
    # Keyframe every second, so frame sampling can seek. The preset is the one these raw demo videos were
    # first made with (the clip cuts' default moved to ultrafast): the demo's raw data keeps its bytes.
    enc = EncodeSettings(preset="veryfast", keyframe_interval_s=1.0)
    encode_rgb_frames(raw, path, size=cfg.video_size, fps=cfg.video_fps, encode=enc)


def generate(out_dir: str | Path, cfg: DemoConfig, tax: Taxonomy) -> dict[str, list[dict[str, Any]]]:
    """Write the test, dev and human (:func:`simulated_annotator`) splits and their media; the records by split."""
    out_dir = Path(out_dir)
    media = out_dir / "media"
    media.mkdir(parents=True, exist_ok=True)
    splits = {"test": cfg.n_test, "dev": cfg.n_dev}
    result = {}
    plan = None
    if cfg.scenario_counts is not None:
        unknown = [s for s, _ in cfg.scenario_counts if s not in tax.scenarios]
        if unknown:
            why = f"unknown scenario {unknown[0]!r} (known: {list(tax.scenarios)})"
            raise ConfigError(f"moca.demo.scenario_counts: {why}")
        plan = scenario_plan(cfg.scenario_counts)
    for split, n in splits.items():
        recs = [make_record(split, i, cfg, tax, plan) for i in range(n)]
        for rec in recs:
            target = media / Path(rec["media"][0]).name
            if rec["modality"] == "image_text":
                target.write_bytes(draw_image(rec, cfg.image_size))
            else:
                encode_video(video_frames(rec, cfg), target, cfg)
            # Media paths in the records are relative to the repository root.
            rec["media"] = [target.as_posix()]
        if cfg.faults and split == "test":
            recs += fault_records(media, cfg, tax)
        write_jsonl(out_dir / f"{split}.jsonl", recs)
        result[split] = recs
    write_jsonl(out_dir / "human.jsonl", simulated_annotator(result["test"], cfg, tax))
    return result


#: Chance that the demo's simulated annotator gets one field wrong (each field independently).
ANNOTATOR_ERROR = 0.12


def simulated_annotator(records: list[dict[str, Any]], cfg: DemoConfig, tax: Taxonomy) -> list[dict[str, Any]]:
    """The demo's human row: the gold with each field swapped with probability ANNOTATOR_ERROR (not a baseline)."""
    out = []
    for rec in records:
        rng = random.Random(f"{cfg.seed}:human:{rec['id']}")
        s = rec["scenario"]
        options = {
            "subject": rec["subject_options"],
            "target": rec["target_options"],
            "mechanism": tax.mechanism_names(s) if s in tax.scenarios else [rec["mechanism"]],
            "label": tax.label_names(s) if s in tax.scenarios else [rec["label"]],
        }
        answer = {"id": rec["id"]}
        for field in ("subject", "target", "mechanism", "label"):
            others = [o for o in options[field] if o != rec[field]]
            answer[field] = rng.choice(others) if others and rng.random() < ANNOTATOR_ERROR else rec[field]
        out.append(answer)
    return out


def fault_records(media: Path, cfg: DemoConfig, tax: Taxonomy) -> list[dict[str, Any]]:
    """Two bad raw instances, dropped into reports: a label of another scenario and a truncated clip."""
    bad_label = make_record("test-fault", 0, cfg, tax)
    other = [s for s in tax.scenarios if s != bad_label["scenario"]][0]
    bad_label.update(id="demo-test-fault-label", label=tax.label_names(other)[0], modality="image_text")
    path = media / "demo-test-fault-label.png"
    path.write_bytes(draw_image(bad_label, cfg.image_size))
    bad_label["media"] = [path.as_posix()]

    truncated = make_record("test-fault", 1, cfg, tax)
    truncated.update(
        id="demo-test-fault-media", modality="video_text", transcript=truncated["transcript"] or "A: (inaudible)"
    )
    clip = media / "demo-test-fault-media.mp4"
    encode_video(video_frames(truncated, cfg), clip, cfg)
    data = clip.read_bytes()
    clip.write_bytes(data[: len(data) // 2])  # cut mid-stream, as an interrupted download would
    truncated["media"] = [clip.as_posix()]
    return [bad_label, truncated]
