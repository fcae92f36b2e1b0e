"""The one YAML reader (hieranon.core.safeyaml) and every YAML input read through it:
duplicate keys, nesting depth, alias limits, short messages."""

from __future__ import annotations

import pytest

from hieranon.core.safeyaml import MAX_ALIAS_NODES, MAX_DEPTH, QUOTE_CHARS, YAMLInputError, load_yaml
from hieranon.hierarchies import readers as H
from hieranon.job import config as C


def alias_bomb(levels: int, fan: int = 9) -> str:
    """The "billion laughs" document: each level lists the previous one ``fan`` times."""
    lines = ["a0: &a0 [" + ", ".join(["lol"] * fan) + "]"]
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * fan) + "]")
    return "\n".join(lines) + "\n"


def refused(text: str, *parts: str) -> str:
    with pytest.raises(YAMLInputError) as info:
        load_yaml(text, source="cfg.yaml")
    message = str(info.value)
    assert "\n" not in message and message.startswith("cfg.yaml")
    for part in parts:
        assert part in message, message
    return message


def test_duplicate_top_level_key_names_it_and_both_lines():
    refused("k: 5\nmethod: kaca1\nk: 2\n", "'k'", "line 1", "line 3")


def test_duplicate_key_deep_inside():
    refused("quasi_identifiers:\n  age:\n    intervals: [5]\n    intervals: [10]\n", "'intervals'", "line 3",
            "line 4")


def test_duplicate_key_in_a_flow_mapping_and_equal_keys_written_differently():
    refused("a: {x: 1, y: 2, x: 3}\n", "'x'")
    refused("1: a\n0x1: b\n", "key 1", "line 1", "line 2")


def test_merge_keys_may_be_overridden():
    data = load_yaml("base: &b {a: 1, b: 2}\nx:\n  <<: *b\n  a: 3\n", source="cfg.yaml")
    assert data["x"] == {"a": 3, "b": 2}


def test_deep_nesting_refused_without_recursion_error():
    refused("[" * 3000 + "]" * 3000, f"more than {MAX_DEPTH} levels")
    refused("\n".join(" " * i + "a:" for i in range(3000)) + " 1\n", f"more than {MAX_DEPTH} levels")
    refused("- " * 3000 + "x\n", f"more than {MAX_DEPTH} levels")


def test_nesting_up_to_the_limit_is_read():
    data = load_yaml("[" * MAX_DEPTH + "]" * MAX_DEPTH, source="cfg.yaml")
    for _ in range(MAX_DEPTH - 1):
        data = data[0]
    assert data == []


def test_alias_bomb_refused_before_expansion_with_a_short_message():
    message = refused(alias_bomb(9), "alias")
    assert len(message) < 300


def test_small_alias_use_is_read():
    data = load_yaml(alias_bomb(2), source="cfg.yaml")
    assert len(data["a2"]) == 9 and data["a2"][0][0] == ["lol"] * 9


def test_expansion_just_over_the_limit_refused():
    fan = int(MAX_ALIAS_NODES ** 0.5) + 2  # fan**2 expanded nodes from 2 * fan written ones
    refused(alias_bomb(2, fan), f"{MAX_ALIAS_NODES}")


def test_aliases_cannot_nest_beyond_the_depth_limit():
    half = MAX_DEPTH // 2 + 5
    text = f"x: &x {'[' * half}{']' * half}\ny: {'[' * half}*x{']' * half}\n"
    refused(text, "levels deep once its aliases are expanded")


def test_recursive_alias_refused():
    refused("a: &a [1, *a]\n", "refers to the node it is inside")


def test_messages_quote_a_short_excerpt():
    long_key = "k" * 1000  # YAML allows implicit keys up to 1024 characters
    message = refused(f"{long_key}: 1\n{long_key}: 2\n", "given twice")
    assert len(message) < 3 * QUOTE_CHARS + 100
    message = refused("!!python/object:os.system " + "x" * 5000, "not valid YAML")
    assert len(message) < 3 * QUOTE_CHARS + 100


def test_python_tags_are_not_constructed():
    refused("!!python/object/apply:os.system ['true']\n", "constructor")


def test_config_load_refuses_a_repeated_key(tmp_path):
    f = tmp_path / "cfg.yaml"
    f.write_text("k: 5\nquasi_identifiers: {age: {intervals: [5]}}\nk: 2\n")
    with pytest.raises(C.ConfigError, match=r"configuration file .*cfg\.yaml, line 3.*'k' is given twice"):
        C.load(f)


def test_config_load_refuses_an_alias_bomb(tmp_path):
    f = tmp_path / "cfg.yaml"
    f.write_text(alias_bomb(9))
    with pytest.raises(C.ConfigError, match="alias") as info:
        C.load(f)
    assert len(str(info.value)) < 400


def test_hierarchy_yaml_refuses_a_repeated_key(tmp_path):
    f = tmp_path / "edu.yaml"
    f.write_text("'*':\n  school: [primary, secondary]\n  school: [college]\n")
    with pytest.raises(H.HierarchyError, match=r"'edu'.*'school' is given twice, on line 2 and line 3"):
        H.from_file(f, "edu")


def test_control_characters_are_refused_as_bad_yaml():
    refused("\x08", "not valid YAML", "unacceptable character")
    refused("k: 2\x00\n", "not valid YAML")
