"""The embedded demo's test instances and their D.1 direct requests, built in process without ffmpeg
(video clips become sampled PNG frames), for the GPU check (perf/gpu_check.py) and the vLLM
preflight tests. Needs only Pillow and PyYAML besides socialbench's own modules."""

from __future__ import annotations

from pathlib import Path

import yaml

from socialbench.core.backend import ModelSpec, Request
from socialbench.core.benchmarks import get_benchmark
from socialbench.core.hashing import sha256_file
from socialbench.moca.dataset.demo import DemoConfig, draw_image, make_record, video_frames
from socialbench.moca.eval.prompts import build_direct_request
from socialbench.moca.schema.taxonomy import load_taxonomy

DIRECT_TEMPLATES = tuple(get_benchmark("moca").template("direct", n) for n in ("system.txt", "user.txt"))

REPO = Path(__file__).resolve().parents[2]


def demo_config() -> DemoConfig:
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    demo = params.get("demo", {})
    fields = {
        k: (tuple(v) if k == "video_size" else v) for k, v in demo.items() if k in DemoConfig.__dataclass_fields__
    }
    return DemoConfig(seed=int(params.get("seed", 0)), **fields)


def demo_requests(work: Path, n: int, max_frames: int) -> tuple[list[dict], list[Request]]:
    """(instances, requests) for the first n demo test instances, media written under work/."""
    from PIL import Image

    cfg = demo_config()
    tax = load_taxonomy()
    spec = ModelSpec(name="tiny", backend="hf", max_frames=max_frames)
    media = Path(work) / "media"
    media.mkdir(parents=True, exist_ok=True)
    instances, requests = [], []
    for i in range(n):
        rec = make_record("test", i, cfg, tax)
        if rec["modality"] == "image_text":
            path = media / f"{rec['id']}.png"
            path.write_bytes(draw_image(rec, cfg.image_size))
            rec["media"] = [str(path)]
        else:
            w, h = cfg.video_size
            raw = video_frames(rec, cfg)
            count = len(raw) // (w * h * 3)
            picks = sorted({round(k * (count - 1) / max(1, max_frames - 1)) for k in range(min(max_frames, count))})
            frames = []
            for k in picks:
                path = media / f"{rec['id']}_{k:03d}.png"
                Image.frombytes("RGB", (w, h), raw[k * w * h * 3 : (k + 1) * w * h * 3]).save(path)
                frames.append({"path": str(path), "sha256": sha256_file(path), "timestamp": k / cfg.video_fps})
            rec["media"] = [str(media / f"{rec['id']}.mp4")]
            rec["frames"] = frames
        # the answer schema (direct_constrained): the preflight and GPU check test guided decoding
        request, _ = build_direct_request(
            rec, tax, spec, cfg.seed, DIRECT_TEMPLATES, method="direct_constrained", constrained=True
        )
        instances.append(rec)
        requests.append(request)
    return instances, requests
