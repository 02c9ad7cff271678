"""The dump reader: JSON arrays and JSON Lines, streamed, with malformed and truncated records reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.ingest.stream import DumpFormatError, detect_format, iter_dump
from tests.agent.ingest.conftest import sample_records

CHUNKS = [7, 64, 1 << 20]  # tiny chunks cut every record and string; the default cuts none


def _write(tmp_path: Path, text: str, name: str = "dump.json") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("chunk", CHUNKS)
def test_array_records_come_back_in_order(tmp_path: Path, chunk: int) -> None:
    records = sample_records()
    path = _write(tmp_path, json.dumps(records, indent=2, ensure_ascii=False))
    out = list(iter_dump(path, chunk_bytes=chunk))
    assert [r.error for r in out] == [None] * len(records)
    assert [r.value for r in out] == records
    assert [r.index for r in out] == list(range(1, len(records) + 1))


def test_array_line_numbers_point_at_the_record(tmp_path: Path) -> None:
    records = sample_records()[:4]
    text = json.dumps(records, indent=2)
    path = _write(tmp_path, text)
    lines = text.splitlines()
    for record in iter_dump(path, chunk_bytes=50):
        assert lines[record.line - 1].strip() == "{"
        assert f'"number": {record.value["number"]}' in "\n".join(lines[record.line - 1 :])


def test_json_lines(tmp_path: Path) -> None:
    records = sample_records()[:5]
    text = "\n".join(json.dumps(r) for r in records) + "\n\n"
    out = list(iter_dump(_write(tmp_path, text, "dump.jsonl")))
    assert [r.value for r in out] == records
    assert [r.line for r in out] == [1, 2, 3, 4, 5]


def test_json_lines_bad_line_is_reported_and_skipped(tmp_path: Path) -> None:
    records = sample_records()[:3]
    lines = [json.dumps(records[0]), '{"number": 5, "title": ', json.dumps(records[2])]
    out = list(iter_dump(_write(tmp_path, "\n".join(lines), "dump.jsonl")))
    assert [r.value for r in out if r.error is None] == [records[0], records[2]]
    bad = [r for r in out if r.error]
    assert len(bad) == 1 and bad[0].line == 2 and bad[0].index == 2
    assert "invalid JSON" in bad[0].error and "column" in bad[0].error
    assert bad[0].position == "record 2 (line 2)"


@pytest.mark.parametrize("chunk", CHUNKS)
def test_malformed_record_in_an_array_is_skipped_and_the_rest_read(tmp_path: Path, chunk: int) -> None:
    records = sample_records()[:5]
    parts = [json.dumps(r, indent=1) for r in records]
    parts[2] = parts[2].replace('"title":', '"title" ', 1)  # missing colon
    path = _write(tmp_path, "[" + ",\n".join(parts) + "]\n")
    out = list(iter_dump(path, chunk_bytes=chunk))
    assert [r.value for r in out if r.error is None] == [records[i] for i in (0, 1, 3, 4)]
    bad = [r for r in out if r.error]
    assert len(bad) == 1
    assert bad[0].index == 3
    assert "Expecting ':' delimiter" in bad[0].error
    assert bad[0].line == 1 + sum(p.count("\n") + 1 for p in parts[:2])


@pytest.mark.parametrize("chunk", CHUNKS)
def test_truncated_file_keeps_the_complete_records(tmp_path: Path, chunk: int) -> None:
    records = sample_records()[:4]
    text = json.dumps(records, indent=2)
    cut = text.index(f'"number": {records[3]["number"]}') + 5  # inside the last record
    out = list(iter_dump(_write(tmp_path, text[:cut]), chunk_bytes=chunk))
    assert [r.value for r in out if r.error is None] == records[:3]
    assert [r.error for r in out if r.error] == ["truncated: the file ends inside this record"]
    assert out[-1].index == 4


def test_unclosed_array_after_a_complete_record(tmp_path: Path) -> None:
    records = sample_records()[:2]
    out = list(iter_dump(_write(tmp_path, json.dumps(records)[:-1])))
    assert [r.value for r in out if r.error is None] == records
    assert out[-1].error == "truncated: the file ends before the array is closed"


def test_stray_commas_scalars_and_trailing_data(tmp_path: Path) -> None:
    record = sample_records()[0]
    text = f"[{json.dumps(record)}, , 42, \"text\", {json.dumps(record)}] trailing"
    out = list(iter_dump(_write(tmp_path, text), chunk_bytes=16))
    assert [r.value for r in out] == [record, None, 42, "text", record, None]
    assert out[1].error == "empty element (stray comma)"
    assert out[-1].error is not None and "after the closing" in out[-1].error


def test_unicode_split_across_chunks(tmp_path: Path) -> None:
    record = {"number": 1, "title": "NaN≠NaN — 半精度 🧮", "body": "é" * 50}
    path = tmp_path / "dump.json"
    path.write_bytes(("\ufeff" + json.dumps([record, record], ensure_ascii=False)).encode("utf-8"))
    for chunk in (1, 2, 3, 5):
        assert [r.value for r in iter_dump(path, chunk_bytes=chunk)] == [record, record]


def test_format_detection(tmp_path: Path) -> None:
    assert detect_format(_write(tmp_path, "  \n[]", "a.json")) == "array"
    assert detect_format(_write(tmp_path, '\n{"number": 1}\n', "b.jsonl")) == "lines"
    assert detect_format(_write(tmp_path, "  \n ", "c.json")) == "empty"
    assert list(iter_dump(tmp_path / "c.json")) == []
    assert list(iter_dump(_write(tmp_path, "[]", "d.json"))) == []
    with pytest.raises(DumpFormatError, match="not a JSON array or JSON Lines"):
        detect_format(_write(tmp_path, "number,title\n1,x\n", "e.csv"))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    records=st.lists(st.dictionaries(st.text(max_size=6), json_values, max_size=5), max_size=8),
    indent=st.sampled_from([None, 0, 2]),
    chunk=st.integers(min_value=1, max_value=80),
)
def test_any_valid_array_round_trips_at_any_chunk_size(tmp_path: Path, records: list, indent: int | None, chunk: int) -> None:
    path = tmp_path / "prop.json"
    path.write_text(json.dumps(records, indent=indent, ensure_ascii=False), encoding="utf-8")
    out = list(iter_dump(path, chunk_bytes=chunk))
    assert [r.error for r in out] == [None] * len(records)
    assert [r.value for r in out] == records


@pytest.mark.parametrize("chunk", [1, 3, 1 << 20])
def test_undecodable_byte_is_named_by_offset_and_line(tmp_path: Path, chunk: int) -> None:
    from agent.ingest.stream import DumpEncodingError, check_encoding

    good = '[{"title": "naïve €"},\n'.encode()
    path = tmp_path / "mixed.json"
    path.write_bytes(good + b'{"title": "caf\xe9"}]')
    with pytest.raises(DumpEncodingError, match=f"byte offset {len(good) + 14} \\(line 2\\)"):
        check_encoding(path, chunk_bytes=chunk)
    with pytest.raises(DumpEncodingError):
        list(iter_dump(path))  # refused before the first record
    assert [r.value for r in iter_dump(path, encoding="latin-1")][1] == {"title": "café"}


@pytest.mark.parametrize("chunk", [64, 1 << 20])
def test_too_deep_element_is_a_problem_of_that_record(tmp_path: Path, chunk: int) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    path = _write(tmp_path, f'[{{"a": 1}}, {deep}, {{"b": 2}}]')
    out = list(iter_dump(path, chunk_bytes=chunk))
    assert [(r.index, r.value, r.error) for r in out] == [
        (1, {"a": 1}, None),
        (2, None, "invalid JSON: nested too deeply to decode"),
        (3, {"b": 2}, None),
    ]


def test_huge_string_is_read_whole_and_the_buffer_released(tmp_path: Path) -> None:
    from agent.ingest.stream import _ArrayReader

    body = "x\\n" * 300_000
    path = _write(tmp_path, f'[{{"body": "{body}"}}, {{"n": 2}}]')
    with path.open("rb") as fh:
        reader = _ArrayReader(fh, None, 4096, "utf-8")
        records = reader.records()
        first = next(records)
        assert first.value == {"body": "x\n" * 300_000}
        assert len(reader.buf) < 64 * 4096  # the record's text is not kept beside its value
        assert next(records).value == {"n": 2}
