"""Settings precedence (flag > environment > transfuzz.toml > default) and masked secrets."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.config import DEFAULT_DB_URL, load_settings


def _toml(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "transfuzz.toml"
    path.write_text(body)
    return path


def test_defaults_without_anything(tmp_path: Path) -> None:
    settings = load_settings(environ={}, config_file=tmp_path / "missing.toml")
    assert settings.db_url == DEFAULT_DB_URL
    assert settings.effective_llm == "offline"


def test_flag_beats_environment_beats_file(tmp_path: Path) -> None:
    cfg = _toml(tmp_path, '[transfuzz]\ndb_url = "sqlite:///file.db"\nmodel = "file-model"\n')
    env = {"TRANSFUZZ_DB_URL": "sqlite:///env.db", "TRANSFUZZ_MODEL": "env-model"}
    settings = load_settings({"db_url": "sqlite:///flag.db", "model": None}, environ=env, config_file=cfg)
    assert settings.db_url == "sqlite:///flag.db"
    assert settings.model == "env-model"
    assert load_settings(environ={}, config_file=cfg).model == "file-model"


def test_secrets_are_masked_in_repr_and_dump(tmp_path: Path) -> None:
    env = {"OPENAI_API_KEY": "sk-very-secret", "GITHUB_TOKEN": "ghp_secret"}
    settings = load_settings(environ=env, config_file=tmp_path / "none.toml")
    shown = repr(settings) + str(settings) + settings.model_dump_json()
    assert "sk-very-secret" not in shown and "ghp_secret" not in shown
    assert settings.openai_api_key is not None
    assert settings.openai_api_key.get_secret_value() == "sk-very-secret"
    assert settings.effective_llm == "openai"


def test_unknown_setting_in_file_is_named(tmp_path: Path) -> None:
    cfg = _toml(tmp_path, "[transfuzz]\ndb_ulr = 'x'\n")
    with pytest.raises(ValueError, match="db_ulr"):
        load_settings(environ={}, config_file=cfg)
