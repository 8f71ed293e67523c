"""The viewer's page and shards (socialbench.results.viewer_page): how rows are cut into shards, a
shard's bytes and how they read back, the index, and JSON that cannot end its script block."""

from __future__ import annotations

import json

import pytest

from socialbench.results.viewer_page import (
    CSP,
    CSP_PACKED,
    JS,
    PACKED_JS,
    index_entry,
    json_in_html,
    read_shard_js,
    relink_media,
    shard_bounds,
    shard_js,
    shard_name,
)


def test_shards_hold_at_most_the_row_count():
    assert shard_bounds([10] * 7, rows=3) == [0, 3, 6]


def test_a_shard_ends_before_its_bytes_would_pass_the_limit_and_a_huge_row_has_its_own():
    assert shard_bounds([40, 40, 40, 500, 10], rows=100, max_bytes=100) == [0, 2, 3, 4]


def test_a_shard_reads_back_as_the_rows_it_was_given_and_is_the_same_bytes_twice():
    rows = ['<article data-id="a">é &lt;b&gt;</article>', "<article>2</article>"]
    assert read_shard_js(shard_js(4, rows)) == (4, rows) and shard_js(4, rows) == shard_js(4, rows)


def test_a_file_that_is_no_shard_is_refused():
    with pytest.raises(ValueError, match="not a viewer shard"):
        read_shard_js('alert(1,"x");')


def test_shard_names_have_three_digits_or_as_many_as_the_count_needs():
    assert (shard_name(7, 12), shard_name(7, 1001)) == ("007.js", "0007.js")


def test_json_in_the_page_cannot_close_its_script_block():
    text = json_in_html({"id": "</script><script>alert(1)</script>&"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"id": "</script><script>alert(1)</script>&"}


def test_an_index_entry_says_what_the_filters_read():
    row = {"id": "x", "group": "intent", "error": "bad", "fields": [{"name": "a", "correct": False}, {"name": "b"}]}
    assert index_entry(row, "wrong", ["revised", "accepted"], 3) == [
        "x",
        "intent",
        "wrong",
        "yes",
        "a",
        "revised accepted",
        3,
    ]


def a_page():
    return f'<html><meta http-equiv="Content-Security-Policy" content="{CSP}"><script>{JS}</script></html>'


def test_a_relinked_page_draws_its_rows_images_as_pack_references_and_leaves_text_alone():
    out = relink_media(a_page(), "../media", "../../../p1/artifacts/media")
    assert '.split("src=\\"../media/").join("data-sb-pack=\\"")' in out
    assert 'var PK="../../../p1/artifacts/media",' in out


def test_a_relinked_page_is_the_page_with_its_policy_widened_and_the_pack_reader_added_only():
    page = a_page()
    out = relink_media(page, "../media", "../../../p1/artifacts/media")
    script = PACKED_JS.replace("__LINK__", '"../../../p1/artifacts/media"')
    undone = out.replace(script, "").replace('.split("src=\\"../media/").join("data-sb-pack=\\"")', "")
    assert undone.replace(CSP_PACKED, CSP).replace("if(pshard(k)){return;}", "") == page
    assert "connect-src 'self'" in CSP_PACKED and "blob:" in CSP_PACKED and "connect-src" not in CSP


def test_a_relinked_page_fetches_a_shard_over_http_before_it_would_run_it_as_a_script():
    out = relink_media(a_page(), "../media", "p")
    assert 'asked[k]=1;if(pshard(k)){return;}var s=document.createElement("script");' in out
    assert "function pshard(k){if(!/^https?:$/.test(location.protocol)){return false;}" in out


def test_relinking_a_page_without_the_viewers_row_drawing_is_refused():
    with pytest.raises(ValueError, match="row-drawing function"):
        relink_media("<html>an old page</html>", "../media", "elsewhere")


def test_relinking_a_page_without_the_viewers_policy_is_refused():
    with pytest.raises(ValueError, match="policy"):
        relink_media(f"<html><script>{JS}</script></html>", "../media", "elsewhere")
