"""A run's viewer page and its shards (pure): the page holds header, filters, script and every instance's index entry;
the rows' HTML is in ``<run>.shards/NNN.js``, scripts because a page opened from disk may not ``fetch()`` its
neighbours. Shards are gzipped JSON in base64, unpacked by ``DecompressionStream``."""

from __future__ import annotations

import base64
import gzip
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from socialbench.results.viewer_html import esc, select_html

#: Rows per shard, and the most row HTML (bytes, before compression) one shard holds beyond its first row.
SHARD_ROWS = 100
SHARD_BYTES = 4_000_000
#: Rows the page draws at a time (the first ones at once, the next as the reader scrolls near them).
PAGE_ROWS = 40
#: The shards' callback (global: a shard is a classic script).
CALLBACK = "socialbenchShard"

CSP = "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; script-src 'self' 'unsafe-inline'"


def shard_bounds(sizes: Sequence[int], rows: int = SHARD_ROWS, max_bytes: int = SHARD_BYTES) -> list[int]:
    """The first row of each shard: at most ``rows`` rows and, past the first, ``max_bytes`` of HTML."""
    starts: list[int] = []
    count = size = 0
    for i, n in enumerate(sizes):
        if not starts or count >= rows or size + n > max_bytes:
            starts.append(i)
            count = size = 0
        count += 1
        size += n
    return starts


def shard_name(k: int, n: int) -> str:
    """``000.js``: three digits, more when there are more than a thousand shards."""
    return f"{k:0{max(3, len(str(n - 1)))}d}.js"


def shard_js(k: int, rows_html: Sequence[str]) -> str:
    """Shard ``k``: one call with its rows' HTML (JSON list, gzip without a time stamp, base64)."""
    packed = gzip.compress(json.dumps(list(rows_html), ensure_ascii=False).encode("utf-8"), compresslevel=9, mtime=0)
    return f'{CALLBACK}({k},"{base64.b64encode(packed).decode("ascii")}");\n'


def read_shard_js(text: str) -> tuple[int, list[str]]:
    """(k, rows' HTML) of a shard file's text (for checks and tests: what the page unpacks)."""
    head, _, rest = text.strip().partition("(")
    k, _, data = rest.rstrip(");").partition(",")
    if head != CALLBACK:
        raise ValueError(f"not a viewer shard (it calls {head!r}, not {CALLBACK})")
    return int(k), json.loads(gzip.decompress(base64.b64decode(json.loads(data))).decode("utf-8"))


def index_entry(row: dict[str, Any], correct: str, tags: Sequence[str], shard: int) -> list[Any]:
    """``[id, group, correct, error yes|no, wrong fields, trace tags, shard]``: what the filters read."""
    wrong = " ".join(f["name"] for f in row.get("fields") or [] if f.get("correct") is False)
    group = "" if row.get("group") is None else str(row["group"])
    return [row["id"], group, correct, "yes" if row.get("error") else "no", wrong, " ".join(tags), shard]


def json_in_html(obj: Any) -> str:
    """JSON for a ``<script type="application/json">`` block: no ``<`` or ``&`` that could end it."""
    return (
        json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
    )


CSS = """
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d232a;background:#f4f5f7}
header.top{background:#1f2a37;color:#fff;padding:12px 20px}header.top h1{font-size:18px;margin:0 0 4px}
header.top .sum{color:#cfd8e3}header.top details{color:#cfd8e3;font-size:12px}header.top details>summary{color:#cfd8e3}
header.top code{color:#fff}
nav.filters{position:sticky;top:0;z-index:2;background:#fff;border-bottom:1px solid #d8dde3;padding:8px 20px;
  display:flex;flex-wrap:wrap;gap:14px;align-items:center}
nav.filters select,nav.filters input{font:inherit;padding:2px 4px}#count{margin-left:auto;color:#555}
main{padding:12px 20px}[hidden]{display:none!important}
article.row{background:#fff;border:1px solid #d8dde3;border-left:5px solid #9aa5b1;border-radius:4px;margin:0 0 12px}
article.row.correct{border-left-color:#2e7d32}article.row.wrong{border-left-color:#c62828}
article.row>header{padding:6px 10px;border-bottom:1px solid #eceff2;
  display:flex;flex-wrap:wrap;gap:6px;align-items:center}
.rid{font-weight:600;font-family:ui-monospace,monospace}
.badge{display:inline-block;border-radius:10px;padding:0 8px;font-size:12px;background:#e3e8ef;color:#334}
.badge.ok{background:#dff3e0;color:#1b5e20}.badge.bad{background:#fde2e1;color:#b71c1c}
.badge.group{background:#e3ecfa;color:#1a4a8a}
.body{display:grid;grid-template-columns:minmax(180px,300px) 1fr;gap:12px;padding:10px}
.media{display:flex;flex-wrap:wrap;gap:6px;align-content:flex-start}
figure{margin:0;font-size:11px;color:#555;max-width:100%}figure.frame{width:calc(50% - 3px)}
figure img{display:block;max-width:100%;height:auto;border:1px solid #ccd}
figure.missing .ph{width:160px;height:90px;display:flex;align-items:center;justify-content:center;
  background:#eee;border:1px dashed #aaa;color:#777}
.warn{color:#b26a00}.err{color:#b71c1c;margin:4px 0}.muted{color:#6b7785}.none{color:#9aa5b1}
pre.txt{white-space:pre-wrap;word-break:break-word;margin:0;font:12.5px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;
  background:#f7f8fa;padding:4px 6px;border-radius:3px}
dl.texts{margin:0 0 8px}dl.texts dt,dl.meta dt{font-size:12px;color:#6b7785}dl.texts dd{margin:0 0 6px}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:0 10px;font-size:12px;margin:6px 0}dl.meta dd{margin:0}
table.fields{border-collapse:collapse;margin:4px 0 6px;min-width:60%}
table.fields th,table.fields td{border:1px solid #e1e5ea;padding:3px 8px;text-align:left;vertical-align:top}
table.fields thead th{background:#f4f6f8;font-size:12px}td.pred.wrong{background:#fdecea}
td.pred.right{background:#edf7ee}
.mark.ok{color:#2e7d32;font-weight:700}.mark.bad{color:#c62828;font-weight:700}
.note,.opts{font-size:11.5px;color:#6b7785}
details{margin:6px 0}details>summary{cursor:pointer;color:#1a4a8a}
.call{border:1px solid #e1e5ea;border-radius:3px;margin:4px 0;padding:4px 6px}.call.bad{border-color:#f0b4b0}
.call-head{margin-bottom:3px}
details.stage{border-left:3px solid #9fb3d1;padding-left:8px}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 10px;margin:2px 0}
dl.kv dt{color:#6b7785;font-size:12px}dl.kv dd{margin:0}
ol.tree{margin:2px 0;padding-left:20px}#empty{color:#6b7785;padding:20px}#notice{color:#b26a00}
#more{display:block;margin:8px auto;font:inherit}#searching{color:#6b7785}
@media (max-width:700px){.body{grid-template-columns:1fr}}
""".strip()

# The filters read the index; the search reads the rows' text, loading every shard the first time. Matching
# rows are drawn PAGE at a time as the reader scrolls. The URL hash holds the state, so a link opens the page
# filtered. <body data-ready="1" data-first-ms="..."> says when the first rows were drawn (checks read it).
JS = """
(function(){
"use strict";
var D=JSON.parse(document.getElementById("sb-index").textContent),R=D.rows,N=D.starts.length;
var F=["group","correct","error","field","verdict"],parts={},asked={},waiting={},texts=[];
var gen=0,matches=[],done=0,busy=false;
function el(i){return document.getElementById(i);}
var list=el("rows"),more=el("more"),q=el("f-q"),ex=el("f-expand");
function pad(k){var s=String(k);while(s.length<D.width){s="0"+s;}return s+".js";}
function unpack(b){var s=atob(b),u=new Uint8Array(s.length);for(var i=0;i<s.length;i++){u[i]=s.charCodeAt(i);}
  return new Response(new Blob([u]).stream().pipeThrough(new DecompressionStream("gzip"))).text();}
var ENT={"&amp;":"&","&lt;":"<","&gt;":">","&quot;":"\\"","&#x27;":"'"};
function plain(h){return h.replace(/<[^>]*>/g," ").replace(/&(amp|lt|gt|quot|#x27);/g,function(m){return ENT[m];})
  .toLowerCase();}
function fail(k,why){el("notice").textContent="could not load "+D.base+pad(k)+" ("+why+"): the page needs its "+
  D.base+" folder beside it and the media folder "+D.media+"; open it from its viewer folder";}
window.__CALLBACK__=function(k,b){unpack(b).then(function(t){var a=JSON.parse(t),s=D.starts[k];
  for(var j=0;j<a.length;j++){texts[s+j]=plain(a[j]);}parts[k]=a;
  var w=waiting[k]||[];delete waiting[k];w.forEach(function(f){f();});},function(e){fail(k,e);});};
function need(k,cb){if(parts[k]){cb();return;}(waiting[k]=waiting[k]||[]).push(cb);if(asked[k]){return;}
  asked[k]=1;var s=document.createElement("script");s.src=D.base+pad(k);
  s.onerror=function(){fail(k,"file not found");};document.head.appendChild(s);}
function html(i){var k=R[i][6];return parts[k][i-D.starts[k]];}
function sel(n){return el("f-"+n);}
function val(n){var e=sel(n);return e?e.value:"";}
function has(l,t){return (" "+l+" ").indexOf(" "+t+" ")>=0;}
function expand(){list.querySelectorAll("details.calls,details.trace").forEach(function(d){d.open=ex.checked;});}
function ready(){if(!document.body.hasAttribute("data-ready")){
  document.body.setAttribute("data-first-ms",String(Math.round(performance.now())));
  document.body.setAttribute("data-ready","1");}}
function near(){var r=more.getBoundingClientRect();return !more.hidden&&r.top<window.innerHeight+800;}
function draw(my){
  if(busy||my!==gen){return;}
  if(done>=matches.length){more.hidden=true;ready();return;}
  busy=true;var upto=Math.min(done+D.page,matches.length),ids=matches.slice(done,upto),ks={};
  ids.forEach(function(i){ks[R[i][6]]=1;});var keys=Object.keys(ks),left=keys.length;
  keys.forEach(function(k){need(+k,function(){if(--left>0){return;}busy=false;if(my!==gen){return;}
    list.insertAdjacentHTML("beforeend",ids.map(html).join(""));done=upto;if(ex.checked){expand();}
    more.hidden=done>=matches.length;ready();if(near()){draw(my);}});});
}
function apply(save){
  var my=++gen,v={};busy=false;F.forEach(function(n){v[n]=val(n);});var text=q.value.trim().toLowerCase(),wait=0;
  matches=[];
  for(var i=0;i<R.length;i++){var r=R[i];
    if((v.group&&r[1]!==v.group)||(v.correct&&r[2]!==v.correct)||(v.error&&r[3]!==v.error)
      ||(v.field&&!has(r[4],v.field))||(v.verdict&&!has(r[5],v.verdict))){continue;}
    if(text){if(texts[i]===undefined){wait++;continue;}if(texts[i].indexOf(text)<0){continue;}}
    matches.push(i);}
  list.innerHTML="";done=0;more.hidden=true;
  el("shown").textContent=String(matches.length);
  el("empty").hidden=matches.length>0||wait>0;
  var todo=[];for(var k=0;k<N;k++){if(!parts[k]){todo.push(k);}}
  el("searching").textContent=text&&wait?"searching: "+(N-todo.length)+" of "+N+" parts read":"";
  if(text&&wait){var left=todo.length;todo.forEach(function(k){need(k,function(){left--;
    if(my===gen){el("searching").textContent="searching: "+(N-left)+" of "+N+" parts read";}
    if(left===0&&my===gen){apply(false);}});});}
  if(save){var p=new URLSearchParams();F.forEach(function(n){if(v[n]){p.set(n,v[n]);}});if(text){p.set("q",text);}
    if(ex.checked){p.set("expand","1");}var h=p.toString();
    try{history.replaceState(null,"",h?"#"+h:location.pathname+location.search);}catch(e){location.hash=h;}}
  if(matches.length===0&&!wait){ready();}
  draw(my);
}
function fromHash(){
  var p=new URLSearchParams(location.hash.replace(/^#/,""));var bad=[];
  F.forEach(function(n){var e=sel(n);if(!e){if(p.get(n)){bad.push(n);}return;}var want=p.get(n)||"";e.value=want;
    if(e.value!==want){bad.push(n+"="+want);e.value="";}});
  q.value=p.get("q")||"";ex.checked=p.get("expand")==="1";
  el("notice").textContent=bad.length?"ignored unknown filter: "+bad.join(", "):"";
  apply(false);
}
F.forEach(function(n){var e=sel(n);if(e){e.addEventListener("change",function(){apply(true);});}});
q.addEventListener("input",function(){apply(true);});
ex.addEventListener("change",function(){expand();apply(true);});
more.addEventListener("click",function(){draw(gen);});
window.addEventListener("scroll",function(){if(near()){draw(gen);}},{passive:true});
window.addEventListener("hashchange",fromHash);
fromHash();
})();
""".strip().replace("__CALLBACK__", CALLBACK)


def render_page(
    title: str,
    summary: str,
    inputs: Sequence[tuple[str, str, str]],
    problems: Sequence[str],
    filters: Sequence[str],
    index: dict[str, Any],
) -> str:
    """The page of a run: ``summary`` and ``filters`` are HTML already; ``index`` the rows' index
    (``rows``, shard ``starts``, shard folder ``base``, ``width`` of shard names, ``media`` folder)."""
    n = len(index["rows"])
    ins = "".join(f"<li>{esc(w)}: <code>{esc(p)}</code> sha256 <code>{esc(h[:16])}</code></li>" for w, p, h in inputs)
    probs = ""
    if problems:
        probs = (
            f"<details><summary>{len(problems)} media file(s) not shown or changed (marked in their rows)</summary><ul>"
            + "".join(f"<li>{esc(p)}</li>" for p in problems)
            + "</ul></details>"
        )
    nav = [
        *filters,
        '<label>search <input id="f-q" type="search" placeholder="id, text, output"></label>',
        '<label><input id="f-expand" type="checkbox"> open calls and traces</label>',
        f'<span id="count">showing <strong id="shown">{n}</strong> of {n} <span id="searching"></span></span>',
        '<span id="notice"></span>',
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head>\n<body>"
        f'<header class="top"><h1>{esc(title)}</h1><div class="sum">{summary}</div>'
        f"<details><summary>inputs</summary><ul>{ins}</ul></details>{probs}</header>\n"
        f'<nav class="filters">{"".join(f for f in nav if f)}</nav>\n'
        '<noscript><p class="muted">The page loads its instances with JavaScript.</p></noscript>\n'
        '<main><div id="rows"></div><p id="empty" hidden>No instance matches the filters.</p>'
        '<button id="more" type="button" hidden>show more</button></main>\n'
        f'<script type="application/json" id="sb-index">{json_in_html(index)}</script>\n'
        f"<script>{JS}</script></body></html>\n"
    )


def filters_html(
    rows: Sequence[dict[str, Any]], index_rows: Sequence[list[Any]], group_label: str, trace_filter: str
) -> list[str]:
    """The selects: group, correctness, error, wrong field, and the method's trace filter when some row has tags."""
    groups = sorted({r[1] for r in index_rows if r[1]})
    fields = list(dict.fromkeys(f["name"] for r in rows for f in r.get("fields") or []))
    tags = sorted({t for r in index_rows for t in r[5].split()})
    scored = sum(1 for r in index_rows if r[2] != "unknown")
    return [
        select_html("group", group_label, [(g, g) for g in groups]) if groups else "",
        select_html(
            "correct",
            "correct",
            [("correct", "all fields correct"), ("wrong", "some field wrong")]
            + ([("unknown", "not scored")] if scored < len(index_rows) else []),
        ),
        select_html("error", "error", [("yes", "with an error"), ("no", "without an error")]),
        select_html("field", "wrong field", [(f, f) for f in fields]) if fields else "",
        select_html("verdict", trace_filter, [(t, t) for t in tags]) if tags else "",
    ]


def page_media(page: Path) -> tuple[str, dict[str, Path]]:
    """The media folder a run's page links and each stored medium its rows show (``<sha256>.<ext>`` to its file),
    sorted: what MLflow's parent run stores once (:func:`relink_media`)."""
    page = Path(page)
    found = _INDEX.search(page.read_text("utf-8"))
    if found is None:
        raise ValueError(f"{page}: not a viewer page (no sb-index block)")
    href = json.loads(found.group(1))["media"]
    shards = page.parent / f"{page.stem}.shards"
    # The rows' images as the page draws them: src="<href>/<name>" (the rows' own text is escaped).
    ref = re.compile('src="' + re.escape(f"{href.rstrip('/')}/" if href else "") + r'([0-9a-f]{64}\.[a-z0-9]+)"')
    folder = page.parent / href if href else page.parent
    names: set[str] = set()
    for shard in sorted(shards.iterdir()) if shards.is_dir() else ():
        _, rows = read_shard_js(shard.read_text("utf-8"))
        names.update(ref.findall("".join(rows)))
    return href, {name: folder / name for name in sorted(names) if (folder / name).is_file()}


#: The page's one place that hands a row's HTML to the document (JS above), which :func:`relink_media` rewrites.
_DRAW_ROW = "function html(i){var k=R[i][6];return parts[k][i-D.starts[k]];}"
#: Where the page starts loading a shard as a script, which :func:`relink_media` lets fetch it first over HTTP.
_LOAD_SHARD = 'asked[k]=1;var s=document.createElement("script");'
_INDEX = re.compile(r'<script type="application/json" id="sb-index">(.*?)</script>', re.S)


#: The page's policy as MLflow stores it: its script also fetches (its media packs, same origin) and
#: shows the images it cut from them as ``blob:`` URLs.
CSP_PACKED = CSP.replace("img-src 'self' data:", "img-src 'self' data: blob:") + "; connect-src 'self'"

# What a logged page's script gains (relink_media): a drawn row's <img data-sb-pack="<sha256>.<ext>"> gets
# a blob: URL of its bytes, read by a Range request on its pack (a server that ignores Range sends each pack
# once, whole, kept and cut for every image), checked against its sha256 where crypto.subtle exists.
# <body data-media-shown/-failed> count the images. Over HTTP the shards are fetched, not run as scripts:
# MLflow serves a .js artifact as text/plain with nosniff, which a browser refuses to run.
PACKED_JS = """var PK=__LINK__,PX=null,PW={},PA={},pn={shown:0,failed:0};
function pshard(k){if(!/^https?:$/.test(location.protocol)){return false;}fetch(D.base+pad(k)).then(function(r){
  if(!r.ok){throw new Error("HTTP "+r.status);}return r.text();}).then(function(t){
  var m=/^__CALLBACK__\\((\\d+),"([A-Za-z0-9+\\/=]*)"\\);\\s*$/.exec(t);
  if(!m||+m[1]!==k){throw new Error("not a viewer shard");}
  window.__CALLBACK__(k,m[2]);}).catch(function(e){fail(k,e&&e.message||e);});return true;}
function pcount(w){pn[w]++;document.body.setAttribute("data-media-"+w,String(pn[w]));}
function pfail(n,why){pcount("failed");el("notice").textContent="could not load image "+n+
  " from the media packs in "+PK+" ("+why+")"+(location.protocol==="file:"?
  ": a browser reads the packs over HTTP only; open the page from a web server":"");}
function pindex(){if(!PX){PX=fetch(PK+"/index.json").then(function(r){if(!r.ok){throw new Error("HTTP "+r.status+
  " for index.json");}return r.json();});}return PX;}
function pget(u,a,n){var h={headers:{Range:"bytes="+a+"-"+(a+n-1)}};function cut(b){return b.slice(a,a+n);}
  function ask(){return fetch(u,h).then(function(r){if(!r.ok){throw new Error("HTTP "+r.status);}return r;});}
  if(!PW[u]){PW[u]=ask().then(function(r){return r.status===206?{part:r.arrayBuffer()}:{whole:r.arrayBuffer()};});
    return PW[u].then(function(m){return m.part||m.whole.then(cut);});}
  return PW[u].then(function(m){return m.whole?m.whole.then(cut):ask().then(function(r){
    if(r.status!==206){throw new Error("HTTP "+r.status+" without the range asked");}return r.arrayBuffer();});});}
function phex(d){return Array.prototype.map.call(new Uint8Array(d),function(v){return (v<16?"0":"")+v.toString(16);})
  .join("");}
function pcheck(n,b){var s=window.crypto&&window.crypto.subtle;if(!s){return b;}
  return s.digest("SHA-256",b).then(function(d){if(phex(d)!==n.split(".")[0]){
    throw new Error("its bytes differ from its sha256");}return b;});}
function ptype(n){var e=n.split(".").pop();return e==="png"?"image/png":e==="webp"?"image/webp":"image/jpeg";}
function pshow(img){var n=img.getAttribute("data-sb-pack");img.removeAttribute("data-sb-pack");
  if(!PA[n]){PA[n]=pindex().then(function(x){var e=x.media[n];if(!e){throw new Error("not in index.json");}
    return pget(PK+"/"+x.packs[e[0]],e[1],e[2]).then(function(b){if(b.byteLength!==e[2]){throw new Error("got "+
      b.byteLength+" bytes, not "+e[2]);}return pcheck(n,b);}).then(function(b){
      return URL.createObjectURL(new Blob([b],{type:ptype(n)}));});});}
  PA[n].then(function(u){img.src=u;pcount("shown");},function(e){pfail(n,e&&e.message||e);});}
new MutationObserver(function(){list.querySelectorAll("img[data-sb-pack]").forEach(pshow);})
  .observe(list,{childList:true});
""".replace("__CALLBACK__", CALLBACK)


def relink_media(page_text: str, old_href: str, packs_href: str) -> str:
    """The page with its rows' images read from the media packs in ``packs_href`` (:mod:`viewer_packs`) instead of the
    files in ``old_href``; the rows' text is escaped, so only image links match."""
    csp = f'content="{CSP}"'
    if _DRAW_ROW not in page_text or _LOAD_SHARD not in page_text or csp not in page_text:
        raise ValueError(
            "not a viewer page of this version (its row-drawing function, shard loading or policy was not found)"
        )
    old, new = json.dumps(f'src="{old_href.rstrip("/")}/'), json.dumps('data-sb-pack="')
    drawn = f"function html(i){{var k=R[i][6];return parts[k][i-D.starts[k]].split({old}).join({new});}}"
    script = PACKED_JS.replace("__LINK__", json.dumps(packs_href.rstrip("/")).replace("<", "\\u003c"))
    out = page_text.replace(csp, f'content="{CSP_PACKED}"', 1).replace(_DRAW_ROW, script + drawn, 1)
    return out.replace(_LOAD_SHARD, 'asked[k]=1;if(pshard(k)){return;}var s=document.createElement("script");', 1)
